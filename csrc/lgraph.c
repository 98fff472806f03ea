/*
** lgraph.c
** The reference graph of a sift.Heap, as more raw methods of the heap:
** reference flags, references and referrers, shortest paths from the GC
** roots, the dominator tree and retained sizes. Object numbers are 1-based
** here as in lheap.c; 0 stands for the virtual root of the dominator tree.
** lua/sift/hprof.lua turns them into objects and policies.
*/

#include <stdlib.h>
#include <string.h>

#include "lheap.h"

static const char *const ref_kinds[] = {
  NULL, "field", "element", "static", "class", "super", "loader", "signers",
  "protection_domain", "defined_class"
};

/* the heap's graph, made on first use */
static hg_Graph *checkgraph (lua_State *L) {
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

/* forget what depends on which references are followed */
static void invalidate (hg_Graph *g) {
  free(g->first); free(g->succ); free(g->idom); free(g->retained);
  free(g->child_first); free(g->children);
  g->first = NULL; g->succ = NULL; g->idom = NULL; g->retained = NULL;
  g->child_first = NULL; g->children = NULL;
}

static uint32_t checkobj (lua_State *L, hg_Graph *g, int i) {
  return (uint32_t)sift_checknum(L, g->h, i);
}

static int checkmodel (lua_State *L, int i) {
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
  hg_Graph *g = checkgraph(L);
  int which = luaL_checkoption(L, 2, NULL, what);
  if (which >= 3) {
    lua_Integer key = which == 3 ? (lua_Integer)checkobj(L, g, 3)
                                 : luaL_checkinteger(L, 3);
    int flags = (int)luaL_checkinteger(L, 4);
    uint64_t i;
    for (i = 0; i < g->nroots; i++) {
      const hp_Root *r = &g->h->roots[g->root_rec[i]];
      int hit = which == 3 ? g->root_obj[i] == (uint32_t)key
        : r->thread == (uint64_t)key && strcmp(sift_root_name(r->kind), "java_frame") == 0;
      if (!hit) continue;
      if ((g->root_obj_flags[i] ^ flags) & HG_NEVER) invalidate(g);
      g->root_obj_flags[i] = (uint8_t)flags;
    }
    return 0;
  }
  if (which == 2) {
    const char *kind = luaL_checkstring(L, 3);
    int flags = (int)luaL_checkinteger(L, 4), tag;
    for (tag = 0; tag < 256; tag++)
      if (strcmp(sift_root_name(tag), kind) == 0) g->root_flags[tag] = (uint8_t)flags;
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
        if (g->ref_field[k] == (uint32_t)(i - 1)
            && ((g->ref_flags[k] ^ flags) & HG_NEVER))
          invalidate(g);
      hg_flag_field(g, (uint32_t)c - 1, (uint32_t)i - 1, flags);
    }
    else {
      uint32_t at = g->static_first[c - 1] + (uint32_t)(i - 1);
      if (at < g->static_first[c] && ((g->static_flags[at] ^ flags) & HG_NEVER))
        invalidate(g);
      hg_flag_static(g, (uint32_t)c - 1, (uint32_t)i - 1, flags);
    }
    return 0;
  }
}

