/*
** big.h
** Arrays as big as a dump (an entry per object or per reference). Each is
** a mapping of its own, so freeing it gives its memory back at once (malloc
** keeps freed chunks in its heap, and the peak stays); and once the arrays
** alive pass the spill threshold, new ones are pages of a file in the
** spill directory, mapped back (MAP_SHARED: the kernel writes them out and
** reads them in as needed, and RLIMIT_DATA does not count them), so a dump
** whose index does not fit in memory still opens, only slower.
**
** Memory from these functions is zeroed; it must be given back with
** sift_big_free (never free()), and grown with sift_big_realloc.
*/

#if !defined(sift_big_h)
#define sift_big_h

#include <stddef.h>
#include <stdint.h>

/* bytes of zeroed memory, or NULL when neither memory nor the spill
   directory can hold them */
void *sift_big_alloc (size_t bytes);

/* grow (or shrink) p to bytes, keeping its content; the new part is
   zeroed. NULL (p untouched) when it cannot. */
void *sift_big_realloc (void *p, size_t bytes);

void sift_big_free (void *p);

/* spill to files in dir (NULL: never) once the arrays alive would pass
   threshold bytes; also when memory runs out before that. The setting and
   the counts below are the calling thread's (see big.c). */
void sift_big_spill (const char *dir, uint64_t threshold);

/* the calling thread's spill directory (NULL: none) and threshold */
const char *sift_big_spilling (uint64_t *threshold);

/* bytes alive in memory (and the most ever) and in spill files (and the
   most ever), of the arrays this thread allocated */
void sift_big_usage (uint64_t *in_memory, uint64_t *memory_peak,
                     uint64_t *spilled, uint64_t *spilled_peak);

#endif
