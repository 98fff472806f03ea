/*
** paths_tree.c
** The tree of holder paths (paths_tree.h). Every record is decoded once,
** on both cores, into the CSR of the references path finding follows
** (hg_csr, which also notes each object's kind and class); the BFS for
** the shortest strong paths (hg_paths) runs over it and marks the entry
** that holds each object; a second walk over the records, on both cores,
** reads the marked references' kinds and indexes with no id looked up
** (hg_refs_along); then each object's node is made on the way down from a
** known node (each object looked at once), and the counts are taken on
** both cores.
*/

#include <string.h>

#include "core/split.h"
#include "paths_tree.h"

/* what makes a node: its parent node and how it is reached, and the kind
   and class of its objects */
typedef struct Key {
  uint32_t parent, index, cls;
  uint8_t ref, kind;
} Key;

static uint64_t key_hash (const Key *k) {
  uint64_t x = ((uint64_t)k->parent << 32 | k->index) * UINT64_C(0x9E3779B97F4A7C15);
  x ^= ((uint64_t)k->cls << 16 | (uint64_t)k->ref << 8 | k->kind)
       * UINT64_C(0xC2B2AE3D27D4EB4F);
  return x ^ (x >> 29);
}

static int key_is (const hg_PathTree *t, uint32_t node, const Key *k) {
  return t->parent[node] == k->parent && t->index[node] == k->index
      && t->cls[node] == k->cls && t->ref[node] == k->ref
      && t->kind[node] == k->kind;
}

/* the kind and class of object v, from its key (HG_KEY) */
static void object_key (const uint32_t *keys, uint32_t v, Key *k) {
  uint32_t cls = HG_KEY_CLASS(keys[v]);
  k->kind = (uint8_t)HG_KEY_KIND(keys[v]);
  k->cls = cls == HG_KEY_NONE ? HG_NONE : cls;
}

/* grow array p to cap entries (through void *q); 0, p untouched, when it
   cannot */
#define GROW(p, cap) \
  ((q = sift_big_realloc((p), (size_t)(cap) * sizeof *(p))) != NULL \
   ? ((p) = q, 1) : 0)

/* room for cap nodes (doubling); the hash at most half full */
static sift_Status grow (hg_PathTree *t) {
  uint64_t cap = t->cap ? (uint64_t)t->cap * 2 : 1024, i;
  void *q;
  if (cap > HG_NONE - 1) cap = HG_NONE - 1;
  if (!GROW(t->parent, cap) || !GROW(t->ref, cap) || !GROW(t->index, cap)
      || !GROW(t->kind, cap) || !GROW(t->cls, cap) || !GROW(t->first, cap)
      || !GROW(t->count, cap) || !GROW(t->bytes, cap))
    return SIFT_ENOMEM;
  t->cap = (uint32_t)cap;
  sift_big_free(t->slots);
  t->nslots = 2048;
  while (t->nslots < cap * 2) t->nslots *= 2;
  if (!HG_ALLOC(t->slots, t->nslots)) return SIFT_ENOMEM;
  for (i = 0; i < t->n; i++) {  /* rehash (slots hold node + 1; 0 is free) */
    Key k;
    uint64_t s;
    k.parent = t->parent[i]; k.index = t->index[i]; k.cls = t->cls[i];
    k.ref = t->ref[i]; k.kind = t->kind[i];
    for (s = key_hash(&k) & (t->nslots - 1); t->slots[s] != 0; s = (s + 1) & (t->nslots - 1)) {}
    t->slots[s] = (uint32_t)i + 1;
  }
  return SIFT_OK;
}

