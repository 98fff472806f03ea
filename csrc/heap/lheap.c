/*
** lheap.c
** sift.Heap: the HPROF index as a Lua object with raw, numeric methods;
** lua/sift/heap/ builds the friendly heap API on top. Object numbers
** are 1-based dense numbers (objects sorted by id); class numbers are
** 1-based indexes of the class table. Object references come back as ids
** (integers), which Lua turns into objects.
** This file holds the userdata itself (opening, closing, the argument
** checks every heap binding shares, lheap.h) and its facts and counts;
** lvalues.c, lpasses.c, lgraph.c, lpaths.c and ldominators.c add their
** methods to the class. Also sift.Object, the small handle (number +
** owner) that Lua gives its behaviour through core.object_metatable().
*/

#include <stdlib.h>
#include <string.h>

#include "hprof.h"
#include "lheap.h"

void sift_heap_free_groups (LHeap *lh) {
  sift_big_free(lh->start);
  sift_big_free(lh->by_class);
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
uint64_t sift_checkclass (lua_State *L, const hp_Heap *h, int i) {
  lua_Integer c = luaL_checkinteger(L, i);
  luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, i,
                "no such class number");
  return (uint64_t)c - 1;
}

const char *const sift_type_names[12] = {
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
  const hp_SubRecord *sr = &hp_subrecords[kind & 0xFF];
  return kind == (kind & 0xFF) && (sr->flags & HP_ROOT) ? sr->name : "other";
}

const char *sift_heap_name (uint32_t heap) {
  switch (heap) {
    case HP_HEAP_DEFAULT: return "default";
    case HP_HEAP_APP: return "app";
    case HP_HEAP_IMAGE: return "image";
    case HP_HEAP_ZYGOTE: return "zygote";
    case HP_HEAP_JIT: return "jit";
    default: return "other";
  }
}

void sift_push_string_id (lua_State *L, const hp_Heap *h, uint64_t sid) {
  size_t len;
  const char *s = hp_string(h, sid, &len);
  if (s) lua_pushlstring(L, s, len);
  else lua_pushnil(L);
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
  lua_Integer threads = luaL_optinteger(L, 4, 0);
  hp_Options opt;
  sift_Progress progress;
  sift_LuaProgress lp;
  LHeap *lh;
  sift_Error err;
  sift_Status s;
  luaL_argcheck(L, dump >= 0, 2, "dump numbers start at 1");
  luaL_argcheck(L, threads >= 0 && threads <= 2, 4, "0 (as many as gain), 1 or 2");
  sift_progress_lua(L, 3, &lp, &progress, n);
  lh = (LHeap *)lua_newuserdatauv(L, sizeof(LHeap), 1);
  memset(lh, 0, sizeof *lh);  /* safe to collect before it is built */
  luaL_setmetatable(L, SIFT_HEAP_T);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  memset(&opt, 0, sizeof opt);
  opt.dump = dump;
  opt.threads = (int)threads;
  lh->built = 1;  /* from here __gc frees what hp_build allocated */
  s = hp_build(&lh->h, p, n, &opt, &progress, &err);
  if (s != SIFT_OK) {
    hp_free(&lh->h);
    lh->built = 0;
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err.msg);
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
  sift_heap_free_groups(lh);
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

static int heap_info (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  int i;
  lua_createtable(L, 0, 24);
  lua_pushstring(L, h->version);
  lua_setfield(L, -2, "version");
  SIFT_SETINT("id_size", h->idsize);
  SIFT_SETINT("timestamp_ms", h->timestamp);
  SIFT_SETINT("bytes", h->n);
  SIFT_SETINT("objects", h->nobjs);
  SIFT_SETINT("classes", h->nclasses);
  SIFT_SETINT("class_dumps", h->count[0]);
  SIFT_SETINT("instances", h->count[1]);
  SIFT_SETINT("object_arrays", h->count[2]);
  SIFT_SETINT("primitive_arrays", h->count[3]);
  SIFT_SETINT("strings", h->nstrings);
  SIFT_SETINT("load_classes", h->nloads);
  SIFT_SETINT("stack_frames", h->nframes);
  SIFT_SETINT("stack_traces", h->ntraces);
  SIFT_SETINT("dumps", h->ndumps);
  SIFT_SETINT("dump", h->dump + 1);
  SIFT_SETINT("duplicates", h->duplicates);
  SIFT_SETINT("missing_classes", h->missing_classes);
  SIFT_SETINT("unknown_records", h->unknown_records);
  if (h->truncated_at) SIFT_SETINT("truncated_at", h->truncated_at);
  SIFT_SETINT("object_bytes", hp_obj_bytes(h));
  SIFT_SETINT("index_bytes", h->nobjs * (uint64_t)hp_obj_bytes(h)
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
    lua_pushstring(L, sift_type_names[o.elem]);
  }
  else {
    lua_pushnil(L);
    lua_pushnil(L);
  }
  lua_pushstring(L, sift_heap_name(hp_heap_at(h, hp_obj_off(h, num))));
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
  sift_newclass(L, SIFT_OBJECT_T, object_metamethods, no_methods);
  luaL_setfuncs(L, heap_functions, 0);
}
