/*
** ldominators.c
** The dominator tree and retained sizes of a sift.Heap, as raw methods:
** building them under a size model, each object's immediate dominator,
** retained size and dominated objects, the top retainers, what no root
** reaches, retained bytes per class and the holder of a class's instances.
** 0 stands for the virtual root of the dominator tree.
*/

#include <stdlib.h>
#include <string.h>

#include "core/sort.h"
#include "core/split.h"
#include "lheap.h"


/*
** heap:dominators(model [, progress]) -> objects reachable from the roots.
** Builds the dominator tree and retained sizes under model "shark", "jvm"
** or "visualvm"; heap:idom/retained/dominated/top/unreachable read them.
** On failure or "cancelled" the previous tree stays.
*/
static int graph_dominators (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  int model = sift_checkmodel(L, 2);
  sift_Progress progress;
  sift_LuaProgress lp;
  sift_Status s;
  sift_progress_lua(L, 3, &lp, &progress, 2 * (uint64_t)g->n);
  s = hg_dominators(g, model, &progress);
  sift_progress_rethrow(&lp);
  if (s == SIFT_ECANCEL) return sift_pushfail(L, s, "cancelled");
  if (s != SIFT_OK) sift_graph_error(L, s, "the dominator tree");
  lua_pushinteger(L, (lua_Integer)g->reachable);
  return 1;
}

/*
** heap:set_visualvm_layout(oop, object_class, class_class): VisualVM's
** sizes (hg_set_visualvm) from the reference size its library would guess
** and the class numbers of java.lang.Object and java.lang.Class (nil when
** the dump has none)
*/
static int graph_set_visualvm_layout (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  lua_Integer oop = luaL_checkinteger(L, 2);
  lua_Integer cls[2];
  int i;
  luaL_argcheck(L, oop == 4 || oop == 8, 2, "must be 4 or 8");
  for (i = 0; i < 2; i++) {
    cls[i] = luaL_optinteger(L, 3 + i, 0);
    luaL_argcheck(L, cls[i] >= 0 && (lua_Unsigned)cls[i] <= g->h->nclasses, 3 + i,
                  "no such class number");
  }
  if (hg_set_visualvm(g, (int)oop, cls[0] - 1, cls[1] - 1) != SIFT_OK)
    return luaL_error(L, "not enough memory");
  return 0;
}

static hg_Graph *checkdominators (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  if (g->idom == NULL) luaL_error(L, "dominators are not computed: call heap:dominators() first");
  return g;
}

/* heap:idom(num) -> immediate dominator (0: the roots), or nil when num is
   unreachable */
static int graph_idom (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t d = g->idom[sift_checkobj(L, g, 2)];
  if (d == HG_NONE) lua_pushnil(L);
  else lua_pushinteger(L, d == g->n ? 0 : (lua_Integer)d + 1);
  return 1;
}

/* heap:retained(num) -> retained bytes, nil when unreachable */
static int graph_retained (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t v = sift_checkobj(L, g, 2);
  if (g->idom[v] == HG_NONE) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)hg_retained(g, v));
  return 1;
}

/* heap:retained_count(num) -> how many objects num retains (its dominator
   subtree, itself included), nil when unreachable: a walk of the subtree */
static int graph_retained_count (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t v = sift_checkobj(L, g, 2), *stack, top = 0, cap = 64;
  uint64_t count = 0, i, end;
  if (g->idom[v] == HG_NONE) {
    lua_pushnil(L);
    return 1;
  }
  if ((stack = (uint32_t *)malloc(cap * sizeof(uint32_t))) == NULL) return luaL_error(L, "not enough memory");
  stack[top++] = v;
  while (top > 0) {  /* each object is pushed once: the tree has one parent per node */
    uint32_t u = stack[--top];
    count++;
    hg_children(g, u, &i, &end);
    for (; i < end; i++) {
      if (top == cap) {
        uint32_t *grown = cap <= UINT32_MAX / 2 ? (uint32_t *)realloc(stack, 2 * (size_t)cap * sizeof(uint32_t)) : NULL;
        if (grown == NULL) { free(stack); return luaL_error(L, "not enough memory"); }
        stack = grown;
        cap *= 2;
      }
      stack[top++] = g->children[i];
    }
  }
  free(stack);
  lua_pushinteger(L, (lua_Integer)count);
  return 1;
}