/* the node of key k, made (with obj as its first object) when new */
static sift_Status node_for (hg_PathTree *t, const Key *k, uint32_t obj,
                             uint32_t *out) {
  uint64_t s;
  uint32_t m;
  if (t->n == t->cap) {
    if (t->cap == HG_NONE - 1) return SIFT_ENOMEM;
    if (grow(t) != SIFT_OK) return SIFT_ENOMEM;
  }
  for (s = key_hash(k) & (t->nslots - 1); t->slots[s] != 0; s = (s + 1) & (t->nslots - 1))
    if (key_is(t, t->slots[s] - 1, k)) {
      *out = t->slots[s] - 1;
      return SIFT_OK;
    }
  m = t->n++;
  t->slots[s] = m + 1;
  t->parent[m] = k->parent; t->index[m] = k->index; t->cls[m] = k->cls;
  t->ref[m] = k->ref; t->kind[m] = k->kind;
  t->first[m] = obj;
  t->count[m] = t->bytes[m] = 0;
  *out = m;
  return SIFT_OK;
}

/* the nodes of the objects the BFS seeded (parent n): each takes the kind
   of its first root record that is neither skipped nor low priority, else
   of its first record (hg_paths seeds the same objects from these roots) */
static sift_Status root_nodes (const hg_Graph *g, const uint32_t *parent,
                               const uint32_t *keys, hg_PathTree *t,
                               uint32_t *node) {
  int pass;
  uint64_t i;
  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < g->nroots; i++) {
      uint32_t r = g->root_obj[i];
      int kind = g->h->roots[g->root_rec[i]].kind;
      int flags = g->root_flags[kind] | g->root_obj_flags[i];
      Key k;
      if (parent[r] != g->n || node[r] != HG_NONE
          || (pass == 0 && (flags & (HG_SKIP | HG_LOW)))) continue;
      object_key(keys, r, &k);
      k.parent = HG_NONE;
      k.ref = 0;
      k.index = (uint32_t)kind;
      if (node_for(t, &k, r, &node[r]) != SIFT_OK) return SIFT_ENOMEM;
    }
  return SIFT_OK;
}

/*
** How each reached object is held: the kind and index of the reference
** its held entry stands for (hg_paths marked it; a low entry's mark only
** where its object is the target's parent), read in step with the
** entries; elements and a loader's classes by kind only, so that their
** labels match across dumps. The same walk writes each object's key
** (HG_KEY) over its offset in first, read no more: first becomes keys.
** The objects in two parts (from mid; n when one), each writing the labels
** of the objects its own objects hold.
*/
typedef struct Labels {
  const hg_Graph *g;
  hg_PathCsr csr;
  const uint32_t *parent;
  uint32_t *first;        /* (csr.first, written over) */
  const uint8_t *gaps;
  uint32_t *label;        /* HG_LABEL of each object */
  uint64_t bound[3];      /* the parts' first objects, and n */
  uint32_t entry[3];      /* first[] of each: read before it is written */
} Labels;

/* whether any of entries [j, end) is marked */
static int any_held (const uint8_t *held, uint64_t j, uint64_t end) {
  for (; j < end && (j & 7) != 0; j++)
    if (HG_BIT(held, j)) return 1;
  for (; j + 8 <= end; j += 8)
    if (held[j >> 3] != 0) return 1;
  for (; j < end; j++)
    if (HG_BIT(held, j)) return 1;
  return 0;
}

static void labels_run (void *ud, int item, uint64_t lo, uint64_t hi) {
  Labels *l = (Labels *)ud;
  const uint32_t *succ = l->csr.succ;
  uint64_t k;
  (void)item;
  for (k = lo; k < hi; k++) {  /* (the items are the parts) */
    uint64_t v, end = l->bound[k + 1];
    uint32_t start = l->entry[k];
    for (v = l->bound[k]; v < end; v++) {
      uint32_t stop = v + 1 < end ? l->first[v + 1] : l->entry[k + 1];
      hg_Iter it;
      hg_Ref r;
      hg_refs_begin(&it, l->g, (uint32_t)v, 1);
      l->first[v] = HG_KEY(it.kind, it.kind == HP_PRIM_ARRAY_DUMP
                                    || it.kind == HP_PRIM_ARRAY_NODATA ? it.elem : it.cls);
      if (any_held(l->csr.held, start, stop)) {
        hg_refs_along(&it, succ + start, succ + stop, HG_BIT(l->gaps, v));
        while (it.along < it.along_end && hg_refs_next(&it, &r)) {
          uint64_t j = (uint64_t)(it.along - succ) - 1;
          if (!(r.flags & (HG_NEVER | HG_SKIP)) && HG_BIT(l->csr.held, j)
              && (!(succ[j] & HG_LOW_EDGE) || l->parent[r.target] == v)) {
            l->label[r.target] = HG_LABEL(r.kind, r.kind == HG_ELEMENT || r.kind == HG_DEFINED
                                                  ? 0 : r.index);
          }
        }
      }
      start = stop;
    }
  }
}

