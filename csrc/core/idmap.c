/*
** idmap.c
** The id map (see idmap.h).
*/

#include <stdlib.h>

#include "idmap.h"

void sift_idmap_free (sift_IdMap *m) {
  free(m->slots);
  m->slots = NULL;
  m->cap = m->n = 0;
}

static int grow (sift_IdMap *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024, i, s;
  sift_IdSlot *slots;
  if (cap > SIZE_MAX / sizeof *slots || (slots = (sift_IdSlot *)calloc(cap, sizeof *slots)) == NULL)
    return 0;
  for (i = 0; i < m->cap; i++) {
    if (m->slots[i].key == 0) continue;
    for (s = sift_idmap_slot(m->slots[i].key, cap); slots[s].key != 0; s = (s + 1) & (cap - 1)) {}
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
  for (s = sift_idmap_slot(key, m->cap); m->slots[s].key != 0; s = (s + 1) & (m->cap - 1)) {}
  m->slots[s].key = key;
  m->slots[s].val = 0;
  m->n++;
  *made = 1;
  return &m->slots[s].val;
}
