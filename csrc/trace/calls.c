/*
** calls.c
** The call instances of one thread, and their shapes (see calls.h).
** Shapes are found bottom up, over the nodes in breadth-first order taken
** backwards, by hashing a node's method with its children's shapes into
** an open-addressing table of representatives (compared in full on a
** hash match): linear in the nodes, 16 bytes each plus the shapes.
*/

#include <stdlib.h>
#include <string.h>

#include "calls.h"

typedef struct Build {
  mt_Calls *c;
  uint32_t *stack, *parents;  /* methods entered; the shown node each sits under */
  uint32_t depth, cap;
  const uint8_t *visible;
  int failed;
} Build;

static int grow_nodes (mt_Calls *c) {
  uint32_t cap = c->cap ? c->cap * 2 : 1024;
  uint32_t **arrays[5];
  int k;
  arrays[0] = &c->method; arrays[1] = &c->first; arrays[2] = &c->next;
  arrays[3] = &c->last; arrays[4] = &c->shape;
  if (cap < c->cap) return 0;
  for (k = 0; k < 5; k++) {
    uint32_t *p = (uint32_t *)realloc(*arrays[k], (size_t)cap * sizeof *p);
    if (p == NULL) return 0;
    *arrays[k] = p;
  }
  c->cap = cap;
  return 1;
}

static uint32_t new_node (mt_Calls *c, uint32_t method, uint32_t parent) {
  uint32_t k;
  if (c->n == c->cap && !grow_nodes(c)) return MT_NONE;
  k = c->n++;
  c->method[k] = method;
  c->first[k] = c->next[k] = c->last[k] = MT_NONE;
  c->shape[k] = 0;
  if (parent != MT_NONE) {  /* the parent's last child, in order */
    if (c->last[parent] == MT_NONE) c->first[parent] = k;
    else c->next[c->last[parent]] = k;
    c->last[parent] = k;
  }
  return k;
}

static int push (Build *b, uint32_t method, uint32_t parent) {
  if (b->depth == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 256;
    uint32_t *s = (uint32_t *)realloc(b->stack, (size_t)cap * sizeof *s), *p;
    if (s == NULL) return 0;
    b->stack = s;
    p = (uint32_t *)realloc(b->parents, ((size_t)cap + 1) * sizeof *p);
    if (p == NULL) return 0;
    b->parents = p;
    b->cap = cap;
  }
  b->stack[b->depth++] = method;
  b->parents[b->depth] = parent;
  return 1;
}

/* an entry opens a call under the shown node on top; an exit closes the
   frames above its entry (exits with no entry are dropped) */
static int on_record (void *ud, uint32_t method, int action,
                      const uint64_t now[2]) {
  Build *b = (Build *)ud;
  mt_Calls *c = b->c;
  (void)now;
  if (action == 0) {
    uint32_t under = b->parents[b->depth], node = under;
    c->calls++;
    if (b->visible == NULL || b->visible[method]) {
      node = new_node(c, method, under);
      if (node == MT_NONE) { b->failed = 1; return 0; }
    }
    if (!push(b, method, node)) { b->failed = 1; return 0; }
  }
  else {
    uint32_t d = b->depth;
    while (d > 0 && b->stack[d - 1] != method) d--;
    if (d > 0) b->depth = d - 1;
  }
  return 1;
}

sift_Status mt_calls_build (mt_Calls *c, mt_Trace *t, uint32_t tid,
                            const uint8_t *visible) {
  Build b;
  memset(c, 0, sizeof *c);
  memset(&b, 0, sizeof b);
  b.c = c;
  b.visible = visible;
  if (new_node(c, MT_NONE, MT_NONE) == MT_NONE
      || !(b.parents = (uint32_t *)malloc(sizeof *b.parents))) {
    mt_calls_free(c);
    return SIFT_ENOMEM;
  }
  b.parents[0] = 0;  /* the root */
  mt_each_record(t, tid, on_record, &b);
  free(b.stack);
  free(b.parents);
  free(c->last);
  c->last = NULL;
  if (b.failed) {
    mt_calls_free(c);
    return SIFT_ENOMEM;
  }
  return SIFT_OK;
}

/* a node's shape key: its method, and its children's shapes unless at the
   depth limit */
static uint64_t key_hash (const mt_Calls *c, uint32_t k, int deep) {
  uint64_t h = 1469598103934665603ULL ^ c->method[k];
  uint32_t x;
  h *= 1099511628211ULL;
  if (deep)
    for (x = c->first[k]; x != MT_NONE; x = c->next[x]) {
      h ^= c->shape[x];
      h *= 1099511628211ULL;
    }
  return h ^ (h >> 29);
}

static int same_key (const mt_Calls *c, uint32_t a, int adeep, uint32_t b, int bdeep) {
  uint32_t x, y;
  if (c->method[a] != c->method[b]) return 0;
  x = adeep ? c->first[a] : MT_NONE;
  y = bdeep ? c->first[b] : MT_NONE;
  while (x != MT_NONE && y != MT_NONE) {
    if (c->shape[x] != c->shape[y]) return 0;
    x = c->next[x];
    y = c->next[y];
  }
  return x == y;  /* both lists ended */
}

sift_Status mt_calls_shapes (mt_Calls *c, uint32_t depth_limit) {
  uint32_t *order, *depth, *slot, i, count = 0, mask, next_id = 0;
  uint64_t size = 16;
  while (size < 2 * (uint64_t)c->n) size *= 2;
  order = (uint32_t *)malloc((size_t)c->n * sizeof *order);
  depth = (uint32_t *)malloc((size_t)c->n * sizeof *depth);
  slot = (uint32_t *)malloc((size_t)size * sizeof *slot);
  if (!order || !depth || !slot) {
    free(order); free(depth); free(slot);
    return SIFT_ENOMEM;
  }
  mask = (uint32_t)(size - 1);
  memset(slot, 0xFF, (size_t)size * sizeof *slot);
  order[count++] = 0;  /* breadth first from the root */
  depth[0] = 0;
  for (i = 0; i < count; i++) {
    uint32_t k = order[i], x;
    if (depth[k] >= depth_limit) continue;
    for (x = c->first[k]; x != MT_NONE; x = c->next[x]) {
      depth[x] = depth[k] + 1;
      order[count++] = x;
    }
  }
  for (i = count; i > 0; i--) {  /* children before their parents */
    uint32_t k = order[i - 1], s;
    int deep = depth[k] < depth_limit;
    uint64_t h = key_hash(c, k, deep);
    for (s = (uint32_t)h & mask; slot[s] != UINT32_MAX; s = (s + 1) & mask) {
      uint32_t r = slot[s];
      if (same_key(c, k, deep, r, depth[r] < depth_limit)) break;
    }
    if (slot[s] == UINT32_MAX) {  /* a new shape; k stands for it */
      slot[s] = k;
      c->shape[k] = ++next_id;
    }
    else c->shape[k] = c->shape[slot[s]];
  }
  free(order); free(depth); free(slot);
  return SIFT_OK;
}

void mt_calls_free (mt_Calls *c) {
  free(c->method);
  free(c->first);
  free(c->next);
  free(c->last);
  free(c->shape);
  memset(c, 0, sizeof *c);
}