static void push_ref (lua_State *L, const hg_Ref *r) {
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)r->target + 1);
  lua_setfield(L, -2, "target");
  lua_pushstring(L, ref_kinds[r->kind]);
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
  hg_Graph *g = checkgraph(L);
  hg_Iter it;
  hg_Ref r;
  int i = 0;
  hg_refs_begin(&it, g, checkobj(L, g, 2), 1);
  lua_newtable(L);
  while (hg_refs_next(&it, &r)) {
    push_ref(L, &r);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/*
** heap:referrers(num) -> object numbers that hold a reference to num. The
** incoming references of every object are built the first time.
*/
static int graph_referrers (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  uint32_t num = checkobj(L, g, 2);
  uint64_t i, k;
  if (g->pfirst == NULL) {
    uint64_t n = g->n, *pf;
    uint32_t *pl;
    hg_Iter it;
    hg_Ref r;
    pf = (uint64_t *)calloc(n + 1, sizeof *pf);
    if (pf == NULL) luaL_error(L, "not enough memory for referrers");
    for (i = 0; i < n; i++) {
      hg_refs_begin(&it, g, (uint32_t)i, 0);
      while (hg_refs_next(&it, &r)) pf[r.target + 1]++;
    }
    for (i = 0; i < n; i++) pf[i + 1] += pf[i];
    pl = (uint32_t *)malloc((pf[n] ? pf[n] : 1) * sizeof *pl);
    if (pl == NULL) {
      free(pf);
      luaL_error(L, "not enough memory for referrers");
    }
    for (i = 0; i < n; i++) {  /* pf[t] runs ahead while filling */
      hg_refs_begin(&it, g, (uint32_t)i, 0);
      while (hg_refs_next(&it, &r)) pl[pf[r.target]++] = (uint32_t)i;
    }
    for (i = n; i > 0; i--) pf[i] = pf[i - 1];
    pf[0] = 0;
    g->pfirst = pf;
    g->pred = pl;
  }
  lua_createtable(L, (int)(g->pfirst[num + 1] - g->pfirst[num]), 0);
  for (i = g->pfirst[num], k = 1; i < g->pfirst[num + 1]; i++) {
    if (i > g->pfirst[num] && g->pred[i] == g->pred[i - 1]) continue;
    lua_pushinteger(L, (lua_Integer)g->pred[i] + 1);
    lua_rawseti(L, -2, (lua_Integer)k++);
  }
  return 1;
}

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
      if (root->kind == 0x02 || root->kind == 0x03 || root->kind == 0x04
          || root->kind == 0x06 || root->kind == 0x08 || root->kind == 0x8E) {
        lua_pushinteger(L, root->thread);
        lua_setfield(L, -2, "thread");
      }
      if (root->kind == 0x02 || root->kind == 0x03) {
        lua_pushinteger(L, (lua_Integer)(int32_t)root->frame);
        lua_setfield(L, -2, "frame");
      }
    }
  }
  else {
    hg_Iter it;
    hg_Ref r;
    hg_refs_begin(&it, g, p, 1);
    while (hg_refs_next(&it, &r))
      if (r.target == c && !(r.flags & (HG_NEVER | HG_SKIP))) {
        lua_pushstring(L, ref_kinds[r.kind]);
        lua_setfield(L, -2, "ref");
        lua_pushinteger(L, (lua_Integer)r.index + 1);
        lua_setfield(L, -2, "index");
        lua_pushboolean(L, (r.flags & HG_LOW) != 0);
        lua_setfield(L, -2, "low");
        break;
      }
  }
}

/*
** heap:path_search({num...}) -> how many of them a strong path reaches.
** One BFS for all; its parents stay with the graph for path_segments, so a
** path is only ever as big as the one being printed.
*/
static int graph_path_search (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  lua_Integer i, nt;
  uint64_t distinct = 0, found = 0;
  uint8_t *targets;
  sift_Status s;
  luaL_checktype(L, 2, LUA_TTABLE);
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
  free(g->path_parent);
  free(g->run_start);
  free(g->run_len);
  g->run_start = g->run_len = NULL;
  g->path_parent = (uint32_t *)malloc(((size_t)g->n + 1) * sizeof *g->path_parent);
  if (g->path_parent == NULL) luaL_error(L, "not enough memory for path finding");
  s = hg_paths(g, targets, distinct, g->path_parent, NULL);
  if (s != SIFT_OK) {
    free(g->path_parent);
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
  while (hg_refs_next(&it, &r))
    if (r.target == c && !(r.flags & (HG_NEVER | HG_SKIP))) {
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
    g->run_start = (uint32_t *)malloc(((size_t)g->n + 1) * sizeof *g->run_start);
    g->run_len = (uint32_t *)malloc(((size_t)g->n + 1) * sizeof *g->run_len);
    if (g->run_start == NULL || g->run_len == NULL) {
      free(g->run_start); free(g->run_len);
      g->run_start = g->run_len = NULL;
      luaL_error(L, "not enough memory for path finding");
    }
    for (i = 0; i < g->n; i++) g->run_start[i] = HG_NONE;
  }
  if (g->run_start[v] != HG_NONE) return;
  stack = (uint32_t *)lua_newuserdatauv(L, ((size_t)g->n + 1) * sizeof *stack, 0);
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
  lua_pop(L, 1);
}

/*
** heap:path_segments(num [, collapse]) -> the path of the last search to
** num as steps { object, root | ref, index, low, count, last } from the
** root down, or false. With collapse, consecutive steps of the same class
** reached by the same reference (a linked list's `next`, an array's
** elements) are one step with their count and the last object.
*/
static int graph_path_segments (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  uint32_t t = checkobj(L, g, 2), c, *chain;
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

/*
** heap:dominators(model [, progress]) -> objects reachable from the roots.
** Builds the dominator tree and retained sizes under model "shark" or
** "jvm"; heap:idom/retained/dominated/top/unreachable read them.
*/
static int graph_dominators (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  int model = checkmodel(L, 2);
  sift_Progress progress;
  sift_LuaProgress lp;
  sift_Status s;
  sift_progress_lua(L, 3, &lp, &progress, 2 * (uint64_t)g->n);
  s = hg_dominators(g, model, &progress);
  sift_progress_rethrow(&lp);
  if (s == SIFT_ECANCEL) return sift_pushfail(L, s, "cancelled");
  if (s != SIFT_OK) luaL_error(L, "not enough memory for the dominator tree");
  lua_pushinteger(L, (lua_Integer)g->reachable);
  return 1;
}

static hg_Graph *checkdominators (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  if (g->idom == NULL) luaL_error(L, "dominators are not computed: call heap:dominators() first");
  return g;
}

/* heap:idom(num) -> immediate dominator (0: the roots), or nil when num is
   unreachable */
static int graph_idom (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t d = g->idom[checkobj(L, g, 2)];
  if (d == HG_NONE) lua_pushnil(L);
  else lua_pushinteger(L, d == g->n ? 0 : (lua_Integer)d + 1);
  return 1;
}

/* heap:retained(num) -> retained bytes, nil when unreachable */
static int graph_retained (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t v = checkobj(L, g, 2);
  if (g->idom[v] == HG_NONE) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)g->retained[v]);
  return 1;
}

