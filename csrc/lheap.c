/*
** lheap.c
** sift.Heap: the HPROF index as a Lua object with raw, numeric methods;
** lua/sift/hprof.lua builds the friendly heap API on top. Object numbers
** are 1-based dense numbers (objects sorted by id); class numbers are
** 1-based indexes of the class table. Object references come back as ids
** (integers), which Lua turns into objects.
** Also sift.Object, the small handle (number + owner) that Lua gives its
** behaviour through core.object_metatable().
*/

#include <stdlib.h>
#include <string.h>

#include "hprof.h"
#include "lheap.h"
#include "lsift.h"

#define NSLOTS(h) ((h)->nclasses + 12 + 1)

static void free_groups (LHeap *lh) {
  free(lh->start);
  free(lh->by_class);
  lh->start = NULL;
  lh->by_class = NULL;
}


LHeap *sift_checkheap (lua_State *L) {
  LHeap *lh = (LHeap *)luaL_checkudata(L, 1, SIFT_HEAP_T);
  if (!lh->built) luaL_error(L, "attempt to use a closed " SIFT_HEAP_T);
  return lh;
}

uint64_t sift_checknum (lua_State *L, const hp_Heap *h, int i) {
  lua_Integer num = luaL_checkinteger(L, i);
  luaL_argcheck(L, num >= 1 && (lua_Unsigned)num <= h->nobjs, i,
                "no such object number");
  return (uint64_t)num - 1;
}

static uint64_t checkclass (lua_State *L, const hp_Heap *h, int i) {
  lua_Integer c = luaL_checkinteger(L, i);
  luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, i,
                "no such class number");
  return (uint64_t)c - 1;
}

static const char *const type_names[12] = {
  NULL, NULL, "object", NULL, "boolean", "char", "float", "double", "byte",
  "short", "int", "long"
};

static const char *kind_name (int kind) {
  switch (kind) {
    case HP_CLASS_DUMP: return "class";
    case HP_INSTANCE_DUMP: return "instance";
    case HP_OBJ_ARRAY_DUMP: return "object_array";
    default: return "primitive_array";
  }
}

const char *sift_root_name (int kind) {
  switch (kind) {
    case 0xFF: return "unknown";
    case 0x01: return "jni_global";
    case 0x02: return "jni_local";
    case 0x03: return "java_frame";
    case 0x04: return "native_stack";
    case 0x05: return "sticky_class";
    case 0x06: return "thread_block";
    case 0x07: return "monitor_used";
    case 0x08: return "thread_object";
    case 0x89: return "interned_string";
    case 0x8A: return "finalizing";
    case 0x8B: return "debugger";
    case 0x8C: return "reference_cleanup";
    case 0x8D: return "vm_internal";
    case 0x8E: return "jni_monitor";
    case 0x90: return "unreachable";
    default: return "other";
  }
}

static const char *heap_name (uint32_t heap) {
  switch (heap) {
    case HP_HEAP_DEFAULT: return "default";
    case HP_HEAP_APP: return "app";
    case HP_HEAP_IMAGE: return "image";
    case HP_HEAP_ZYGOTE: return "zygote";
    case HP_HEAP_JIT: return "jit";
    default: return "other";
  }
}

/* the UTF-16 code units at p (n of them) as UTF-8; lone surrogates become
   U+FFFD */
