/*
** dominators.c
** The dominator tree and retained sizes over the reference graph of
** graph.c: the references of the dominator model gathered as CSR arrays
** (under visualvm, those VisualVM's heap library follows: visualvm.c), then
** semi-NCA (Georgiadis, Tarjan, Werneck) on the preorder of
** an iterative DFS from a virtual root whose successors are the GC roots;
** and what would become unreachable without one object.
*/

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/search.h"
#include "core/split.h"
#include "graph.h"

/*
** {======================================================
** Dominators
** =======================================================
*/

sift_Status hg_build (hg_Graph *g, sift_Progress *pr) {
  uint32_t *first, *succ;
  uint64_t e;
  sift_Status s;
  if (g->first) return SIFT_OK;
  if ((s = hg_csr(g, HG_CSR_STRONG, NULL, NULL, &first, &succ, &e, pr, 0, 0)) != SIFT_OK) return s;
  g->first = first;  /* only once complete */
  g->succ = succ;
  g->edges = e;
  return SIFT_OK;
}

/*
** The tree is built in phases, each freeing what the next does not need,
** so that the peak stays near the graph's own size (docs/heap.md, "The
** floor" of the dominator tree). Arrays by object number (n + 1: the
** virtual root is n) or by preorder number (R: the virtual root is 0).
**
** 1. dfs: each object's preorder number (pre) and the DFS parents (by
**    preorder number, so written in order), from the virtual root whose
**    successors are the roots; what it reads at random is a bit per object
**    (seen) and each object's successors once. pre is written, never read,
**    as each object is reached (spilling: the preorder, vertex, in order,
**    pre made from it after). The position in the successors of the
**    objects on the DFS path is kept on a stack (8 bytes a level), not per
**    object. The preorder itself is made from pre in step 5.
** 2. predecessors: the references are rewritten in place into preorder
**    numbers, keeping only those semi-NCA needs: a reference from the DFS
**    parent, to itself, or to a child of the virtual root (whose
**    semi-dominator is the virtual root) can never lower a semi-dominator;
**    the virtual root's own, to the roots the DFS reached first from
**    another root, are kept.
**    The rest (a third of the references of a JVM heap) become the
**    predecessor lists by preorder number, and the references are freed.
**    Lists read in order need no offsets: where each begins is a bit per
**    entry and which are not empty a bit per list (Runs), so the offsets by
**    object, then those by preorder number, are each freed once counted.
** 3. semi-dominators, from the last preorder number down, by link-eval
**    with path compression: a node is linked once processed, so "x is
**    linked" is "x > k" and needs no mark; label[] holds the smallest
**    semi-dominator on the compressed path (a value, not a node), and a
**    node's own semi-dominator, needed by step 4 only, is kept in the first
**    slot of its predecessor list, which is read no more (without one, it
**    is its DFS parent).
** 4. immediate dominators by nearest common ancestor, in the parent array.
** 5. results by object number: idom, children grouped by dominator (found
**    by binary search, hg_children) and retained sizes.
*/
static sift_Status dfs (uint64_t n, const uint32_t *first, const uint32_t *succ,
                        const uint32_t *rootv, uint64_t nrootv, uint32_t *order,
                        int numbers, uint32_t *parent, uint64_t *pR) {
  uint64_t R = 1, depth = 0, cap = 1024, rootnext = 0, i;
  uint32_t *stack, *grown, cur = 0;
  uint8_t *seen = (uint8_t *)sift_big_alloc(n / 8 + 1);
  if (seen == NULL || !HG_ALLOC(stack, 2 * cap)) {
    sift_big_free(seen);
    return SIFT_ENOMEM;
  }
  if (numbers) {
    for (i = 0; i < n; i++) order[i] = HG_NONE;
    order[n] = 0;
  }
  else order[0] = (uint32_t)n;
  parent[0] = 0;
  for (;;) {
    uint32_t w;
    if (depth == 0) {
      if (rootnext == nrootv) break;
      w = rootv[rootnext++];
    }
    else if (stack[2 * depth] < stack[2 * depth + 1]) w = succ[stack[2 * depth]++];
    else {  /* done: back to the DFS parent */
      depth--;
      cur = parent[cur];
      continue;
    }
    if (HG_BIT(seen, w)) continue;
    HG_SETBIT(seen, w);
    if (numbers) order[w] = (uint32_t)R;  /* written, never read */
    else order[R] = w;
    parent[R] = cur;
    cur = (uint32_t)R++;
    if (++depth == cap) {
      cap += cap / 2;
      if ((grown = sift_big_realloc(stack, 2 * cap * sizeof *stack)) == NULL) {
        sift_big_free(seen);
        sift_big_free(stack);
        return SIFT_ENOMEM;
      }
      stack = grown;
    }
    stack[2 * depth] = first[w];  /* the next successor and the end */
    stack[2 * depth + 1] = first[w + 1];
  }
  sift_big_free(seen);
  sift_big_free(stack);
  *pR = R;
  return SIFT_OK;
}

