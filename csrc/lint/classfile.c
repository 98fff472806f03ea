/*
** classfile.c
** Reading a class file (see classfile.h). The layout is JVMS 4.1: magic,
** versions, constant pool, access flags, this and super class, interfaces,
** fields, methods, attributes; a method's Code attribute (4.7.3) holds its
** instructions, exception table and the LineNumberTable and
** LocalVariableTable attributes read here. The class's and each method's
** RuntimeInvisibleAnnotations and RuntimeVisibleAnnotations (4.7.16,
** 4.7.17) are read too: each annotation's type, and the strings of its
** "value" element; other elements and nested annotations are walked over.
** A local or anonymous class's EnclosingMethod (4.7.7) names the method it
** is written in.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/classfile.h"

typedef struct Cursor {
  const unsigned char *p;
  size_t n, pos;
  int bad;
} Cursor;

static uint32_t u1 (Cursor *c) {
  if (c->bad || c->n - c->pos < 1) { c->bad = 1; return 0; }
  return c->p[c->pos++];
}

static uint32_t u2 (Cursor *c) {
  uint32_t v;
  if (c->bad || c->n - c->pos < 2) { c->bad = 1; return 0; }
  v = (uint32_t)c->p[c->pos] << 8 | c->p[c->pos + 1];
  c->pos += 2;
  return v;
}

static uint32_t u4 (Cursor *c) {
  uint32_t hi = u2(c);
  return hi << 16 | u2(c);
}

static void skip (Cursor *c, size_t k) {
  if (c->bad || c->n - c->pos < k) { c->bad = 1; return; }
  c->pos += k;
}

static const char *const OPNAMES[202] = {
  "nop", "aconst_null", "iconst_m1", "iconst_0", "iconst_1", "iconst_2", "iconst_3", "iconst_4", "iconst_5",
  "lconst_0", "lconst_1", "fconst_0", "fconst_1", "fconst_2", "dconst_0", "dconst_1", "bipush", "sipush", "ldc",
  "ldc_w", "ldc2_w", "iload", "lload", "fload", "dload", "aload", "iload_0", "iload_1", "iload_2", "iload_3",
  "lload_0", "lload_1", "lload_2", "lload_3", "fload_0", "fload_1", "fload_2", "fload_3", "dload_0", "dload_1",
  "dload_2", "dload_3", "aload_0", "aload_1", "aload_2", "aload_3", "iaload", "laload", "faload", "daload",
  "aaload", "baload", "caload", "saload", "istore", "lstore", "fstore", "dstore", "astore", "istore_0",
  "istore_1", "istore_2", "istore_3", "lstore_0", "lstore_1", "lstore_2", "lstore_3", "fstore_0", "fstore_1",
  "fstore_2", "fstore_3", "dstore_0", "dstore_1", "dstore_2", "dstore_3", "astore_0", "astore_1", "astore_2",
  "astore_3", "iastore", "lastore", "fastore", "dastore", "aastore", "bastore", "castore", "sastore", "pop",
  "pop2", "dup", "dup_x1", "dup_x2", "dup2", "dup2_x1", "dup2_x2", "swap", "iadd", "ladd", "fadd", "dadd",
  "isub", "lsub", "fsub", "dsub", "imul", "lmul", "fmul", "dmul", "idiv", "ldiv", "fdiv", "ddiv", "irem", "lrem",
  "frem", "drem", "ineg", "lneg", "fneg", "dneg", "ishl", "lshl", "ishr", "lshr", "iushr", "lushr", "iand",
  "land", "ior", "lor", "ixor", "lxor", "iinc", "i2l", "i2f", "i2d", "l2i", "l2f", "l2d", "f2i", "f2l", "f2d",
  "d2i", "d2l", "d2f", "i2b", "i2c", "i2s", "lcmp", "fcmpl", "fcmpg", "dcmpl", "dcmpg", "ifeq", "ifne", "iflt",
  "ifge", "ifgt", "ifle", "if_icmpeq", "if_icmpne", "if_icmplt", "if_icmpge", "if_icmpgt", "if_icmple",
  "if_acmpeq", "if_acmpne", "goto", "jsr", "ret", "tableswitch", "lookupswitch", "ireturn", "lreturn",
  "freturn", "dreturn", "areturn", "return", "getstatic", "putstatic", "getfield", "putfield", "invokevirtual",
  "invokespecial", "invokestatic", "invokeinterface", "invokedynamic", "new", "newarray", "anewarray",
  "arraylength", "athrow", "checkcast", "instanceof", "monitorenter", "monitorexit", "wide", "multianewarray",
  "ifnull", "ifnonnull", "goto_w", "jsr_w",
};

const char *cf_opname (unsigned op) {
  return op < sizeof OPNAMES / sizeof OPNAMES[0] ? OPNAMES[op] : NULL;
}

/* one instruction at c->pos (pc = c->pos - code start): 0 if malformed */
static int decode (Cursor *c, size_t code, cf_Insn *in) {
  uint32_t op, pc = (uint32_t)(c->pos - code);
  int32_t off;
  in->pc = pc;
  in->op = (uint16_t)(op = u1(c));
  in->ref = 0;
  in->var = -1;
  in->branch = -1;
  if (op <= 0x0f || (op >= 0x2e && op <= 0x35) || (op >= 0x4f && op <= 0x83) || (op >= 0x85 && op <= 0x98)
      || (op >= 0xac && op <= 0xb1) || op == 0xbe || op == 0xbf || op == 0xc2 || op == 0xc3) return !c->bad;
  if (op == 0x10 || op == 0xbc) skip(c, 1);                            /* bipush, newarray */
  else if (op == 0x11) skip(c, 2);                                     /* sipush */
  else if (op == 0x12) in->ref = (uint16_t)u1(c);                      /* ldc */
  else if (op == 0x13 || op == 0x14 || (op >= 0xb2 && op <= 0xb8) || op == 0xbb || op == 0xbd
           || op == 0xc0 || op == 0xc1) in->ref = (uint16_t)u2(c);
  else if ((op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) || op == 0xa9) in->var = (int32_t)u1(c);
  else if (op >= 0x1a && op <= 0x2d) in->var = (int32_t)((op - 0x1a) % 4);
  else if (op >= 0x3b && op <= 0x4e) in->var = (int32_t)((op - 0x3b) % 4);
  else if (op == 0x84) { in->var = (int32_t)u1(c); skip(c, 1); }       /* iinc */
  else if ((op >= 0x99 && op <= 0xa8) || op == 0xc6 || op == 0xc7) {
    off = (int16_t)u2(c);
    in->branch = (int32_t)pc + off;
  }
  else if (op == 0xc8 || op == 0xc9) {                                 /* goto_w, jsr_w */
    off = (int32_t)u4(c);
    in->branch = (int32_t)pc + off;
  }
  else if (op == 0xb9 || op == 0xba) { in->ref = (uint16_t)u2(c); skip(c, 2); }
  else if (op == 0xc5) { in->ref = (uint16_t)u2(c); in->var = (int32_t)u1(c); }  /* multianewarray */
  else if (op == 0xaa || op == 0xab) {                                 /* switches: 4-byte aligned */
    uint32_t npairs;
    skip(c, (4 - (pc + 1) % 4) % 4);
    off = (int32_t)u4(c);
    in->branch = (int32_t)pc + off;
    if (op == 0xaa) {
      int32_t low = (int32_t)u4(c), high = (int32_t)u4(c);
      if (high < low) return 0;
      npairs = (uint32_t)((int64_t)high - low + 1);
      if (npairs > (c->n - c->pos) / 4) return 0;
      skip(c, (size_t)npairs * 4);
    }
    else {
      npairs = u4(c);
      if (npairs > (c->n - c->pos) / 8) return 0;
      skip(c, (size_t)npairs * 8);
    }
  }
  else if (op == 0xc4) {                                               /* wide */
    in->op = (uint16_t)(op = u1(c));
    if (!((op >= 0x15 && op <= 0x19) || (op >= 0x36 && op <= 0x3a) || op == 0xa9 || op == 0x84)) return 0;
    in->var = (int32_t)u2(c);
    if (op == 0x84) skip(c, 2);
  }
  else return 0;  /* 0xca and up: not an instruction of a class file */
  return !c->bad;
}