static void push_utf16 (lua_State *L, const unsigned char *p, uint64_t n,
                        int little) {
  luaL_Buffer b;
  uint64_t i;
  luaL_buffinit(L, &b);
  for (i = 0; i < n; i++) {
    unsigned c = little ? (unsigned)p[2 * i] | (unsigned)p[2 * i + 1] << 8
                        : (unsigned)p[2 * i] << 8 | p[2 * i + 1];
    unsigned long cp = c;
    char out[4];
    int k = 0;
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) {  /* a surrogate pair */
      unsigned d = little ? (unsigned)p[2 * i + 2] | (unsigned)p[2 * i + 3] << 8
                          : (unsigned)p[2 * i + 2] << 8 | p[2 * i + 3];
      if (d >= 0xDC00 && d < 0xE000) {
        cp = 0x10000 + ((unsigned long)(c - 0xD800) << 10) + (d - 0xDC00);
        i++;
      }
      else cp = 0xFFFD;
    }
    else if (c >= 0xD800 && c < 0xE000) cp = 0xFFFD;
    if (cp < 0x80) out[k++] = (char)cp;
    else if (cp < 0x800) {
      out[k++] = (char)(0xC0 | cp >> 6);
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000) {
      out[k++] = (char)(0xE0 | cp >> 12);
      out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    else {
      out[k++] = (char)(0xF0 | cp >> 18);
      out[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
      out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    luaL_addlstring(&b, out, (size_t)k);
  }
  luaL_pushresult(&b);
}

/* push the value of basic type t stored (big-endian) at p */
static void push_value (lua_State *L, const hp_Heap *h, int t,
                        const unsigned char *p) {
  uint64_t v = 0;
  int i, size = hp_type_size(h, t);
  for (i = 0; i < size; i++) v = v << 8 | p[i];
  switch (t) {
    case HP_OBJECT: lua_pushinteger(L, (lua_Integer)v); break;
    case HP_BOOLEAN: lua_pushboolean(L, v != 0); break;
    case HP_CHAR: push_utf16(L, p, 1, 0); break;
    case HP_FLOAT: {
      uint32_t u = (uint32_t)v;
      float f;
      memcpy(&f, &u, sizeof f);
      lua_pushnumber(L, (lua_Number)f);
      break;
    }
    case HP_DOUBLE: {
      double d;
      memcpy(&d, &v, sizeof d);
      lua_pushnumber(L, (lua_Number)d);
      break;
    }
    case HP_BYTE: lua_pushinteger(L, (int8_t)v); break;
    case HP_SHORT: lua_pushinteger(L, (int16_t)v); break;
    case HP_INT: lua_pushinteger(L, (int32_t)v); break;
    case HP_LONG: lua_pushinteger(L, (lua_Integer)v); break;
    default: lua_pushnil(L); break;
  }
}


/*
** {======================================================
** Opening and closing
** =======================================================
*/

/*
** core.hprof(source [, dump [, progress]]) -> heap | nil, message, code
** source is a sift.Map or a string, kept alive by the heap; dump is the
** 1-based heap dump to index (default: the last).
*/
static int heap_open (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  lua_Integer dump = luaL_optinteger(L, 2, 0);
  hp_Options opt;
  sift_Progress progress;
  sift_LuaProgress lp;
  LHeap *lh;
  char err[256];
  sift_Status s;
  luaL_argcheck(L, dump >= 0, 2, "dump numbers start at 1");
  sift_progress_lua(L, 3, &lp, &progress, n);
  lh = (LHeap *)lua_newuserdatauv(L, sizeof(LHeap), 1);
  memset(lh, 0, sizeof *lh);  /* safe to collect before it is built */
  luaL_setmetatable(L, SIFT_HEAP_T);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  opt.dump = dump;
  lh->built = 1;  /* from here __gc frees what hp_build allocated */
  s = hp_build(&lh->h, p, n, &opt, &progress, err, sizeof err);
  if (s != SIFT_OK) {
    hp_free(&lh->h);
    lh->built = 0;
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err);
  }
  return 1;
}

static int heap_close (lua_State *L) {
  LHeap *lh = (LHeap *)luaL_checkudata(L, 1, SIFT_HEAP_T);
  if (lh->graph) {
    hg_free(lh->graph);
    free(lh->graph);
    lh->graph = NULL;
  }
  if (lh->built) hp_free(&lh->h);
  free_groups(lh);
  lh->built = 0;
  lua_pushnil(L);
  lua_setiuservalue(L, 1, 1);  /* let the mapping go */
  return 0;
}

/* }====================================================== */


/*
** {======================================================
** Facts and counts
** =======================================================
*/

#define SETINT(key, v) \
  (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, key))