/*
** Lists laid end to end and read in order: has, a bit per list, set when it
** is not empty; start, a bit per entry, set where a list begins.
*/
typedef struct Runs {
  uint8_t *has, *start;
  uint64_t total;  /* entries */
} Runs;

static void runs_free (Runs *r) {
  sift_big_free(r->has);
  sift_big_free(r->start);
  r->has = r->start = NULL;
}

/* the runs of the m lists whose offsets are off[0 .. m] */
static sift_Status runs_of (const uint32_t *off, uint64_t m, Runs *r) {
  uint64_t i;
  r->total = off[m];
  r->has = (uint8_t *)sift_big_alloc(m / 8 + 1);  /* zeroed (big.h) */
  r->start = (uint8_t *)sift_big_alloc(r->total / 8 + 1);
  if (r->has == NULL || r->start == NULL) {
    runs_free(r);
    return SIFT_ENOMEM;
  }
  for (i = 0; i < m; i++)
    if (off[i] < off[i + 1]) {
      HG_SETBIT(r->has, i);
      HG_SETBIT(r->start, off[i]);
    }
  return SIFT_OK;
}

/* the end of the list that begins at entry j */
static uint64_t run_end (const Runs *r, uint64_t j) {
  do j++; while (j < r->total && !HG_BIT(r->start, j));
  return j;
}

/* the beginning of the list that ends at entry j (j > 0) */
static uint64_t run_begin (const Runs *r, uint64_t j) {
  do j--; while (!HG_BIT(r->start, j));
  return j;
}