static uint32_t be4 (const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
** A switch's case targets, read again from its table (decode checked that
** the table fits the code): tableswitch is default, low, high and
** high - low + 1 offsets; lookupswitch default, npairs and (match, offset)
** pairs; both start 4-byte aligned after the opcode, offsets from its pc.
*/
size_t cf_switch_target (const cf_Method *m, uint32_t pc, size_t k, uint32_t *target) {
  size_t at = pc + 1 + (4 - (pc + 1) % 4) % 4, n, step;
  const unsigned char *p = m->code;
  if (pc >= m->code_len || (p[pc] != 0xaa && p[pc] != 0xab) || at + 12 > m->code_len) return 0;
  if (p[pc] == 0xaa) {
    n = (size_t)((int64_t)(int32_t)be4(p + at + 8) - (int32_t)be4(p + at + 4) + 1);
    step = 4;
  }
  else {
    n = be4(p + at + 4);
    step = 8;
  }
  at += 12;  /* the first case's offset (lookupswitch: the first pair's, after its match) */
  if (k < n && at + k * step + 4 <= m->code_len) *target = (uint32_t)((int64_t)pc + (int32_t)be4(p + at + k * step));
  return n;
}


#define FAIL(what) \
  do { sift_fail(err, SIFT_ECORRUPT, "class file: %s at byte %zu", what, cur.pos); goto fail; } while (0)

