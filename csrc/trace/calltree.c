/*
** calltree.c
** The call trees of an Android method trace, one per thread, built in one
** pass over the records the decoder found (trace.c): an entry becomes a
** child of the frame below it, an exit closes frames, and times are
** charged inclusive and exclusive, per method too (trace.h has the rules:
** orphan exits, recursion, frames left open).
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/big.h"
#include "trace_build.h"

static int cmp_id (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* ART numbers methods from 0 in steps of 4: a direct map then */
static int make_dense (mt_Trace *t) {
  uint64_t top = t->nmethods ? t->methods[t->nmethods - 1].id / 4 + 1 : 0;
  uint32_t i;
  if (top == 0 || top > (uint64_t)t->nmethods * 4 + 1024) return 1;  /* sparse (pointers) */
  if (!ALLOC(t->dense, top)) return 0;
  memset(t->dense, 0xFF, (size_t)top * sizeof *t->dense);
  t->ndense = (uint32_t)top;
  for (i = 0; i < t->nmethods; i++)
    if (t->methods[i].id % 4 == 0) t->dense[t->methods[i].id / 4] = i;
  return 1;
}

/*
** One pass before the call trees: each thread's records are counted (the
** threads the file does not name are added; slot maps a thread id to its
** number), and the ids the records use and the file does not name become
** methods with no line (named unknown@0x... above).
*/
static sift_Status survey (Ctx *c, uint32_t *slot) {
  mt_Trace *t = c->t;
  uint64_t *ids = NULL;
  uint32_t nids = 0, cap = 0, k;
  int tw = t->version == 1 ? 1 : 2;
  size_t pos, dropped = 0;
  sift_Status s;
  for (k = 0; k < t->nthreads; k++) slot[t->threads[k].tid] = k;
  EACH_RECORD(t, pos) {
    uint64_t id = u4le(t->p + pos + tw) & ~(uint32_t)3;
    uint32_t tid = rec_thread(t, t->p + pos);
    dropped = drop_behind(t, dropped, pos);
    if (slot[tid] == MT_NONE) {
      if ((s = mtb_add_thread(c, tid, NULL, 0)) != SIFT_OK) return free(ids), s;
      slot[tid] = t->nthreads - 1;
    }
    t->threads[slot[tid]].records++;
    if ((id / 4 < t->ndense && t->dense[id / 4] != MT_NONE) || mt_find_method(t, id)) continue;
    if (nids > 0 && ids[nids - 1] == id) continue;
    if (!GROW(ids, nids, cap)) return free(ids), SIFT_ENOMEM;
    ids[nids++] = id;
  }
  if (nids > 1) qsort(ids, nids, sizeof *ids, cmp_id);
  for (k = 0; k < nids; k++) {
    if (k > 0 && ids[k] == ids[k - 1]) continue;
    if (!GROW(t->methods, t->nmethods, t->methodcap)) return free(ids), SIFT_ENOMEM;
    memset(&t->methods[t->nmethods], 0, sizeof *t->methods);
    t->methods[t->nmethods++].id = ids[k];
    t->unknown++;
  }
  free(ids);
  drop_all(t);
  if (t->unknown) qsort(t->methods, t->nmethods, sizeof *t->methods, mtb_cmp_method);
  return SIFT_OK;
}

/* children past this many are found through the table */
#define SCAN 8

/* the id-map key of a pair (a node or thread below MT_NONE, a method):
   never 0 */
static uint64_t pair_key (uint32_t a, uint32_t method) {
  return ((uint64_t)a + 1) << 32 | method;
}

static uint32_t new_node (mt_Trace *t, uint32_t parent, uint32_t method) {
  mt_Node *nd;
  if (t->nnodes == t->nodecap) {  /* (orphan roots can pass the estimate) */
    mt_Node *more;
    if (t->nodecap > UINT32_MAX / 2
        || !(more = (mt_Node *)sift_big_realloc(t->nodes, (size_t)t->nodecap * 2 * sizeof *more)))
      return MT_NONE;
    t->nodes = more;
    t->nodecap *= 2;
  }
  nd = &t->nodes[t->nnodes];
  memset(nd, 0, sizeof *nd);
  nd->method = method;
  nd->child = nd->next = MT_NONE;
  if (parent != MT_NONE) {
    nd->next = t->nodes[parent].child;
    t->nodes[parent].child = t->nnodes;
  }
  return t->nnodes++;
}

