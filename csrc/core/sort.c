/*
** sort.c
** The radix sort (see sort.h).
*/

#include <stdint.h>
#include <string.h>

#include "sort.h"

static inline uint64_t key_at (const unsigned char *p) {
  uint64_t k;
  memcpy(&k, p, sizeof k);  /* the record's first member */
  return k;
}

/* the passes, written once; called with a constant size for the usual
   records so that each moves as one or two words */
static inline void radix (unsigned char *v, size_t n, size_t size, int lo,
                          int hi, unsigned char *tmp) {
  unsigned char *src = v, *dst = tmp, *x;
  size_t count[256], i;
  int shift, d;
  for (shift = lo; shift < hi; shift += 8) {
    size_t sum = 0;
    memset(count, 0, sizeof count);
    for (i = 0; i < n; i++) count[key_at(src + i * size) >> shift & 0xff]++;
    if (count[key_at(src) >> shift & 0xff] == n) continue;  /* one digit */
    for (d = 0; d < 256; d++) {  /* counts to starting places */
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++)
      memcpy(dst + count[key_at(src + i * size) >> shift & 0xff]++ * size,
             src + i * size, size);
    x = src; src = dst; dst = x;
  }
  if (src != v) memcpy(v, src, n * size);
}

void sift_radix_sort (void *v, size_t n, size_t size, int lo, int hi,
                      void *tmp) {
  if (n < 2) return;
  if (size == 8) radix((unsigned char *)v, n, 8, lo, hi, (unsigned char *)tmp);
  else if (size == 16) radix((unsigned char *)v, n, 16, lo, hi, (unsigned char *)tmp);
  else radix((unsigned char *)v, n, size, lo, hi, (unsigned char *)tmp);
}