/*
** Step 2: the predecessor lists (pl, their bounds in `lists`, by preorder
** number) of what semi-NCA needs, from the successors (freed here, on
** success or not, as first is).
*/
static sift_Status predecessors (uint64_t n, uint64_t R, uint32_t *first,
                                 uint32_t *succ, const uint32_t *rootv,
                                 uint64_t nrootv, const uint32_t *pre,
                                 const uint32_t *parent, Runs *lists,
                                 uint32_t **ppl) {
  uint64_t v, j, kept = 0, nroot = 0;
  uint32_t *pf = NULL, *pl = NULL, *shrunk;
  Runs from;  /* the kept references, by object */
  sift_Status s;
  for (v = 0; v < n; v++) {
    uint64_t start = first[v], end = first[v + 1];
    uint32_t a = pre[v];
    first[v] = (uint32_t)kept;
    if (a == HG_NONE) continue;
    for (j = start; j < end; j++) {
      uint32_t b = pre[succ[j]];
      if (b != a && parent[b] != a && parent[b] != 0) succ[kept++] = b;
    }
  }
  first[n] = (uint32_t)kept;
  if ((shrunk = sift_big_realloc(succ, (kept ? kept : 1) * sizeof *succ)) != NULL) succ = shrunk;
  s = runs_of(first, n, &from);
  sift_big_free(first);
  if (s != SIFT_OK) {
    sift_big_free(succ);
    return s;
  }
  for (j = 0; j < nrootv; j++) nroot += parent[pre[rootv[j]]] != 0;
  if (!HG_ALLOC(pf, R + 1) || !HG_ALLOC(pl, kept + nroot)) {  /* zeroed (big.h) */
    s = SIFT_ENOMEM;
    goto out;
  }
  for (j = 0; j < kept; j++) pf[succ[j] + 1]++;
  for (j = 0; j < nrootv; j++)  /* a root first reached from another root */
    if (parent[pre[rootv[j]]] != 0) pf[pre[rootv[j]] + 1]++;
  for (j = 0; j < R; j++) pf[j + 1] += pf[j];
  for (j = 0; j < nrootv; j++)  /* pf[b] runs ahead while filling */
    if (parent[pre[rootv[j]]] != 0) pl[pf[pre[rootv[j]]]++] = 0;
  for (v = 0, j = 0; v < n; v++) {
    uint64_t end;
    if (!HG_BIT(from.has, v)) continue;
    for (end = run_end(&from, j); j < end; j++) pl[pf[succ[j]]++] = pre[v];
  }
  for (j = R; j > 0; j--) pf[j] = pf[j - 1];
  pf[0] = 0;
  if ((s = runs_of(pf, R, lists)) == SIFT_OK) {
    *ppl = pl;
    pl = NULL;
  }
out:
  runs_free(&from);
  sift_big_free(succ);
  sift_big_free(pf);
  sift_big_free(pl);
  return s;
}

/*
** Steps 3 and 4: the immediate dominator of each preorder number, into
** idom (which holds the DFS parents on entry), from the predecessor lists
** (pl, in the runs lists). Progress from n to 2n.
*/
static sift_Status semi_nca (uint64_t n, uint64_t R, uint32_t *idom,
                             const Runs *lists, uint32_t *pl,
                             sift_Progress *pr) {
  uint32_t *anc, *label;
  uint64_t k, j, at = lists->total;  /* the lists, read from the last */
  if (!HG_ALLOC(anc, R) || !HG_ALLOC(label, R)) {
    sift_big_free(anc);
    sift_big_free(label);
    return SIFT_ENOMEM;
  }
  for (k = R - 1; k >= 1; k--) {
    uint32_t s = idom[k];  /* the DFS parent: a predecessor of k */
    uint64_t begin = HG_BIT(lists->has, k) ? run_begin(lists, at) : at;
    for (j = begin; j < at; j++) {
      uint32_t x = pl[j], c;
      if (x <= k) c = x;  /* not linked yet: its own number */
      else {
        /* eval(x), compressing the path from x up to the first node not
           linked, with no stack: on the way up each ancestor pointer is
           turned to the node below it, and on the way down (top first)
           it gets its ancestor's ancestor and the smaller label */
        uint32_t y = x, below = HG_NONE, a;
        while (anc[y] > k) {
          uint32_t up = anc[y];
          anc[y] = below;
          below = y;
          y = up;
        }
        for (a = y; below != HG_NONE; ) {
          uint32_t z = below;
          below = anc[z];
          if (label[a] < label[z]) label[z] = label[a];
          anc[z] = anc[a];
          a = z;
        }
        c = label[x];
      }
      if (c < s) s = c;
    }
    if (begin < at) pl[begin] = s;  /* read by the NCA step */
    at = begin;
    label[k] = s;
    anc[k] = idom[k];  /* link */
    if (!sift_progress(pr, n + (R - k) * n / R)) {
      sift_big_free(anc);
      sift_big_free(label);
      return SIFT_ECANCEL;
    }
  }
  sift_big_free(anc);
  sift_big_free(label);
  idom[0] = 0;
  for (k = 1, at = 0; k < R; k++) {  /* the nearest common ancestor step */
    uint32_t d = idom[k], semi = idom[k];
    if (HG_BIT(lists->has, k)) {
      semi = pl[at];
      at = run_end(lists, at);
    }
    while (d > semi) d = idom[d];
    idom[k] = d;
  }
  return SIFT_OK;
}