static int heap_info (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  int i;
  lua_createtable(L, 0, 24);
  lua_pushstring(L, h->version);
  lua_setfield(L, -2, "version");
  SETINT("id_size", h->idsize);
  SETINT("timestamp_ms", h->timestamp);
  SETINT("bytes", h->n);
  SETINT("objects", h->nobjs);
  SETINT("classes", h->nclasses);
  SETINT("class_dumps", h->count[0]);
  SETINT("instances", h->count[1]);
  SETINT("object_arrays", h->count[2]);
  SETINT("primitive_arrays", h->count[3]);
  SETINT("strings", h->nstrings);
  SETINT("load_classes", h->nloads);
  SETINT("stack_frames", h->nframes);
  SETINT("stack_traces", h->ntraces);
  SETINT("dumps", h->ndumps);
  SETINT("dump", h->dump + 1);
  SETINT("duplicates", h->duplicates);
  SETINT("missing_classes", h->missing_classes);
  SETINT("unknown_records", h->unknown_records);
  if (h->truncated_at) SETINT("truncated_at", h->truncated_at);
  SETINT("object_bytes", hp_obj_bytes(h));
  SETINT("index_bytes", h->nobjs * (uint64_t)hp_obj_bytes(h)
         + h->nclasses * sizeof(hp_Class)
         + h->nfields * sizeof(hp_Field) + h->nstrings * sizeof(hp_Idx)
         + (h->nframes + h->ntraces + h->nloads) * sizeof(hp_Idx)
         + h->nheaps * sizeof(hp_Switch) + h->nthreads * sizeof(hp_Thread)
         + h->nroots * sizeof(hp_Root));
  lua_createtable(L, 0, 16);
  for (i = 0; i < 256; i++)
    if (h->roots_by_kind[i]) {
      lua_pushinteger(L, (lua_Integer)h->roots_by_kind[i]);
      lua_setfield(L, -2, sift_root_name(i));
    }
  lua_setfield(L, -2, "roots");
  lua_createtable(L, h->nwarn, 0);
  for (i = 0; i < h->nwarn; i++) {
    lua_pushstring(L, h->warn[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "warnings");
  return 1;
}

static int heap_count (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)sift_checkheap(L)->h.nobjs);
  return 1;
}

static int heap_nclasses (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)sift_checkheap(L)->h.nclasses);
  return 1;
}

/* heap:find(id) -> object number or nil */
static int heap_find (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  int64_t num = hp_find(h, (uint64_t)luaL_checkinteger(L, 2));
  if (num < 0) lua_pushnil(L);
  else lua_pushinteger(L, num + 1);
  return 1;
}

/* heap:find_class(id) -> class number or nil */
static int heap_find_class (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  int64_t c = hp_find_class(h, (uint64_t)luaL_checkinteger(L, 2));
  if (c < 0) lua_pushnil(L);
  else lua_pushinteger(L, c + 1);
  return 1;
}

/*
** heap:object(num) -> id, kind, class number (or nil), shallow size,
** length (arrays), element type (arrays), heap name
*/
static int heap_object (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2);
  hp_ObjInfo o;
  hp_object(h, num, &o);
  lua_pushinteger(L, (lua_Integer)hp_obj_id(h, num));
  lua_pushstring(L, kind_name(o.kind));
  if (o.cls >= 0) lua_pushinteger(L, o.cls + 1);
  else lua_pushnil(L);
  lua_pushinteger(L, (lua_Integer)o.shallow);
  if (o.kind == HP_OBJ_ARRAY_DUMP || o.kind == HP_PRIM_ARRAY_DUMP
      || o.kind == HP_PRIM_ARRAY_NODATA) {
    lua_pushinteger(L, (lua_Integer)o.length);
    lua_pushstring(L, type_names[o.elem]);
  }
  else {
    lua_pushnil(L);
    lua_pushnil(L);
  }
  lua_pushstring(L, heap_name(hp_heap_at(h, hp_obj_off(h, num))));
  return 7;
}

/* heap:class_id_of(num) -> the class id an instance or array names (even
   when that class is not in the dump), or nil */
