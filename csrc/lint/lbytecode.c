/*
** lbytecode.c
** Bytecode for the lint rules (sift.lint), as Lua tables: a class file's
** methods with their instructions, exception tables, lines and locals
** (core.classfile), a dex file's classes in the same shape (core.dexfile),
** and the class and dex entries of a jar or apk (core.zip_entries). The tables are per class: what a rule reads.
*/

#include <stdlib.h>
#include <string.h>

#include "core/lsift.h"
#include "core/zip.h"
#include "lint/classfile.h"
#include "lint/dex.h"

static void setstr (lua_State *L, const char *key, cf_Str s) {
  lua_pushlstring(L, (const char *)s.s, s.n);
  lua_setfield(L, -2, key);
}

static void setint (lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

/* the line of pc: the entry with the greatest start at or before it */
static lua_Integer line_of (const cf_Method *m, uint32_t pc) {
  size_t k;
  uint32_t best = 0;
  lua_Integer line = 0;
  for (k = 0; k < m->nlines; k++)
    if (m->lines[k].pc <= pc && m->lines[k].pc >= best) {
      best = m->lines[k].pc;
      line = m->lines[k].line;
    }
  return line;
}

/* a type descriptor as a class file names the class: Lcom/foo/Bar; -> com/foo/Bar */
static void push_type (lua_State *L, const unsigned char *s, size_t n) {
  if (n >= 2 && s[0] == 'L' && s[n - 1] == ';') lua_pushlstring(L, (const char *)s + 1, n - 2);
  else lua_pushlstring(L, (const char *)s, n);
}

/* annotations[first .. first + count) as `annotations` of the table on top:
   {type, runtime, values}; nothing when there are none */
static void set_class_annotations (lua_State *L, const cf_Class *c, size_t first, size_t count) {
  size_t k, j;
  if (count == 0) return;
  lua_createtable(L, (int)count, 0);
  for (k = 0; k < count; k++) {
    const cf_Annotation *a = &c->annotations[first + k];
    cf_Str s;
    lua_createtable(L, 0, 3);
    if (cf_utf8(c, a->type, &s)) {
      push_type(L, s.s, s.n);
      lua_setfield(L, -2, "type");
    }
    lua_pushboolean(L, a->runtime);
    lua_setfield(L, -2, "runtime");
    lua_createtable(L, (int)a->count, 0);
    for (j = 0; j < a->count; j++) {
      if (!cf_utf8(c, c->strings[a->first + j], &s)) continue;  /* (not a Utf8 entry: left out) */
      lua_pushlstring(L, (const char *)s.s, s.n);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "annotations");
}

static void push_insns (lua_State *L, const cf_Class *c, const cf_Method *m) {
  size_t k;
  lua_createtable(L, (int)m->ninsns, 0);
  for (k = 0; k < m->ninsns; k++) {
    const cf_Insn *in = &m->insns[k];
    cf_Str owner, name, desc;
    lua_createtable(L, 0, 6);
    setint(L, "pc", in->pc);
    lua_pushstring(L, cf_opname(in->op));
    lua_setfield(L, -2, "op");
    if (in->var >= 0) setint(L, "var", in->var);
    if (in->branch >= 0) setint(L, "branch", in->branch);
    if (in->ref && cf_member(c, in->ref, &owner, &name, &desc)) {
      setstr(L, "owner", owner);
      setstr(L, "name", name);
      setstr(L, "desc", desc);
    }
    else if (in->ref && in->op == 0xba && cf_dynamic(c, in->ref, &name, &desc)) {  /* invokedynamic: no owner */
      setstr(L, "name", name);
      setstr(L, "desc", desc);
    }
    else if (in->ref && cf_class_name(c, in->ref, &owner)) setstr(L, "class", owner);
    if (m->nlines) setint(L, "line", line_of(m, in->pc));
    if (in->op == 0xaa || in->op == 0xab) {  /* a switch: its case targets (branch is its default) */
      uint32_t target = 0;
      size_t j, nt = cf_switch_target(m, in->pc, 0, &target);
      lua_createtable(L, nt < 65536 ? (int)nt : 65536, 0);
      for (j = 0; j < nt && cf_switch_target(m, in->pc, j, &target) && j < 65536; j++) {  /* (code is < 64 KB) */
        lua_pushinteger(L, target);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
      }
      lua_setfield(L, -2, "targets");
    }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
}

static void push_tries (lua_State *L, const cf_Class *c, const cf_Method *m) {
  size_t k;
  lua_createtable(L, (int)m->ntries, 0);
  for (k = 0; k < m->ntries; k++) {
    const cf_Try *t = &m->tries[k];
    cf_Str type;
    lua_createtable(L, 0, 4);
    setint(L, "start", t->start);
    setint(L, "stop", t->end);
    setint(L, "handler", t->handler);
    if (t->type && cf_class_name(c, t->type, &type)) setstr(L, "type", type);  /* none: catches everything */
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
}

static void push_locals (lua_State *L, const cf_Class *c, const cf_Method *m) {
  size_t k;
  lua_createtable(L, (int)m->nlocals, 0);
  for (k = 0; k < m->nlocals; k++) {
    const cf_Local *l = &m->locals[k];
    cf_Str s;
    lua_createtable(L, 0, 5);
    setint(L, "start", l->start);
    setint(L, "stop", (lua_Integer)l->start + l->length);
    setint(L, "index", l->index);
    if (cf_utf8(c, l->name, &s)) setstr(L, "name", s);
    if (cf_utf8(c, l->desc, &s)) setstr(L, "desc", s);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
}

/*
** core.classfile(bytes) -> {name, super, interfaces, source, version, access, methods},
** or nil, message, code. Each method: {name, desc, access, code (its
** instructions: {pc, op, var, branch, owner, name, desc, class, line}),
** tries ({start, stop, handler, type; no type: catches everything}),
** locals ({start, stop, index, name, desc}), annotations}; abstract and
** native methods have no code. The class's and each method's
** `annotations`, when it has any: {type (android/annotation/SuppressLint),
** runtime (true: RuntimeVisibleAnnotations; false: class retention),
** values (the strings of its "value" element)}. A local or anonymous
** class's `enclosing`: {class, name, desc} of the method it is written in
** (EnclosingMethod; no name nor desc when it is written in no method).
*/
static int core_classfile (lua_State *L) {
  size_t n, k;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  cf_Class c;
  cf_Str s;
  sift_Error err;
  sift_Status st = cf_parse(&c, p, n, &err);
  if (st != SIFT_OK) return sift_pushfail(L, st, "%s", err.msg);
  lua_createtable(L, 0, 6);
  if (cf_class_name(&c, c.this_class, &s)) setstr(L, "name", s);
  if (cf_class_name(&c, c.super_class, &s)) setstr(L, "super", s);
  if (cf_utf8(&c, c.source, &s)) setstr(L, "source", s);
  lua_createtable(L, c.ninterfaces, 0);
  for (k = 0; k < c.ninterfaces; k++) {
    if (cf_class_name(&c, cf_interface(&c, k), &s)) {
      lua_pushlstring(L, (const char *)s.s, s.n);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
  }
  lua_setfield(L, -2, "interfaces");
  setint(L, "version", c.major);
  setint(L, "access", c.access);
  set_class_annotations(L, &c, c.anno_first, c.nannos);
  if (c.enclosing_class && cf_class_name(&c, c.enclosing_class, &s)) {  /* a local or anonymous class's */
    cf_Str desc;
    lua_createtable(L, 0, 3);
    setstr(L, "class", s);
    if (c.enclosing_method && cf_name_and_type(&c, c.enclosing_method, &s, &desc)) {
      setstr(L, "name", s);
      setstr(L, "desc", desc);
    }
    lua_setfield(L, -2, "enclosing");
  }
  lua_createtable(L, (int)c.nmethods, 0);
  for (k = 0; k < c.nmethods; k++) {
    const cf_Method *m = &c.methods[k];
    lua_createtable(L, 0, 6);
    if (cf_utf8(&c, m->name, &s)) setstr(L, "name", s);
    if (cf_utf8(&c, m->desc, &s)) setstr(L, "desc", s);
    setint(L, "access", m->access);
    set_class_annotations(L, &c, m->anno_first, m->nannos);
    if (m->has_code) {
      push_insns(L, &c, m);
      lua_setfield(L, -2, "code");
      push_tries(L, &c, m);
      lua_setfield(L, -2, "tries");
      push_locals(L, &c, m);
      lua_setfield(L, -2, "locals");
    }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "methods");
  cf_free(&c);
  return 1;
}

/*
** core.zip_entries(bytes [, max]) -> {{name, bytes} or {name, error}...},
** or nil, message, code: the .class and .dex entries of a jar or apk,
** inflated (each at most max bytes, 256 MB by default; a bigger or
** damaged entry has an error instead of bytes).
*/
static int core_zip_entries (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  size_t max = (size_t)luaL_optinteger(L, 2, (lua_Integer)256 << 20);
  sift_Zip z;
  sift_ZipEntry e;
  char err[160];
  lua_Integer k = 0;
  sift_Status st = sift_zip_open(&z, p, n, err, sizeof err);
  if (st != SIFT_OK) return sift_pushfail(L, st, "%s", err);
  lua_newtable(L);
  while (sift_zip_next(&z, &e)) {
    const unsigned char *body;
    unsigned char *owned;
    size_t size;
    if (!sift_zip_ends(&e, ".class") && !sift_zip_ends(&e, ".dex")) continue;
    st = sift_zip_read(&z, &e, max, &body, &size, &owned);
    if (st == SIFT_ENOMEM) return sift_pushfail(L, st, "out of memory");
    lua_createtable(L, 0, 2);
    lua_pushlstring(L, (const char *)e.name, e.namelen);
    lua_setfield(L, -2, "name");
    if (st == SIFT_OK) lua_pushlstring(L, (const char *)body, size);
    else lua_pushstring(L, st == SIFT_ETOOBIG ? "bigger than the limit" : "damaged, or not stored or deflated");
    lua_setfield(L, -2, st == SIFT_OK ? "bytes" : "error");
    free(owned);
    lua_rawseti(L, -2, ++k);
  }
  return 1;
}

/* a dex type descriptor as a class file names it: Lcom/foo/Bar; -> com/foo/Bar */
static void push_dex_class (lua_State *L, const dx_File *d, uint32_t idx) {
  const unsigned char *s;
  size_t n;
  if (!dx_type(d, idx, &s, &n)) { lua_pushnil(L); return; }
  push_type(L, s, n);
}

/* a proto as a JVM method descriptor: (Ljava/lang/String;I)V */
static int push_dex_desc (lua_State *L, const dx_File *d, uint32_t proto) {
  uint32_t ret, nparams, k;
  const unsigned char *params, *s;
  size_t n;
  luaL_Buffer b;
  if (!dx_proto(d, proto, &ret, &nparams, &params)) return 0;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '(');
  for (k = 0; k < nparams; k++)
    if (dx_type(d, params[2 * k] | (uint32_t)params[2 * k + 1] << 8, &s, &n)) luaL_addlstring(&b, (const char *)s, n);
  luaL_addchar(&b, ')');
  if (dx_type(d, ret, &s, &n)) luaL_addlstring(&b, (const char *)s, n);
  luaL_pushresult(&b);
  return 1;
}

static void set_dex_string (lua_State *L, const dx_File *d, const char *key, uint32_t idx) {
  const unsigned char *s;
  size_t n;
  if (dx_string(d, idx, &s, &n)) {
    lua_pushlstring(L, (const char *)s, n);
    lua_setfield(L, -2, key);
  }
}

/* a method's owner, name and descriptor into the table on top */
static void set_dex_method (lua_State *L, const dx_File *d, uint32_t idx, const char *owner_key) {
  uint32_t cls, name, proto;
  if (!dx_method(d, idx, &cls, &name, &proto)) return;
  if (owner_key) {
    push_dex_class(L, d, cls);
    lua_setfield(L, -2, owner_key);
  }
  set_dex_string(L, d, "name", name);
  if (push_dex_desc(L, d, proto)) lua_setfield(L, -2, "desc");
}

/* a dex file's annotations[first .. first + count) as set_class_annotations puts a class file's */
static void set_dex_annotations (lua_State *L, const dx_File *d, size_t first, size_t count) {
  size_t k, j;
  if (count == 0) return;
  lua_createtable(L, (int)count, 0);
  for (k = 0; k < count; k++) {
    const dx_Annotation *a = &d->annotations[first + k];
    const unsigned char *s;
    size_t n;
    lua_createtable(L, 0, 3);
    if (dx_type(d, a->type, &s, &n)) {
      push_type(L, s, n);
      lua_setfield(L, -2, "type");
    }
    lua_pushboolean(L, a->runtime);
    lua_setfield(L, -2, "runtime");
    lua_createtable(L, (int)a->count, 0);
    for (j = 0; j < a->count; j++) {
      if (!dx_string(d, d->values[a->first + j], &s, &n)) continue;  /* (out of range: left out) */
      lua_pushlstring(L, (const char *)s, n);
      lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "annotations");
}

static void push_dex_method (lua_State *L, const dx_File *d, const dx_Method *m) {
  size_t k;
  lua_createtable(L, 0, 6);
  set_dex_method(L, d, m->method_idx, NULL);
  setint(L, "access", m->access);
  set_dex_annotations(L, d, m->anno_first, m->nannos);
  if (!m->has_code) return;
  setint(L, "registers", m->registers);
  setint(L, "ins", m->ins);
  lua_createtable(L, (int)m->ninsns, 0);
  for (k = 0; k < m->ninsns; k++) {
    const dx_Insn *in = &m->insns[k];
    int kind = dx_refkind(in->op);
    lua_createtable(L, 0, 6);
    setint(L, "pc", in->pc);
    lua_pushstring(L, dx_opname(in->op));
    lua_setfield(L, -2, "op");
    if (in->reg >= 0) setint(L, "var", in->reg);
    if (in->src >= 0) setint(L, "src", in->src);
    if (in->nargs > 0) {  /* an invoke's argument registers, in order */
      unsigned a;
      lua_createtable(L, in->nargs, 0);
      for (a = 0; a < in->nargs; a++) {
        lua_pushinteger(L, in->range ? (lua_Integer)in->args[0] + a : (lua_Integer)in->args[a]);
        lua_rawseti(L, -2, (lua_Integer)a + 1);
      }
      lua_setfield(L, -2, "regs");
    }
    if (in->branch >= 0) setint(L, "branch", in->branch);
    if (in->op == 0x100 || in->op == 0x200) {  /* a switch payload: its targets, relative to the switch (decode
                                                  checked the payload's size against the code) */
      const unsigned char *b = in->at;
      unsigned n = (unsigned)(b[2] | b[3] << 8), a;
      const unsigned char *t = in->op == 0x100 ? b + 8 : b + 4 + 4 * (size_t)n;
      lua_createtable(L, (int)n, 0);
      for (a = 0; a < n; a++) {
        const unsigned char *e = t + 4 * (size_t)a;
        lua_pushinteger(L, (int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24));
        lua_rawseti(L, -2, (lua_Integer)a + 1);
      }
      lua_setfield(L, -2, "offsets");
    }
    if (in->ref >= 0 && in->ref <= 0xFFFFFFFF) {
      uint32_t ref = (uint32_t)in->ref, cls, name;
      if (kind == 'm') set_dex_method(L, d, ref, "owner");
      else if (kind == 'f' && dx_field(d, ref, &cls, &name)) {
        push_dex_class(L, d, cls);
        lua_setfield(L, -2, "owner");
        set_dex_string(L, d, "name", name);
      }
      else if (kind == 't') {
        push_dex_class(L, d, ref);
        lua_setfield(L, -2, "class");
      }
    }
    if (in->line) setint(L, "line", in->line);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "code");
  lua_createtable(L, (int)m->ntries, 0);
  for (k = 0; k < m->ntries; k++) {
    const dx_Try *t = &m->tries[k];
    lua_createtable(L, 0, 4);
    setint(L, "start", t->start);
    setint(L, "stop", t->end);
    setint(L, "handler", t->handler);
    if (t->type >= 0) {
      push_dex_class(L, d, (uint32_t)t->type);
      lua_setfield(L, -2, "type");
    }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "tries");
  lua_createtable(L, (int)m->nlocals, 0);
  for (k = 0; k < m->nlocals; k++) {
    const dx_Local *l = &m->locals[k];
    lua_createtable(L, 0, 5);
    setint(L, "start", l->start);
    setint(L, "stop", l->end);
    setint(L, "index", l->reg);
    if (l->name >= 0) set_dex_string(L, d, "name", (uint32_t)l->name);
    if (l->type >= 0 && l->type <= 0xFFFFFFFF) {
      const unsigned char *s;
      size_t len;
      if (dx_type(d, (uint32_t)l->type, &s, &len)) {
        lua_pushlstring(L, (const char *)s, len);
        lua_setfield(L, -2, "desc");
      }
    }
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "locals");
}

/*
** core.dexfile(bytes) -> {class...}, or nil, message, code: each class of
** a dex file in core.classfile's shape (names as class files spell them:
** com/foo/Bar; descriptors built from the protos; pcs and try ranges in
** 16-bit code units; `var` the instruction's first register; lines and
** locals ({start, stop, index = register, name, desc}) from the debug info;
** `annotations` as core.classfile's, of visibility BUILD (runtime false) or
** RUNTIME: the system's, dalvik/annotation/..., are not read; `enclosing`
** from dalvik/annotation/EnclosingMethod).
*/
static int core_dexfile (lua_State *L) {
  size_t n, k, j;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  dx_File d;
  sift_Error err;
  sift_Status st = dx_parse(&d, p, n, &err);
  if (st != SIFT_OK) return sift_pushfail(L, st, "%s", err.msg);
  lua_createtable(L, (int)d.nclasses, 0);
  for (k = 0; k < d.nclasses; k++) {
    const dx_Class *c = &d.classes[k];
    lua_createtable(L, 0, 6);
    push_dex_class(L, &d, c->class_idx);
    lua_setfield(L, -2, "name");
    if (c->super_idx != 0xFFFFFFFFu) {
      push_dex_class(L, &d, c->super_idx);
      lua_setfield(L, -2, "super");
    }
    if (c->source_idx != 0xFFFFFFFFu) set_dex_string(L, &d, "source", c->source_idx);
    setint(L, "version", d.version);
    setint(L, "access", c->access);
    set_dex_annotations(L, &d, c->anno_first, c->nannos);
    if (c->enclosing_method != 0xFFFFFFFFu) {  /* a local or anonymous class's */
      lua_createtable(L, 0, 3);
      set_dex_method(L, &d, c->enclosing_method, "class");
      lua_setfield(L, -2, "enclosing");
    }
    lua_createtable(L, (int)c->nmethods, 0);
    for (j = 0; j < c->nmethods; j++) {
      push_dex_method(L, &d, &c->methods[j]);
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "methods");
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  dx_free(&d);
  return 1;
}

static const luaL_Reg bytecode_functions[] = {
  {"dexfile", core_dexfile},
  {"classfile", core_classfile},
  {"zip_entries", core_zip_entries},
  {NULL, NULL}
};

void sift_open_bytecode (lua_State *L) {
  luaL_setfuncs(L, bytecode_functions, 0);
}