/* a method's Code attribute, at cur (after its length) up to end */
static sift_Status read_code (cf_Class *cls, cf_Method *m, Cursor *outer, size_t end, sift_Error *err) {
  Cursor cur = *outer;
  size_t code_len, code, k, nattr;
  cur.n = end;
  skip(&cur, 4);  /* max_stack, max_locals */
  code_len = u4(&cur);
  code = cur.pos;
  if (cur.bad || code_len == 0 || code_len > 65535 || code_len > end - code) FAIL("a method's code length");
  m->code = cur.p + code;
  m->code_len = code_len;
  m->insns = (cf_Insn *)malloc(code_len * sizeof(cf_Insn));  /* one byte at least per instruction */
  if (m->insns == NULL) goto nomem;
  {
    Cursor ins = cur;
    ins.n = code + code_len;
    while (ins.pos < code + code_len) {
      if (!decode(&ins, code, &m->insns[m->ninsns])) {
        cur.pos = ins.pos;
        FAIL("an instruction");
      }
      m->ninsns++;
    }
  }
  skip(&cur, code_len);
  k = u2(&cur);
  if (cur.bad || k > (end - cur.pos) / 8) FAIL("an exception table");
  if (k > 0 && (m->tries = (cf_Try *)malloc(k * sizeof(cf_Try))) == NULL) goto nomem;
  for (m->ntries = 0; m->ntries < k; m->ntries++) {
    cf_Try *t = &m->tries[m->ntries];
    t->start = u2(&cur);
    t->end = u2(&cur);
    t->handler = u2(&cur);
    t->type = (uint16_t)u2(&cur);
  }
  nattr = u2(&cur);
  for (k = 0; k < nattr && !cur.bad; k++) {
    cf_Str name;
    size_t at_end, count, j;
    uint16_t name_index = (uint16_t)u2(&cur);
    size_t len = u4(&cur);
    if (cur.bad || len > end - cur.pos) FAIL("a code attribute's length");
    at_end = cur.pos + len;
    if (cf_utf8(cls, name_index, &name) && name.n == 15 && memcmp(name.s, "LineNumberTable", 15) == 0) {
      count = u2(&cur);
      if (count > (at_end - cur.pos) / 4) FAIL("a line number table");
      if (count > 0) {
        cf_Line *grown = (cf_Line *)realloc(m->lines, (m->nlines + count) * sizeof(cf_Line));
        if (grown == NULL) goto nomem;
        m->lines = grown;
      }
      for (j = 0; j < count; j++, m->nlines++) {
        m->lines[m->nlines].pc = u2(&cur);
        m->lines[m->nlines].line = u2(&cur);
      }
    }
    else if (cf_utf8(cls, name_index, &name) && name.n == 18 && memcmp(name.s, "LocalVariableTable", 18) == 0) {
      count = u2(&cur);
      if (count > (at_end - cur.pos) / 10) FAIL("a local variable table");
      if (count > 0) {
        cf_Local *grown = (cf_Local *)realloc(m->locals, (m->nlocals + count) * sizeof(cf_Local));
        if (grown == NULL) goto nomem;
        m->locals = grown;
      }
      for (j = 0; j < count; j++, m->nlocals++) {
        cf_Local *l = &m->locals[m->nlocals];
        l->start = u2(&cur);
        l->length = u2(&cur);
        l->name = (uint16_t)u2(&cur);
        l->desc = (uint16_t)u2(&cur);
        l->index = (uint16_t)u2(&cur);
      }
    }
    cur.pos = at_end;
  }
  if (cur.bad) FAIL("a code attribute");
  m->has_code = 1;
  return SIFT_OK;
nomem:
  sift_fail(err, SIFT_ENOMEM, "out of memory");
  return SIFT_ENOMEM;
fail:
  return SIFT_ECORRUPT;
}

