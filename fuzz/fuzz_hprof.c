/*
** fuzz_hprof.c
** libFuzzer harness for the HPROF decoder: index the input, then read
** everything the index points at (objects, class layouts, statics, field
** values, strings, heap tags), as the Lua API would. A valid HPROF header
** is prepended to most inputs so the fuzzer spends its time on records;
** one input in two is read by two threads (hprof_split.c).
*/

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heap/graph.h"
#include "heap/paths_tree.h"
#include "heap/hprof.h"
#include "heap/waste.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static uint64_t sink;  /* keeps reads from being optimised away */

static void read_everything (const hp_Heap *h) {
  uint64_t i;
  for (i = 0; i < h->nobjs; i++) {
    hp_ObjInfo o;
    hp_object(h, i, &o);
    sink += o.shallow + (uint64_t)o.kind + hp_heap_at(h, hp_obj_off(h, i));
    if (o.data != NULL && o.length > 0) {
      uint64_t bytes = o.kind == HP_INSTANCE_DUMP ? o.length
                     : o.length * (uint64_t)hp_type_size(h, o.elem);
      sink += o.data[0] + o.data[bytes - 1];
    }
    if (o.kind == HP_INSTANCE_DUMP && o.cls >= 0) {
      const hp_Class *c = &h->classes[o.cls];
      uint32_t k;
      for (k = 0; k < c->nflat; k++) {
        const hp_Field *f = &h->fields[c->flat + k];
        if (f->offset + (uint64_t)hp_type_size(h, f->type) <= o.length)
          sink += o.data[f->offset];
      }
    }
  }
  for (i = 0; i < h->nclasses; i++) {
    const hp_Class *c = &h->classes[i];
    const unsigned char *s = h->p + c->statics_off + 2;
    size_t len;
    uint32_t k;
    const char *name = hp_string(h, c->name, &len);
    if (name != NULL && len > 0) sink += (unsigned char)name[len - 1];
    for (k = 0; k < c->nstatics; k++) {
      int size = hp_type_size(h, s[h->idsize]);
      assert(size > 0);
      sink += s[h->idsize + size];
      s += h->idsize + 1 + size;
    }
  }
}

/* the waste pass in two halves (g->threads is 2): class 0's instances as
   Strings, class 1's as boxes, class 0 as a collection by the fields a
   String has; then the referrers of the duplicate strings */
static void waste (const hg_Graph *g) {
  hw_Waste w;
  hf_Rule *r = &w.fill.rules[0];
  int64_t box = 1;
  uint64_t i, n = 0;
  uint32_t targets[8];
  memset(&w, 0, sizeof w);
  w.fill.nrules = 1;
  w.fill.names[0] = "value";
  w.fill.names[1] = "count";
  w.fill.lens[0] = w.fill.lens[1] = 5;
  w.fill.nnames = 2;
  w.fill.keep = 3;
  r->cls = 0;
  r->via = r->head = r->tail = -1;
  r->times = 1;
  r->array[0] = 0;
  r->narray = 1;
  r->size[0] = 1;
  r->nsize = 1;
  if (hw_waste(g, HG_JVM, 0, &box, 1, 1, &w) == SIFT_OK) {
    for (i = 0; i < w.strings.nentries && n < 8; i++)
      targets[n++] = HW_NUM(w.strings.entries[i]);
    for (i = 0; i < n; i++) assert(targets[i] < g->n);
    if (hw_referrers(g, targets, n, &w.pairs, &w.npairs) == SIFT_OK)
      for (i = 0; i < w.npairs; i++) assert((w.pairs[i] & UINT32_MAX) < g->n);
  }
  hw_free(&w);
}

/* the table of where each object's children begin: hg_children's groups */
static void children_first (const hg_Graph *g) {
  uint32_t *first = (uint32_t *)malloc(((size_t)g->n + 2) * sizeof *first);
  uint64_t d, lo, hi;
  if (first == NULL) return;
  hg_children_first(g, first);
  for (d = 0; d <= g->n; d++) {
    hg_children(g, (uint32_t)d, &lo, &hi);
    assert(first[d] == lo && first[d + 1] == hi);
  }
  free(first);
}

/* one search in runs, one target after another (from the last object
   down), then to the end: each target's parent, and at the end every
   parent, as one search gives them */
static void paths_in_runs (const hg_Graph *g, const uint32_t *whole) {
  uint32_t *parent = (uint32_t *)malloc(((size_t)g->n + 1) * sizeof *parent);
  uint8_t *target = (uint8_t *)calloc(g->n / 8 + 1, 1);
  hg_Search *S = NULL;
  uint64_t k;
  if (parent == NULL || target == NULL || hg_search_open(g, parent, &S) != SIFT_OK) goto out;
  for (k = 0; k < 8 && k < g->n; k++) {
    uint32_t t = (uint32_t)(g->n - 1 - k * (g->n / 8 + 1) % g->n);
    HG_SETBIT(target, t);
    if (hg_search_run(S, g, target, 1, NULL) != SIFT_OK) goto out;
    assert(parent[t] == whole[t]);
    HG_CLEARBIT(target, t);
  }
  if (hg_search_run(S, g, NULL, 0, NULL) == SIFT_OK)
    assert(memcmp(parent, whole, (size_t)g->n * sizeof *parent) == 0);
out:
  hg_search_close(S);
  free(parent);
  free(target);
}