/* restore the min-heap order (by retained size) below position i */
static void sift_down (uint32_t *heap, uint64_t size, uint64_t i,
                       const hg_Graph *g) {
  for (;;) {
    uint64_t l = 2 * i + 1, m = i;
    if (l < size && hg_retained(g, heap[l]) < hg_retained(g, heap[m])) m = l;
    if (l + 1 < size && hg_retained(g, heap[l + 1]) < hg_retained(g, heap[m])) m = l + 1;
    if (m == i) return;
    { uint32_t x = heap[i]; heap[i] = heap[m]; heap[m] = x; }
    i = m;
  }
}

/*
** Push the `cap` largest (by retained size) of `count` candidates as a
** list, largest first: list[k] each, or, without a list, every object the
** roots reach. One pass keeps a min-heap of cap; nothing is made per
** candidate, so a node that dominates millions costs no Lua value each.
*/
static void push_largest (lua_State *L, const hg_Graph *g, const uint32_t *list,
                          uint64_t count, uint64_t cap) {
  uint32_t *heap;
  uint64_t size = 0, k;
  if (cap > count) cap = count;
  heap = (uint32_t *)lua_newuserdatauv(L, (cap + 1) * sizeof *heap, 0);
#define RET(i) hg_retained(g, heap[i])
  for (k = 0; k < count && cap > 0; k++) {
    uint32_t v = list ? list[k] : (uint32_t)k;
    uint64_t i;
    if (!list && g->idom[v] == HG_NONE) continue;
    if (size < cap) {  /* sift up */
      heap[i = size++] = v;
      while (i > 0 && RET((i - 1) / 2) > RET(i)) {
        uint32_t x = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
      }
    }
    else if (hg_retained(g, v) > RET(0)) {  /* replace the smallest */
      heap[0] = v;
      sift_down(heap, size, 0, g);
    }
  }
#undef RET
  lua_createtable(L, (int)size, 0);
  while (size > 0) {  /* pop smallest first into the back of the list */
    lua_pushinteger(L, (lua_Integer)heap[0] + 1);
    lua_rawseti(L, -2, (lua_Integer)size);
    heap[0] = heap[--size];
    sift_down(heap, size, 0, g);
  }
  lua_remove(L, -2);  /* the min-heap */
}

/* the node of a dominator-tree argument: an object number, or 0 for the
   roots (the tree's virtual root, number n) */
static uint32_t checknode (lua_State *L, const hg_Graph *g, int arg) {
  lua_Integer a = luaL_checkinteger(L, arg);
  luaL_argcheck(L, a >= 0 && (lua_Unsigned)a <= g->n, arg, "no such object number");
  return a == 0 ? g->n : (uint32_t)a - 1;
}

/* heap:dominated(num | 0 [, limit]) -> the objects num immediately
   dominates (0: those only the roots dominate), largest retained first,
   at most limit of them */
static int graph_dominated (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint32_t v = checknode(L, g, 2);
  uint64_t lo, hi;
  lua_Integer limit;
  hg_children(g, v, &lo, &hi);
  limit = luaL_optinteger(L, 3, (lua_Integer)(hi - lo));
  luaL_argcheck(L, limit >= 0, 3, "must not be negative");
  push_largest(L, g, g->children + lo, hi - lo, (uint64_t)limit);
  return 1;
}

/* heap:dominated_count(num | 0) -> how many objects num immediately dominates */
static int graph_dominated_count (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  uint64_t lo, hi;
  hg_children(g, checknode(L, g, 2), &lo, &hi);
  lua_pushinteger(L, (lua_Integer)(hi - lo));
  return 1;
}

/* heap:reachable_bytes([heap]) -> the bytes of every object the roots
   reach (under the tree's model): what the roots' children retain together;
   of the objects of one Android heap when one is named (ahat's heap size) */
