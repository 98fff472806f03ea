/*
** dominators.c
** The dominator tree and retained sizes over the reference graph of
** graph.c: the strong references of the dominator model gathered as CSR
** arrays, then semi-NCA (Georgiadis, Tarjan, Werneck) on the preorder of
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

/* the strong graph with the dominator model's references, as CSR */
sift_Status hg_build (hg_Graph *g, sift_Progress *pr) {
  uint64_t n = g->n, i, e = 0;
  hg_Iter it;
  hg_Ref ref;
  if (g->first) return SIFT_OK;
  if (!HG_ALLOC(g->first, n + 1)) return SIFT_ENOMEM;
  for (i = 0; i < n; i++) {  /* count */
    g->first[i] = (uint32_t)e;
    hg_refs_begin(&it, g, (uint32_t)i, 1);
    while (hg_refs_next(&it, &ref)) e += !(ref.flags & HG_NEVER);
    if (e > UINT32_MAX) {
      sift_big_free(g->first);
      g->first = NULL;
      return SIFT_ETOOBIG;
    }
    if (!sift_progress(pr, i / 2)) return SIFT_ECANCEL;
  }
  g->first[n] = (uint32_t)e;
  g->edges = e;
  if (!HG_ALLOC(g->succ, e)) return SIFT_ENOMEM;
  for (i = 0, e = 0; i < n; i++) {  /* fill */
    hg_refs_begin(&it, g, (uint32_t)i, 1);
    while (hg_refs_next(&it, &ref))
      if (!(ref.flags & HG_NEVER)) g->succ[e++] = ref.target;
    if (!sift_progress(pr, n / 2 + i / 2)) return SIFT_ECANCEL;
  }
  return SIFT_OK;
}

/* successors of v, the virtual root (v == n) included */
#define SUCC_BEGIN(g, v) ((v) == (g)->n ? 0 : (g)->first[v])
#define SUCC_END(g, v) ((v) == (g)->n ? (g)->nroots : (g)->first[(v) + 1])
#define SUCC(g, v, k) ((v) == (g)->n ? (g)->root_obj[k] : (g)->succ[k])
/* ... once hg_dominators has turned them into preorder numbers */
#define PRE_SUCC(g, v, k) ((v) == (g)->n ? rootpre[k] : (g)->succ[k])

