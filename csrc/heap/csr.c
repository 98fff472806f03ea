/*
** csr.c
** The references of every object as CSR arrays (hg_csr in graph.h): each
** record decoded once, on both cores, for the dominator tree, VisualVM's
** retained sizes and the tree of holder paths.
*/

#include <pthread.h>
#include <string.h>

#include "core/split.h"
#include "graph.h"

/*
** On both cores (g->threads; core/split.h) the objects are split in two
** halves, each thread decoding its half into a references array of its
** own; the second half's is then copied after the first's and its offsets
** moved by the first's count, so the arrays are the ones one thread
** builds. An array is grown by this thread only (big.c counts arrays per
** thread): a part that fills its array stops at the object it could not
** finish, and goes on from there once its array is grown (to what its
** references so far foretell for the rest, by half again at least: a copy
** costs less than a second decoding of every record). Progress runs from
** base by n >> shift, reported by this thread (the worker polls `stop`).
*/
typedef struct CsrPart {
  uint64_t lo, hi, next;  /* objects [lo, hi); next: the first not done */
  uint32_t *succ;         /* this part's references; first[] relative to it */
  uint64_t e, cap;
  int full;               /* stopped at next for want of room */
  sift_Status s;
} CsrPart;

typedef struct Csr {
  const hg_Graph *g;
  int which;              /* HG_CSR_* */
  const hg_VisualVM *vv;
  uint8_t *gaps;          /* (paths) */
  uint32_t *first;
  CsrPart part[2];
  int pending[2];         /* the parts a round runs */
  int concurrent;         /* two parts at once this round */
  pthread_t caller;
  sift_Progress *pr;
  uint64_t base;
  int shift;
  int stop;               /* set by the caller when cancelled */
} Csr;

static void csr_fill (Csr *c, CsrPart *p) {
  const hg_Graph *g = c->g;
  const hg_VisualVM *vv = c->vv;
  int paths = c->which == HG_CSR_PATHS;
  int skip = c->which == HG_CSR_VISUALVM ? 0
           : paths ? HG_NEVER | HG_SKIP : HG_NEVER;
  int caller = pthread_equal(pthread_self(), c->caller);
  uint64_t i, e = p->e;
  hg_Iter it;
  hg_Ref ref;
  p->full = 0;
  for (i = p->next; i < p->hi; i++) {
    uint64_t start = e;
    c->first[i] = (uint32_t)e;
    hg_refs_begin(&it, g, (uint32_t)i, 1);
    for (;;) {
      int more = vv ? hg_vv_next(&it, &ref) : hg_refs_next(&it, &ref);
      uint32_t target;
      if (more) {
        if (ref.flags & skip) continue;
        target = ref.target;
        if (paths && (ref.flags & HG_LOW)) target |= HG_LOW_EDGE;
      }
      else if (vv && HG_BIT(vv->class_edge, i)) target = hg_vv_class_target(g, (uint32_t)i);
      else break;
      if (e == p->cap) {  /* this object again once grown */
        p->full = 1;
        p->next = i;
        p->e = start;
        return;
      }
      p->succ[e++] = target;
      if (!more) break;
    }
    if (paths && it.missed)  /* (a byte the other part may write too) */
      __atomic_fetch_or(&c->gaps[i >> 3], (uint8_t)(1 << (i & 7)), __ATOMIC_RELAXED);
    if (caller) {
      uint64_t done = c->concurrent ? 2 * (i - p->lo) : i;
      if (!sift_progress(c->pr, c->base + (done >> c->shift))) {
        __atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
        p->s = SIFT_ECANCEL;
      }
    }
    else if (__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) p->s = SIFT_ECANCEL;
    if (p->s != SIFT_OK) {
      p->next = i + 1;
      p->e = e;
      return;
    }
  }
  p->next = p->hi;
  p->e = e;
}

/* sift_split's items are the parts a round runs */
static void csr_run (void *ud, int part, uint64_t lo, uint64_t hi) {
  Csr *c = (Csr *)ud;
  uint64_t k;
  (void)part;
  for (k = lo; k < hi; k++) csr_fill(c, &c->part[c->pending[k]]);
}

/* room for what the references so far foretell for the rest of p's
   objects (an eighth more), by half again at least */