/* heap:shallow(num, model) -> shallow bytes under a model */
static int graph_shallow (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  uint32_t v = checkobj(L, g, 2);
  lua_pushinteger(L, (lua_Integer)hg_shallow(g, v, checkmodel(L, 3)));
  return 1;
}

/* heap:dominated(num | 0) -> the objects num immediately dominates (0: those
   only the roots dominate) */
static int graph_dominated (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  lua_Integer a = luaL_checkinteger(L, 2);
  uint32_t v, i;
  luaL_argcheck(L, a >= 0 && (lua_Unsigned)a <= g->n, 2, "no such object number");
  v = a == 0 ? g->n : (uint32_t)a - 1;
  lua_createtable(L, (int)(g->child_first[v + 1] - g->child_first[v]), 0);
  for (i = g->child_first[v]; i < g->child_first[v + 1]; i++) {
    lua_pushinteger(L, (lua_Integer)g->children[i] + 1);
    lua_rawseti(L, -2, (lua_Integer)(i - g->child_first[v]) + 1);
  }
  return 1;
}

/* restore the min-heap order (by retained size) below position i */
static void sift_down (uint32_t *heap, uint64_t size, uint64_t i,
                       const uint64_t *retained) {
  for (;;) {
    uint64_t l = 2 * i + 1, m = i;
    if (l < size && retained[heap[l]] < retained[heap[m]]) m = l;
    if (l + 1 < size && retained[heap[l + 1]] < retained[heap[m]]) m = l + 1;
    if (m == i) return;
    { uint32_t x = heap[i]; heap[i] = heap[m]; heap[m] = x; }
    i = m;
  }
}

/* heap:top(n) -> the n objects with the largest retained sizes, largest
   first (a min-heap of n over one pass) */
static int graph_top (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  lua_Integer want = luaL_checkinteger(L, 2);
  uint32_t *heap, v;
  uint64_t size = 0, cap;
  luaL_argcheck(L, want >= 0, 2, "must not be negative");
  cap = (uint64_t)want < g->n ? (uint64_t)want : g->n;
  heap = (uint32_t *)lua_newuserdatauv(L, (cap + 1) * sizeof *heap, 0);
#define RET(i) g->retained[heap[i]]
  for (v = 0; v < g->n && cap > 0; v++) {
    uint64_t i;
    if (g->idom[v] == HG_NONE) continue;
    if (size < cap) {  /* sift up */
      heap[i = size++] = v;
      while (i > 0 && RET((i - 1) / 2) > RET(i)) {
        uint32_t x = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
      }
    }
    else if (g->retained[v] > RET(0)) {  /* replace the smallest */
      heap[0] = v;
      sift_down(heap, size, 0, g->retained);
    }
  }
  lua_createtable(L, (int)size, 0);
  while (size > 0) {  /* pop smallest first into the back of the list */
    lua_pushinteger(L, (lua_Integer)heap[0] + 1);
    lua_rawseti(L, -2, (lua_Integer)size);
    heap[0] = heap[--size];
    sift_down(heap, size, 0, g->retained);
  }
#undef RET
  return 1;
}

/* heap:unreachable() -> how many objects the roots do not reach, and their
   shallow bytes (under the dominator model) */
