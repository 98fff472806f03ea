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

/* the value of key, or NULL */
uint32_t *sift_idmap_get (const sift_IdMap *m, uint64_t key);

/* the value of key, made (set to 0, *made = 1) when absent; NULL when
   memory runs out. key must not be 0. */
uint32_t *sift_idmap_put (sift_IdMap *m, uint64_t key, int *made);

#endif