/*
** Step 5's retained sizes, into t (by object; 64-bit when wide): each
** object's own size, in object order (the dump's records in file order),
** then added up the tree, children before their dominators (from the last
** preorder number down). Under visualvm (vv given) its rules. 0 when a size
** does not fit 32 bits and t is not wide.
*/
static int retained_sizes (const hg_Graph *g, const hg_VisualVM *vv, int model,
                           const uint32_t *vertex, uint64_t R, const uint32_t *idom,
                           void *t, int wide) {
#define GET(i) (wide ? ((uint64_t *)t)[i] : ((uint32_t *)t)[i])
#define PUT(i, x) do { uint64_t x_ = (x); \
    if (wide) ((uint64_t *)t)[i] = x_; \
    else if (x_ > UINT32_MAX) return 0; \
    else ((uint32_t *)t)[i] = (uint32_t)x_; } while (0)
  uint64_t n = g->n, i, k;
  for (i = 0; i < n; i++) {
    hp_ObjInfo o;
    if (idom[i] == HG_NONE) PUT(i, 0);
    else if (!vv) PUT(i, hg_shallow(g, (uint32_t)i, model));
    else {
      hp_object(g->h, (uint32_t)i, &o);
      PUT(i, o.kind == HP_CLASS_DUMP ? 0 : hg_shallow(g, (uint32_t)i, model));
    }
  }
  for (k = R - 1; k >= 1; k--) {
    uint32_t w = vertex[k], d = idom[w];
    uint64_t up = GET(w);
    if (d == HG_NONE) continue;
    if (vv && HG_BIT(vv->tree, w)) {
      /* HprofHeap.computeRetainedSize: each instance's size goes up its
         dominators to the first tree object, which has its tree size
         already; class objects add no size of their own (a tree class
         has its tree size, and passes nothing up) */
      hp_ObjInfo o;
      hp_object(g->h, w, &o);
      PUT(w, vv->tree_size[w]);
      up = o.kind == HP_CLASS_DUMP ? 0 : vv->tree_size[w];
    }
    if (d != n) PUT(d, GET(d) + up);
  }
  return 1;
#undef GET
#undef PUT
}

