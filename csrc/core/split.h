/*
** split.h
** A pass over n items on both cores: fn(ud, part, lo, hi) runs over the
** first half in a worker thread and over the second in the caller's, and
** both have returned when sift_split does. fn must neither call Lua nor
** allocate arrays from big.c (each thread counts its own), and each part
** writes only results of its own.
*/

#if !defined(sift_split_h)
#define sift_split_h

#include <stdint.h>

/* below this many items (objects, references) a thread's start costs
   about what it saves */
#define SIFT_SPLIT_FROM 16384

typedef void (*sift_SplitFn) (void *ud, int part, uint64_t lo, uint64_t hi);

/* how many parts ran: 2, or 1 when n is below min or no thread could
   start (then fn(ud, 0, 0, n) ran here alone) */
int sift_split (uint64_t n, uint64_t min, sift_SplitFn fn, void *ud);

#endif
