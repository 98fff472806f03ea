/*
** dominators.c
** The dominator tree and retained sizes over the reference graph of
** graph.c: the references of the dominator model gathered as CSR arrays
** (under visualvm, those VisualVM's heap library follows: visualvm.c), then
** semi-NCA (Georgiadis, Tarjan, Werneck) on the preorder of
** an iterative DFS from a virtual root whose successors are the GC roots;
** and what would become unreachable without one object.
*/

#include <stdlib.h>
#include <string.h>

#include "graph.h"

/*
** {======================================================
** Dominators
** =======================================================
*/

/*
** The references the tree follows under `model`, as CSR (first: n + 1
** offsets, succ): shark and jvm, the strong graph (HG_NEVER left out) with
** what the JVM keeps alive without a field; visualvm (vv given), every
** field, element, static and class loader, referents too, and the class
** references its walk added. Each object's references are decoded once,
** into succ grown as it fills (by half again: a copy costs less than a
** second decoding of every record), then cut to size. Progress runs from
** base by n >> shift.
*/
static sift_Status build_csr (const hg_Graph *g, const hg_VisualVM *vv,
                              uint32_t **pfirst, uint32_t **psucc, uint64_t *pedges,
                              sift_Progress *pr, uint64_t base, int shift) {
  uint64_t n = g->n, i, e = 0, cap = n / 2 + 16;
  uint32_t *first, *succ, *grown;
  hg_Iter it;
  hg_Ref ref;
  sift_Status s = SIFT_OK;
  if (!HG_ALLOC(first, n + 1)) return SIFT_ENOMEM;
  if (!HG_ALLOC(succ, cap)) {
    sift_big_free(first);
    return SIFT_ENOMEM;
  }
  for (i = 0; i < n && s == SIFT_OK; i++) {
    first[i] = (uint32_t)e;
    hg_refs_begin(&it, g, (uint32_t)i, 1);
    for (;;) {
      int more = vv ? hg_vv_next(&it, &ref) : hg_refs_next(&it, &ref);
      uint32_t target;
      if (more) {
        if (vv == NULL && (ref.flags & HG_NEVER)) continue;
        target = ref.target;
      }
      else if (vv && HG_BIT(vv->class_edge, i)) target = hg_vv_class_target(g, (uint32_t)i);
      else break;
      if (e == cap) {
        cap += cap / 2;
        if (cap > (uint64_t)UINT32_MAX + 1) cap = (uint64_t)UINT32_MAX + 1;
        if (e == cap) { s = SIFT_ETOOBIG; break; }
        if ((grown = sift_big_realloc(succ, cap * sizeof *succ)) == NULL) { s = SIFT_ENOMEM; break; }
        succ = grown;
      }
      succ[e++] = target;
      if (!more) break;
    }
    if (s == SIFT_OK && !sift_progress(pr, base + (i >> shift))) s = SIFT_ECANCEL;
  }
  if (s == SIFT_OK && (grown = sift_big_realloc(succ, (e ? e : 1) * sizeof *succ)) != NULL) succ = grown;
  if (s != SIFT_OK) {
    sift_big_free(first);
    sift_big_free(succ);
    return s;
  }
  first[n] = (uint32_t)e;
  *pfirst = first;
  *psucc = succ;
  *pedges = e;
  return SIFT_OK;
}

sift_Status hg_build (hg_Graph *g, sift_Progress *pr) {
  uint32_t *first, *succ;
  uint64_t e;
  sift_Status s;
  if (g->first) return SIFT_OK;
  if ((s = build_csr(g, NULL, &first, &succ, &e, pr, 0, 0)) != SIFT_OK) return s;
  g->first = first;  /* only once complete */
  g->succ = succ;
  g->edges = e;
  return SIFT_OK;
}

/* successors of v, the virtual root (v == n) included */
#define SUCC_BEGIN(v) ((v) == n ? 0 : first[v])
#define SUCC_END(v) ((v) == n ? nrootv : first[(v) + 1])
#define SUCC(v, k) ((v) == n ? rootv[k] : succ[k])
/* ... once turned into preorder numbers */
#define PRE_SUCC(v, k) ((v) == n ? rootpre[k] : succ[k])