/* {======================================================
** Annotations
** ======================================================= */

#define MAX_NESTING 64  /* element values inside element values: deeper is taken as damage */

/* 1 when index is the Utf8 "value" */
static int is_value (const cf_Class *cls, uint16_t index) {
  cf_Str s;
  return cf_utf8(cls, index, &s) && s.n == 5 && memcmp(s.s, "value", 5) == 0;
}

/* 0 when out of memory */
static int add_string (cf_Class *cls, uint16_t index) {
  if (cls->nstrings == cls->strings_cap) {
    size_t cap = cls->strings_cap ? 2 * cls->strings_cap : 8;
    uint16_t *grown = (uint16_t *)realloc(cls->strings, cap * sizeof(uint16_t));
    if (grown == NULL) return 0;
    cls->strings = grown;
    cls->strings_cap = cap;
  }
  cls->strings[cls->nstrings++] = index;
  return 1;
}

static int element_pairs (cf_Class *cls, Cursor *cur, int depth);

/* one element_value at cur (4.7.16.1); its strings kept when keep (the
   "value" element's, not inside a nested annotation): 1 read, 0 damaged,
   -1 out of memory */
static int element_value (cf_Class *cls, Cursor *cur, int keep, int depth) {
  uint32_t tag = u1(cur), n, k;
  int r;
  if (cur->bad || depth > MAX_NESTING) return 0;
  switch (tag) {
    case 'B': case 'C': case 'D': case 'F': case 'I': case 'J': case 'S': case 'Z': case 'c': skip(cur, 2); break;
    case 'e': skip(cur, 4); break;                                   /* enum: type and constant names */
    case 's': {                                                      /* a String: a Utf8 index */
      uint16_t index = (uint16_t)u2(cur);
      if (keep && !cur->bad && !add_string(cls, index)) return -1;
      break;
    }
    case '@': skip(cur, 2); return element_pairs(cls, cur, depth + 1);  /* a nested annotation */
    case '[':
      n = u2(cur);
      for (k = 0; k < n && !cur->bad; k++)
        if ((r = element_value(cls, cur, keep, depth + 1)) != 1) return r;
      break;
    default: return 0;
  }
  return !cur->bad;
}

/* a nested annotation's element-value pairs (after its type), none kept */
static int element_pairs (cf_Class *cls, Cursor *cur, int depth) {
  uint32_t n = u2(cur), k;
  int r;
  for (k = 0; k < n && !cur->bad; k++) {
    skip(cur, 2);
    if ((r = element_value(cls, cur, 0, depth)) != 1) return r;
  }
  return !cur->bad;
}

