/*
** paths_tree.c
** The tree of holder paths (paths_tree.h): one BFS for the shortest strong
** paths (hg_paths), then three linear passes over the objects: the
** reference that holds each one (the first from its parent that the BFS
** could have followed), its path node (made on the way down from a
** known node, so each object is looked at once), and the counts.
*/

#include <string.h>

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

/* the kind and class of object v (primitive arrays: their element type) */
static void object_key (const hp_Heap *h, uint32_t v, Key *k) {
  hp_ObjInfo o;
  hp_object(h, v, &o);
  if (o.kind == HP_PRIM_ARRAY_DUMP || o.kind == HP_PRIM_ARRAY_NODATA) {
    k->kind = HP_PRIM_ARRAY_DUMP;
    k->cls = (uint32_t)o.elem;
  }
  else {
    k->kind = (uint8_t)o.kind;
    k->cls = o.cls >= 0 ? (uint32_t)o.cls : HG_NONE;
  }
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
                               hg_PathTree *t, uint32_t *node) {
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
      object_key(g->h, r, &k);
      k.parent = HG_NONE;
      k.ref = 0;
      k.index = (uint32_t)kind;
      if (node_for(t, &k, r, &node[r]) != SIFT_OK) return SIFT_ENOMEM;
    }
  return SIFT_OK;
}

/* how each reached object is held: the first reference from its parent
   the BFS may follow (as path steps name it); elements and a loader's
   classes by kind only, so that their labels match across dumps */
static void holding_refs (const hg_Graph *g, const uint32_t *parent,
                          uint8_t *lref, uint32_t *lindex) {
  uint32_t v;
  for (v = 0; v < g->n; v++) {
    hg_Iter it;
    hg_Ref r;
    if (parent[v] == HG_NONE) continue;
    hg_refs_begin(&it, g, v, 1);
    while (hg_refs_next(&it, &r))
      if (!(r.flags & (HG_NEVER | HG_SKIP)) && parent[r.target] == v
          && lref[r.target] == 0) {
        lref[r.target] = r.kind;
        lindex[r.target] = r.kind == HG_ELEMENT || r.kind == HG_DEFINED ? 0 : r.index;
      }
  }
}

/*
** Each reached object's node: up its path to an object whose node is
** known (a root's, at worst), then down again making the nodes. An
** object of the class and reference of its parent's node (the next cell
** of a linked list) joins that node, as Shark counts a list in its head.
*/
static sift_Status object_nodes (const hg_Graph *g, const uint32_t *parent,
                                 const uint8_t *lref, const uint32_t *lindex,
                                 uint32_t *stack, hg_PathTree *t,
                                 uint32_t *node) {
  uint32_t v;
  for (v = 0; v < g->n; v++) {
    uint64_t sp = 0;
    uint32_t u;
    if (parent[v] == HG_NONE) continue;
    for (u = v; node[u] == HG_NONE; u = parent[u]) stack[sp++] = u;
    while (sp > 0) {
      uint32_t w = stack[--sp], pn = node[parent[w]];
      Key k;
      object_key(g->h, w, &k);
      k.parent = pn;
      k.ref = lref[w];
      k.index = lindex[w];
      if (t->parent[pn] != HG_NONE && t->ref[pn] == k.ref
          && t->index[pn] == k.index && t->kind[pn] == k.kind
          && t->cls[pn] == k.cls)
        node[w] = pn;  /* a run */
      else if (node_for(t, &k, w, &node[w]) != SIFT_OK) return SIFT_ENOMEM;
    }
  }
  return SIFT_OK;
}

sift_Status hg_path_tree (const hg_Graph *g, int model, hg_PathTree *t) {
  uint32_t n = g->n, v, *parent, *node, *lindex, *stack;
  uint8_t *lref = (uint8_t *)sift_big_alloc((size_t)n + 1);
  sift_Status s = SIFT_ENOMEM;
  HG_ALLOC(parent, n);
  HG_ALLOC(node, n);
  HG_ALLOC(lindex, n);
  HG_ALLOC(stack, n);
  if (!lref || !parent || !node || !lindex || !stack || grow(t) != SIFT_OK)
    goto out;
  if ((s = hg_paths(g, NULL, 0, parent, NULL)) != SIFT_OK) goto out;
  for (v = 0; v < n; v++) node[v] = HG_NONE;
  holding_refs(g, parent, lref, lindex);
  if ((s = root_nodes(g, parent, t, node)) != SIFT_OK
      || (s = object_nodes(g, parent, lref, lindex, stack, t, node)) != SIFT_OK)
    goto out;
  for (v = 0; v < n; v++) {
    if (node[v] == HG_NONE) {
      t->unreached++;
      continue;
    }
    t->count[node[v]]++;
    t->bytes[node[v]] += hg_shallow(g, v, model);
  }
out:
  sift_big_free(lref);
  sift_big_free(parent);
  sift_big_free(node);
  sift_big_free(lindex);
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
