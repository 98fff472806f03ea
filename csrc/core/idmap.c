/*
** idmap.c
** The id map (see idmap.h).
*/

#include <stdlib.h>

#include "idmap.h"

/* splitmix64's finaliser: heap addresses differ in few bits */
static size_t slot_of (uint64_t key, size_t cap) {
  key ^= key >> 30;
  key *= 0xBF58476D1CE4E5B9ull;
  key ^= key >> 27;
  key *= 0x94D049BB133111EBull;
  key ^= key >> 31;
  return (size_t)key & (cap - 1);
}

void sift_idmap_free (sift_IdMap *m) {
  free(m->slots);
  m->slots = NULL;
  m->cap = m->n = 0;
}

uint32_t *sift_idmap_get (const sift_IdMap *m, uint64_t key) {
  size_t s;
  if (m->cap == 0 || key == 0) return NULL;
  for (s = slot_of(key, m->cap); m->slots[s].key != 0; s = (s + 1) & (m->cap - 1))
    if (m->slots[s].key == key) return &m->slots[s].val;
  return NULL;
}

static int grow (sift_IdMap *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024, i, s;
  sift_IdSlot *slots;
  if (cap > SIZE_MAX / sizeof *slots || (slots = (sift_IdSlot *)calloc(cap, sizeof *slots)) == NULL)
    return 0;
  for (i = 0; i < m->cap; i++) {
    if (m->slots[i].key == 0) continue;
    for (s = slot_of(m->slots[i].key, cap); slots[s].key != 0; s = (s + 1) & (cap - 1)) {}
    slots[s] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 1;
}

uint32_t *sift_idmap_put (sift_IdMap *m, uint64_t key, int *made) {
  size_t s;
  uint32_t *v = sift_idmap_get(m, key);
  *made = 0;
  if (v) return v;
  if ((m->n + 1) * 2 > m->cap && !grow(m)) return NULL;
  for (s = slot_of(key, m->cap); m->slots[s].key != 0; s = (s + 1) & (m->cap - 1)) {}
  m->slots[s].key = key;
  m->slots[s].val = 0;
  m->n++;
  *made = 1;
  return &m->slots[s].val;
}
