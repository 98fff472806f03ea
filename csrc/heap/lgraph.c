/*
** lgraph.c
** The reference graph of a sift.Heap, as more raw methods of the heap:
** reference flags, references and referrers, shallow sizes under a model
** and the JVM model's layout. The graph is made on first use here
** (sift_checkgraph); lpaths.c and ldominators.c read it. Object numbers are
** 1-based here as in lheap.c. lua/sift/heap/ turns them into objects and
** policies.
*/

#include <stdlib.h>
#include <string.h>

#include "lheap.h"

const char *const sift_ref_kinds[] = {
  NULL, "field", "element", "static", "class", "super", "loader", "signers",
  "protection_domain", "defined_class"
};

void sift_graph_error (lua_State *L, sift_Status s, const char *what) {
  if (s == SIFT_ETOOBIG) luaL_error(L, "too many references (over 4 G) for %s", what);
  luaL_error(L, "not enough memory for %s", what);
}

/* the heap's graph, made on first use */
hg_Graph *sift_checkgraph (lua_State *L) {
  LHeap *lh = sift_checkheap(L);
  if (lh->graph == NULL) {
    hg_Graph *g = (hg_Graph *)calloc(1, sizeof *g);
    sift_Status s;
    if (g == NULL) luaL_error(L, "not enough memory for the heap graph");
    s = hg_init(g, &lh->h);
    if (s != SIFT_OK) {
      hg_free(g);
      free(g);
      luaL_error(L, s == SIFT_ENOMEM ? "not enough memory for the heap graph"
                                     : "too many objects for the heap graph");
    }
    lh->graph = g;
  }
  return lh->graph;
}

/* forget the path search kept to go on: a flag it read changed */
static void flag_changed (hg_Graph *g) {
  hg_search_close(g->search);
  g->search = NULL;
}

/* forget what depends on which references are followed */
static void invalidate (hg_Graph *g) {
  sift_big_free(g->first); sift_big_free(g->succ);
  g->first = NULL; g->succ = NULL;
  hg_free_tree(g);
}
uint32_t sift_checkobj (lua_State *L, hg_Graph *g, int i) {
  return (uint32_t)sift_checknum(L, g->h, i);
}
int sift_checkmodel (lua_State *L, int i) {
  static const char *const models[] = {"shark", "jvm", "visualvm", NULL};
  return luaL_checkoption(L, i, "shark", models);
}

/*
** heap:flag("field" | "static", class, index, flags)
** heap:flag("root", kind name, flags)
** heap:flag("root_object", object number, flags): the roots that hold it
** heap:flag("thread", thread serial, flags): that thread's local variables
** Flags (1 never followed, 2 skipped by paths, 4 low priority) replace
** what the reference had; changing 'never' drops the dominator tree.
*/
static int graph_flag (lua_State *L) {
  static const char *const what[] = {"field", "static", "root", "root_object",
                                     "thread", NULL};
  hg_Graph *g = sift_checkgraph(L);
  int which = luaL_checkoption(L, 2, NULL, what);
  if (which >= 3) {
    lua_Integer key = which == 3 ? (lua_Integer)sift_checkobj(L, g, 3)
                                 : luaL_checkinteger(L, 3);
    int flags = (int)luaL_checkinteger(L, 4);
    uint64_t i;
    for (i = 0; i < g->nroots; i++) {
      const hp_Root *r = &g->h->roots[g->root_rec[i]];
      int hit = which == 3 ? g->root_obj[i] == (uint32_t)key
        : r->thread == (uint64_t)key && r->kind == HP_ROOT_JAVA_FRAME;
      if (!hit) continue;
      if ((g->root_obj_flags[i] ^ flags) & HG_NEVER) invalidate(g);
      if (g->root_obj_flags[i] != flags) flag_changed(g);
      g->root_obj_flags[i] = (uint8_t)flags;
    }
    return 0;
  }
  if (which == 2) {
    const char *kind = luaL_checkstring(L, 3);
    int flags = (int)luaL_checkinteger(L, 4), tag;
    for (tag = 0; tag < 256; tag++)
      if (strcmp(sift_root_name(tag), kind) == 0) {
        if (g->root_flags[tag] != flags) flag_changed(g);
        g->root_flags[tag] = (uint8_t)flags;
      }
    return 0;
  }
  else {
    lua_Integer c = luaL_checkinteger(L, 3), i = luaL_checkinteger(L, 4);
    int flags = (int)luaL_checkinteger(L, 5);
    luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= g->h->nclasses, 3,
                  "no such class number");
    luaL_argcheck(L, i >= 1, 4, "indexes start at 1");
    if (which == 0) {
      uint32_t k;
      for (k = g->ref_first[c - 1]; k < g->ref_first[c]; k++)
        if (g->ref_field[k] == (uint32_t)(i - 1) && g->ref_flags[k] != flags) {
          if ((g->ref_flags[k] ^ flags) & HG_NEVER) invalidate(g);
          flag_changed(g);
        }
      hg_flag_field(g, (uint32_t)c - 1, (uint32_t)i - 1, flags);
    }
    else {
      uint32_t at = g->static_first[c - 1] + (uint32_t)(i - 1);
      if (at < g->static_first[c] && g->static_flags[at] != flags) {
        if ((g->static_flags[at] ^ flags) & HG_NEVER) invalidate(g);
        flag_changed(g);
      }
      hg_flag_static(g, (uint32_t)c - 1, (uint32_t)i - 1, flags);
    }
    return 0;
  }
}