/*
** The child of parent for method, made when new. The first SCAN siblings
** are scanned, and a found child moves to the front, so calls made again
** are found at once. A node with more children also keeps them in the
** table, so it costs no more than one with few.
*/
static uint32_t child (mt_Trace *t, uint32_t parent, uint32_t method) {
  uint32_t k = t->nodes[parent].child, prev = MT_NONE;
  int n, made;
  for (n = 0; k != MT_NONE && n < SCAN; n++, prev = k, k = t->nodes[k].next)
    if (t->nodes[k].method == method) {
      if (prev != MT_NONE) {
        t->nodes[prev].next = t->nodes[k].next;
        t->nodes[k].next = t->nodes[parent].child;
        t->nodes[parent].child = k;
      }
      return k;
    }
  if (k != MT_NONE) {  /* a wide node: ask the table */
    uint32_t *v = sift_idmap_put(&t->children, pair_key(parent, method), &made);
    if (v == NULL) return MT_NONE;
    if (made && (*v = new_node(t, parent, method)) == MT_NONE) return MT_NONE;
    return *v;
  }
  if ((k = new_node(t, parent, method)) == MT_NONE) return MT_NONE;
  if (n == SCAN) {  /* it has just become wide: its children to the table */
    uint32_t c, *v;
    for (c = t->nodes[parent].child; c != MT_NONE; c = t->nodes[c].next) {
      if ((v = sift_idmap_put(&t->children, pair_key(parent, t->nodes[c].method), &made)) == NULL)
        return MT_NONE;
      *v = c;
    }
  }
  return k;
}

/*
** How many frames of a method each thread has on its stack: a table from
** (thread, method) to entries of an array that only grows, so a frame can
** keep its entry's index.
*/
typedef struct Active {
  uint32_t thread, method, count;
} Active;

typedef struct Actives {
  Active *a;
  uint32_t n, cap;
  sift_IdMap index;     /* (thread, method) -> entry */
} Actives;

/* the entry of (thread, method), made when new; MT_NONE without memory */
static uint32_t active (Actives *x, uint32_t thread, uint32_t method) {
  int made;
  uint32_t *v = sift_idmap_put(&x->index, pair_key(thread, method), &made);
  if (v == NULL) return MT_NONE;
  if (!made) return *v;
  if (!GROW(x->a, x->n, x->cap)) return MT_NONE;
  x->a[x->n].thread = thread;
  x->a[x->n].method = method;
  x->a[x->n].count = 0;
  return *v = x->n++;
}

typedef struct Frame {
  uint32_t node, method, active;
  uint64_t at[2];
} Frame;

typedef struct Run {  /* a thread's state during the pass */
  Frame *f;             /* its stack */
  uint32_t n, cap;
  int started;
  uint64_t last[2];     /* the times of its last event */
} Run;

/* the microseconds from then to now on a 32-bit counter that may wrap */
static uint64_t since (uint64_t now, uint64_t then) {
  return (uint32_t)(now - then);
}

static void close_frame (mt_Trace *t, Actives *x, Run *r, const uint64_t now[2]) {
  Frame *f = &r->f[--r->n];
  mt_Method *m = &t->methods[f->method];
  uint32_t *count = &x->a[f->active].count;
  int k;
  for (k = 0; k < 2; k++) {
    uint64_t d = since(now[k], f->at[k]);
    t->nodes[f->node].incl[k] += d;
    if (*count == 1) m->incl[k] += d;
  }
  (*count)--;
}

/*
** An exit with no entry: the method was running when tracing began, so it
** becomes the caller of what the thread ran so far, entered at time 0 and
** closed now. The root moves to a new node and its old node becomes the
** orphan: the root's children stay where they are, and so do their entries
** in the child table.
*/
static sift_Status orphan_exit (mt_Trace *t, mt_Thread *th, uint32_t method,
                                const uint64_t now[2], uint32_t *out) {
  uint32_t orphan = th->root, root = new_node(t, MT_NONE, MT_NONE), kids;
  mt_Node *o;
  int i;
  if (root == MT_NONE) return SIFT_ENOMEM;
  o = &t->nodes[orphan];
  kids = o->child;
  t->nodes[root] = *o;  /* its times so far, method MT_NONE */
  t->nodes[root].child = orphan;
  memset(o, 0, sizeof *o);
  o->method = method;
  o->child = kids;
  o->next = MT_NONE;
  o->calls = 1;
  th->root = root;
  t->methods[method].calls++;
  for (i = 0; i < 2; i++) {
    o->incl[i] += now[i];
    t->methods[method].incl[i] += now[i];
  }
  t->orphans++;
  *out = orphan;
  return SIFT_OK;
}

/* the time since the thread's last event goes to a node and its method */
static void charge_method (mt_Trace *t, uint32_t node, uint32_t method,
                           const uint64_t now[2], const uint64_t last[2]) {
  int k;
  for (k = 0; k < 2; k++) {
    uint64_t d = since(now[k], last[k]);
    t->nodes[node].excl[k] += d;
    if (method != MT_NONE) t->methods[method].excl[k] += d;
  }
}

/* ... to the top of the stack (node is its node, or the thread's root) */
static void charge (mt_Trace *t, const Run *r, uint32_t node,
                    const uint64_t now[2], const uint64_t last[2]) {
  charge_method(t, node, r->n ? r->f[r->n - 1].method : MT_NONE, now, last);
}

