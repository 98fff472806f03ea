/*
** lpaths.c
** Shortest strong paths from the GC roots, as raw methods of a sift.Heap:
** one search for many targets (its parents stay with the graph), and each
** path read back as steps, with runs of the same class reached by the same
** reference (a linked list, an array's elements) folded and memoised.
** And the tree of holder paths of the whole heap (paths_tree.c), for
** sift.heap.growth.
*/

#include <stdlib.h>
#include <string.h>

#include "lheap.h"
#include "paths_tree.h"

/* the root record that made r a root: the first normal one, else the first
   low-priority one (as the BFS seeds them) */
static uint64_t root_record (const hg_Graph *g, uint32_t r) {
  uint64_t i, low = HG_NONE;
  for (i = 0; i < g->nroots; i++) {
    int flags;
    if (g->root_obj[i] != r) continue;
    flags = g->root_flags[g->h->roots[g->root_rec[i]].kind] | g->root_obj_flags[i];
    if (flags & HG_SKIP) continue;
    if (!(flags & HG_LOW)) return g->root_rec[i];
    if (low == HG_NONE) low = g->root_rec[i];
  }
  return low;
}

/* push one path step: the object, and the reference from p that reached c */
static void push_step (lua_State *L, const hg_Graph *g, uint32_t p,
                       uint32_t c) {
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)c + 1);
  lua_setfield(L, -2, "object");
  if (p == g->n) {  /* a root */
    uint64_t rec = root_record(g, c);
    if (rec != HG_NONE) {
      const hp_Root *root = &g->h->roots[rec];
      lua_pushstring(L, sift_root_name(root->kind));
      lua_setfield(L, -2, "root");
      if (hp_subrecords[root->kind].flags & HP_THREAD) {
        lua_pushinteger(L, root->thread);
        lua_setfield(L, -2, "thread");
      }
      if (hp_subrecords[root->kind].flags & HP_FRAME) {
        lua_pushinteger(L, (lua_Integer)(int32_t)root->frame);
        lua_setfield(L, -2, "frame");
      }
    }
  }
  else {
    hg_Iter it;
    hg_Ref r;
    hg_refs_begin(&it, g, p, 1);
    hg_refs_to(&it, c);
    while (hg_refs_next(&it, &r))
      if (!(r.flags & (HG_NEVER | HG_SKIP))) {
        lua_pushstring(L, sift_ref_kinds[r.kind]);
        lua_setfield(L, -2, "ref");
        lua_pushinteger(L, (lua_Integer)r.index + 1);
        lua_setfield(L, -2, "index");
        lua_pushboolean(L, (r.flags & HG_LOW) != 0);
        lua_setfield(L, -2, "low");
        break;
      }
  }
}

/* the runs found on the last search's paths, dropped when it changes */
static void forget_runs (hg_Graph *g) {
  sift_big_free(g->run_start);
  sift_big_free(g->run_len);
  g->run_start = g->run_len = NULL;
}

/*
** heap:path_search({num...} [, progress]) -> how many of them a strong
** path reaches. One BFS for all; its parents stay with the graph for
** path_segments, so a path is only ever as big as the one being printed.
** The search is kept: the next one, while the flags stay as they were,
** goes on from where it stopped (none when its targets were expanded
** already). progress(done, total) is called by the objects expanded (of
** all; the search may end before): false from it stops the search (nil,
** "cancelled"; the next one goes on from there), an error it raises stops
** it and is raised again.
*/
static int graph_path_search (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  lua_Integer i, nt;
  uint64_t distinct = 0, found = 0;
  uint8_t *targets;
  sift_LuaProgress lp;
  sift_Progress progress;
  sift_Status s = SIFT_OK;
  luaL_checktype(L, 2, LUA_TTABLE);
  sift_progress_lua(L, 3, &lp, &progress, g->n);
  lua_settop(L, 3);  /* (the targets at 4) */
  nt = (lua_Integer)lua_rawlen(L, 2);
  targets = (uint8_t *)lua_newuserdatauv(L, g->n / 8 + 1, 0);
  memset(targets, 0, g->n / 8 + 1);
  for (i = 1; i <= nt; i++) {
    uint32_t t;
    lua_rawgeti(L, 2, i);
    t = (uint32_t)sift_checknum(L, g->h, -1);
    lua_pop(L, 1);
    if (!(targets[t >> 3] >> (t & 7) & 1)) distinct++;
    targets[t >> 3] |= (uint8_t)(1 << (t & 7));
  }
  if (g->search == NULL) {  /* (runs found on a kept search's paths hold) */
    forget_runs(g);
    sift_big_free(g->path_parent);
    g->path_parent = (uint32_t *)sift_big_alloc(((size_t)g->n + 1) * sizeof *g->path_parent);
    s = g->path_parent != NULL ? hg_search_open(g, g->path_parent, &g->search) : SIFT_ENOMEM;
  }
  if (s == SIFT_OK) s = hg_search_run(g->search, g, targets, distinct, &progress);
  sift_progress_rethrow(&lp);
  if (s == SIFT_ECANCEL) return sift_pushfail(L, s, "cancelled");
  if (s != SIFT_OK) {
    hg_search_close(g->search);
    g->search = NULL;
    sift_big_free(g->path_parent);
    g->path_parent = NULL;
    luaL_error(L, "not enough memory for path finding");
  }
  for (i = 0; i < (lua_Integer)g->n; i++)
    found += (targets[i >> 3] >> (i & 7) & 1) && g->path_parent[i] != HG_NONE;
  lua_pushinteger(L, (lua_Integer)found);
  return 1;
}