static int graph_unreachable (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint64_t count = 0, bytes = 0, i;
  for (i = 0; i < g->n; i++)
    if (g->idom[i] == HG_NONE) {
      count++;
      bytes += hg_shallow(g, (uint32_t)i, g->model);
    }
  lua_pushinteger(L, (lua_Integer)count);
  lua_pushinteger(L, (lua_Integer)bytes);
  return 2;
}

/* heap:unreachable_without(num) -> objects (and bytes) that no longer
   reach the roots once num is removed: the retained set by definition,
   computed by brute force */
static int graph_unreachable_without (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint64_t count, bytes;
  if (hg_unreachable_without(g, checkobj(L, g, 2), &count, &bytes) != SIFT_OK)
    luaL_error(L, "not enough memory");
  lua_pushinteger(L, (lua_Integer)count);
  lua_pushinteger(L, (lua_Integer)bytes);
  return 2;
}

/* the group of an object for retained_by_class: its class, its primitive
   element type, or "class objects and unknown classes" (not reported) */
static uint64_t class_slot (const hp_Heap *h, uint32_t num) {
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.kind == HP_CLASS_DUMP) return h->nclasses + 12;
  if (o.kind == HP_PRIM_ARRAY_DUMP || o.kind == HP_PRIM_ARRAY_NODATA)
    return h->nclasses + (uint64_t)o.elem;
  return o.cls >= 0 ? (uint64_t)o.cls : h->nclasses + 12;
}

/*
** heap:retained_by_class() -> { [class number or element type] = bytes }:
** per class, the retained sizes of its instances that no other instance of
** the same class dominates (so nothing is counted twice)
*/
static int graph_retained_by_class (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  const hp_Heap *h = g->h;
  uint64_t nslots = h->nclasses + 13, top = 0;
  uint64_t *sum = (uint64_t *)lua_newuserdatauv(L, nslots * sizeof *sum, 0);
  uint32_t *active = (uint32_t *)lua_newuserdatauv(L, nslots * sizeof *active, 0);
  uint32_t *stack = (uint32_t *)lua_newuserdatauv(L, ((size_t)g->n + 2) * sizeof *stack, 0);
  uint32_t *pos = (uint32_t *)lua_newuserdatauv(L, ((size_t)g->n + 2) * sizeof *pos, 0);
  static const char *const elems[12] = {NULL, NULL, NULL, NULL, "boolean",
    "char", "float", "double", "byte", "short", "int", "long"};
  uint64_t i;
  memset(sum, 0, nslots * sizeof *sum);
  memset(active, 0, nslots * sizeof *active);
  stack[top] = g->n;  /* depth-first over the dominator tree */
  pos[top++] = g->child_first[g->n];
  while (top > 0) {
    uint32_t v = stack[top - 1];
    if (pos[top - 1] < g->child_first[v + 1]) {
      uint32_t c = g->children[pos[top - 1]++];
      uint64_t slot = class_slot(h, c);
      if (active[slot]++ == 0) sum[slot] += g->retained[c];
      stack[top] = c;
      pos[top++] = g->child_first[c];
    }
    else {  /* leave v */
      top--;
      if (v != g->n) active[class_slot(h, v)]--;
    }
  }
  lua_newtable(L);
  for (i = 0; i < nslots; i++) {
    if (sum[i] == 0 || i == h->nclasses + 12) continue;
    if (i < h->nclasses) lua_pushinteger(L, (lua_Integer)i + 1);
    else lua_pushstring(L, elems[i - h->nclasses]);
    lua_pushinteger(L, (lua_Integer)sum[i]);
    lua_settable(L, -3);
  }
  return 1;
}

/* heap:build_graph() -> references in the dominator model; builds the CSR
   arrays that heap:dominators() would build (for timing them apart) */
static int graph_build (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  if (hg_build(g, NULL) != SIFT_OK) luaL_error(L, "not enough memory for the heap graph");
  lua_pushinteger(L, (lua_Integer)g->edges);
  return 1;
}

