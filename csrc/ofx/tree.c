/*
** tree.c
** The OFX tree's nodes and interned tags (see tree.h).
*/

#include <stdlib.h>
#include <string.h>

#include "core/big.h"
#include "tree.h"

static uint32_t hash (const char *s, size_t n) {
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

int ofx_tree_init (ofx_Tree *t, const char *text, size_t len) {
  memset(t, 0, sizeof *t);
  t->text = text;
  t->text_len = len;
  if (ofx_tree_intern(t, "#document", 9) != 0) return -1;
  t->cap = 1024;
  if ((t->nodes = (ofx_Node *)sift_big_alloc(t->cap * sizeof *t->nodes)) == NULL) return -1;
  t->count = 1;
  t->nodes[0].tag = OFX_AGGREGATE;
  t->nodes[0].pos = 1;
  return 0;
}

void ofx_tree_free (ofx_Tree *t) {
  if (t->nodes) sift_big_free(t->nodes);
  free(t->names);
  free(t->name_at);
  free(t->name_len);
  free(t->slots);
  memset(t, 0, sizeof *t);
}

const char *ofx_tree_name (const ofx_Tree *t, uint32_t tag, size_t *n) {
  *n = t->name_len[tag];
  return t->names + t->name_at[tag];
}

/* the hash slots doubled, every tag placed again */
static int rehash (ofx_Tree *t) {
  uint32_t cap = t->slots_cap ? 2 * t->slots_cap : 64, i;
  uint32_t *slots = (uint32_t *)calloc(cap, sizeof *slots);
  if (slots == NULL) return -1;
  for (i = 0; i < t->tags; i++) {
    uint32_t s = hash(t->names + t->name_at[i], t->name_len[i]) & (cap - 1);
    while (slots[s]) s = (s + 1) & (cap - 1);
    slots[s] = i + 1;
  }
  free(t->slots);
  t->slots = slots;
  t->slots_cap = cap;
  return 0;
}

/* room for one more tag of n bytes */
static int room_for_tag (ofx_Tree *t, size_t n) {
  if (t->tags == t->tags_cap) {
    uint32_t cap = t->tags_cap ? 2 * t->tags_cap : 64;
    uint32_t *at = (uint32_t *)realloc(t->name_at, cap * sizeof *at), *len;
    if (at == NULL) return -1;
    t->name_at = at;
    if ((len = (uint32_t *)realloc(t->name_len, cap * sizeof *len)) == NULL) return -1;
    t->name_len = len;
    t->tags_cap = cap;
  }
  if (t->names_cap - t->names_len < n) {
    size_t cap = t->names_cap ? t->names_cap : 1024;
    char *names;
    while (cap - t->names_len < n) cap *= 2;
    if ((names = (char *)realloc(t->names, cap)) == NULL) return -1;
    t->names = names;
    t->names_cap = cap;
  }
  return 0;
}

/* the slot of the tag s[0..n): where it is, or the empty one where it goes */
static uint32_t slot_of (const ofx_Tree *t, const char *s, size_t n) {
  uint32_t slot = hash(s, n) & (t->slots_cap - 1), id;
  for (; (id = t->slots[slot]) != 0; slot = (slot + 1) & (t->slots_cap - 1))
    if (t->name_len[id - 1] == n && memcmp(t->names + t->name_at[id - 1], s, n) == 0) break;
  return slot;
}

int64_t ofx_tree_lookup (const ofx_Tree *t, const char *s, size_t n) {
  uint32_t id = t->slots_cap ? t->slots[slot_of(t, s, n)] : 0;
  return (int64_t)id - 1;
}

int64_t ofx_tree_intern (ofx_Tree *t, const char *s, size_t n) {
  uint32_t slot;
  if (n > UINT32_MAX || t->tags >= OFX_MAX_TAGS) return -1;
  if (2 * (t->tags + 1) > t->slots_cap && rehash(t) != 0) return -1;
  slot = slot_of(t, s, n);
  if (t->slots[slot]) return t->slots[slot] - 1;
  if (room_for_tag(t, n) != 0) return -1;
  memcpy(t->names + t->names_len, s, n);
  t->name_at[t->tags] = (uint32_t)t->names_len;
  t->name_len[t->tags] = (uint32_t)n;
  t->names_len += n;
  t->slots[slot] = ++t->tags;
  return t->tags - 1;
}

int64_t ofx_tree_add (ofx_Tree *t, uint32_t parent, uint32_t tag, int kind,
                      uint32_t a, uint32_t b, uint32_t pos) {
  ofx_Node *n, *p;
  uint32_t id = t->count;
  if (id == t->cap) {
    ofx_Node *more;
    if (t->cap > UINT32_MAX / 2) return -1;
    if ((more = (ofx_Node *)sift_big_realloc(t->nodes, 2 * (size_t)t->cap * sizeof *more)) == NULL)
      return -1;
    t->nodes = more;
    t->cap *= 2;
  }
  n = &t->nodes[id];
  n->tag = tag << 2 | (uint32_t)kind;
  n->next = 0;
  n->a = a;
  n->b = b;
  n->pos = pos;
  p = &t->nodes[parent];
  if (p->b) t->nodes[p->b].next = id;
  else p->a = id;
  p->b = id;
  t->count++;
  return id;
}

uint32_t ofx_tree_find (const ofx_Tree *t, uint32_t parent, uint32_t tag) {
  uint32_t c;
  if (OFX_KIND(&t->nodes[parent]) != OFX_AGGREGATE) return 0;  /* (an element's a is its value) */
  for (c = t->nodes[parent].a; c; c = t->nodes[c].next)
    if (OFX_TAG(&t->nodes[c]) == tag) return c;
  return 0;
}