/* what makes consecutive steps one run: the object's kind and class, and
   the reference that reached it */
typedef struct RunKey {
  int kind, ref, low;
  int64_t cls;
  uint32_t index;
} RunKey;

static RunKey run_key (const hg_Graph *g, uint32_t p, uint32_t c) {
  RunKey k;
  hp_ObjInfo o;
  hg_Iter it;
  hg_Ref r;
  hp_object(g->h, c, &o);
  memset(&k, 0, sizeof k);
  k.kind = o.kind;
  k.cls = o.kind == HP_PRIM_ARRAY_DUMP ? o.elem : o.cls;
  hg_refs_begin(&it, g, p, 1);
  hg_refs_to(&it, c);
  while (hg_refs_next(&it, &r))
    if (!(r.flags & (HG_NEVER | HG_SKIP))) {
      k.ref = r.kind;
      k.index = r.kind == HG_ELEMENT ? 0 : r.index;  /* any element */
      k.low = (r.flags & HG_LOW) != 0;
      break;
    }
  return k;
}

/*
** The run that ends at v on v's path: the steps above v that hold the next
** one by the same reference and are of the same class, memoised for every
** object of the paths so that many paths through one long list cost the
** list once. A root and its first step never join a run.
*/
static void find_runs (lua_State *L, hg_Graph *g, uint32_t v) {
  const uint32_t *parent = g->path_parent;
  uint32_t u = v, *stack;
  uint64_t sp = 0;
  RunKey above;
  if (g->run_start == NULL) {
    uint64_t i;
    g->run_start = (uint32_t *)sift_big_alloc(((size_t)g->n + 1) * sizeof *g->run_start);
    g->run_len = (uint32_t *)sift_big_alloc(((size_t)g->n + 1) * sizeof *g->run_len);
    if (g->run_start == NULL || g->run_len == NULL) {
      sift_big_free(g->run_start); sift_big_free(g->run_len);
      g->run_start = g->run_len = NULL;
      luaL_error(L, "not enough memory for path finding");
    }
    for (i = 0; i < g->n; i++) g->run_start[i] = HG_NONE;
  }
  if (g->run_start[v] != HG_NONE) return;
  /* (a big array: only the pages the path's length touches are made) */
  if (!HG_ALLOC(stack, (uint64_t)g->n + 1)) luaL_error(L, "not enough memory for path finding");
  while (g->run_start[u] == HG_NONE && parent[u] != g->n) {  /* up to a known one */
    stack[sp++] = u;
    u = parent[u];
  }
  if (g->run_start[u] == HG_NONE) {  /* a root */
    g->run_start[u] = u;
    g->run_len[u] = 1;
  }
  memset(&above, 0, sizeof above);
  if (parent[u] != g->n) above = run_key(g, parent[u], u);
  while (sp > 0) {  /* and down again */
    uint32_t w = stack[--sp], p = parent[w];
    RunKey key = run_key(g, p, w);
    if (parent[p] != g->n && parent[parent[p]] != g->n
        && memcmp(&key, &above, sizeof key) == 0) {
      g->run_start[w] = g->run_start[p];
      g->run_len[w] = g->run_len[p] + 1;
    }
    else {
      g->run_start[w] = w;
      g->run_len[w] = 1;
    }
    above = key;
  }
  sift_big_free(stack);
}

/*
** heap:path_segments(num [, collapse]) -> the path of the last search to
** num as steps { object, root | ref, index, low, count, last } from the
** root down, or false. With collapse, consecutive steps of the same class
** reached by the same reference (a linked list's `next`, an array's
** elements) are one step with their count and the last object.
*/
static int graph_path_segments (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  uint32_t t = sift_checkobj(L, g, 2), c, *chain;
  int collapse = lua_toboolean(L, 3);
  uint64_t len = 0, k;
  if (g->path_parent == NULL) luaL_error(L, "no path search: call heap:path_search first");
  if (g->path_parent[t] == HG_NONE) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (collapse) find_runs(L, g, t);
  for (c = t; c != g->n && len <= g->n; len++)  /* steps, from the end */
    c = g->path_parent[collapse ? g->run_start[c] : c];
  chain = (uint32_t *)lua_newuserdatauv(L, (size_t)len * sizeof *chain, 0);
  for (c = t, k = len; k > 0; ) {  /* each step's last object, root first */
    chain[--k] = c;
    c = g->path_parent[collapse ? g->run_start[c] : c];
  }
  lua_createtable(L, (int)len, 0);
  for (k = 0; k < len; k++) {
    uint32_t last = chain[k], first = collapse ? g->run_start[last] : last;
    push_step(L, g, g->path_parent[first], first);
    lua_pushinteger(L, collapse ? (lua_Integer)g->run_len[last] : 1);
    lua_setfield(L, -2, "count");
    lua_pushinteger(L, (lua_Integer)last + 1);
    lua_setfield(L, -2, "last");
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 1;
}

static int path_tree_gc (lua_State *L) {
  hg_path_tree_free((hg_PathTree *)luaL_checkudata(L, 1, SIFT_PATH_TREE_T));
  return 0;
}

/* t[field] = a new array of the tree's n nodes, filled by fill(node) */
#define NODE_ARRAY(field, fill) do { \
    lua_createtable(L, (int)t->n, 0); \
    for (i = 0; i < t->n; i++) { fill; lua_rawseti(L, -2, (lua_Integer)i + 1); } \
    lua_setfield(L, -2, field); \
  } while (0)