static int cmp_pair (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/*
** heap:holders(class) -> holder, count, retained: the object that
** immediately dominates the most retained bytes of the class's instances
** (0 when only the roots do, nil when the class has none), how many
** instances it holds and their retained bytes together
*/
static int graph_holders (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  const hp_Heap *h = g->h;
  lua_Integer c = luaL_checkinteger(L, 2);
  uint64_t i, n = 0, *pairs, best_sum = 0, best_count = 0, best = 0;
  int found = 0;
  luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, 2, "no such class number");
  pairs = (uint64_t *)lua_newuserdatauv(L, 2 * ((size_t)g->n + 1) * sizeof *pairs, 0);
  for (i = 0; i < g->n; i++) {  /* (holder, retained) of each reachable instance */
    hp_ObjInfo o;
    if (g->idom[i] == HG_NONE) continue;
    hp_object(h, i, &o);
    if (o.kind == HP_CLASS_DUMP || o.cls != c - 1) continue;
    pairs[2 * n] = g->idom[i];
    pairs[2 * n + 1] = g->retained[i];
    n++;
  }
  qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
  for (i = 0; i < n; ) {  /* the holder with the most bytes */
    uint64_t j = i, sum = 0;
    while (j < n && pairs[2 * j] == pairs[2 * i]) sum += pairs[2 * j++ + 1];
    if (!found || sum > best_sum) {
      best = pairs[2 * i];
      best_sum = sum;
      best_count = j - i;
      found = 1;
    }
    i = j;
  }
  if (!found) return 0;
  lua_pushinteger(L, best == g->n ? 0 : (lua_Integer)best + 1);
  lua_pushinteger(L, (lua_Integer)best_count);
  lua_pushinteger(L, (lua_Integer)best_sum);
  return 3;
}

/* heap:graph_info() -> sizes of what the graph holds, in bytes */
static int graph_info (lua_State *L) {
  hg_Graph *g = checkgraph(L);
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
  hg_Graph *g = checkgraph(L);
  uint64_t nc = g->h->nclasses, c;
  uint32_t *inst, *mirror;
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_argcheck(L, lua_rawlen(L, 2) == nc && lua_rawlen(L, 3) == nc, 2,
                "a size per class expected");
  inst = (uint32_t *)malloc((nc + 1) * sizeof *inst);
  mirror = (uint32_t *)malloc((nc + 1) * sizeof *mirror);
  if (inst == NULL || mirror == NULL) {
    free(inst);
    free(mirror);
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
      free(inst);
      free(mirror);
      return luaL_error(L, "bad size for class %d", (int)k);
    }
    inst[c] = (uint32_t)a;
    mirror[c] = (uint32_t)b;
  }
  free(g->jvm_instance);
  free(g->jvm_mirror);
  g->jvm_instance = inst;
  g->jvm_mirror = mirror;
  g->jvm_array_base = (uint32_t)luaL_checkinteger(L, 4);
  g->jvm_array_base_wide = (uint32_t)luaL_checkinteger(L, 5);
  g->jvm_oop = (uint32_t)luaL_checkinteger(L, 6);
  if (g->model == HG_JVM) invalidate(g);
  return 0;
}

/*
** heap:model_histogram(model, class_class) -> rows { class | elem, count,
** shallow } as heap:histogram(), sizes under the model; class objects are
** counted as instances of class number class_class (java.lang.Class) when
** given, as the JVM's own histogram does
*/
static int graph_model_histogram (lua_State *L) {
  hg_Graph *g = checkgraph(L);
  const hp_Heap *h = g->h;
  int model = checkmodel(L, 2);
  lua_Integer cc = luaL_optinteger(L, 3, 0);
  uint64_t nslots = h->nclasses + 13, i, *count, *bytes;
  static const char *const elems[12] = {NULL, NULL, NULL, NULL, "boolean",
    "char", "float", "double", "byte", "short", "int", "long"};
  int row = 0;
  luaL_argcheck(L, cc >= 0 && (lua_Unsigned)cc <= h->nclasses, 3, "no such class number");
  count = (uint64_t *)lua_newuserdatauv(L, 2 * nslots * sizeof *count, 0);
  bytes = count + nslots;
  memset(count, 0, 2 * nslots * sizeof *count);
  for (i = 0; i < g->n; i++) {
    uint64_t slot = class_slot(h, (uint32_t)i);
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
  {"refs", graph_refs},
  {"referrers", graph_referrers},
  {"path_search", graph_path_search},
  {"path_segments", graph_path_segments},
  {"dominators", graph_dominators},
  {"idom", graph_idom},
  {"retained", graph_retained},
  {"shallow", graph_shallow},
  {"dominated", graph_dominated},
  {"top", graph_top},
  {"unreachable", graph_unreachable},
  {"unreachable_without", graph_unreachable_without},
  {"retained_by_class", graph_retained_by_class},
  {"graph_info", graph_info},
  {"build_graph", graph_build},
  {"holders", graph_holders},
  {NULL, NULL}
};

void sift_heap_graph_methods (lua_State *L) {
  luaL_setfuncs(L, graph_methods, 0);
}