static sift_Status csr_grow (CsrPart *p) {
  uint64_t done = p->next - p->lo, cap = p->cap + p->cap / 2 + 16;
  uint32_t *grown;
  if (done > 0) {
    uint64_t guess = p->e / done * (p->hi - p->lo) + p->e % done * (p->hi - p->lo) / done;
    guess += guess / 8 + 1024;
    if (guess > cap) cap = guess;
  }
  if (cap > UINT32_MAX) cap = UINT32_MAX;  /* offsets are 32-bit */
  if (cap <= p->cap) return SIFT_ETOOBIG;
  if ((grown = sift_big_realloc(p->succ, cap * sizeof *grown)) == NULL) return SIFT_ENOMEM;
  p->succ = grown;
  p->cap = cap;
  return SIFT_OK;
}

/* the second part's references after the first's, copied from the end a
   block at a time, each block given back once copied (the two arrays are
   not both whole at once) */
#define CSR_BLOCK ((uint64_t)1 << 18)

static sift_Status csr_join (Csr *c, uint64_t n) {
  CsrPart *a = &c->part[0], *b = &c->part[1];
  uint64_t total = a->e + b->e, j, i;
  uint32_t *grown;
  if (total > UINT32_MAX) return SIFT_ETOOBIG;
  if ((grown = sift_big_realloc(b->succ, (b->e ? b->e : 1) * sizeof *grown)) != NULL)
    b->succ = grown;
  if ((grown = sift_big_realloc(a->succ, (total ? total : 1) * sizeof *grown)) == NULL)
    return SIFT_ENOMEM;
  a->succ = grown;
  a->cap = total;
  for (j = b->e; j > 0; ) {
    uint64_t k = j > CSR_BLOCK ? j - CSR_BLOCK : 0;
    memcpy(a->succ + a->e + k, b->succ + k, (j - k) * sizeof *grown);
    j = k;
    if (j > 0 && (grown = sift_big_realloc(b->succ, j * sizeof *grown)) != NULL)
      b->succ = grown;
  }
  sift_big_free(b->succ);
  b->succ = NULL;
  for (i = b->lo; i < n; i++) c->first[i] += (uint32_t)a->e;
  a->e = total;
  return SIFT_OK;
}

sift_Status hg_csr (const hg_Graph *g, int which, const hg_VisualVM *vv,
                    uint8_t *gaps, uint32_t **pfirst, uint32_t **psucc,
                    uint64_t *pedges, sift_Progress *pr, uint64_t base,
                    int shift) {
  uint64_t n = g->n, k;
  int nparts, npending;
  uint32_t *grown;
  Csr c;
  sift_Status s = SIFT_OK;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.which = which;
  c.vv = vv;
  c.gaps = gaps;
  c.caller = pthread_self();
  c.pr = pr;
  c.base = base;
  c.shift = shift;
  nparts = g->threads == 2 ? (n >= 2 ? 2 : 1)
         : g->threads == 1 ? 1 : (n >= SIFT_SPLIT_FROM ? 2 : 1);
  if (!HG_ALLOC(c.first, n + 1)) return SIFT_ENOMEM;
  for (k = 0; k < (uint64_t)nparts; k++) {
    CsrPart *p = &c.part[k];
    p->lo = p->next = nparts == 1 ? 0 : k * (n / 2);
    p->hi = nparts == 1 || k == 1 ? n : n / 2;
    p->cap = (p->hi - p->lo) / 2 + 16;
    if (!HG_ALLOC(p->succ, p->cap)) { s = SIFT_ENOMEM; goto out; }
  }
  for (;;) {  /* rounds: the parts not done, each grown first when full */
    for (k = 0, npending = 0; k < (uint64_t)nparts; k++) {
      CsrPart *p = &c.part[k];
      if (p->s != SIFT_OK) { s = p->s; goto out; }
      if (p->next == p->hi) continue;
      if (p->full && (s = csr_grow(p)) != SIFT_OK) goto out;
      c.pending[npending++] = (int)k;
    }
    if (npending == 0) break;
    c.concurrent = npending == 2;
    sift_split((uint64_t)npending, 2, csr_run, &c);
  }
  if (nparts == 2 && (s = csr_join(&c, n)) != SIFT_OK) goto out;
  if ((grown = sift_big_realloc(c.part[0].succ, (c.part[0].e ? c.part[0].e : 1) * sizeof *grown)) != NULL)
    c.part[0].succ = grown;
  c.first[n] = (uint32_t)c.part[0].e;
  *pfirst = c.first;
  *psucc = c.part[0].succ;
  *pedges = c.part[0].e;
  return SIFT_OK;
out:
  sift_big_free(c.first);
  sift_big_free(c.part[0].succ);
  sift_big_free(c.part[1].succ);
  return s;
}

