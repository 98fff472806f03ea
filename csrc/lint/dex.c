/*
** dex.c
** Reading a dex file (see dex.h), after the Dalvik executable format: a
** 0x70-byte header of counts and offsets to the string, type, proto,
** field and method id tables and the class definitions; a class's
** class_data (ULEB128 counts and deltas) lists its methods, each with the
** offset of its code_item: registers, tries count, debug info offset, the
** instructions in 16-bit units, then the try items and the encoded catch
** handlers. Lines come from the debug info's state machine. A class's
** annotations_directory_item gives the annotation sets of the class and of
** its methods; each annotation_item not of the system's (dalvik/annotation:
** what class files keep as attributes) is read: its type and the strings of
** its "value" element, its other elements walked over (encoded_value); of
** the system's, a class's EnclosingMethod (the method a local or anonymous
** class is written in).
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/dex.h"

#define NONE 0xFFFFFFFFu

/* instruction formats, by how their operands are laid out */
enum { F10x, F12x, F11n, F11x, F10t, F20t, F22x, F21t, F21s, F21h, F21c, F23x, F22b, F22t, F22s, F22c, F30t,
       F32x, F31i, F31t, F31c, F35c, F3rc, F45cc, F4rcc, F51l, FBAD };

typedef struct Op { const char *name; unsigned char fmt; } Op;