/*
** heap:flags_state() -> a string: every reference flag (fields, statics,
** root kinds, roots), for heap:set_flags_state to put back, so that an
** analysis that adds rules leaves the graph as it found it.
*/
static size_t flags_size (const hg_Graph *g) {
  uint32_t nc = g->h->nclasses;
  return (size_t)g->ref_first[nc] + g->static_first[nc] + sizeof g->root_flags
         + (size_t)g->nroots;
}

static int graph_flags_state (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint32_t nc = g->h->nclasses;
  luaL_Buffer b;
  luaL_buffinitsize(L, &b, flags_size(g));
  luaL_addlstring(&b, (const char *)g->ref_flags, g->ref_first[nc]);
  luaL_addlstring(&b, (const char *)g->static_flags, g->static_first[nc]);
  luaL_addlstring(&b, (const char *)g->root_flags, sizeof g->root_flags);
  luaL_addlstring(&b, (const char *)g->root_obj_flags, (size_t)g->nroots);
  luaL_pushresult(&b);
  return 1;
}

/* put back one array of flags from s; drops the dominator tree when a
   'never' flag changes (it decides what the tree follows), the kept path
   search when any does */
static const char *put_flags (hg_Graph *g, uint8_t *flags, const char *s, size_t n) {
  size_t i;
  if (n > 0 && memcmp(flags, s, n) != 0) flag_changed(g);
  for (i = 0; i < n; i++)
    if ((flags[i] ^ (uint8_t)s[i]) & HG_NEVER) {
      invalidate(g);
      break;
    }
  memcpy(flags, s, n);
  return s + n;
}

/* heap:set_flags_state(state): the flags heap:flags_state() saw */
static int graph_set_flags_state (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint32_t nc = g->h->nclasses;
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  luaL_argcheck(L, len == flags_size(g), 2, "not a flags state of this heap");
  s = put_flags(g, g->ref_flags, s, g->ref_first[nc]);
  s = put_flags(g, g->static_flags, s, g->static_first[nc]);
  s = put_flags(g, g->root_flags, s, sizeof g->root_flags);
  put_flags(g, g->root_obj_flags, s, (size_t)g->nroots);
  return 0;
}

static void push_ref (lua_State *L, const hg_Ref *r) {
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)r->target + 1);
  lua_setfield(L, -2, "target");
  lua_pushstring(L, sift_ref_kinds[r->kind]);
  lua_setfield(L, -2, "kind");
  lua_pushinteger(L, (lua_Integer)r->index + 1);
  lua_setfield(L, -2, "index");
  lua_pushinteger(L, r->flags);
  lua_setfield(L, -2, "flags");
}

/* heap:refs(num) -> the references an object holds: {target, kind, index,
   flags} (fields, elements, statics, then what the JVM keeps without a
   field: class, super, loader, signers, protection_domain, defined_class) */