static int graph_reachable_bytes (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  int heap = sift_optheap(L, 2);
  uint64_t bytes = 0, i, end;
  if (heap >= 0) {
    for (i = 0; i < g->n; i++)
      if (g->idom[i] != HG_NONE && sift_in_heap(g->h, i, heap))
        bytes += hg_shallow(g, (uint32_t)i, g->model);
  }
  else
    for (hg_children(g, g->n, &i, &end); i < end; i++)
      bytes += hg_retained(g, g->children[i]);
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

/* heap:top(n) -> the n objects with the largest retained sizes, largest
   first */
static int graph_top (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  lua_Integer want = luaL_checkinteger(L, 2);
  luaL_argcheck(L, want >= 0, 2, "must not be negative");
  push_largest(L, g, NULL, g->n, (uint64_t)want);
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
  sift_Status s;
  if (g->model == HG_VISUALVM)
    return luaL_error(L, "unreachable_without: the tree follows VisualVM's rules (use 'shark' or 'jvm')");
  s = hg_unreachable_without(g, sift_checkobj(L, g, 2), &count, &bytes);
  if (s != SIFT_OK) sift_graph_error(L, s, "the heap graph");
  lua_pushinteger(L, (lua_Integer)count);
  lua_pushinteger(L, (lua_Integer)bytes);
  return 2;
}

/* each object's group (sift_class_slot), UINT32_MAX for one of another
   heap than the one named: read in object order, on both cores */
typedef struct Slots {
  const hp_Heap *h;
  int heap;
  uint32_t *slot;
} Slots;

static void slots_run (void *ud, int part, uint64_t lo, uint64_t hi) {
  const Slots *s = (const Slots *)ud;
  uint64_t i;
  (void)part;
  for (i = lo; i < hi; i++)
    s->slot[i] = sift_in_heap(s->h, i, s->heap) ? (uint32_t)sift_class_slot(s->h, (uint32_t)i)
                                                : UINT32_MAX;
}

/*
** heap:retained_by_class([heap [, progress]]) -> { [class number or
** element type] = bytes }: per class, the retained sizes of its instances
** that no other instance of the same class dominates (so nothing is
** counted twice); of the instances in one Android heap when one is named.
** progress(done, total) is called as the work goes on (to 2 n: each
** object's class, then the walk down the tree): false from it stops the
** work (nil, "cancelled"), and an error it raises is raised again.
*/
static int graph_retained_by_class (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  const hp_Heap *h = g->h;
  int heap = sift_optheap(L, 2);
  sift_LuaProgress lp;
  sift_Progress progress;
  uint64_t nslots = h->nclasses + 13, depth = 0, nactive = 0, walked = 0;
  uint64_t *sum, *activated;
  uint8_t *active;
  int go = 1;
  /* (three arrays of n: big arrays given back before the table is made,
     not userdata the collector would keep until its next cycle) */
  uint32_t *first = NULL, *pos = NULL, *slots = NULL;
  static const char *const elems[12] = {NULL, NULL, NULL, NULL, "boolean",
    "char", "float", "double", "byte", "short", "int", "long"};
  uint64_t i;
  Slots sl;
  sift_progress_lua(L, 3, &lp, &progress, 2 * (uint64_t)g->n);
  lua_settop(L, 3);  /* (the working arrays from 4) */
  sum = (uint64_t *)lua_newuserdatauv(L, nslots * sizeof *sum, 0);
  active = (uint8_t *)lua_newuserdatauv(L, nslots, 0);
  activated = (uint64_t *)lua_newuserdatauv(L, nslots * sizeof *activated, 0);
  memset(sum, 0, nslots * sizeof *sum);
  memset(active, 0, nslots);
  if (!HG_ALLOC(first, (uint64_t)g->n + 2) || !HG_ALLOC(pos, (uint64_t)g->n + 1)
      || !HG_ALLOC(slots, (uint64_t)g->n + 1)) {
    sift_big_free(first);
    sift_big_free(pos);
    sift_big_free(slots);
    sift_graph_error(L, SIFT_ENOMEM, "the retained sizes by class");
  }
  sl.h = h; sl.heap = heap; sl.slot = slots;
  hg_children_first(g, first);
  sift_split(g->n, hg_split_from(g), slots_run, &sl);
  go = sift_progress(&progress, g->n);
  /*
  ** Depth-first over the dominator tree (in an order that has nothing to
  ** do with the records': the objects' groups were read before, in
  ** theirs): pos[k] is where the children of
  ** the object at depth k go on, that object the child before pos[k - 1]
  ** (the virtual root at depth 0). A class is active from its first
  ** instance on the way down until the walk leaves that instance; the
  ** classes made active are kept in order on a stack (depth << 32 | slot:
  ** at most one entry a class), so leaving an object needs no second look
  ** at its record.
  */
  pos[depth++] = first[g->n];
  while (go && depth > 0) {
    uint32_t v = depth == 1 ? g->n : g->children[pos[depth - 2] - 1];
    if (pos[depth - 1] < first[v + 1]) {
      uint32_t c = g->children[pos[depth - 1]++];
      go = sift_progress(&progress, g->n + ++walked);
      if (slots[c] != UINT32_MAX) {
        uint64_t slot = slots[c];
        if (!active[slot]) {
          active[slot] = 1;
          activated[nactive++] = depth << 32 | slot;
          sum[slot] += hg_retained(g, c);
        }
      }
      pos[depth++] = first[c];
    }
    else {  /* leave v (at depth - 1): the classes its instance made active */
      depth--;
      while (nactive > 0 && activated[nactive - 1] >> 32 == depth)
        active[activated[--nactive] & 0xFFFFFFFFu] = 0;
    }
  }
  if (go) go = sift_progress(&progress, 2 * (uint64_t)g->n);  /* (the unreached: no walk) */
  sift_big_free(first);
  sift_big_free(pos);
  sift_big_free(slots);
  sift_progress_rethrow(&lp);
  if (!go) return sift_pushfail(L, SIFT_ECANCEL, "cancelled");
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


/*
** heap:holders(class) -> holder, count, retained: the object that
** immediately dominates the most retained bytes of the class's instances
** (0 when only the roots do, nil when the class has none), how many
** instances it holds and their retained bytes together. The instances as
** holder << 32 | instance, radix-sorted by holder (ties: the first
** holder in object order).
*/
static int graph_holders (lua_State *L) {
  hg_Graph *g = checkdominators(L);
  const hp_Heap *h = g->h;
  lua_Integer c = luaL_checkinteger(L, 2);
  uint64_t i, n = 0, *pairs, *tmp, best_sum = 0, best_count = 0, best = 0;
  int found = 0;
  luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, 2, "no such class number");
  pairs = (uint64_t *)sift_big_alloc(((size_t)g->n + 1) * sizeof *pairs);
  tmp = (uint64_t *)sift_big_alloc(((size_t)g->n + 1) * sizeof *tmp);
  if (pairs == NULL || tmp == NULL) {
    sift_big_free(pairs);
    sift_big_free(tmp);
    return luaL_error(L, "not enough memory for the holders");
  }
  for (i = 0; i < g->n; i++) {  /* each reachable instance with its holder */
    hp_ObjInfo o;
    if (g->idom[i] == HG_NONE) continue;
    hp_object(h, i, &o);
    if (o.kind == HP_CLASS_DUMP || o.cls != c - 1) continue;
    pairs[n++] = (uint64_t)g->idom[i] << 32 | i;
  }
  sift_radix_sort(pairs, (size_t)n, sizeof *pairs, 32, 64, tmp);
  sift_big_free(tmp);
  for (i = 0; i < n; ) {  /* the holder with the most bytes */
    uint64_t j = i, sum = 0;
    while (j < n && pairs[j] >> 32 == pairs[i] >> 32) sum += hg_retained(g, (uint32_t)pairs[j++]);
    if (!found || sum > best_sum) {
      best = pairs[i] >> 32;
      best_sum = sum;
      best_count = j - i;
      found = 1;
    }
    i = j;
  }
  sift_big_free(pairs);
  if (!found) return 0;
  lua_pushinteger(L, best == g->n ? 0 : (lua_Integer)best + 1);
  lua_pushinteger(L, (lua_Integer)best_count);
  lua_pushinteger(L, (lua_Integer)best_sum);
  return 3;
}

static const luaL_Reg dominator_methods[] = {
  {"dominators", graph_dominators},
  {"set_visualvm_layout", graph_set_visualvm_layout},
  {"idom", graph_idom},
  {"retained", graph_retained},
  {"retained_count", graph_retained_count},
  {"dominated", graph_dominated},
  {"dominated_count", graph_dominated_count},
  {"reachable_bytes", graph_reachable_bytes},
  {"top", graph_top},
  {"unreachable", graph_unreachable},
  {"unreachable_without", graph_unreachable_without},
  {"retained_by_class", graph_retained_by_class},
  {"holders", graph_holders},
  {NULL, NULL}
};

void sift_open_heap_dominators (lua_State *L) {
  sift_addmethods(L, SIFT_HEAP_T, dominator_methods);
}