static int heap_class_id_of (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  hp_ObjInfo o;
  hp_object(h, sift_checknum(L, h, 2), &o);
  if (o.class_id) lua_pushinteger(L, (lua_Integer)o.class_id);
  else lua_pushnil(L);
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Classes
** =======================================================
*/

/* push the name of string id sid, or nil */
static void push_string_id (lua_State *L, const hp_Heap *h, uint64_t sid) {
  size_t len;
  const char *s = hp_string(h, sid, &len);
  if (s) lua_pushlstring(L, s, len);
  else lua_pushnil(L);
}

/*
** heap:class(c) -> { id, name (raw, as the dump spells it), name_id,
** super (class number), super_id, loader_id, instance_size, object (number
** of the class object), serial, declared (fields declared by this class),
** fields = { {name, type, offset, owner}... } (flattened: this class's
** first), statics = { {name, type, value}... } }
*/
static int heap_class (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t c = checkclass(L, h, 2);
  const hp_Class *k = &h->classes[c];
  const unsigned char *s;
  int64_t obj = hp_find(h, k->id);
  uint32_t i;
  lua_createtable(L, 0, 12);
  SETINT("id", k->id);
  push_string_id(L, h, k->name);
  lua_setfield(L, -2, "name");
  SETINT("name_id", k->name);
  if (k->super >= 0) SETINT("super", k->super + 1);
  SETINT("super_id", k->super_id);
  SETINT("loader_id", k->loader_id);
  SETINT("instance_size", k->instance_size);
  SETINT("data_size", k->data_size);
  if (obj >= 0) SETINT("object", obj + 1);
  SETINT("serial", k->serial);
  SETINT("declared", k->nfields);
  lua_createtable(L, (int)k->nflat, 0);
  for (i = 0; i < k->nflat; i++) {
    const hp_Field *f = &h->fields[k->flat + i];
    lua_createtable(L, 0, 4);
    push_string_id(L, h, f->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, type_names[f->type]);
    lua_setfield(L, -2, "type");
    SETINT("offset", f->offset);
    SETINT("owner", f->owner + 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "fields");
  lua_createtable(L, (int)k->nstatics, 0);
  s = h->p + k->statics_off + 2;
  for (i = 0; i < k->nstatics; i++) {
    int t = s[h->idsize];
    lua_createtable(L, 0, 3);
    push_string_id(L, h, hp_id_at(h, s));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, type_names[t]);
    lua_setfield(L, -2, "type");
    push_value(L, h, t, s + h->idsize + 1);
    lua_setfield(L, -2, "value");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
    s += h->idsize + 1 + hp_type_size(h, t);
  }
  lua_setfield(L, -2, "statics");
  return 1;
}

/* heap:string(id) -> the bytes of a STRING record, or nil */
static int heap_string (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  push_string_id(L, h, (uint64_t)luaL_checkinteger(L, 2));
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Object data
** =======================================================
*/

/* heap:field(num, offset, type) -> value of an instance field */
static int heap_field (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2);
  lua_Integer off = luaL_checkinteger(L, 3);
  static const char *const types[] = {"object", "boolean", "char", "float",
    "double", "byte", "short", "int", "long", NULL};
  static const int codes[] = {HP_OBJECT, HP_BOOLEAN, HP_CHAR, HP_FLOAT,
    HP_DOUBLE, HP_BYTE, HP_SHORT, HP_INT, HP_LONG};
  int t = codes[luaL_checkoption(L, 4, NULL, types)];
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.kind != HP_INSTANCE_DUMP || off < 0
      || (uint64_t)off + (uint64_t)hp_type_size(h, t) > o.length)
    return sift_pushfail(L, SIFT_ETRUNC, "object 0x%I has no %s field at "
                         "offset %I", (lua_Integer)hp_obj_id(h, num),
                         types[luaL_checkoption(L, 4, NULL, types)], off);
  push_value(L, h, t, o.data + off);
  return 1;
}

/* heap:element(num, i) -> element i (1-based) of an array */
static int heap_element (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2);
  lua_Integer i = luaL_checkinteger(L, 3);
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.data == NULL || i < 1 || (lua_Unsigned)i > o.length) {
    lua_pushnil(L);
    return 1;
  }
  push_value(L, h, o.elem,
             o.data + ((uint64_t)i - 1) * (uint64_t)hp_type_size(h, o.elem));
  return 1;
}