static int graph_refs (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  hg_Iter it;
  hg_Ref r;
  int i = 0;
  hg_refs_begin(&it, g, sift_checkobj(L, g, 2), 1);
  lua_newtable(L);
  while (hg_refs_next(&it, &r)) {
    push_ref(L, &r);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/*
** heap:referrers(num) -> object numbers that hold a reference to num. The
** incoming references of every object are built the first time
** (hg_referrers, on both cores).
*/
static int graph_referrers (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint32_t num = sift_checkobj(L, g, 2);
  uint64_t i, k;
  sift_Status s = hg_referrers(g);
  if (s == SIFT_ETOOBIG) return luaL_error(L, "too many references (over 4 G) for referrers");
  if (s != SIFT_OK) return luaL_error(L, "not enough memory for referrers");
  lua_createtable(L, (int)(g->pfirst[num + 1] - g->pfirst[num]), 0);
  for (i = g->pfirst[num], k = 1; i < g->pfirst[num + 1]; i++) {
    if (i > g->pfirst[num] && g->pred[i] == g->pred[i - 1]) continue;
    lua_pushinteger(L, (lua_Integer)g->pred[i] + 1);
    lua_rawseti(L, -2, (lua_Integer)k++);
  }
  return 1;
}

/* heap:shallow(num, model) -> shallow bytes under a model */
static int graph_shallow (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint32_t v = sift_checkobj(L, g, 2);
  lua_pushinteger(L, (lua_Integer)hg_shallow(g, v, sift_checkmodel(L, 3)));
  return 1;
}

/* heap:build_graph() -> references in the dominator model; builds the CSR
   arrays that heap:dominators() would build (for timing them apart) */
static int graph_build (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  sift_Status s = hg_build(g, NULL);
  if (s != SIFT_OK) sift_graph_error(L, s, "the heap graph");
  lua_pushinteger(L, (lua_Integer)g->edges);
  return 1;
}

/* heap:graph_arrays() -> the CSR arrays heap:build_graph() built, as
   strings of native 32-bit words: n + 1 offsets, then the references (0-based
   object numbers); nil when not built (for checking one build against another) */
static int graph_arrays (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  if (g->first == NULL) return 0;
  lua_pushlstring(L, (const char *)g->first, ((size_t)g->n + 1) * sizeof *g->first);
  lua_pushlstring(L, (const char *)g->succ, (size_t)g->edges * sizeof *g->succ);
  return 2;
}

/* heap:graph_info() -> sizes of what the graph holds, in bytes */
static int graph_info (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)g->edges);
  lua_setfield(L, -2, "edges");
  lua_pushinteger(L, (lua_Integer)g->reachable);
  lua_setfield(L, -2, "reachable");
  lua_pushinteger(L, (lua_Integer)g->nroots);
  lua_setfield(L, -2, "roots");
  lua_pushboolean(L, g->idom != NULL);  /* rules that change what is followed drop it */
  lua_setfield(L, -2, "tree");
  return 1;
}

/*
** heap:set_jvm_layout(instance_sizes, mirror_sizes, array_base,
** array_base_wide, oop): the JVM model's sizes, per class number (lists
** as long as the classes), as lua/sift/jvm_layout.lua computes them
*/
static int graph_set_jvm_layout (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint64_t nc = g->h->nclasses, c;
  uint32_t *inst, *mirror;
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_argcheck(L, lua_rawlen(L, 2) == nc && lua_rawlen(L, 3) == nc, 2,
                "a size per class expected");
  inst = (uint32_t *)sift_big_alloc((nc + 1) * sizeof *inst);
  mirror = (uint32_t *)sift_big_alloc((nc + 1) * sizeof *mirror);
  if (inst == NULL || mirror == NULL) {
    sift_big_free(inst);
    sift_big_free(mirror);
    return luaL_error(L, "not enough memory for the JVM layout");
  }
  for (c = 0; c < nc; c++) {  /* checked before the graph's are replaced */
    lua_Integer k = (lua_Integer)c + 1;
    int ok1, ok2;
    lua_Integer a, b;
    lua_rawgeti(L, 2, k);
    a = lua_tointegerx(L, -1, &ok1);
    lua_rawgeti(L, 3, k);
    b = lua_tointegerx(L, -1, &ok2);
    lua_pop(L, 2);
    if (!ok1 || !ok2 || a < 0 || b < 0 || a > (lua_Integer)UINT32_MAX
        || b > (lua_Integer)UINT32_MAX) {
      sift_big_free(inst);
      sift_big_free(mirror);
      return luaL_error(L, "bad size for class %d", (int)k);
    }
    inst[c] = (uint32_t)a;
    mirror[c] = (uint32_t)b;
  }
  sift_big_free(g->jvm_instance);
  sift_big_free(g->jvm_mirror);
  g->jvm_instance = inst;
  g->jvm_mirror = mirror;
  g->jvm_array_base = (uint32_t)luaL_checkinteger(L, 4);
  g->jvm_array_base_wide = (uint32_t)luaL_checkinteger(L, 5);
  g->jvm_oop = (uint32_t)luaL_checkinteger(L, 6);
  if (g->model == HG_JVM) invalidate(g);
  return 0;
}