sift_Status hg_dominators (hg_Graph *g, int model, sift_Progress *pr) {
  uint64_t n = g->n, R = 0, i, k, edges = 0, nrootv, nkids = 0, threshold,
           used, used_peak, spilled, spilled_peak;
  uint32_t *pre = NULL, *vertex = NULL, *idom = NULL, *pl = NULL,
           *first = NULL, *succ = NULL, *count = NULL;
  Runs lists = {NULL, NULL, 0};
  const uint32_t *rootv;
  /* the results, swapped in at the end */
  uint32_t *t_idom = NULL, *t_children = NULL, *t_retained32 = NULL;
  uint64_t *t_retained64 = NULL;
  hg_VisualVM vv;
  int vvm = model == HG_VISUALVM, streamed;
  sift_Status s;
  memset(&vv, 0, sizeof vv);
  if (vvm) {
    if ((s = hg_vv_reach(g, &vv, pr)) != SIFT_OK) return s;
    if ((s = hg_csr(g, HG_CSR_VISUALVM, &vv, NULL, &first, &succ, &edges, pr, n / 2, 1)) != SIFT_OK) goto out;
    rootv = vv.roots;
    nrootv = vv.nroots;
  }
  else {
    if (g->first) {  /* built by hg_build: taken over (it is rewritten) */
      first = g->first; succ = g->succ; edges = g->edges;
      g->first = NULL; g->succ = NULL;
    }
    else if ((s = hg_csr(g, HG_CSR_STRONG, NULL, NULL, &first, &succ, &edges, pr, 0, 0)) != SIFT_OK)
      return s;
    rootv = g->root_obj;
    nrootv = g->nroots;
  }
  /* 1. In memory the walk writes each object's preorder number, and no
     preorder beside them (4 bytes an object less at its end); when its
     arrays would pass the spill threshold it writes the preorder, in
     order, and the numbers are made from it after: written at random
     during the walk, the numbers' pages would be written back to their
     file step after step */
  sift_big_usage(&used, &used_peak, &spilled, &spilled_peak);
  streamed = sift_big_spilling(&threshold) != NULL && used + 8 * (n + 1) > threshold;
  if (!HG_ALLOC(idom, n + 1) || (streamed ? !HG_ALLOC(vertex, n + 1) : !HG_ALLOC(pre, n + 1))) {
    s = SIFT_ENOMEM;
    goto out;
  }
  if ((s = dfs(n, first, succ, rootv, nrootv, streamed ? vertex : pre, !streamed, idom, &R)) != SIFT_OK)
    goto out;
  if (streamed) {
    if (!HG_ALLOC(pre, n + 1)) { s = SIFT_ENOMEM; goto out; }
    for (i = 0; i <= n; i++) pre[i] = HG_NONE;
    for (k = 0; k < R; k++) pre[vertex[k]] = (uint32_t)k;
    sift_big_free(vertex);  /* made again from pre in step 5 */
    vertex = NULL;
  }
  /* 2. (first and succ are gone after it) */
  s = predecessors(n, R, first, succ, rootv, nrootv, pre, idom, &lists, &pl);
  first = succ = NULL;
  if (s != SIFT_OK) goto out;
  /* 3. and 4. */
  if ((s = semi_nca(n, R, idom, &lists, pl, pr)) != SIFT_OK) goto out;
  runs_free(&lists);
  sift_big_free(pl);
  pl = NULL;
  /* 5. into object numbers, retained sizes, dominated children (under
     visualvm, the objects its walk did not reach are left out: they only
     stood for referrers that make their referents children of the roots).
     pre becomes the idom array in place */
#define KEPT(w) (!vvm || vv.parent[w] != HG_NONE)
  if (!HG_ALLOC(vertex, R)) { s = SIFT_ENOMEM; goto out; }
  for (i = 0; i <= n; i++)
    if (pre[i] != HG_NONE) vertex[pre[i]] = (uint32_t)i;
  for (i = 0; i < n; i++)
    pre[i] = pre[i] == HG_NONE || !KEPT(i) ? HG_NONE : vertex[idom[pre[i]]];
  t_idom = pre;
  pre = NULL;
  sift_big_free(idom);
  idom = NULL;
  /* the children grouped by dominator (a counting sort; in preorder within
     a group) */
  if (!HG_ALLOC(count, n + 2)) { s = SIFT_ENOMEM; goto out; }  /* zeroed (big.h) */
  for (i = 0; i < n; i++)
    if (t_idom[i] != HG_NONE) count[t_idom[i] + 1]++;
  for (i = 0; i <= n; i++) count[i + 1] += count[i];
  nkids = count[n + 1];
  if (!HG_ALLOC(t_children, nkids)) { s = SIFT_ENOMEM; goto out; }
  for (k = 1; k < R; k++) {  /* count[d] runs ahead while filling */
    uint32_t w = vertex[k];
    if (t_idom[w] != HG_NONE) t_children[count[t_idom[w]]++] = w;
  }
  sift_big_free(count);
  count = NULL;
  /* retained sizes, 32-bit while each fits */
  if (!HG_ALLOC(t_retained32, n)) { s = SIFT_ENOMEM; goto out; }
  if (!retained_sizes(g, vvm ? &vv : NULL, model, vertex, R, t_idom, t_retained32, 0)) {
    sift_big_free(t_retained32);
    t_retained32 = NULL;
    if (!HG_ALLOC(t_retained64, n)) { s = SIFT_ENOMEM; goto out; }
    retained_sizes(g, vvm ? &vv : NULL, model, vertex, R, t_idom, t_retained64, 1);
  }
#undef KEPT
  /* complete: the new tree replaces the old one */
  hg_free_tree(g);
  g->idom = t_idom; g->children = t_children;
  g->retained32 = t_retained32; g->retained64 = t_retained64;
  g->nchildren = nkids;
  t_idom = NULL; t_retained32 = NULL; t_retained64 = NULL; t_children = NULL;
  g->model = model;
  g->reachable = vvm ? vv.reached : R - 1;
  g->edges = edges;
  sift_progress(pr, 2 * n);
  s = SIFT_OK;
out:
  sift_big_free(pre); sift_big_free(vertex); sift_big_free(idom);
  runs_free(&lists); sift_big_free(pl); sift_big_free(count);
  sift_big_free(first); sift_big_free(succ);
  sift_big_free(t_idom); sift_big_free(t_children);
  sift_big_free(t_retained32); sift_big_free(t_retained64);
  hg_vv_free(&vv);
  return s;
}

