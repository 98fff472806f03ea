/*
** search.h
** The one binary search over a sorted array, as a statement macro so that
** each caller's comparison is inlined (the heap index looks ids up once
** per reference). The element type and the key are the caller's.
*/

#if !defined(sift_search_h)
#define sift_search_h

#include <stdint.h>

/*
** Narrow [lo, hi) to the first index whose element does not sort before
** the key: `before` is an expression of the index `mid` that is true for
** a prefix of the range (element mid < key, or <= key for the first one
** after it). lo and hi are lvalues; on exit lo == hi is the answer.
*/
#define SIFT_LOWER_BOUND(lo, hi, mid, before) \
  do { \
    while ((lo) < (hi)) { \
      uint64_t mid = (lo) + ((hi) - (lo)) / 2; \
      if (before) (lo) = mid + 1; \
      else (hi) = mid; \
    } \
  } while (0)

#endif