#define R(name, fmt) { name, fmt }
static const Op OPS[256] = {
  R("nop", F10x), R("move", F12x), R("move/from16", F22x), R("move/16", F32x), R("move-wide", F12x),
  R("move-wide/from16", F22x), R("move-wide/16", F32x), R("move-object", F12x), R("move-object/from16", F22x),
  R("move-object/16", F32x), R("move-result", F11x), R("move-result-wide", F11x), R("move-result-object", F11x),
  R("move-exception", F11x), R("return-void", F10x), R("return", F11x), R("return-wide", F11x),
  R("return-object", F11x), R("const/4", F11n), R("const/16", F21s), R("const", F31i), R("const/high16", F21h),
  R("const-wide/16", F21s), R("const-wide/32", F31i), R("const-wide", F51l), R("const-wide/high16", F21h),
  R("const-string", F21c), R("const-string/jumbo", F31c), R("const-class", F21c), R("monitor-enter", F11x),
  R("monitor-exit", F11x), R("check-cast", F21c), R("instance-of", F22c), R("array-length", F12x),
  R("new-instance", F21c), R("new-array", F22c), R("filled-new-array", F35c), R("filled-new-array/range", F3rc),
  R("fill-array-data", F31t), R("throw", F11x), R("goto", F10t), R("goto/16", F20t), R("goto/32", F30t),
  R("packed-switch", F31t), R("sparse-switch", F31t), R("cmpl-float", F23x), R("cmpg-float", F23x),
  R("cmpl-double", F23x), R("cmpg-double", F23x), R("cmp-long", F23x), R("if-eq", F22t), R("if-ne", F22t),
  R("if-lt", F22t), R("if-ge", F22t), R("if-gt", F22t), R("if-le", F22t), R("if-eqz", F21t), R("if-nez", F21t),
  R("if-ltz", F21t), R("if-gez", F21t), R("if-gtz", F21t), R("if-lez", F21t),
  [0x44] = R("aget", F23x), R("aget-wide", F23x), R("aget-object", F23x), R("aget-boolean", F23x),
  R("aget-byte", F23x), R("aget-char", F23x), R("aget-short", F23x), R("aput", F23x), R("aput-wide", F23x),
  R("aput-object", F23x), R("aput-boolean", F23x), R("aput-byte", F23x), R("aput-char", F23x),
  R("aput-short", F23x), R("iget", F22c), R("iget-wide", F22c), R("iget-object", F22c), R("iget-boolean", F22c),
  R("iget-byte", F22c), R("iget-char", F22c), R("iget-short", F22c), R("iput", F22c), R("iput-wide", F22c),
  R("iput-object", F22c), R("iput-boolean", F22c), R("iput-byte", F22c), R("iput-char", F22c),
  R("iput-short", F22c), R("sget", F21c), R("sget-wide", F21c), R("sget-object", F21c), R("sget-boolean", F21c),
  R("sget-byte", F21c), R("sget-char", F21c), R("sget-short", F21c), R("sput", F21c), R("sput-wide", F21c),
  R("sput-object", F21c), R("sput-boolean", F21c), R("sput-byte", F21c), R("sput-char", F21c),
  R("sput-short", F21c), R("invoke-virtual", F35c), R("invoke-super", F35c), R("invoke-direct", F35c),
  R("invoke-static", F35c), R("invoke-interface", F35c),
  [0x74] = R("invoke-virtual/range", F3rc), R("invoke-super/range", F3rc), R("invoke-direct/range", F3rc),
  R("invoke-static/range", F3rc), R("invoke-interface/range", F3rc),
  [0x7b] = R("neg-int", F12x), R("not-int", F12x), R("neg-long", F12x), R("not-long", F12x),
  R("neg-float", F12x), R("neg-double", F12x), R("int-to-long", F12x), R("int-to-float", F12x),
  R("int-to-double", F12x), R("long-to-int", F12x), R("long-to-float", F12x), R("long-to-double", F12x),
  R("float-to-int", F12x), R("float-to-long", F12x), R("float-to-double", F12x), R("double-to-int", F12x),
  R("double-to-long", F12x), R("double-to-float", F12x), R("int-to-byte", F12x), R("int-to-char", F12x),
  R("int-to-short", F12x),
  [0x90] = R("add-int", F23x), R("sub-int", F23x), R("mul-int", F23x), R("div-int", F23x), R("rem-int", F23x),
  R("and-int", F23x), R("or-int", F23x), R("xor-int", F23x), R("shl-int", F23x), R("shr-int", F23x),
  R("ushr-int", F23x), R("add-long", F23x), R("sub-long", F23x), R("mul-long", F23x), R("div-long", F23x),
  R("rem-long", F23x), R("and-long", F23x), R("or-long", F23x), R("xor-long", F23x), R("shl-long", F23x),
  R("shr-long", F23x), R("ushr-long", F23x), R("add-float", F23x), R("sub-float", F23x), R("mul-float", F23x),
  R("div-float", F23x), R("rem-float", F23x), R("add-double", F23x), R("sub-double", F23x), R("mul-double", F23x),
  R("div-double", F23x), R("rem-double", F23x), R("add-int/2addr", F12x), R("sub-int/2addr", F12x),
  R("mul-int/2addr", F12x), R("div-int/2addr", F12x), R("rem-int/2addr", F12x), R("and-int/2addr", F12x),
  R("or-int/2addr", F12x), R("xor-int/2addr", F12x), R("shl-int/2addr", F12x), R("shr-int/2addr", F12x),
  R("ushr-int/2addr", F12x), R("add-long/2addr", F12x), R("sub-long/2addr", F12x), R("mul-long/2addr", F12x),
  R("div-long/2addr", F12x), R("rem-long/2addr", F12x), R("and-long/2addr", F12x), R("or-long/2addr", F12x),
  R("xor-long/2addr", F12x), R("shl-long/2addr", F12x), R("shr-long/2addr", F12x), R("ushr-long/2addr", F12x),
  R("add-float/2addr", F12x), R("sub-float/2addr", F12x), R("mul-float/2addr", F12x), R("div-float/2addr", F12x),
  R("rem-float/2addr", F12x), R("add-double/2addr", F12x), R("sub-double/2addr", F12x), R("mul-double/2addr", F12x),
  R("div-double/2addr", F12x), R("rem-double/2addr", F12x), R("add-int/lit16", F22s), R("rsub-int", F22s),
  R("mul-int/lit16", F22s), R("div-int/lit16", F22s), R("rem-int/lit16", F22s), R("and-int/lit16", F22s),
  R("or-int/lit16", F22s), R("xor-int/lit16", F22s), R("add-int/lit8", F22b), R("rsub-int/lit8", F22b),
  R("mul-int/lit8", F22b), R("div-int/lit8", F22b), R("rem-int/lit8", F22b), R("and-int/lit8", F22b),
  R("or-int/lit8", F22b), R("xor-int/lit8", F22b), R("shl-int/lit8", F22b), R("shr-int/lit8", F22b),
  R("ushr-int/lit8", F22b),
  [0xfa] = R("invoke-polymorphic", F45cc), R("invoke-polymorphic/range", F4rcc), R("invoke-custom", F35c),
  R("invoke-custom/range", F3rc), R("const-method-handle", F21c), R("const-method-type", F21c),
};

static const unsigned char UNITS[FBAD] = {
  1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 4, 4, 5,
};

const char *dx_opname (unsigned op) {
  if (op == 0x100) return "packed-switch-payload";
  if (op == 0x200) return "sparse-switch-payload";
  if (op == 0x300) return "fill-array-data-payload";
  return op <= 0xff ? OPS[op].name : NULL;
}

int dx_refkind (unsigned op) {
  if (op == 0x1a || op == 0x1b) return 's';
  if (op == 0x1c || op == 0x1f || op == 0x20 || op == 0x22 || op == 0x23 || op == 0x24 || op == 0x25) return 't';
  if (op >= 0x52 && op <= 0x6d) return 'f';
  if ((op >= 0x6e && op <= 0x72) || (op >= 0x74 && op <= 0x78) || op == 0xfa || op == 0xfb) return 'm';
  return 0;
}