/* heap:elements(num) -> a table of every element of an array */
static int heap_elements (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2), i;
  hp_ObjInfo o;
  int size;
  hp_object(h, num, &o);
  size = hp_type_size(h, o.elem);
  lua_createtable(L, o.length < 1 << 24 ? (int)o.length : 0, 0);
  if (o.data == NULL) return 1;
  for (i = 0; i < o.length; i++) {
    push_value(L, h, o.elem, o.data + i * (uint64_t)size);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* heap:bytes(num) -> the raw data of a primitive array (big-endian, as in
   the file), or nil */
static int heap_bytes (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  hp_ObjInfo o;
  hp_object(h, sift_checknum(L, h, 2), &o);
  if (o.kind != HP_PRIM_ARRAY_DUMP) lua_pushnil(L);
  else lua_pushlstring(L, (const char *)o.data,
                       (size_t)(o.length * (uint64_t)hp_type_size(h, o.elem)));
  return 1;
}

/*
** heap:text(num, encoding [, first, count]) -> UTF-8 text of a char[] or
** byte[]: encoding "utf16be" (char[] as HPROF stores it), "utf16le"
** (JDK 9+ UTF16-coded byte[] on little-endian machines) or "latin1";
** first (0-based) and count select code units (Dalvik's offset/count)
*/
static int heap_text (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  static const char *const encodings[] = {"utf16be", "utf16le", "latin1",
                                          NULL};
  uint64_t num = sift_checknum(L, h, 2);
  int enc = luaL_checkoption(L, 3, NULL, encodings);
  lua_Integer first = luaL_optinteger(L, 4, 0);
  hp_ObjInfo o;
  uint64_t units, count;
  hp_object(h, num, &o);
  if (o.kind != HP_PRIM_ARRAY_DUMP || o.data == NULL) {
    lua_pushnil(L);
    return 1;
  }
  units = enc == 2 ? o.length * (uint64_t)hp_type_size(h, o.elem)
        : o.length * (uint64_t)hp_type_size(h, o.elem) / 2;
  count = (uint64_t)luaL_optinteger(L, 5, (lua_Integer)units);
  if (first < 0 || (uint64_t)first > units) first = (lua_Integer)units;
  if (count > units - (uint64_t)first) count = units - (uint64_t)first;
  if (enc == 2) {  /* Latin-1 to UTF-8 */
    luaL_Buffer b;
    uint64_t i;
    luaL_buffinit(L, &b);
    for (i = 0; i < count; i++) {
      unsigned char c = o.data[(uint64_t)first + i];
      if (c < 0x80) luaL_addchar(&b, (char)c);
      else {
        luaL_addchar(&b, (char)(0xC0 | c >> 6));
        luaL_addchar(&b, (char)(0x80 | (c & 0x3F)));
      }
    }
    luaL_pushresult(&b);
  }
  else push_utf16(L, o.data + 2 * (uint64_t)first, count, enc == 1);
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Whole-heap passes
** =======================================================
*/

/* the group of an object that is not a class */
static uint64_t slot_of (const hp_Heap *h, const hp_ObjInfo *o) {
  if (o->kind == HP_PRIM_ARRAY_DUMP || o->kind == HP_PRIM_ARRAY_NODATA)
    return h->nclasses + (uint64_t)o->elem;
  if (o->cls >= 0) return (uint64_t)o->cls;
  return h->nclasses + 12;  /* class not in the dump */
}

/* group the objects by class (two passes: count, then place) */
static void build_groups (lua_State *L, LHeap *lh) {
  hp_Heap *h = &lh->h;
  uint64_t i, nslots = NSLOTS(h);
  lh->start = (uint64_t *)calloc(nslots + 1, sizeof(uint64_t));
  lh->by_class = h->nobjs <= UINT32_MAX
    ? (uint32_t *)malloc((h->nobjs + 1) * sizeof(uint32_t)) : NULL;
  if (lh->start == NULL || lh->by_class == NULL) {
    free_groups(lh);
    luaL_error(L, "not enough memory to group objects by class");
  }
  for (i = 0; i < h->nobjs; i++) {
    hp_ObjInfo o;
    hp_object(h, i, &o);
    if (o.kind != HP_CLASS_DUMP) lh->start[slot_of(h, &o) + 1]++;
  }
  for (i = 0; i < nslots; i++) lh->start[i + 1] += lh->start[i];
  for (i = 0; i < h->nobjs; i++) {  /* start[s] runs ahead while placing */
    hp_ObjInfo o;
    hp_object(h, i, &o);
    if (o.kind != HP_CLASS_DUMP)
      lh->by_class[lh->start[slot_of(h, &o)]++] = (uint32_t)i;
  }
  for (i = nslots; i > 0; i--) lh->start[i] = lh->start[i - 1];
  lh->start[0] = 0;
}

/* the group slot named by arguments 2 (class number or element type) */
static uint64_t checkslot (lua_State *L, const hp_Heap *h) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    static const char *const elems[] = {"boolean", "char", "float", "double",
                                        "byte", "short", "int", "long", NULL};
    return h->nclasses + 4 + (uint64_t)luaL_checkoption(L, 2, NULL, elems);
  }
  return checkclass(L, h, 2);
}

