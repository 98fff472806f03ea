/*
** sort.h
** The one radix sort (LSD, stable): the heap index sorts its ids with it,
** sift waste its content hashes.
*/

#if !defined(sift_sort_h)
#define sift_sort_h

#include <stddef.h>

/*
** Sort n records of `size` bytes (at least 8; 8 and 16 are the fast
** ones), each starting with a uint64_t key, ascending by the key's bits
** [lo, hi): the caller knows the records agree on every other bit (or
** wants them left in their order by those).
** Stable; 8 bits a pass, a pass skipped when every record has the same
** digit. tmp has room for n records.
*/
void sift_radix_sort (void *v, size_t n, size_t size, int lo, int hi,
                      void *tmp);

#endif