static uint32_t le2 (const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t le4 (const unsigned char *p) { return le2(p) | le2(p + 2) << 16; }

/* a ULEB128 at *pos (at most 5 bytes); 0 when it runs past n */
static int uleb (const unsigned char *p, size_t n, size_t *pos, uint32_t *out) {
  uint32_t v = 0;
  int shift;
  for (shift = 0; shift < 35; shift += 7) {
    if (*pos >= n) return 0;
    v |= (uint32_t)(p[*pos] & 0x7f) << shift;
    if (!(p[(*pos)++] & 0x80)) { *out = v; return 1; }
  }
  return 0;
}

static int sleb (const unsigned char *p, size_t n, size_t *pos, int32_t *out) {
  size_t start = *pos;
  uint32_t v;
  int bits;
  if (!uleb(p, n, pos, &v)) return 0;
  bits = 7 * (int)(*pos - start);
  if (bits < 32 && (v & (1u << (bits - 1)))) v |= ~0u << bits;  /* sign-extend */
  *out = (int32_t)v;
  return 1;
}


#define FAIL(what, at) return sift_fail(err, SIFT_ECORRUPT, "dex file: %s at byte %zu", what, (size_t)(at))

/* one instruction at unit pc of insns (count units): its size in units, 0 if malformed */
static uint32_t decode (const unsigned char *u, uint32_t count, uint32_t pc, dx_Insn *in) {
  const unsigned char *at = u + 2 * (size_t)pc;
  unsigned op = at[0], hi = at[1];
  const Op *o;
  uint32_t size;
  in->pc = pc;
  in->at = at;
  in->reg = in->branch = in->src = -1;
  in->nargs = in->range = 0;
  in->ref = -1;
  in->line = 0;
  if (op == 0 && hi != 0) {  /* a payload: switch tables, array data */
    uint32_t k;
    if (count - pc < 4 && hi != 2) return 0;
    if (count - pc < 2) return 0;
    in->op = (uint16_t)(hi << 8);
    k = le2(at + 2);
    if (hi == 1) size = 4 + k * 2;
    else if (hi == 2) size = 2 + k * 4;
    else if (hi == 3) {
      uint64_t bytes = (uint64_t)le2(at + 2) * le4(at + 4);
      if (bytes > (uint64_t)count * 2) return 0;
      size = 4 + (uint32_t)((bytes + 1) / 2);
    }
    else return 0;
    return size <= count - pc ? size : 0;
  }
  in->op = (uint16_t)op;
  o = &OPS[op];
  if (o->name == NULL) return 0;  /* unused: not an instruction */
  size = UNITS[o->fmt];
  if (size > count - pc) return 0;
  switch (o->fmt) {
    case F12x: case F11n: case F22t: case F22s: case F22c: in->reg = hi & 0x0f; break;
    case F11x: case F21t: case F21s: case F21h: case F21c: case F22x: case F23x: case F22b: case F31i: case F31t:
    case F31c: case F51l: in->reg = hi; break;
    case F32x: in->reg = (int32_t)le2(at + 2); break;
    case F35c: case F45cc: if (hi >> 4) in->reg = at[4] & 0x0f; break;   /* the first argument */
    case F3rc: case F4rcc: if (hi) in->reg = (int32_t)le2(at + 4); break;
    default: break;
  }
  switch (o->fmt) {  /* a move's source; an invoke's arguments (35c: registers C D E F G, at most 5) */
    case F12x: in->src = hi >> 4; break;
    case F22x: in->src = (int32_t)le2(at + 2); break;
    case F32x: in->src = (int32_t)le2(at + 4); break;
    case F35c: case F45cc: {
      unsigned n = hi >> 4, k;
      if (n > 5) return 0;
      for (k = 0; k < n; k++) in->args[k] = (uint16_t)(k < 4 ? (at[4 + k / 2] >> (4 * (k % 2))) & 0x0f : hi & 0x0f);
      in->nargs = (uint8_t)n;
      break;
    }
    case F3rc: case F4rcc: in->nargs = hi; in->range = 1; in->args[0] = le2(at + 4); break;
    default: break;
  }
  switch (o->fmt) {
    case F10t: in->branch = (int32_t)pc + (int8_t)hi; break;
    case F20t: case F21t: case F22t: in->branch = (int32_t)pc + (int16_t)le2(at + 2); break;
    case F30t: case F31t: in->branch = (int32_t)pc + (int32_t)le4(at + 2); break;
    default: break;
  }
  if (dx_refkind(op)) in->ref = o->fmt == F31c ? (int64_t)le4(at + 2) : (int64_t)le2(at + 2);
  return size;
}

/* the locals being read: open[reg] is the index of reg's open local, or NONE */
typedef struct Locals {
  dx_Method *m;
  uint32_t *open, regs;
  size_t cap;
} Locals;

static void end_local (Locals *ls, uint32_t addr, uint32_t reg) {
  if (reg < ls->regs && ls->open[reg] != NONE) {
    ls->m->locals[ls->open[reg]].end = addr;
    ls->open[reg] = NONE;
  }
}

/* a local variable starts in reg at addr (the one there before ends); 0 when out of memory */
static int start_local (Locals *ls, uint32_t addr, uint32_t reg, uint32_t name, uint32_t type) {
  dx_Method *m = ls->m;
  if (reg >= ls->regs) return 1;  /* not a register of this method: ignored */
  end_local(ls, addr, reg);
  if (m->nlocals == ls->cap) {
    size_t cap = ls->cap ? 2 * ls->cap : 8;
    dx_Local *grown = (dx_Local *)realloc(m->locals, cap * sizeof(dx_Local));
    if (grown == NULL) return 0;
    m->locals = grown;
    ls->cap = cap;
  }
  ls->open[reg] = (uint32_t)m->nlocals;
  m->locals[m->nlocals++] = (dx_Local){ addr, NONE, reg, (int64_t)name - 1, (int64_t)type - 1 };
  return 1;
}

/* a debug_info_item: each instruction gets the line of the last position
   entry at or before it; locals from START_LOCAL to END_LOCAL (or the end).
   0 when out of memory; a damaged item just ends early */
static int read_debug (const dx_File *d, uint32_t off, dx_Method *m, uint32_t units, uint32_t regs) {
  const unsigned char *p = d->p;
  size_t n = d->n, pos = off, k = 0;
  uint32_t line, params, addr = 0, cur = 0, x, reg, name, type, steps = 0;
  int32_t delta;
  Locals ls = { m, NULL, regs, 0 };
  if (off == 0 || off >= n || !uleb(p, n, &pos, &line) || !uleb(p, n, &pos, &params)) return 1;
  if (params > n - pos) return 1;
  while (params-- > 0) if (!uleb(p, n, &pos, &x)) return 1;
  if (regs > 0) {
    if ((ls.open = (uint32_t *)malloc(regs * sizeof(uint32_t))) == NULL) return 0;
    for (x = 0; x < regs; x++) ls.open[x] = NONE;
  }
  while (pos < n && steps++ < (1u << 24)) {
    unsigned op = p[pos++];
    if (op == 0x00) break;
    else if (op == 0x01) { if (!uleb(p, n, &pos, &x)) break; addr += x; }
    else if (op == 0x02) { if (!sleb(p, n, &pos, &delta)) break; line += (uint32_t)delta; }
    else if (op == 0x03 || op == 0x04) {  /* start local (extended: and its signature) */
      if (!uleb(p, n, &pos, &reg) || !uleb(p, n, &pos, &name) || !uleb(p, n, &pos, &type)) break;
      if (op == 0x04 && !uleb(p, n, &pos, &x)) break;
      if (!start_local(&ls, addr, reg, name, type)) { free(ls.open); return 0; }
    }
    else if (op == 0x05) { if (!uleb(p, n, &pos, &reg)) break; end_local(&ls, addr, reg); }
    else if (op == 0x06 || op == 0x09) { if (!uleb(p, n, &pos, &x)) break; }  /* restart local, set file */
    else if (op >= 0x0a) {  /* a special opcode: a new position entry */
      unsigned adj = op - 0x0a;
      line += (uint32_t)(-4 + (int)(adj % 15));
      addr += adj / 15;
      while (k < m->ninsns && m->insns[k].pc < addr) m->insns[k++].line = cur;
      cur = line;
    }
  }
  while (k < m->ninsns) m->insns[k++].line = cur;
  for (k = 0; k < m->nlocals; k++) if (m->locals[k].end == NONE) m->locals[k].end = units;
  free(ls.open);
  return 1;
}

static sift_Status read_code (dx_File *d, uint32_t off, dx_Method *m, sift_Error *err) {
  const unsigned char *p = d->p;
  size_t n = d->n, tries_at, handlers_at;
  uint32_t ntries, debug, count, pc, k;
  if (off > n || n - off < 16) FAIL("a code item", off);
  m->registers = le2(p + off);
  m->ins = le2(p + off + 2);
  ntries = le2(p + off + 6);
  debug = le4(p + off + 8);
  count = le4(p + off + 12);
  if (count > (n - off - 16) / 2) FAIL("a code item's instruction count", off + 12);
  if (count > 0 && (m->insns = (dx_Insn *)malloc(count * sizeof(dx_Insn))) == NULL) goto nomem;
  for (pc = 0; pc < count; ) {
    uint32_t size = decode(p + off + 16, count, pc, &m->insns[m->ninsns]);
    if (size == 0) FAIL("an instruction", off + 16 + 2 * (size_t)pc);
    m->ninsns++;
    pc += size;
  }
  tries_at = off + 16 + 2 * (size_t)count + (ntries && (count & 1) ? 2 : 0);
  if (tries_at > n || ntries > (n - tries_at) / 8) FAIL("a code item's try count", off + 6);
  handlers_at = tries_at + 8 * (size_t)ntries;
  for (k = 0; k < ntries; k++) {  /* a try item, then its handler list: typed pairs and a catch-all */
    const unsigned char *t = p + tries_at + 8 * (size_t)k;
    size_t pos = handlers_at + le2(t + 6);
    uint32_t start = le4(t), end = start + le2(t + 4), h, pairs;
    int32_t size;
    if (!sleb(p, n, &pos, &size)) FAIL("a catch handler", handlers_at);
    pairs = (uint32_t)(size < 0 ? -(int64_t)size : size);
    if (pairs > (n - pos) / 2) FAIL("a catch handler's count", pos);
    {
      dx_Try *grown = (dx_Try *)realloc(m->tries, (m->ntries + pairs + 1) * sizeof(dx_Try));
      if (grown == NULL) goto nomem;
      m->tries = grown;
    }
    for (h = 0; h < pairs; h++) {
      uint32_t type, addr;
      if (!uleb(p, n, &pos, &type) || !uleb(p, n, &pos, &addr)) FAIL("a catch handler", pos);
      m->tries[m->ntries++] = (dx_Try){ start, end, addr, (int64_t)type };
    }
    if (size <= 0) {
      uint32_t addr;
      if (!uleb(p, n, &pos, &addr)) FAIL("a catch-all handler", pos);
      m->tries[m->ntries++] = (dx_Try){ start, end, addr, -1 };
    }
  }
  if (!read_debug(d, debug, m, count, le2(p + off))) goto nomem;
  m->has_code = 1;
  return SIFT_OK;
nomem:
  sift_fail(err, SIFT_ENOMEM, "out of memory");
  return SIFT_ENOMEM;
}

/* a class's class_data_item: its direct and virtual methods */
static sift_Status read_class_data (dx_File *d, uint32_t off, dx_Class *c, sift_Error *err) {
  const unsigned char *p = d->p;
  size_t n = d->n, pos = off;
  uint32_t sizes[4], k, list, x;
  for (k = 0; k < 4; k++) if (!uleb(p, n, &pos, &sizes[k])) FAIL("a class's data", off);
  for (k = 0; k < 2 * (sizes[0] + sizes[1]); k++) if (!uleb(p, n, &pos, &x)) FAIL("a class's fields", pos);
  if (sizes[2] > (n - pos) / 3 || sizes[3] > (n - pos) / 3 || sizes[2] + sizes[3] > (n - pos) / 3)
    FAIL("a class's method count", off);
  if (sizes[2] + sizes[3] > 0
      && (c->methods = (dx_Method *)calloc(sizes[2] + sizes[3], sizeof(dx_Method))) == NULL) {
    sift_fail(err, SIFT_ENOMEM, "out of memory");
    return SIFT_ENOMEM;
  }
  for (list = 2; list < 4; list++) {
    uint32_t idx = 0;
    if (list == 3) c->ndirect = c->nmethods;
    for (k = 0; k < sizes[list]; k++) {
      uint32_t diff, access, code;
      dx_Method *m = &c->methods[c->nmethods];
      if (!uleb(p, n, &pos, &diff) || !uleb(p, n, &pos, &access) || !uleb(p, n, &pos, &code))
        FAIL("a method", pos);
      idx += diff;
      if (idx >= d->nmethods) FAIL("a method index", pos);
      m->method_idx = idx;
      m->access = access;
      c->nmethods++;
      if (code) {
        sift_Status st = read_code(d, code, m, err);
        if (st != SIFT_OK) return st;
      }
    }
  }
  return SIFT_OK;
}

/* {======================================================
** Annotations
** ======================================================= */

#define MAX_NESTING 64  /* encoded values inside encoded values: deeper is taken as damage */

static int is_value (const dx_File *d, uint32_t name) {
  const unsigned char *s;
  size_t len;
  return dx_string(d, name, &s, &len) && len == 5 && memcmp(s, "value", 5) == 0;
}

/* 0 when out of memory */
static int add_value (dx_File *d, uint32_t idx) {
  if (d->nvalues == d->values_cap) {
    size_t cap = d->values_cap ? 2 * d->values_cap : 8;
    uint32_t *grown = (uint32_t *)realloc(d->values, cap * sizeof(uint32_t));
    if (grown == NULL) return 0;
    d->values = grown;
    d->values_cap = cap;
  }
  d->values[d->nvalues++] = idx;
  return 1;
}

static int encoded_value (dx_File *d, size_t *pos, int keep, int depth);

/* an encoded_annotation's elements (after its type); the strings of the
   one named "value" kept when keep: 1 read, 0 damaged, -1 out of memory */
static int encoded_pairs (dx_File *d, size_t *pos, int keep, int depth) {
  uint32_t size, k, name;
  int r;
  if (!uleb(d->p, d->n, pos, &size)) return 0;
  for (k = 0; k < size; k++) {  /* (each pair takes 2 bytes at least: a damaged count ends at the file's end) */
    if (!uleb(d->p, d->n, pos, &name)) return 0;
    if ((r = encoded_value(d, pos, keep && is_value(d, name), depth)) != 1) return r;
  }
  return 1;
}

/* an encoded_value at *pos: a header byte (value_arg << 5 | value_type), then its data */
static int encoded_value (dx_File *d, size_t *pos, int keep, int depth) {
  const unsigned char *p = d->p;
  size_t n = d->n;
  unsigned head, type, arg, j;
  uint32_t size, k, x;
  int r;
  if (depth > MAX_NESTING || *pos >= n) return 0;
  head = p[(*pos)++];
  type = head & 0x1f;
  arg = head >> 5;
  switch (type) {
    case 0x00: case 0x02: case 0x03: case 0x04: case 0x06: case 0x10: case 0x11: case 0x15: case 0x16: case 0x18:
    case 0x19: case 0x1a: case 0x1b:  /* numbers, method types and handles, types, fields, methods, enums */
      if (arg + 1 > n - *pos) return 0;
      *pos += arg + 1;
      return 1;
    case 0x17:  /* a string: its index in arg + 1 bytes, little-endian */
      if (arg > 3 || arg + 1 > n - *pos) return 0;
      for (x = 0, j = 0; j <= arg; j++) x |= (uint32_t)p[*pos + j] << (8 * j);
      *pos += arg + 1;
      return !keep || add_value(d, x) ? 1 : -1;
    case 0x1c:  /* an array */
      if (!uleb(p, n, pos, &size)) return 0;
      for (k = 0; k < size; k++) if ((r = encoded_value(d, pos, keep, depth + 1)) != 1) return r;
      return 1;
    case 0x1d:  /* a nested annotation: nothing of it kept */
      if (!uleb(p, n, pos, &x)) return 0;
      return encoded_pairs(d, pos, 0, depth + 1);
    case 0x1e: case 0x1f: return 1;  /* null, a boolean (in arg) */
    default: return 0;
  }
}

/* a class's system annotation at item: when it is dalvik/annotation/EnclosingMethod (a local or
   anonymous class's), the method its value names into c->enclosing_method */
static sift_Status read_enclosing (dx_File *d, size_t item, dx_Class *c, sift_Error *err) {
  static const char ENCLOSING[] = "Ldalvik/annotation/EnclosingMethod;";
  const unsigned char *p = d->p, *s;
  size_t n = d->n, pos = item + 1, len;
  uint32_t type, size, k, name;
  if (!uleb(p, n, &pos, &type)) FAIL("an annotation's type", item + 1);
  if (!dx_type(d, type, &s, &len) || len != sizeof ENCLOSING - 1 || memcmp(s, ENCLOSING, len) != 0) return SIFT_OK;
  if (!uleb(p, n, &pos, &size)) FAIL("an annotation's elements", item);
  for (k = 0; k < size; k++) {
    unsigned head, j;
    uint32_t x = 0;
    if (!uleb(p, n, &pos, &name) || pos >= n) FAIL("an annotation's elements", item);
    head = p[pos];
    if ((head & 0x1f) == 0x1a && (head >> 5) <= 3 && (head >> 5) + 1 <= n - pos - 1 && is_value(d, name)) {
      for (j = 0; j <= head >> 5; j++) x |= (uint32_t)p[pos + 1 + j] << (8 * j);  /* a method index */
      c->enclosing_method = x;
    }
    if (encoded_value(d, &pos, 0, 0) != 1) FAIL("an annotation's elements", item);
  }
  return SIFT_OK;
}

/* the annotation_set_item at off (0: none): its BUILD and RUNTIME annotations appended to d's;
   owner: the class whose own set it is (its EnclosingMethod read), or NULL */
static sift_Status read_set (dx_File *d, uint32_t off, size_t *first, size_t *count, dx_Class *owner,
                             sift_Error *err) {
  const unsigned char *p = d->p;
  size_t n = d->n, size, k;
  *first = d->nannotations;
  *count = 0;
  if (off == 0) return SIFT_OK;
  if (off > n || n - off < 4) FAIL("an annotation set", off);
  size = le4(p + off);
  if (size > (n - off - 4) / 4) FAIL("an annotation set's size", off);
  if (size > n - d->visits) FAIL("annotation sets named more often than the file could hold", off);
  d->visits += size;  /* (a set may be shared: this bounds the work a hostile file can ask for) */
  for (k = 0; k < size; k++) {
    size_t item = le4(p + off + 4 + 4 * k), pos = item + 1;
    uint32_t type;
    dx_Annotation *a;
    int r;
    if (item >= n) FAIL("an annotation's offset", off + 4 + 4 * k);
    if (p[item] == 2) {  /* VISIBILITY_SYSTEM: dalvik/annotation/..., of which only EnclosingMethod is read */
      sift_Status st = owner ? read_enclosing(d, item, owner, err) : SIFT_OK;
      if (st != SIFT_OK) return st;
      continue;
    }
    if (p[item] > 2) FAIL("an annotation's visibility", item);
    if (!uleb(p, n, &pos, &type)) FAIL("an annotation's type", item + 1);
    if (d->nannotations == d->annotations_cap) {
      size_t cap = d->annotations_cap ? 2 * d->annotations_cap : 8;
      dx_Annotation *grown = (dx_Annotation *)realloc(d->annotations, cap * sizeof(dx_Annotation));
      if (grown == NULL) goto nomem;
      d->annotations = grown;
      d->annotations_cap = cap;
    }
    a = &d->annotations[d->nannotations];
    a->type = type;
    a->runtime = p[item] == 1;
    a->first = d->nvalues;
    if ((r = encoded_pairs(d, &pos, 1, 0)) < 0) goto nomem;
    if (r == 0) FAIL("an annotation's elements", item);
    a->count = d->nvalues - a->first;
    d->nannotations++;
  }
  *count = d->nannotations - *first;
  return SIFT_OK;
nomem:
  sift_fail(err, SIFT_ENOMEM, "out of memory");
  return SIFT_ENOMEM;
}

/* the method of c with index idx (each of its two lists is by index); NULL */
static dx_Method *class_method (dx_Class *c, uint32_t idx) {
  size_t ranges[2][2] = { { 0, c->ndirect }, { c->ndirect, c->nmethods } }, r;
  for (r = 0; r < 2; r++) {
    size_t lo = ranges[r][0], hi = ranges[r][1];
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (c->methods[mid].method_idx == idx) return &c->methods[mid];
      if (c->methods[mid].method_idx < idx) lo = mid + 1;
      else hi = mid;
    }
  }
  return NULL;
}