/* a Runtime(In)visibleAnnotations attribute at cur, up to end: its annotations appended to cls's */
static sift_Status read_annotations (cf_Class *cls, const Cursor *outer, size_t end, int runtime,
                                     sift_Error *err) {
  Cursor cur = *outer;
  size_t n, k, j;
  cur.n = end;
  n = u2(&cur);
  if (cur.bad || n > (end - cur.pos) / 4) FAIL("an annotation count");
  if (cls->nannotations + n > cls->annotations_cap) {
    size_t cap = cls->annotations_cap ? 2 * cls->annotations_cap : 8;
    cf_Annotation *grown;
    if (cap < cls->nannotations + n) cap = cls->nannotations + n;
    if ((grown = (cf_Annotation *)realloc(cls->annotations, cap * sizeof(cf_Annotation))) == NULL) goto nomem;
    cls->annotations = grown;
    cls->annotations_cap = cap;
  }
  for (k = 0; k < n; k++) {
    cf_Annotation *a = &cls->annotations[cls->nannotations];
    size_t pairs;
    a->type = (uint16_t)u2(&cur);
    a->runtime = (uint8_t)runtime;
    a->first = cls->nstrings;
    pairs = u2(&cur);
    for (j = 0; j < pairs && !cur.bad; j++) {
      int keep = is_value(cls, (uint16_t)u2(&cur)), r;
      size_t at = cur.pos;
      if ((r = element_value(cls, &cur, keep, 0)) < 0) goto nomem;
      if (r == 0) {
        cur.pos = at;  /* (said where the element starts) */
        FAIL("an annotation's element");
      }
    }
    if (cur.bad) FAIL("an annotation");
    a->count = cls->nstrings - a->first;
    cls->nannotations++;
  }
  return SIFT_OK;
nomem:
  sift_fail(err, SIFT_ENOMEM, "out of memory");
  return SIFT_ENOMEM;
fail:
  return SIFT_ECORRUPT;
}

/* an attribute named RuntimeInvisibleAnnotations (0) or RuntimeVisibleAnnotations (1); -1 if other */
static int annotations_attribute (const cf_Class *cls, uint16_t name_index) {
  cf_Str s;
  if (!cf_utf8(cls, name_index, &s)) return -1;
  if (s.n == 27 && memcmp(s.s, "RuntimeInvisibleAnnotations", 27) == 0) return 0;
  if (s.n == 25 && memcmp(s.s, "RuntimeVisibleAnnotations", 25) == 0) return 1;
  return -1;
}

/* }====================================================== */

/* fields and methods share a layout: access, name, descriptor, attributes */
static sift_Status read_members (cf_Class *cls, Cursor *c, int methods, sift_Error *err) {
  Cursor cur = *c;
  size_t count = u2(&cur), k, j;
  if (cur.bad || count > (cur.n - cur.pos) / 8) FAIL(methods ? "the method count" : "the field count");
  if (methods && count > 0 && (cls->methods = (cf_Method *)calloc(count, sizeof(cf_Method))) == NULL) {
    sift_fail(err, SIFT_ENOMEM, "out of memory");
    return SIFT_ENOMEM;
  }
  for (k = 0; k < count; k++) {
    cf_Method *m = methods ? &cls->methods[cls->nmethods++] : NULL;
    uint16_t access = (uint16_t)u2(&cur), name = (uint16_t)u2(&cur), desc = (uint16_t)u2(&cur);
    size_t nattr = u2(&cur);
    if (m) { m->access = access; m->name = name; m->desc = desc; m->anno_first = cls->nannotations; }
    for (j = 0; j < nattr && !cur.bad; j++) {
      cf_Str aname;
      uint16_t ai = (uint16_t)u2(&cur);
      size_t len = u4(&cur);
      int visible;
      if (cur.bad || len > cur.n - cur.pos) FAIL("an attribute's length");
      if (m && !m->has_code && cf_utf8(cls, ai, &aname) && aname.n == 4 && memcmp(aname.s, "Code", 4) == 0) {
        sift_Status st = read_code(cls, m, &cur, cur.pos + len, err);
        if (st != SIFT_OK) return st;
      }
      else if (m && (visible = annotations_attribute(cls, ai)) >= 0) {
        sift_Status st = read_annotations(cls, &cur, cur.pos + len, visible, err);
        if (st != SIFT_OK) return st;
      }
      cur.pos += len;
    }
    if (m) m->nannos = cls->nannotations - m->anno_first;
    if (cur.bad) FAIL(methods ? "a method" : "a field");
  }
  *c = cur;
  return SIFT_OK;
fail:
  return SIFT_ECORRUPT;
}