/*
** heap:path_tree([model [, progress]]) -> the tree of holder paths
** (paths_tree.h) as arrays by node number (1-based; a parent comes
** before its children):
** parent (0 for a root's node), ref ("field", "static", "element",
** "class"... or "root <kind>"), index (1-based field layout or static
** index; 0 else), kind ("instance", "class", "array", "primitive array"),
** class (class number, or the element type's name), first (an object of
** it), count and bytes (shallow, under the model); and unreached (objects
** without a strong path, in no node). Its search, of every object, is the
** last path search (heap:path_segments reads it). progress(done, total)
** is called as the work goes on: false from it stops the work (nil,
** "cancelled"), and an error it raises stops it and is raised again.
*/
static int graph_path_tree (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  int model = sift_checkmodel(L, 2);
  hg_PathTree *t;
  uint32_t i, *parent;
  sift_LuaProgress lp;
  sift_Progress progress;
  sift_Status s;
  sift_progress_lua(L, 3, &lp, &progress, HG_TREE_STEPS * (uint64_t)g->n);
  lua_settop(L, 3);  /* (the tree at 4) */
  t = (hg_PathTree *)lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, SIFT_PATH_TREE_T);
  if (g->n >= HG_LOW_EDGE || g->h->nclasses >= HG_KEY_NONE || g->h->nfields > HG_LABEL_INDEX)
    luaL_error(L, "too many objects (2 G), classes (1 G) or fields (256 M) for the tree of paths");
  s = hg_path_tree(g, model, t, &parent, &progress);
  if (s != SIFT_OK) hg_path_tree_free(t);
  sift_progress_rethrow(&lp);
  if (s == SIFT_ECANCEL) return sift_pushfail(L, s, "cancelled");
  if (s != SIFT_OK) sift_graph_error(L, s, "the tree of paths");
  hg_search_close(g->search);  /* the last path search, of every object */
  g->search = NULL;
  sift_big_free(g->path_parent);
  forget_runs(g);
  g->path_parent = parent;
  lua_createtable(L, 0, 9);
  NODE_ARRAY("parent", lua_pushinteger(L, t->parent[i] == HG_NONE ? 0 : (lua_Integer)t->parent[i] + 1));
  NODE_ARRAY("ref", t->ref[i] == 0 ? (void)lua_pushfstring(L, "root %s", sift_root_name((int)t->index[i]))
                                   : (void)lua_pushstring(L, sift_ref_kinds[t->ref[i]]));
  NODE_ARRAY("index", lua_pushinteger(L, t->ref[i] == HG_FIELD || t->ref[i] == HG_STATIC
                                         ? (lua_Integer)t->index[i] + 1 : 0));
  NODE_ARRAY("kind", lua_pushstring(L, t->kind[i] == HP_INSTANCE_DUMP ? "instance"
                                     : t->kind[i] == HP_CLASS_DUMP ? "class"
                                     : t->kind[i] == HP_OBJ_ARRAY_DUMP ? "array" : "primitive array"));
  NODE_ARRAY("class", t->kind[i] == HP_PRIM_ARRAY_DUMP
                      ? (void)lua_pushstring(L, t->cls[i] < 12 && sift_type_names[t->cls[i]]
                                                ? sift_type_names[t->cls[i]] : "unknown")
                      : t->cls[i] == HG_NONE ? lua_pushboolean(L, 0)
                      : lua_pushinteger(L, (lua_Integer)t->cls[i] + 1));
  NODE_ARRAY("first", lua_pushinteger(L, (lua_Integer)t->first[i] + 1));
  NODE_ARRAY("count", lua_pushinteger(L, (lua_Integer)t->count[i]));
  NODE_ARRAY("bytes", lua_pushinteger(L, (lua_Integer)t->bytes[i]));
  SIFT_SETINT("unreached", t->unreached);
  hg_path_tree_free(t);
  return 1;
}

static const luaL_Reg path_methods[] = {
  {"path_search", graph_path_search},
  {"path_segments", graph_path_segments},
  {"path_tree", graph_path_tree},
  {NULL, NULL}
};

void sift_open_heap_paths (lua_State *L) {
  sift_addmethods(L, SIFT_HEAP_T, path_methods);
  luaL_newmetatable(L, SIFT_PATH_TREE_T);
  lua_pushcfunction(L, path_tree_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
}
