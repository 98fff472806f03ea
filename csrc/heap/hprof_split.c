/*
** hprof_split.c
** The heap dump's records walked by two threads. Its records (one
** HEAP_DUMP, or HEAP_DUMP_SEGMENTs: HotSpot writes one per megabyte or
** so) are split into two runs of about equal bytes; a worker thread walks
** the second run into a heap of its own while this thread walks the
** first, and the worker's objects, classes, roots and heap switches are
** then appended to this thread's, so the index is the one a single walk
** of the file makes. A dump of one record, a small dump, or a build that
** spills its arrays (whose budget is this thread's) is walked here alone.
**
** The worker's arrays are its own (csrc/core/big.c counts arrays per
** thread): it frees them itself once they are appended.
*/

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/reader.h"
#include "hprof_build.h"

/* below this many bytes of heap records, a second thread gains nothing */
#define SPLIT_FROM ((uint64_t)4 << 20)

typedef struct Worker {
  Build b;
  hp_Heap h;
  sift_Error err;
  sift_Progress progress;  /* polls stop */
  const hpb_Segment *segs;
  uint64_t nsegs;
  sift_Status status;
  int stop;                /* set by this thread when it fails first */
  int done, appended;
  pthread_mutex_t lock;
  pthread_cond_t changed;
} Worker;

/* walk segs[0..n) into b */
static sift_Status walk (Build *b, const hpb_Segment *segs, uint64_t n) {
  hp_Heap *h = b->h;
  uint64_t i;
  for (i = 0; i < n; i++) {
    sift_Reader r;
    sift_Status s;
    sift_reader_init(&r, h->p, h->n);
    r.pos = (size_t)segs[i].body;
    r.size = (size_t)segs[i].end;
    s = hpb_heap_records(b, &r, segs[i].cut);
    if (s == SIFT_ETRUNC) {  /* a cut record is the file's last */
      hpb_warn(h, "the heap dump is indexed up to byte %llu, where the "
           "file ends inside a sub-record", (unsigned long long)h->truncated_at);
      return SIFT_OK;
    }
    if (s != SIFT_OK) return s;
  }
  return SIFT_OK;
}

/* the worker's progress: none reported, only whether to stop */
static int keep_going (void *ud, uint64_t done, uint64_t total) {
  Worker *w = (Worker *)ud;
  (void)done; (void)total;
  return !__atomic_load_n(&w->stop, __ATOMIC_RELAXED);
}

static void free_parts (Worker *w) {
  sift_big_free(w->h.ids);
  sift_big_free(w->h.offs32);
  sift_big_free(w->h.offs64);
  sift_big_free(w->h.classes);
  sift_big_free(w->h.roots);
  sift_big_free(w->h.heaps);
  sift_idmap_free(&w->b.named);
}

static void *work (void *ud) {
  Worker *w = (Worker *)ud;
  sift_Status s = walk(&w->b, w->segs, w->nsegs);
  pthread_mutex_lock(&w->lock);
  w->status = s;
  w->done = 1;
  pthread_cond_broadcast(&w->changed);
  while (!w->appended) pthread_cond_wait(&w->changed, &w->lock);
  pthread_mutex_unlock(&w->lock);
  free_parts(w);
  return NULL;
}

/* append n elements from src to arr, of len elements and capacity cap */
#define APPEND(arr, len, cap, src, n) \
  do { \
    if ((n) > 0) { \
      if ((len) + (n) > (cap)) { \
        void *na_ = sift_big_realloc((arr), (size_t)((len) + (n)) * sizeof *(arr)); \
        if (na_ == NULL) return hpb_nomem(b); \
        (arr) = na_; \
        (cap) = (len) + (n); \
      } \
      memcpy((arr) + (len), (src), (size_t)(n) * sizeof *(arr)); \
      (len) += (n); \
    } \
  } while (0)

/* the worker's part after this thread's: everything hpb_heap_records
   collects, in file order */