/*
** heap:group(class | element type, k) -> object number of the k-th
** (1-based) instance of a class, or array of a primitive type; nil after
** the last. heap:group_size(class | type) -> how many there are.
*/
static int heap_group (lua_State *L) {
  LHeap *lh = sift_checkheap(L);
  uint64_t slot = checkslot(L, &lh->h);
  lua_Integer k = luaL_checkinteger(L, 3);
  if (lh->start == NULL) build_groups(L, lh);
  if (k < 1 || (uint64_t)k > lh->start[slot + 1] - lh->start[slot])
    lua_pushnil(L);
  else
    lua_pushinteger(L, (lua_Integer)lh->by_class[lh->start[slot] + (uint64_t)k - 1] + 1);
  return 1;
}

static int heap_group_size (lua_State *L) {
  LHeap *lh = sift_checkheap(L);
  uint64_t slot = checkslot(L, &lh->h);
  if (lh->start == NULL) build_groups(L, lh);
  lua_pushinteger(L, (lua_Integer)(lh->start[slot + 1] - lh->start[slot]));
  return 1;
}

/* heap:class_name(c) -> the raw name of class c (as the dump spells it) */
static int heap_class_name (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  push_string_id(L, h, h->classes[checkclass(L, h, 2)].name);
  return 1;
}

/*
** heap:histogram() -> rows { class = class number | nil, elem = primitive
** element type | nil, class_id, count, shallow, heaps = { app = n, ... } }
** one per class and per primitive array type that has objects
*/
static int heap_histogram (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t i, nrows = h->nclasses + 12 + 1;
  uint64_t *count, *shallow;
  int row = 0;
  count = (uint64_t *)lua_newuserdatauv(L, 2 * nrows * sizeof(uint64_t), 0);
  shallow = count + nrows;
  memset(count, 0, 2 * nrows * sizeof(uint64_t));
  for (i = 0; i < h->nobjs; i++) {
    hp_ObjInfo o;
    uint64_t slot;
    hp_object(h, i, &o);
    if (o.kind == HP_CLASS_DUMP) continue;  /* classes are counted apart */
    slot = slot_of(h, &o);
    count[slot]++;
    shallow[slot] += o.shallow;
  }
  lua_createtable(L, 64, 0);
  for (i = 0; i < nrows; i++) {
    if (count[i] == 0) continue;
    lua_createtable(L, 0, 4);
    if (i < h->nclasses) SETINT("class", i + 1);
    else if (i < h->nclasses + 12) {
      lua_pushstring(L, type_names[i - h->nclasses]);
      lua_setfield(L, -2, "elem");
    }
    SETINT("count", count[i]);
    SETINT("shallow", shallow[i]);
    lua_rawseti(L, -2, ++row);
  }
  return 1;
}

/* heap:heaps() -> { [heap name] = { instances, classes, object_arrays,
   primitive_arrays } } (Android's app/zygote/image heaps); {} when the dump
   has no heap tags */