/* paths to every object, the dominator tree, the referrers and the waste
   pass, as the Lua API runs them */
static void walk_graph (const hp_Heap *h) {
  hg_Graph g;
  uint32_t *parent;
  uint64_t i, count, bytes;
  if (hg_init(&g, h) != SIFT_OK) {
    hg_free(&g);
    return;
  }
  if (g.ref_first[h->nclasses] > 0) hg_flag_field(&g, 0, 0, HG_LOW);
  parent = (uint32_t *)malloc(((size_t)g.n + 1) * sizeof *parent);
  if (parent != NULL && hg_paths(&g, NULL, parent, NULL, 0) == SIFT_OK) {
    hg_PathTree t;
    uint32_t *tree_parent;
    int threads = g.threads;
    for (i = 0; i < g.n; i++) {
      assert(parent[i] == HG_NONE || parent[i] <= g.n);
      if (parent[i] < g.n) {  /* the reference that reached it, found by id */
        hg_Iter it;
        hg_Ref r;
        int found = 0;
        hg_refs_begin(&it, &g, parent[i], 1);
        hg_refs_to(&it, (uint32_t)i);
        while (hg_refs_next(&it, &r)) {
          assert(r.target == i);
          found |= !(r.flags & (HG_NEVER | HG_SKIP));
        }
        assert(found);
      }
    }
    memset(&t, 0, sizeof t);
    g.threads = 2;  /* the CSR and the labels in two halves */
    if (hg_path_tree(&g, HG_JVM, &t, &tree_parent, NULL) == SIFT_OK) {
      /* the search over the CSR is the search over the records */
      assert(memcmp(parent, tree_parent, (size_t)g.n * sizeof *parent) == 0);
      for (i = 0, count = t.unreached; i < t.n; i++) {
        assert(t.parent[i] == HG_NONE || t.parent[i] < i);
        count += t.count[i];
      }
      assert(count == g.n);
      sift_big_free(tree_parent);
    }
    hg_path_tree_free(&t);
    g.threads = threads;
    paths_in_runs(&g, parent);
  }
  free(parent);
  if (hg_dominators(&g, HG_JVM, NULL) == SIFT_OK) {
    for (i = 0; i < g.n; i++)
      if (g.idom[i] != HG_NONE) {
        assert(hg_retained(&g, (uint32_t)i) >= hg_shallow(&g, (uint32_t)i, HG_JVM));
        assert(g.idom[i] <= g.n);
      }
    if (g.n > 0 && hg_unreachable_without(&g, 0, &count, &bytes) == SIFT_OK)
      assert(count <= g.n);
    children_first(&g);
  }
  g.threads = 2;  /* the referrers in two halves even of a small dump */
  if (hg_referrers(&g) == SIFT_OK)
    for (i = 0; i < g.n; i++) {
      uint64_t k;
      assert(g.pfirst[i] <= g.pfirst[i + 1]);
      for (k = g.pfirst[i]; k < g.pfirst[i + 1]; k++) assert(g.pred[k] < g.n);
    }
  if (h->nclasses > 1) waste(&g);
  hg_free(&g);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  static const unsigned char header[] = "JAVA PROFILE 1.0.3\0\0\0\0\4"
                                        "\0\0\0\0\0\0\0\0";
  unsigned char *buf;
  size_t n;
  hp_Heap h;
  hp_Options opt;
  sift_Error err;
  sift_Status s;
  if (size == 0) return 0;
  memset(&opt, 0, sizeof opt);
  opt.dump = data[0] % 3;
  opt.threads = data[0] & 0x20 ? 2 : 1;  /* two threads from two records on */
  if (data[0] & 0x80) {  /* the input as it is, header and all */
    n = size - 1;
    buf = (unsigned char *)malloc(n ? n : 1);
    memcpy(buf, data + 1, n);
  }
  else {  /* a 4- or 8-byte-id header, then the input's records */
    n = sizeof header - 1 + size - 1;
    buf = (unsigned char *)malloc(n);
    memcpy(buf, header, sizeof header - 1);
    if (data[0] & 0x40) buf[22] = 8;
    memcpy(buf + sizeof header - 1, data + 1, size - 1);
  }
  memset(&h, 0, sizeof h);
  s = hp_build(&h, buf, n, &opt, NULL, &err);
  if (s == SIFT_OK) {
    read_everything(&h);
    walk_graph(&h);
  }
  else assert(memchr(err.msg, '\0', sizeof err.msg) != NULL && err.msg[0] != '\0');
  hp_free(&h);
  free(buf);
  return 0;
}
