/*
** idmap.c
** The id map (see idmap.h).
*/

#include <stdlib.h>

#include "idmap.h"

static size_t slot_of (uint64_t key, size_t cap) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

void sift_idmap_free (sift_IdMap *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->n = 0;
}

uint32_t *sift_idmap_get (const sift_IdMap *m, uint64_t key) {
  size_t s;
  if (m->cap == 0 || key == 0) return NULL;
  for (s = slot_of(key, m->cap); m->keys[s] != 0; s = (s + 1) & (m->cap - 1))
    if (m->keys[s] == key) return &m->vals[s];
  return NULL;
}

static int grow (sift_IdMap *m) {
  size_t cap = m->cap ? m->cap * 2 : 1024, i, s;
  uint64_t *keys;
  uint32_t *vals;
  if (cap > SIZE_MAX / sizeof *keys) return 0;
  keys = (uint64_t *)calloc(cap, sizeof *keys);
  vals = (uint32_t *)malloc(cap * sizeof *vals);
  if (keys == NULL || vals == NULL) {
    free(keys);
    free(vals);
    return 0;
  }
  for (i = 0; i < m->cap; i++) {
    if (m->keys[i] == 0) continue;
    for (s = slot_of(m->keys[i], cap); keys[s] != 0; s = (s + 1) & (cap - 1)) {}
    keys[s] = m->keys[i];
    vals[s] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 1;
}

uint32_t *sift_idmap_put (sift_IdMap *m, uint64_t key, int *made) {
  size_t s;
  uint32_t *v = sift_idmap_get(m, key);
  *made = 0;
  if (v) return v;
  if ((m->n + 1) * 2 > m->cap && !grow(m)) return NULL;
  for (s = slot_of(key, m->cap); m->keys[s] != 0; s = (s + 1) & (m->cap - 1)) {}
  m->keys[s] = key;
  m->vals[s] = 0;
  m->n++;
  *made = 1;
  return &m->vals[s];
}