/* the labels and keys, on both cores as g->threads says */
static void labels (Labels *l, uint64_t n) {
  int parts = n >= hg_split_from(l->g) ? 2 : 1, k;
  l->bound[0] = 0;
  l->bound[1] = parts == 2 ? n / 2 : n;
  l->bound[2] = n;
  for (k = 0; k < 3; k++) l->entry[k] = l->first[l->bound[k]];
  sift_split((uint64_t)parts, 2, labels_run, l);
}

/*
** Each reached object's node: up its path to an object whose node is
** known (a root's, at worst), then down again making the nodes. An
** object of the class and reference of its parent's node (the next cell
** of a linked list) joins that node, as Shark counts a list in its head.
*/
static sift_Status object_nodes (const hg_Graph *g, const uint32_t *parent,
                                 const uint32_t *keys,
                                 const uint32_t *label,
                                 uint32_t *stack, hg_PathTree *t,
                                 uint32_t *node, sift_Progress *pr) {
  uint32_t v;
  for (v = 0; v < g->n; v++) {
    uint64_t sp = 0;
    uint32_t u;
    if (!sift_progress(pr, 3 * (uint64_t)g->n + v)) return SIFT_ECANCEL;
    if (parent[v] == HG_NONE) continue;
    for (u = v; node[u] == HG_NONE; u = parent[u]) stack[sp++] = u;
    while (sp > 0) {
      uint32_t w = stack[--sp], pn = node[parent[w]];
      Key k;
      object_key(keys, w, &k);
      k.parent = pn;
      k.ref = (uint8_t)(label[w] >> 28);
      k.index = label[w] & HG_LABEL_INDEX;
      if (t->parent[pn] != HG_NONE && t->ref[pn] == k.ref
          && t->index[pn] == k.index && t->kind[pn] == k.kind
          && t->cls[pn] == k.cls)
        node[w] = pn;  /* a run */
      else if (node_for(t, &k, w, &node[w]) != SIFT_OK) return SIFT_ENOMEM;
    }
  }
  return SIFT_OK;
}

/* each node's objects and their bytes: a part's own counts, added up
   after */
typedef struct Counts {
  const hg_Graph *g;
  int model;
  const uint32_t *node;
  uint64_t *count[2], *bytes[2], unreached[2];
} Counts;

static void counts_run (void *ud, int part, uint64_t lo, uint64_t hi) {
  Counts *c = (Counts *)ud;
  uint64_t v, *count = c->count[part], *bytes = c->bytes[part], unreached = 0;
  for (v = lo; v < hi; v++) {
    uint32_t m = c->node[v];
    if (m == HG_NONE) {
      unreached++;
      continue;
    }
    count[m]++;
    bytes[m] += hg_shallow(c->g, (uint32_t)v, c->model);
  }
  c->unreached[part] = unreached;
}