sift_Status cf_parse (cf_Class *cls, const unsigned char *p, size_t n, sift_Error *err) {
  Cursor cur = { p, n, 0, 0 };
  size_t k, count;
  sift_Status st;
  memset(cls, 0, sizeof *cls);
  cls->p = p;
  cls->n = n;
  if (u4(&cur) != 0xCAFEBABEu) FAIL("no class file magic (CAFEBABE)");
  cls->minor = (uint16_t)u2(&cur);
  cls->major = (uint16_t)u2(&cur);
  if (cur.bad) FAIL("a header cut short");
  if (cls->major < 45 || cls->major > 65) {
    return sift_fail(err, SIFT_EUNSUPPORTED, "class file version %u.%u is not one sift reads (45 to 65: Java 1.1 "
                     "to 21)", cls->major, cls->minor);
  }
  count = u2(&cur);
  if (cur.bad || count == 0 || count - 1 > (n - cur.pos) / 3) FAIL("the constant pool count");
  if ((cls->pool = (uint32_t *)calloc(count, sizeof(uint32_t))) == NULL) goto nomem;
  cls->pool_count = count;
  for (k = 1; k < count; k++) {
    uint32_t tag;
    cls->pool[k] = (uint32_t)cur.pos;
    tag = u1(&cur);
    switch (tag) {
      case 1: skip(&cur, u2(&cur)); break;                          /* Utf8 */
      case 7: case 8: case 16: case 19: case 20: skip(&cur, 2); break;
      case 15: skip(&cur, 3); break;                                /* MethodHandle */
      case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: skip(&cur, 4); break;
      case 5: case 6: skip(&cur, 8); k++; break;                    /* Long, Double: two slots */
      default: cur.pos--; FAIL("a constant pool tag");
    }
    if (cur.bad) FAIL("a constant pool entry");
  }
  cls->access = (uint16_t)u2(&cur);
  cls->this_class = (uint16_t)u2(&cur);
  cls->super_class = (uint16_t)u2(&cur);
  cls->ninterfaces = (uint16_t)u2(&cur);
  cls->interfaces = cur.pos;
  skip(&cur, (size_t)cls->ninterfaces * 2);
  if (cur.bad) FAIL("the class header");
  if ((st = read_members(cls, &cur, 0, err)) != SIFT_OK) goto failed;
  if ((st = read_members(cls, &cur, 1, err)) != SIFT_OK) goto failed;
  count = u2(&cur);
  cls->anno_first = cls->nannotations;
  for (k = 0; k < count && !cur.bad; k++) {
    cf_Str name;
    uint16_t ai = (uint16_t)u2(&cur);
    size_t len = u4(&cur);
    int visible;
    if (cur.bad || len > n - cur.pos) FAIL("a class attribute's length");
    if ((visible = annotations_attribute(cls, ai)) >= 0) {
      if ((st = read_annotations(cls, &cur, cur.pos + len, visible, err)) != SIFT_OK) goto failed;
    }
    else if (len == 4 && cf_utf8(cls, ai, &name) && name.n == 15 && memcmp(name.s, "EnclosingMethod", 15) == 0) {
      cls->enclosing_class = (uint16_t)u2(&cur);
      cls->enclosing_method = (uint16_t)u2(&cur);
      cur.pos -= 4;
    }
    else if (len == 2 && cf_utf8(cls, ai, &name) && name.n == 10 && memcmp(name.s, "SourceFile", 10) == 0) {
      cls->source = (uint16_t)u2(&cur);
      cur.pos -= 2;
    }
    cur.pos += len;
  }
  if (cur.bad) FAIL("the class attributes");
  cls->nannos = cls->nannotations - cls->anno_first;
  return SIFT_OK;
nomem:
  sift_fail(err, SIFT_ENOMEM, "out of memory");
  cf_free(cls);
  return SIFT_ENOMEM;
fail:
  st = SIFT_ECORRUPT;
failed:
  cf_free(cls);
  return st;
}