static sift_Status append_part (Build *b, Worker *w) {
  hp_Heap *h = b->h, *o = &w->h;
  uint64_t i, len = h->nobjs, cap = b->capobjs, skip;
  int k;
  APPEND(h->ids, len, cap, o->ids, o->nobjs);
  len = h->nobjs;
  cap = b->capobjs;
  if (h->n <= UINT32_MAX) APPEND(h->offs32, len, cap, o->offs32, o->nobjs);
  else APPEND(h->offs64, len, cap, o->offs64, o->nobjs);
  h->nobjs = len;
  b->capobjs = cap;
  APPEND(h->classes, h->nclasses, b->capclasses, o->classes, o->nclasses);
  APPEND(h->roots, h->nroots, b->caproots, o->roots, o->nroots);
  for (k = 0; k < 256; k++) h->roots_by_kind[k] += o->roots_by_kind[k];
  for (k = 0; k < 5; k++) h->count[k] += o->count[k];
  /* the worker began not knowing the heap, so its first switch may be to
     the heap this thread's part ended in */
  skip = o->nheaps > 0 && o->heaps[0].heap == b->heap;
  APPEND(h->heaps, h->nheaps, b->capheaps, o->heaps + skip, o->nheaps - skip);
  if (o->nheaps > 0) b->heap = w->b.heap;
  for (i = 0; i < w->b.named.cap; i++) {
    int made;
    uint64_t key = w->b.named.slots[i].key;
    if (key && sift_idmap_put(&b->named, key, &made) == NULL) return hpb_nomem(b);
  }
  for (k = 0; k < o->nwarn; k++) hpb_warn(h, "%s", o->warn[k]);
  if (o->truncated_at) h->truncated_at = o->truncated_at;
  return SIFT_OK;
}

/* where the second run starts: the first segment at or past half the
   bytes (0: one run; threads as hp_Options has it) */
static uint64_t split_at (const Build *b, int threads) {
  uint64_t i, total = 0, half = 0;
  for (i = 0; i < b->nsegs; i++) total += b->segs[i].end - b->segs[i].body;
  if (b->nsegs < 2 || threads == 1 || (threads == 0 && total < SPLIT_FROM)) return 0;
  for (i = 0; i < b->nsegs - 1; i++) {
    half += b->segs[i].end - b->segs[i].body;
    if (half >= total / 2) return i + 1;
  }
  return 0;
}

sift_Status hpb_walk_segments (Build *b, int threads) {
  hp_Heap *h = b->h;
  uint64_t threshold, k = split_at(b, threads);
  Worker *w;
  pthread_t thread;
  sift_Status s;
  if (k == 0 || sift_big_spilling(&threshold) != NULL)
    return walk(b, b->segs, b->nsegs);
  w = (Worker *)calloc(1, sizeof *w);
  if (w == NULL) return hpb_nomem(b);
  w->h.p = h->p;
  w->h.n = h->n;
  w->h.idsize = h->idsize;
  w->b.h = &w->h;
  w->b.err = &w->err;
  w->b.heap_unknown = 1;
  w->progress.fn = keep_going;
  w->progress.ud = w;
  w->progress.total = h->n;
  w->b.pr = &w->progress;
  w->segs = b->segs + k;
  w->nsegs = b->nsegs - k;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->changed, NULL);
  if (pthread_create(&thread, NULL, work, w) != 0) {
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->changed);
    free(w);
    return walk(b, b->segs, b->nsegs);
  }
  s = walk(b, b->segs, k);
  if (s != SIFT_OK) __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
  pthread_mutex_lock(&w->lock);
  while (!w->done) pthread_cond_wait(&w->changed, &w->lock);
  if (s == SIFT_OK && w->status != SIFT_OK) {  /* the first failure in the file */
    s = w->status;
    memcpy(b->err, &w->err, sizeof w->err);
  }
  if (s == SIFT_OK) s = append_part(b, w);
  w->appended = 1;
  pthread_cond_broadcast(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(thread, NULL);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->changed);
  free(w);
  return s;
}
