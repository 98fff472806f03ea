/*
** hprof_build.h
** What the two halves of building an HPROF index share (hprof.c walks the
** records, hprof_index.c sorts and links what the walk collected): the
** state of one build, its growable arrays and its failures. Private to
** those two files; everyone else reads the index through hprof.h.
*/

#if !defined(sift_hprof_build_h)
#define sift_hprof_build_h

#include "core/big.h"
#include "core/idmap.h"
#include "hprof.h"

/* a growable array: push one element, doubling the capacity */
#define PUSH(arr, n, cap, value) \
  do { \
    if ((n) == (cap)) { \
      uint64_t ncap_ = (cap) ? (cap) * 2 : 1024; \
      void *na_ = sift_big_realloc((arr), ncap_ * sizeof *(arr)); \
      if (na_ == NULL) return hpb_nomem(b); \
      (arr) = na_; \
      (cap) = ncap_; \
    } \
    (arr)[(n)++] = (value); \
  } while (0)

/* the state of one build */
typedef struct Build {
  hp_Heap *h;
  sift_Progress *pr;
  sift_Error *err;
  uint64_t capobjs, capclasses, capstrings, capframes, captraces, caploads,
           caproots, capthreads, capheaps;  /* capacities of the arrays */
  uint32_t heap;          /* current Android heap */
  int segmented, ended;   /* the dump is segments; its HEAP_DUMP_END came */
  /* the class ids instances name (the values are unused) */
  sift_IdMap named;
  uint64_t last_named;
} Build;

/* the build's failure for lack of memory (b->err; sift_fail for others) */
sift_Status hpb_nomem (Build *b);
/* add a warning to the heap (up to HP_MAXWARN) */
void hpb_warn (hp_Heap *h, const char *fmt, ...) SIFT_PRINTF(2, 3);

/* hprof_index.c: the passes after the walk */
int hpb_sort_idx (hp_Idx *v, uint64_t n);  /* 0: out of memory */
uint64_t hpb_dedup_idx (hp_Idx *v, uint64_t *n);
sift_Status hpb_sort_objects (Build *b);
sift_Status hpb_link_classes (Build *b);
void hpb_count_missing_classes (Build *b);

#endif