/* a class's annotations_directory_item: the class's set, then the fields'
   (skipped), the methods' and the parameters' (not read) */
static sift_Status read_directory (dx_File *d, uint32_t off, dx_Class *c, sift_Error *err) {
  const unsigned char *p = d->p;
  size_t n = d->n, at;
  uint32_t nfields, nmethods, k;
  sift_Status st;
  if (off > n || n - off < 16) FAIL("an annotations directory", off);
  nfields = le4(p + off + 4);
  nmethods = le4(p + off + 8);
  at = off + 16;
  if (nfields > (n - at) / 8) FAIL("an annotations directory's field count", off + 4);
  at += 8 * (size_t)nfields;
  if (nmethods > (n - at) / 8) FAIL("an annotations directory's method count", off + 8);
  if ((st = read_set(d, le4(p + off), &c->anno_first, &c->nannos, c, err)) != SIFT_OK) return st;
  for (k = 0; k < nmethods; k++) {
    const unsigned char *e = p + at + 8 * (size_t)k;
    dx_Method *m = class_method(c, le4(e));
    if (m == NULL) continue;  /* not a method of this class's data: nothing to put it on */
    if ((st = read_set(d, le4(e + 4), &m->anno_first, &m->nannos, NULL, err)) != SIFT_OK) return st;
  }
  return SIFT_OK;
}