void cf_free (cf_Class *c) {
  size_t k;
  for (k = 0; k < c->nmethods; k++) {
    free(c->methods[k].insns);
    free(c->methods[k].tries);
    free(c->methods[k].lines);
    free(c->methods[k].locals);
  }
  free(c->methods);
  free(c->pool);
  free(c->annotations);
  free(c->strings);
  c->methods = NULL;
  c->pool = NULL;
  c->annotations = NULL;
  c->strings = NULL;
  c->nmethods = c->pool_count = c->nannotations = c->nstrings = c->nannos = 0;
  c->annotations_cap = c->strings_cap = 0;
}

/* the entry at index with the expected tag: its offset after the tag, or 0 */
static size_t entry (const cf_Class *c, uint16_t index, unsigned tag, size_t size) {
  size_t at;
  if (index == 0 || index >= c->pool_count || (at = c->pool[index]) == 0) return 0;
  if (c->p[at] != tag || c->n - at - 1 < size) return 0;
  return at + 1;
}

static uint16_t be2 (const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }

int cf_utf8 (const cf_Class *c, uint16_t index, cf_Str *out) {
  size_t at = entry(c, index, 1, 2);
  if (at == 0 || c->n - at - 2 < be2(c->p + at)) return 0;
  out->s = c->p + at + 2;
  out->n = be2(c->p + at);
  return 1;
}

int cf_class_name (const cf_Class *c, uint16_t index, cf_Str *out) {
  size_t at = entry(c, index, 7, 2);
  return at != 0 && cf_utf8(c, be2(c->p + at), out);
}

uint16_t cf_interface (const cf_Class *c, size_t k) {
  return (uint16_t)be2(c->p + c->interfaces + 2 * k);  /* (cf_parse checked the list lies in the file) */
}

int cf_name_and_type (const cf_Class *c, uint16_t index, cf_Str *name, cf_Str *desc) {
  size_t at = entry(c, index, 12, 4);
  return at != 0 && cf_utf8(c, be2(c->p + at), name) && cf_utf8(c, be2(c->p + at + 2), desc);
}

int cf_dynamic (const cf_Class *c, uint16_t index, cf_Str *name, cf_Str *desc) {
  size_t at = entry(c, index, 18, 4), nat;  /* CONSTANT_InvokeDynamic: bootstrap method, name and type */
  if (at == 0) return 0;
  nat = entry(c, be2(c->p + at + 2), 12, 4);
  return nat != 0 && cf_utf8(c, be2(c->p + nat), name) && cf_utf8(c, be2(c->p + nat + 2), desc);
}

int cf_member (const cf_Class *c, uint16_t index, cf_Str *owner, cf_Str *name, cf_Str *desc) {
  size_t at = entry(c, index, 10, 4), nat;
  if (at == 0) at = entry(c, index, 11, 4);
  if (at == 0) at = entry(c, index, 9, 4);
  if (at == 0 || !cf_class_name(c, be2(c->p + at), owner)) return 0;
  nat = entry(c, be2(c->p + at + 2), 12, 4);
  return nat != 0 && cf_utf8(c, be2(c->p + nat), name) && cf_utf8(c, be2(c->p + nat + 2), desc);
}