void hg_children (const hg_Graph *g, uint32_t d, uint64_t *lo, uint64_t *hi) {
  uint64_t a = 0, b = g->nchildren;
  SIFT_LOWER_BOUND(a, b, mid, g->idom[g->children[mid]] < d);
  *lo = a;
  b = g->nchildren;
  SIFT_LOWER_BOUND(a, b, mid, g->idom[g->children[mid]] <= d);
  *hi = a;
}

void hg_children_first (const hg_Graph *g, uint32_t *first) {
  uint64_t i, d = 0;
  for (i = 0; i < g->nchildren; i++) {
    uint32_t p = g->idom[g->children[i]];
    while (d <= p) first[d++] = (uint32_t)i;
  }
  while (d <= (uint64_t)g->n + 1) first[d++] = (uint32_t)g->nchildren;
}

sift_Status hg_unreachable_without (hg_Graph *g, uint32_t removed,
                                    uint64_t *count, uint64_t *bytes) {
  uint64_t n = g->n, i, qh = 0, qt = 0;
  uint32_t *q;
  uint8_t *seen;
  sift_Status s;
  if (g->idom == NULL || g->model == HG_VISUALVM) return SIFT_EUNSUPPORTED;
  if ((s = hg_build(g, NULL)) != SIFT_OK) return s;
  HG_ALLOC(q, n);
  seen = (uint8_t *)sift_big_alloc((n / 8 + 1) * 1);
  if (!q || !seen) {
    sift_big_free(q);
    sift_big_free(seen);
    return SIFT_ENOMEM;
  }
  for (i = 0; i < g->nroots; i++) {
    uint32_t r = g->root_obj[i];
    if (r != removed && !HG_BIT(seen, r)) {
      HG_SETBIT(seen, r);
      q[qt++] = r;
    }
  }
  while (qh < qt) {
    uint32_t v = q[qh++];
    uint64_t j;
    for (j = g->first[v]; j < g->first[v + 1]; j++) {
      uint32_t w = g->succ[j];
      if (w != removed && !HG_BIT(seen, w)) {
        HG_SETBIT(seen, w);
        q[qt++] = w;
      }
    }
  }
  *count = *bytes = 0;
  for (i = 0; i < n; i++)
    if (g->idom[i] != HG_NONE && !HG_BIT(seen, i)) {
      (*count)++;
      *bytes += hg_shallow(g, (uint32_t)i, g->model);
    }
  sift_big_free(q);
  sift_big_free(seen);
  return SIFT_OK;
}

/* }====================================================== */