/* }====================================================== */

/* a table of count entries of size bytes at off: inside the file */
static int table_fits (size_t n, uint32_t count, uint32_t off, size_t size) {
  return count == 0 || (off <= n && count <= (n - off) / size);
}

sift_Status dx_parse (dx_File *d, const unsigned char *p, size_t n, sift_Error *err) {
  uint32_t nclasses, classes_off, k;
  sift_Status st;
  memset(d, 0, sizeof *d);
  d->p = p;
  d->n = n;
  if (n < 0x70 || memcmp(p, "dex\n0", 5) != 0 || p[7] != 0) FAIL("no dex magic", 0);
  d->version = (unsigned)((p[5] - '0') * 10 + (p[6] - '0'));
  if (p[5] < '0' || p[5] > '9' || p[6] < '0' || p[6] > '9' || d->version < 35 || d->version > 39) {
    return sift_fail(err, SIFT_EUNSUPPORTED, "dex version %.3s is not one sift reads (035 to 039)",
                     (const char *)p + 4);
  }
  if (le4(p + 0x28) != 0x12345678u) FAIL("a byte order other than little-endian", 0x28);
  d->nstrings = le4(p + 0x38); d->strings_off = le4(p + 0x3c);
  d->ntypes = le4(p + 0x40);   d->types_off = le4(p + 0x44);
  d->nprotos = le4(p + 0x48);  d->protos_off = le4(p + 0x4c);
  d->nfields = le4(p + 0x50);  d->fields_off = le4(p + 0x54);
  d->nmethods = le4(p + 0x58); d->methods_off = le4(p + 0x5c);
  nclasses = le4(p + 0x60);    classes_off = le4(p + 0x64);
  if (!table_fits(n, d->nstrings, d->strings_off, 4)) FAIL("the string ids", 0x38);
  if (!table_fits(n, d->ntypes, d->types_off, 4)) FAIL("the type ids", 0x40);
  if (!table_fits(n, d->nprotos, d->protos_off, 12)) FAIL("the proto ids", 0x48);
  if (!table_fits(n, d->nfields, d->fields_off, 8)) FAIL("the field ids", 0x50);
  if (!table_fits(n, d->nmethods, d->methods_off, 8)) FAIL("the method ids", 0x58);
  if (!table_fits(n, nclasses, classes_off, 32)) FAIL("the class definitions", 0x60);
  if (nclasses > 0 && (d->classes = (dx_Class *)calloc(nclasses, sizeof(dx_Class))) == NULL) {
    sift_fail(err, SIFT_ENOMEM, "out of memory");
    return SIFT_ENOMEM;
  }
  for (k = 0; k < nclasses; k++) {
    const unsigned char *def = p + classes_off + 32 * (size_t)k;
    dx_Class *c = &d->classes[d->nclasses++];
    uint32_t data = le4(def + 24), annotations = le4(def + 20);
    c->class_idx = le4(def);
    c->enclosing_method = NONE;
    c->access = le4(def + 4);
    c->super_idx = le4(def + 8);
    c->source_idx = le4(def + 16);
    if ((data && (st = read_class_data(d, data, c, err)) != SIFT_OK)
        || (annotations && (st = read_directory(d, annotations, c, err)) != SIFT_OK)) {
      dx_free(d);
      return st;
    }
  }
  return SIFT_OK;
}