sift_Status hg_dominators (hg_Graph *g, int model, sift_Progress *pr) {
  uint64_t n = g->n, R = 0, i, k;
  uint32_t *pre = NULL, *vertex = NULL, *parent = NULL, *semi = NULL,
           *label = NULL, *anc = NULL, *idom = NULL, *next = NULL,
           *rootpre = NULL, v;
  uint32_t *pf = NULL, *pl = NULL;
  sift_Status s;
  if ((s = hg_build(g, pr)) != SIFT_OK) return s;
  sift_big_free(g->idom); sift_big_free(g->retained);
  sift_big_free(g->child_first); sift_big_free(g->children);
  g->idom = NULL; g->retained = NULL;
  g->child_first = g->children = NULL;
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
    if (SUCC_BEGIN(g, v) + next[v] < SUCC_END(g, v)) {
      uint32_t w = SUCC(g, v, SUCC_BEGIN(g, v) + next[v]);
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
    else if (v == g->n) break;
    else v = vertex[parent[pre[v]]];
  }
  g->reachable = R - 1;
  sift_big_free(next);
  next = NULL;
  /* the successors as preorder numbers, in place (those of unreached
     nodes become HG_NONE and are never read), the roots' apart: then the
     preorder numbers of objects can go before the predecessors come */
  if (!HG_ALLOC(rootpre, g->nroots)) { s = SIFT_ENOMEM; goto out; }
  for (k = 0; k < g->first[n]; k++) g->succ[k] = pre[g->succ[k]];
  for (k = 0; k < g->nroots; k++) rootpre[k] = pre[g->root_obj[k]];
  sift_big_free(pre);
  pre = NULL;
  /* predecessors, in preorder numbers, of the reachable nodes */
  if (!HG_ALLOC(pf, R + 1)) { s = SIFT_ENOMEM; goto out; }
  memset(pf, 0, (R + 1) * sizeof *pf);
  for (k = 0; k < R; k++) {
    uint64_t j;
    v = vertex[k];
    for (j = SUCC_BEGIN(g, v); j < SUCC_END(g, v); j++)
      pf[PRE_SUCC(g, v, j) + 1]++;
  }
  for (k = 0; k < R; k++) pf[k + 1] += pf[k];
  if (!HG_ALLOC(pl, pf[R])) { s = SIFT_ENOMEM; goto out; }
  for (k = 0; k < R; k++) {  /* pf[x] runs ahead while filling */
    uint64_t j;
    v = vertex[k];
    for (j = SUCC_BEGIN(g, v); j < SUCC_END(g, v); j++)
      pl[pf[PRE_SUCC(g, v, j)]++] = (uint32_t)k;
  }
  for (k = R; k > 0; k--) pf[k] = pf[k - 1];
  pf[0] = 0;
  /* the successors are no longer needed (hg_unreachable_without rebuilds
     them; they hold preorder numbers now) */
  sift_big_free(g->first); sift_big_free(g->succ); sift_big_free(rootpre);
  g->first = NULL; g->succ = NULL; rootpre = NULL;
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
  idom[0] = 0;
  for (k = 1; k < R; k++) {
    uint32_t d = parent[k];
    while (d > semi[k]) d = idom[d];
    idom[k] = d;
  }
  sift_big_free(semi); sift_big_free(parent);  /* before the results come */
  semi = NULL; parent = NULL;
  /* into object numbers, retained sizes, dominated children */
  if (!HG_ALLOC(g->idom, n) || !HG_ALLOC(g->retained, n)
      || !HG_ALLOC(g->child_first, n + 2)) {
    s = SIFT_ENOMEM;
    goto out;
  }
  for (i = 0; i < n; i++) {
    g->idom[i] = HG_NONE;
    g->retained[i] = 0;
  }
  for (k = 1; k < R; k++) g->idom[vertex[k]] = vertex[idom[k]];
  for (k = R - 1; k >= 1; k--) {  /* children before their dominators */
    uint32_t w = vertex[k], d = vertex[idom[k]];
    g->retained[w] += hg_shallow(g, w, model);
    if (d != g->n) g->retained[d] += g->retained[w];
  }
  memset(g->child_first, 0, (n + 2) * sizeof *g->child_first);
  for (k = 1; k < R; k++) g->child_first[vertex[idom[k]] + 1]++;
  for (i = 0; i <= n; i++) g->child_first[i + 1] += g->child_first[i];
  if (!HG_ALLOC(g->children, R)) { s = SIFT_ENOMEM; goto out; }
  for (k = 1; k < R; k++)  /* child_first[d] runs ahead while filling */
    g->children[g->child_first[vertex[idom[k]]]++] = vertex[k];
  for (i = n + 1; i > 0; i--) g->child_first[i] = g->child_first[i - 1];
  g->child_first[0] = 0;
  g->model = model;
  sift_progress(pr, 2 * n);
out:
  sift_big_free(pre); sift_big_free(vertex); sift_big_free(parent); sift_big_free(next); sift_big_free(rootpre);
  sift_big_free(pf); sift_big_free(pl); sift_big_free(semi); sift_big_free(label); sift_big_free(anc);
  if (s != SIFT_OK) {
    sift_big_free(g->idom); sift_big_free(g->retained);
    sift_big_free(g->child_first); sift_big_free(g->children);
    g->idom = NULL; g->retained = NULL;
    g->child_first = g->children = NULL;
    /* the successors may hold preorder numbers: made again when needed */
    sift_big_free(g->first); sift_big_free(g->succ);
    g->first = NULL; g->succ = NULL;
  }
  return s;
}

sift_Status hg_unreachable_without (hg_Graph *g, uint32_t removed,
                                    uint64_t *count, uint64_t *bytes) {
  uint64_t n = g->n, i, qh = 0, qt = 0;
  uint32_t *q;
  uint8_t *seen;
  sift_Status s;
  if (g->idom == NULL) return SIFT_EUNSUPPORTED;
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
