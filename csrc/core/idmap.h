/*
** idmap.h
** A map from 64-bit ids to 32-bit numbers (open addressing, at most half
** full). Id 0 is never a key: it means null everywhere it is used.
*/

#if !defined(sift_idmap_h)
#define sift_idmap_h

#include <stddef.h>
#include <stdint.h>

typedef struct sift_IdSlot {
  uint64_t key;         /* 0: empty */
  uint32_t val;
} sift_IdSlot;

typedef struct sift_IdMap {
  sift_IdSlot *slots;   /* key and value side by side: one cache miss */
  size_t cap, n;
} sift_IdMap;

void sift_idmap_free (sift_IdMap *m);

/* the slot where the search for key starts: splitmix64's finaliser, as
   heap addresses differ in few bits */
static inline size_t sift_idmap_slot (uint64_t key, size_t cap) {
  key ^= key >> 30;
  key *= 0xBF58476D1CE4E5B9ull;
  key ^= key >> 27;
  key *= 0x94D049BB133111EBull;
  key ^= key >> 31;
  return (size_t)key & (cap - 1);
}

/* the value of key, or NULL (inline: the heap index asks once an object) */
static inline uint32_t *sift_idmap_get (const sift_IdMap *m, uint64_t key) {
  size_t s;
  if (m->cap == 0 || key == 0) return NULL;
  for (s = sift_idmap_slot(key, m->cap); m->slots[s].key != 0; s = (s + 1) & (m->cap - 1))
    if (m->slots[s].key == key) return &m->slots[s].val;
  return NULL;
}

/* the value of key, made (set to 0, *made = 1) when absent; NULL when
   memory runs out. key must not be 0. */
uint32_t *sift_idmap_put (sift_IdMap *m, uint64_t key, int *made);

#endif