void dx_free (dx_File *d) {
  size_t k, j;
  for (k = 0; k < d->nclasses; k++) {
    for (j = 0; j < d->classes[k].nmethods; j++) {
      free(d->classes[k].methods[j].insns);
      free(d->classes[k].methods[j].tries);
      free(d->classes[k].methods[j].locals);
    }
    free(d->classes[k].methods);
  }
  free(d->classes);
  free(d->annotations);
  free(d->values);
  d->classes = NULL;
  d->annotations = NULL;
  d->values = NULL;
  d->nclasses = d->nannotations = d->nvalues = d->annotations_cap = d->values_cap = d->visits = 0;
}

int dx_string (const dx_File *d, uint32_t idx, const unsigned char **s, size_t *len) {
  size_t pos, end;
  uint32_t utf16;
  if (idx >= d->nstrings) return 0;
  pos = le4(d->p + d->strings_off + 4 * (size_t)idx);
  if (pos >= d->n || !uleb(d->p, d->n, &pos, &utf16)) return 0;
  for (end = pos; end < d->n && d->p[end] != 0; end++) {}
  if (end >= d->n) return 0;
  *s = d->p + pos;
  *len = end - pos;
  return 1;
}

int dx_type (const dx_File *d, uint32_t idx, const unsigned char **s, size_t *len) {
  if (idx >= d->ntypes) return 0;
  return dx_string(d, le4(d->p + d->types_off + 4 * (size_t)idx), s, len);
}