static sift_Status count_nodes (const hg_Graph *g, int model,
                                const uint32_t *node, hg_PathTree *t) {
  Counts c;
  uint32_t m;
  int k;
  sift_Status s = SIFT_ENOMEM;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.model = model;
  c.node = node;
  for (k = 0; k < 2; k++)
    if (!HG_ALLOC(c.count[k], t->n) || !HG_ALLOC(c.bytes[k], t->n)) break;
  if (k == 2) {
    sift_split(g->n, hg_split_from(g), counts_run, &c);
    for (m = 0; m < t->n; m++) {
      t->count[m] = c.count[0][m] + c.count[1][m];
      t->bytes[m] = c.bytes[0][m] + c.bytes[1][m];
    }
    t->unreached = c.unreached[0] + c.unreached[1];
    s = SIFT_OK;
  }
  for (k = 0; k < 2; k++) {
    sift_big_free(c.count[k]);
    sift_big_free(c.bytes[k]);
  }
  return s;
}

sift_Status hg_path_tree (const hg_Graph *g, int model, hg_PathTree *t,
                          uint32_t **pparent, sift_Progress *pr) {
  uint32_t n = g->n, v, *parent = NULL, *node = NULL, *label = NULL,
           *stack = NULL, *keys = NULL, *succ = NULL;
  uint64_t edges;
  uint8_t *gaps = NULL;
  Labels l;
  sift_Status s;
  memset(&l, 0, sizeof l);
  if (n >= HG_LOW_EDGE || g->h->nclasses >= HG_KEY_NONE
      || g->h->nfields > HG_LABEL_INDEX)
    return SIFT_ETOOBIG;
  if (!HG_ALLOC(gaps, n / 8 + 1) || grow(t) != SIFT_OK) {
    s = SIFT_ENOMEM;
    goto out;
  }
  if ((s = hg_csr(g, HG_CSR_PATHS, NULL, gaps, &keys, &succ, &edges, pr, 0, 0)) != SIFT_OK)
    goto out;
  l.g = g;
  l.csr.first = l.first = keys;  /* (the offsets until labels() writes the keys) */
  l.csr.succ = succ;
  l.gaps = gaps;
  if (!HG_ALLOC(parent, (uint64_t)n + 1) || !HG_ALLOC(l.csr.held, edges / 8 + 1)) {
    s = SIFT_ENOMEM;
    goto out;
  }
  if ((s = hg_paths(g, &l.csr, parent, pr, n)) != SIFT_OK) goto out;
  l.parent = parent;
  if (!HG_ALLOC(label, n)) { s = SIFT_ENOMEM; goto out; }  /* (zeroed: big.h) */
  l.label = label;
  labels(&l, n);
  if (!sift_progress(pr, 3 * (uint64_t)n)) { s = SIFT_ECANCEL; goto out; }
  sift_big_free(succ); sift_big_free(l.csr.held); sift_big_free(gaps);
  succ = NULL;
  l.csr.held = gaps = NULL;
  if (!HG_ALLOC(node, n) || !HG_ALLOC(stack, n)) { s = SIFT_ENOMEM; goto out; }
  for (v = 0; v < n; v++) node[v] = HG_NONE;
  if ((s = root_nodes(g, parent, keys, t, node)) != SIFT_OK
      || (s = object_nodes(g, parent, keys, label, stack, t, node, pr)) != SIFT_OK)
    goto out;
  sift_big_free(keys); sift_big_free(label); sift_big_free(stack);
  keys = label = stack = NULL;
  if ((s = count_nodes(g, model, node, t)) != SIFT_OK) goto out;
  sift_progress(pr, HG_TREE_STEPS * (uint64_t)n);
  *pparent = parent;
  parent = NULL;
out:
  sift_big_free(keys);
  sift_big_free(gaps);
  sift_big_free(succ);
  sift_big_free(l.csr.held);
  sift_big_free(parent);
  sift_big_free(node);
  sift_big_free(label);
  sift_big_free(stack);
  return s;
}

void hg_path_tree_free (hg_PathTree *t) {
  sift_big_free(t->parent);
  sift_big_free(t->ref);
  sift_big_free(t->index);
  sift_big_free(t->kind);
  sift_big_free(t->cls);
  sift_big_free(t->first);
  sift_big_free(t->count);
  sift_big_free(t->bytes);
  sift_big_free(t->slots);
  memset(t, 0, sizeof *t);
}