sift_Status hg_dominators (hg_Graph *g, int model, sift_Progress *pr) {
  uint64_t n = g->n, R = 0, i, k, edges = 0, nrootv;
  uint32_t *pre = NULL, *vertex = NULL, *parent = NULL, *semi = NULL,
           *label = NULL, *anc = NULL, *idom = NULL, *next = NULL,
           *rootpre = NULL, v;
  uint32_t *pf = NULL, *pl = NULL, *first = NULL, *succ = NULL;
  const uint32_t *rootv;
  /* the results, swapped in at the end */
  uint32_t *t_idom = NULL, *t_child_first = NULL, *t_children = NULL;
  uint64_t *t_retained = NULL;
  hg_VisualVM vv;
  int vvm = model == HG_VISUALVM;
  sift_Status s;
  memset(&vv, 0, sizeof vv);
  if (vvm) {
    if ((s = hg_vv_reach(g, &vv, pr)) != SIFT_OK) return s;
    if ((s = build_csr(g, &vv, &first, &succ, &edges, pr, n / 2, 1)) != SIFT_OK) goto out;
    rootv = vv.roots;
    nrootv = vv.nroots;
  }
  else {
    if (g->first) {  /* built by hg_build: taken over (it becomes preorder numbers) */
      first = g->first; succ = g->succ; edges = g->edges;
      g->first = NULL; g->succ = NULL;
    }
    else if ((s = build_csr(g, NULL, &first, &succ, &edges, pr, 0, 0)) != SIFT_OK)
      return s;
    rootv = g->root_obj;
    nrootv = g->nroots;
  }
  if (!HG_ALLOC(pre, n + 1) || !HG_ALLOC(vertex, n + 1) || !HG_ALLOC(parent, n + 1)
      || !HG_ALLOC(next, n + 1)) {
    s = SIFT_ENOMEM;
    goto out;
  }
  /* iterative DFS from the virtual root, numbering nodes in preorder;
     next[v] counts the successors of v seen, and the way back up is the
     DFS parent, so no stack is needed */
  for (i = 0; i <= n; i++) pre[i] = HG_NONE;
  pre[n] = 0;
  vertex[0] = (uint32_t)n;
  parent[0] = 0;
  next[n] = 0;
  R = 1;
  v = (uint32_t)n;
  for (;;) {
    if (SUCC_BEGIN(v) + next[v] < SUCC_END(v)) {
      uint32_t w = SUCC(v, SUCC_BEGIN(v) + next[v]);
      next[v]++;
      if (pre[w] == HG_NONE) {
        pre[w] = (uint32_t)R;
        vertex[R] = w;
        parent[R] = pre[v];
        R++;
        next[w] = 0;
        v = w;
      }
    }
    else if (v == n) break;
    else v = vertex[parent[pre[v]]];
  }
  sift_big_free(next);
  next = NULL;
  /* the successors as preorder numbers, in place (those of unreached
     nodes become HG_NONE and are never read), the roots' apart: then the
     preorder numbers of objects can go before the predecessors come */
  if (!HG_ALLOC(rootpre, nrootv)) { s = SIFT_ENOMEM; goto out; }
  for (k = 0; k < first[n]; k++) succ[k] = pre[succ[k]];
  for (k = 0; k < nrootv; k++) rootpre[k] = pre[rootv[k]];
  sift_big_free(pre);
  pre = NULL;
  /* predecessors, in preorder numbers, of the reachable nodes */
  if (!HG_ALLOC(pf, R + 1)) { s = SIFT_ENOMEM; goto out; }
  memset(pf, 0, (R + 1) * sizeof *pf);
  for (k = 0; k < R; k++) {
    uint64_t j;
    v = vertex[k];
    for (j = SUCC_BEGIN(v); j < SUCC_END(v); j++)
      pf[PRE_SUCC(v, j) + 1]++;
  }
  for (k = 0; k < R; k++) pf[k + 1] += pf[k];
  if (!HG_ALLOC(pl, pf[R])) { s = SIFT_ENOMEM; goto out; }
  for (k = 0; k < R; k++) {  /* pf[x] runs ahead while filling */
    uint64_t j;
    v = vertex[k];
    for (j = SUCC_BEGIN(v); j < SUCC_END(v); j++)
      pl[pf[PRE_SUCC(v, j)]++] = (uint32_t)k;
  }
  for (k = R; k > 0; k--) pf[k] = pf[k - 1];
  pf[0] = 0;
  /* the successors are no longer needed (they hold preorder numbers) */
  sift_big_free(first); sift_big_free(succ); sift_big_free(rootpre);
  first = NULL; succ = NULL; rootpre = NULL;
  /* semi-dominators, by link-eval with path compression (iterative) */
  if (!HG_ALLOC(semi, R) || !HG_ALLOC(label, R) || !HG_ALLOC(anc, R)) {
    s = SIFT_ENOMEM;
    goto out;
  }
  for (k = 0; k < R; k++) {
    semi[k] = label[k] = (uint32_t)k;
    anc[k] = HG_NONE;
  }
  for (k = R - 1; k >= 1; k--) {
    uint64_t j;
    for (j = pf[k]; j < pf[k + 1]; j++) {
      uint32_t x = pl[j], u;
      if (anc[x] == HG_NONE) u = x;  /* eval(x) */
      else {
        /* compress the path from x up, with no stack: on the way up each
           node's ancestor pointer is turned to the node below it, and on
           the way down (top first) it gets its ancestor's ancestor and
           the smaller label */
        uint32_t y = x, below = HG_NONE, a;
        while (anc[anc[y]] != HG_NONE) {
          uint32_t up = anc[y];
          anc[y] = below;
          below = y;
          y = up;
        }
        for (a = y; below != HG_NONE; ) {
          uint32_t z = below;
          below = anc[z];
          if (semi[label[a]] < semi[label[z]]) label[z] = label[a];
          anc[z] = anc[a];
          a = z;
        }
        u = label[x];
      }
      if (semi[u] < semi[k]) semi[k] = semi[u];
    }
    anc[k] = parent[k];  /* link */
    if (!sift_progress(pr, n + (R - k) * n / R)) { s = SIFT_ECANCEL; goto out; }
  }
  sift_big_free(pf); sift_big_free(pl); sift_big_free(label);
  pf = NULL; pl = NULL; label = NULL;
  /* immediate dominators: the nearest common ancestor step */
  idom = anc;  /* reuse: anc is done */
  anc = NULL;
  idom[0] = 0;
  for (k = 1; k < R; k++) {
    uint32_t d = parent[k];
    while (d > semi[k]) d = idom[d];
    idom[k] = d;
  }
  sift_big_free(semi); sift_big_free(parent);  /* before the results come */
  semi = NULL; parent = NULL;
  /* into object numbers, retained sizes, dominated children (under
     visualvm, the objects its walk did not reach are left out: they only
     stood for referrers that make their referents children of the roots) */
#define KEPT(w) (!vvm || vv.parent[w] != HG_NONE)
  if (!HG_ALLOC(t_idom, n) || !HG_ALLOC(t_retained, n)
      || !HG_ALLOC(t_child_first, n + 2) || !HG_ALLOC(t_children, R)) {
    s = SIFT_ENOMEM;
    goto out;
  }
  for (i = 0; i < n; i++) {
    t_idom[i] = HG_NONE;
    t_retained[i] = 0;
  }
  for (k = 1; k < R; k++)
    if (KEPT(vertex[k])) t_idom[vertex[k]] = vertex[idom[k]];
  for (k = R - 1; k >= 1; k--) {  /* children before their dominators */
    uint32_t w = vertex[k], d = vertex[idom[k]];
    uint64_t up;
    if (!KEPT(w)) continue;
    if (!vvm) up = t_retained[w] += hg_shallow(g, w, model);
    else {
      /* HprofHeap.computeRetainedSize: each instance's size goes up its
         dominators to the first tree object, which has its tree size
         already; class objects add no size of their own (a tree class
         has its tree size, and passes nothing up) */
      hp_ObjInfo o;
      hp_object(g->h, w, &o);
      if (HG_BIT(vv.tree, w)) {
        t_retained[w] = vv.tree_size[w];
        up = o.kind == HP_CLASS_DUMP ? 0 : vv.tree_size[w];
      }
      else up = t_retained[w] += o.kind == HP_CLASS_DUMP ? 0 : hg_shallow(g, w, model);
    }
    if (d != n) t_retained[d] += up;
  }
  memset(t_child_first, 0, (n + 2) * sizeof *t_child_first);
  for (k = 1; k < R; k++)
    if (KEPT(vertex[k])) t_child_first[vertex[idom[k]] + 1]++;
  for (i = 0; i <= n; i++) t_child_first[i + 1] += t_child_first[i];
  for (k = 1; k < R; k++)  /* child_first[d] runs ahead while filling */
    if (KEPT(vertex[k])) t_children[t_child_first[vertex[idom[k]]]++] = vertex[k];
  for (i = n + 1; i > 0; i--) t_child_first[i] = t_child_first[i - 1];
  t_child_first[0] = 0;
#undef KEPT
  /* complete: the new tree replaces the old one */
  sift_big_free(g->idom); sift_big_free(g->retained);
  sift_big_free(g->child_first); sift_big_free(g->children);
  g->idom = t_idom; g->retained = t_retained;
  g->child_first = t_child_first; g->children = t_children;
  t_idom = NULL; t_retained = NULL; t_child_first = NULL; t_children = NULL;
  g->model = model;
  g->reachable = vvm ? vv.reached : R - 1;
  g->edges = edges;
  sift_progress(pr, 2 * n);
  s = SIFT_OK;
out:
  sift_big_free(pre); sift_big_free(vertex); sift_big_free(parent); sift_big_free(next);
  sift_big_free(rootpre); sift_big_free(pf); sift_big_free(pl); sift_big_free(semi);
  sift_big_free(label); sift_big_free(anc); sift_big_free(idom);
  sift_big_free(first); sift_big_free(succ);
  sift_big_free(t_idom); sift_big_free(t_retained);
  sift_big_free(t_child_first); sift_big_free(t_children);
  hg_vv_free(&vv);
  return s;
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