static int heap_heaps (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  static const uint32_t heaps[] = {HP_HEAP_DEFAULT, HP_HEAP_APP,
    HP_HEAP_IMAGE, HP_HEAP_ZYGOTE, HP_HEAP_JIT, HP_HEAP_OTHER};
  static const char *const kinds[] = {"classes", "instances", "object_arrays",
                                      "primitive_arrays"};
  uint64_t count[6][4], i;
  int k, j;
  memset(count, 0, sizeof count);
  lua_newtable(L);
  if (h->nheaps == 0) return 1;
  for (i = 0; i < h->nobjs; i++) {  /* objects in file order per switch */
    uint64_t off = hp_obj_off(h, i);
    uint32_t heap = hp_heap_at(h, off);
    int kind = h->p[off];
    for (k = 0; k < 5 && heaps[k] != heap; k++) {}
    j = kind == HP_CLASS_DUMP ? 0 : kind == HP_INSTANCE_DUMP ? 1
      : kind == HP_OBJ_ARRAY_DUMP ? 2 : 3;
    count[k][j]++;
  }
  for (k = 0; k < 6; k++) {
    int any = 0;
    for (j = 0; j < 4; j++) any |= count[k][j] != 0;
    if (!any) continue;
    lua_createtable(L, 0, 4);
    for (j = 0; j < 4; j++)
      if (count[k][j]) SETINT(kinds[j], count[k][j]);
    lua_setfield(L, -2, heap_name(heaps[k]));
  }
  return 1;
}

