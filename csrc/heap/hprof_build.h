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
#include "core/reader.h"
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

/* a heap dump record of the dump indexed: its body, and whether the file
   ends inside it */
typedef struct hpb_Segment {
  uint64_t body, end;
  int cut;
} hpb_Segment;

/* the state of one build */
typedef struct Build {
  hp_Heap *h;
  sift_Progress *pr;
  sift_Error *err;
  uint64_t capobjs, capclasses, capstrings, capframes, captraces, caploads,
           caproots, capthreads, capheaps;  /* capacities of the arrays */
  uint32_t heap;          /* current Android heap */
  int heap_unknown;       /* a worker's: the heap its first record is in */
  int segmented, ended;   /* the dump is segments; its HEAP_DUMP_END came */
  /* the class ids instances name (the values are unused) */
  sift_IdMap named;
  uint64_t last_named;
  /* the heap dump's records, walked once the top records are */
  hpb_Segment *segs;
  uint64_t nsegs, capsegs;
} Build;

/* the build's failure for lack of memory (b->err; sift_fail for others) */
sift_Status hpb_nomem (Build *b);
/* add a warning to the heap (up to HP_MAXWARN) */
void hpb_warn (hp_Heap *h, const char *fmt, ...) SIFT_PRINTF(2, 3);

/* hprof.c: walk the sub-records of one heap dump record, r->pos ..
   r->size; SIFT_ETRUNC when a cut file ends inside one (what came before
   is kept) */
sift_Status hpb_heap_records (Build *b, sift_Reader *r, int cut);

/* hprof_split.c: walk the segments of b, in one thread or two (threads
   as hp_Options has it) */
sift_Status hpb_walk_segments (Build *b, int threads);

/* hprof_index.c: the passes after the walk */
int hpb_sort_idx (hp_Idx *v, uint64_t n);  /* 0: out of memory */
uint64_t hpb_dedup_idx (hp_Idx *v, uint64_t *n);
sift_Status hpb_sort_objects (Build *b);
sift_Status hpb_link_classes (Build *b);
void hpb_count_missing_classes (Build *b);

#endif