int dx_method (const dx_File *d, uint32_t idx, uint32_t *class_idx, uint32_t *name_idx, uint32_t *proto_idx) {
  const unsigned char *m;
  if (idx >= d->nmethods) return 0;
  m = d->p + d->methods_off + 8 * (size_t)idx;
  *class_idx = le2(m);
  *proto_idx = le2(m + 2);
  *name_idx = le4(m + 4);
  return 1;
}

int dx_field (const dx_File *d, uint32_t idx, uint32_t *class_idx, uint32_t *name_idx) {
  const unsigned char *f;
  if (idx >= d->nfields) return 0;
  f = d->p + d->fields_off + 8 * (size_t)idx;
  *class_idx = le2(f);
  *name_idx = le4(f + 4);
  return 1;
}

int dx_proto (const dx_File *d, uint32_t idx, uint32_t *return_idx, uint32_t *nparams,
              const unsigned char **params) {
  const unsigned char *pr;
  uint32_t off;
  if (idx >= d->nprotos) return 0;
  pr = d->p + d->protos_off + 12 * (size_t)idx;
  *return_idx = le4(pr + 4);
  off = le4(pr + 8);
  *nparams = 0;
  *params = NULL;
  if (off == 0) return 1;
  if (off > d->n || d->n - off < 4) return 0;
  *nparams = le4(d->p + off);
  if (*nparams > (d->n - off - 4) / 2) return 0;
  *params = d->p + off + 4;
  return 1;
}