/* heap:roots() -> { {kind, id, thread, frame}... } in file order */
static int heap_roots (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t i;
  lua_createtable(L, h->nroots < 1 << 24 ? (int)h->nroots : 0, 0);
  for (i = 0; i < h->nroots; i++) {
    const hp_Root *r = &h->roots[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, sift_root_name(r->kind));
    lua_setfield(L, -2, "kind");
    SETINT("id", r->id);
    if (r->kind == 0x02 || r->kind == 0x03 || r->kind == 0x04
        || r->kind == 0x06 || r->kind == 0x08 || r->kind == 0x8E)
      SETINT("thread", r->thread);
    if (r->kind == 0x02 || r->kind == 0x03) SETINT("frame", r->frame);
    if (r->kind == 0x08) SETINT("trace", r->frame);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Threads and stack traces
** =======================================================
*/

/* heap:threads() -> START_THREAD records { serial, object, trace, name } */
static int heap_threads (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t i;
  lua_createtable(L, (int)h->nthreads, 0);
  for (i = 0; i < h->nthreads; i++) {
    lua_createtable(L, 0, 4);
    SETINT("serial", h->threads[i].serial);
    SETINT("object", h->threads[i].object);
    SETINT("trace", h->threads[i].trace);
    push_string_id(L, h, h->threads[i].name);
    lua_setfield(L, -2, "name");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/*
** heap:trace(serial) -> { thread = serial, frames = { {method, signature,
** source, class_serial, line}... } } or nil
*/
static int heap_trace (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  const hp_Idx *t = hp_find_idx(h->traces, h->ntraces,
                                (uint64_t)luaL_checkinteger(L, 2));
  const unsigned char *p, *end;
  uint32_t i, n;
  int ids = h->idsize;
  if (t == NULL) {
    lua_pushnil(L);
    return 1;
  }
  p = h->p + t->off;  /* u4 serial, u4 thread, u4 n, n frame ids */
  end = p + ((uint32_t)p[-4] << 24 | (uint32_t)p[-3] << 16
             | (uint32_t)p[-2] << 8 | p[-1]);
  n = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8
    | p[11];
  lua_createtable(L, 0, 2);
  SETINT("thread", (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16
         | (uint32_t)p[6] << 8 | p[7]);
  lua_createtable(L, 0, 0);
  for (i = 0; i < n && p + 12 + (uint64_t)(i + 1) * (uint64_t)ids <= end;
       i++) {
    uint64_t fid = hp_id_at(h, p + 12 + (uint64_t)i * (uint64_t)ids);
    const hp_Idx *f = hp_find_idx(h->frames, h->nframes, fid);
    lua_createtable(L, 0, 5);
    if (f != NULL) {  /* frame id, method, signature, source ids, u4, u4 */
      const unsigned char *q = h->p + f->off;
      const unsigned char *v = q + 4 * ids;
      push_string_id(L, h, hp_id_at(h, q + ids));
      lua_setfield(L, -2, "method");
      push_string_id(L, h, hp_id_at(h, q + 2 * ids));
      lua_setfield(L, -2, "signature");
      push_string_id(L, h, hp_id_at(h, q + 3 * ids));
      lua_setfield(L, -2, "source");
      SETINT("class_serial", (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16
             | (uint32_t)v[2] << 8 | v[3]);
      SETINT("line", (int32_t)((uint32_t)v[4] << 24 | (uint32_t)v[5] << 16
             | (uint32_t)v[6] << 8 | v[7]));
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "frames");
  return 1;
}

/* heap:class_serial(serial) -> class number of the LOAD_CLASS serial */
static int heap_class_by_serial (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint32_t serial = (uint32_t)luaL_checkinteger(L, 2);
  uint64_t i;
  for (i = 0; i < h->nclasses; i++)
    if (h->classes[i].serial == serial) {
      lua_pushinteger(L, (lua_Integer)i + 1);
      return 1;
    }
  lua_pushnil(L);
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** sift.Object: a number and an owner, behaviour from Lua
** =======================================================
*/

/* core.object(owner, num) -> a sift.Object */
static int object_new (lua_State *L) {
  lua_Integer num = luaL_checkinteger(L, 2);
  lua_Integer *u = (lua_Integer *)lua_newuserdatauv(L, sizeof num, 1);
  *u = num;
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, SIFT_OBJECT_T);
  return 1;
}

/* core.object_parts(obj) -> owner, num; nil when obj is not a sift.Object */
static int object_parts (lua_State *L) {
  lua_Integer *u = (lua_Integer *)luaL_testudata(L, 1, SIFT_OBJECT_T);
  if (u == NULL) return 0;
  lua_getiuservalue(L, 1, 1);
  lua_pushinteger(L, *u);
  return 2;
}

/* core.object_metatable() -> the metatable of sift.Object, for Lua to fill */
static int object_metatable (lua_State *L) {
  luaL_getmetatable(L, SIFT_OBJECT_T);
  return 1;
}

/* }====================================================== */


static const luaL_Reg heap_methods[] = {
  {"info", heap_info},
  {"count", heap_count},
  {"nclasses", heap_nclasses},
  {"find", heap_find},
  {"find_class", heap_find_class},
  {"object", heap_object},
  {"class_id_of", heap_class_id_of},
  {"class", heap_class},
  {"class_by_serial", heap_class_by_serial},
  {"string", heap_string},
  {"field", heap_field},
  {"element", heap_element},
  {"elements", heap_elements},
  {"bytes", heap_bytes},
  {"text", heap_text},
  {"histogram", heap_histogram},
  {"group", heap_group},
  {"group_size", heap_group_size},
  {"class_name", heap_class_name},
  {"heaps", heap_heaps},
  {"roots", heap_roots},
  {"threads", heap_threads},
  {"trace", heap_trace},
  {"close", heap_close},
  {NULL, NULL}
};

static const luaL_Reg heap_metamethods[] = {
  {"__index", NULL},
  {"__gc", heap_close},
  {"__close", heap_close},
  {NULL, NULL}
};

static const luaL_Reg object_metamethods[] = {
  {"__index", NULL},  /* lua/sift/hprof.lua sets the behaviour */
  {NULL, NULL}
};

static const luaL_Reg no_methods[] = {
  {NULL, NULL}
};

static const luaL_Reg heap_functions[] = {
  {"hprof", heap_open},
  {"object", object_new},
  {"object_parts", object_parts},
  {"object_metatable", object_metatable},
  {NULL, NULL}
};

void sift_open_heap (lua_State *L) {
  sift_newclass(L, SIFT_HEAP_T, heap_metamethods, heap_methods);
  luaL_getmetatable(L, SIFT_HEAP_T);  /* the graph's methods join the heap's */
  lua_getfield(L, -1, "__index");
  sift_heap_graph_methods(L);
  lua_pop(L, 2);
  sift_newclass(L, SIFT_OBJECT_T, object_metamethods, no_methods);
  luaL_setfuncs(L, heap_functions, 0);
}