/* the group of an object for retained_by_class and model_histogram: its
   class, its primitive element type, or "class objects and unknown
   classes" (not reported) */
uint64_t sift_class_slot (const hp_Heap *h, uint32_t num) {
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.kind == HP_CLASS_DUMP) return h->nclasses + 12;
  if (o.kind == HP_PRIM_ARRAY_DUMP || o.kind == HP_PRIM_ARRAY_NODATA)
    return h->nclasses + (uint64_t)o.elem;
  return o.cls >= 0 ? (uint64_t)o.cls : h->nclasses + 12;
}

/*
** heap:model_histogram(model, class_class[, heap]) -> rows { class | elem,
** count, shallow } as heap:histogram(), sizes under the model; class
** objects are counted as instances of class number class_class
** (java.lang.Class) when given, as the JVM's own histogram does; only the
** objects of an Android heap when one is named
*/
static int graph_model_histogram (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  const hp_Heap *h = g->h;
  int model = sift_checkmodel(L, 2);
  lua_Integer cc = luaL_optinteger(L, 3, 0);
  int heap = sift_optheap(L, 4);
  uint64_t nslots = h->nclasses + 13, i, *count, *bytes;
  static const char *const elems[12] = {NULL, NULL, NULL, NULL, "boolean",
    "char", "float", "double", "byte", "short", "int", "long"};
  int row = 0;
  luaL_argcheck(L, cc >= 0 && (lua_Unsigned)cc <= h->nclasses, 3, "no such class number");
  count = (uint64_t *)lua_newuserdatauv(L, 2 * nslots * sizeof *count, 0);
  bytes = count + nslots;
  memset(count, 0, 2 * nslots * sizeof *count);
  for (i = 0; i < g->n; i++) {
    uint64_t slot;
    if (!sift_in_heap(h, i, heap)) continue;
    slot = sift_class_slot(h, (uint32_t)i);
    if (slot == h->nclasses + 12) {
      hp_ObjInfo o;
      hp_object(h, i, &o);
      if (o.kind != HP_CLASS_DUMP || cc == 0) continue;
      slot = (uint64_t)cc - 1;
    }
    count[slot]++;
    bytes[slot] += hg_shallow(g, (uint32_t)i, model);
  }
  lua_createtable(L, 64, 0);
  for (i = 0; i < nslots; i++) {
    if (count[i] == 0) continue;
    lua_createtable(L, 0, 3);
    if (i < h->nclasses) lua_pushinteger(L, (lua_Integer)i + 1);
    else lua_pushstring(L, elems[i - h->nclasses]);
    lua_setfield(L, -2, i < h->nclasses ? "class" : "elem");
    lua_pushinteger(L, (lua_Integer)count[i]);
    lua_setfield(L, -2, "count");
    lua_pushinteger(L, (lua_Integer)bytes[i]);
    lua_setfield(L, -2, "shallow");
    lua_rawseti(L, -2, ++row);
  }
  return 1;
}

static const luaL_Reg graph_methods[] = {
  {"set_jvm_layout", graph_set_jvm_layout},
  {"model_histogram", graph_model_histogram},
  {"flag", graph_flag},
  {"flags_state", graph_flags_state},
  {"set_flags_state", graph_set_flags_state},
  {"refs", graph_refs},
  {"referrers", graph_referrers},
  {"shallow", graph_shallow},
  {"graph_info", graph_info},
  {"build_graph", graph_build},
  {"graph_arrays", graph_arrays},
  {NULL, NULL}
};

void sift_open_heap_graph (lua_State *L) {
  sift_addmethods(L, SIFT_HEAP_T, graph_methods);
}