/* one record of thread number i */
static sift_Status step (mt_Trace *t, Actives *x, uint32_t i, Run *r,
                         const unsigned char *rec) {
  mt_Thread *th = &t->threads[i];
  uint64_t now[2];
  uint32_t md = rec_read(t, rec, now), action = md & 3;
  uint32_t method = mtb_method_of(t, md & ~(uint32_t)3), a, node;
  sift_Status s;
  if (!r->started) {
    r->started = 1;
    th->first[0] = r->last[0] = now[0];
    th->first[1] = r->last[1] = now[1];
  }
  if (action == 0) {  /* enter: the gap was the caller's */
    uint32_t parent = r->n ? r->f[r->n - 1].node : th->root;
    node = child(t, parent, method);
    charge(t, r, parent, now, r->last);
    if (node == MT_NONE || (a = active(x, i, method)) == MT_NONE || !GROW(r->f, r->n, r->cap))
      return SIFT_ENOMEM;
    t->nodes[node].calls++;
    if (x->a[a].count++ > 0) t->methods[method].recursive++;
    else t->methods[method].calls++;
    r->f[r->n].node = node;
    r->f[r->n].method = method;
    r->f[r->n].active = a;
    r->f[r->n].at[0] = now[0];
    r->f[r->n].at[1] = now[1];
    r->n++;
  }
  else {  /* exit, unroll (exit by exception), or the unused 3 */
    uint32_t d = r->n;
    if (d == 0 || r->f[d - 1].method != method) {
      /* the method's frame, when it has one: the scan pops what it passes,
         so it costs no more than the frames it closes */
      if ((a = active(x, i, method)) == MT_NONE) return SIFT_ENOMEM;
      if (x->a[a].count == 0) d = 0;
      else while (d > 0 && r->f[d - 1].method != method) d--;
    }
    if (d == 0) {  /* the gap was the orphan's: it was running */
      if ((s = orphan_exit(t, th, method, now, &node)) != SIFT_OK) return s;
      if (r->n) t->anomalies++;
      charge_method(t, node, method, now, r->last);
    }
    else {
      charge(t, r, r->f[r->n - 1].node, now, r->last);
      if (d != r->n) t->anomalies++;
      while (r->n >= d) close_frame(t, x, r, now);
    }
  }
  r->last[0] = now[0];
  r->last[1] = now[1];
  return SIFT_OK;
}

/* }====================================================== */


sift_Status mtb_call_trees (Ctx *c, sift_Progress *progress) {
  mt_Trace *t = c->t;
  const unsigned char *p = t->p;
  sift_Status s;
  uint64_t done = 0;
  size_t dropped = 0;  /* pages before this offset are given back */
  uint32_t i, *slot = NULL;  /* thread id -> thread number */
  size_t pos;
  Run *runs = NULL;
  Actives x;
  memset(&x, 0, sizeof x);
  if (!make_dense(t) || !ALLOC(slot, 65536)) { s = SIFT_ENOMEM; goto out; }
  memset(slot, 0xFF, 65536 * sizeof *slot);
  if ((s = survey(c, slot)) != SIFT_OK) goto out;
  if (t->unknown > 0) {  /* method numbers moved */
    free(t->dense);
    t->dense = NULL;
    t->ndense = 0;
    if (!make_dense(t)) { s = SIFT_ENOMEM; goto out; }
  }
  /* nodes: at most one per entry (half the records, as entries pair with
     exits) and a root per thread; calloc'd pages cost nothing until used */
  t->nodecap = (uint32_t)((t->records / 2 + t->nthreads + 64) < UINT32_MAX / 2
                          ? t->records / 2 + t->nthreads + 64 : UINT32_MAX / 2);
  t->nodes = (mt_Node *)sift_big_alloc((size_t)t->nodecap * sizeof *t->nodes);
  if (t->nodes == NULL || !ALLOC(runs, t->nthreads)) { s = SIFT_ENOMEM; goto out; }
  for (i = 0; i < t->nthreads; i++)
    if ((t->threads[i].root = new_node(t, MT_NONE, MT_NONE)) == MT_NONE) { s = SIFT_ENOMEM; goto out; }
  /* the records in file order, each on its thread's stack */
  EACH_RECORD(t, pos) {
    uint32_t k = slot[rec_thread(t, p + pos)];
    if ((s = step(t, &x, k, &runs[k], p + pos)) != SIFT_OK) goto out;
    if (!sift_progress(progress, ++done)) { s = SIFT_ECANCEL; goto out; }
    dropped = drop_behind(t, dropped, pos);
  }
  drop_all(t);
  /* frames still open close at their thread's last event */
  for (i = 0; i < t->nthreads; i++) {
    Run *r = &runs[i];
    t->threads[i].last[0] = r->last[0];
    t->threads[i].last[1] = r->last[1];
    while (r->n) close_frame(t, &x, r, r->last);
  }
  s = SIFT_OK;
out:
  if (s == SIFT_ENOMEM) sift_fail(c->err, s, "trace: out of memory");
  if (s == SIFT_ECANCEL) sift_fail(c->err, s, "trace: cancelled");
  for (i = 0; runs && i < t->nthreads; i++) free(runs[i].f);
  free(runs);
  free(slot);
  free(x.a);
  sift_idmap_free(&x.index);
  return s;
}
