/*
** big.c
** Arrays as big as a dump, each a mapping of its own, spilled to files
** past a threshold (see big.h). Under AddressSanitizer the arrays in
** memory come from malloc, so that its checks cover them.
*/

#define _GNU_SOURCE  /* mremap */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "big.h"

#if defined(__SANITIZE_ADDRESS__)
#define BIG_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_MALLOC 1
#endif
#endif

/* where each array comes from, in the header before it */
enum { FROM_MALLOC = -2, FROM_ANON = -1 };  /* else a spill file's fd */

typedef struct Head {
  size_t total;  /* bytes mapped, header included */
  int fd;
} Head;

#define HEAD 64  /* the header's room: arrays stay 64-byte aligned */

/* arrays from this size on ask for transparent huge pages */
#define HUGE_FROM ((size_t)8 << 20)

/*
** The spill setting and the counts belong to a thread: sift serve analyses
** files in threads of their own (a Lua state each), and one thread's arrays
** must neither count against another's threshold nor follow a setting made
** in another. A Lua state lives in one thread, so an array is freed in the
** thread that allocated it, and counted there. __thread is a GCC and Clang
** keyword (C11's _Thread_local is not C99); elsewhere one process-wide
** setting remains.
*/
#if defined(__GNUC__) || defined(__clang__)
#define PER_THREAD __thread
#else
#define PER_THREAD
#endif

typedef struct Budget {
  char spill_dir[4096];
  int spilling;
  uint64_t threshold, in_memory, memory_peak, spilled, spilled_peak;
} Budget;

static PER_THREAD Budget budget;

static void count (const Head *h, int sign) {
  Budget *b = &budget;
  uint64_t *n = h->fd >= 0 ? &b->spilled : &b->in_memory;
  if (sign > 0) *n += h->total;
  else *n -= h->total;
  if (b->spilled > b->spilled_peak) b->spilled_peak = b->spilled;
  if (b->in_memory > b->memory_peak) b->memory_peak = b->in_memory;
}

/* total bytes of memory; NULL when there is none */
static Head *in_ram (size_t total) {
  Head *h;
#if defined(BIG_MALLOC)
  h = (Head *)calloc(1, total);
  if (h == NULL) return NULL;
  h->fd = FROM_MALLOC;
#else
  void *p = mmap(NULL, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (total >= HUGE_FROM) madvise(p, total, MADV_HUGEPAGE);  /* fewer faults, fewer TLB misses */
  h = (Head *)p;
  h->fd = FROM_ANON;
#endif
  h->total = total;
  return h;
}

/* total bytes of a new, unlinked file in the spill directory, mapped;
   its blocks are reserved first, so a full disk is an error here and not
   a SIGBUS later */
static Head *on_disk (size_t total) {
  char path[sizeof budget.spill_dir + 32];
  int fd;
  void *p;
  if (!budget.spilling) return NULL;
  snprintf(path, sizeof path, "%s/sift-spill-XXXXXX", budget.spill_dir);
  fd = mkstemp(path);
  if (fd < 0) return NULL;
  unlink(path);
  if (posix_fallocate(fd, 0, (off_t)total) != 0) {
    close(fd);
    return NULL;
  }
  p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return NULL;
  }
  ((Head *)p)->total = total;
  ((Head *)p)->fd = fd;
  return (Head *)p;
}

static int over_threshold (size_t more) {
  return budget.spilling && budget.in_memory + more > budget.threshold;
}

void *sift_big_alloc (size_t bytes) {
  size_t total = bytes + HEAD;
  Head *h = NULL;
  if (total < bytes) return NULL;
  if (over_threshold(total)) h = on_disk(total);
  if (h == NULL) h = in_ram(total);
  if (h == NULL) h = on_disk(total);  /* memory ran out first */
  if (h == NULL) return NULL;
  count(h, 1);
  return (char *)h + HEAD;
}

/* a copy of h in new memory of total bytes (the rest zeroed); h freed */
static Head *moved (Head *h, size_t total) {
  void *q = sift_big_alloc(total - HEAD);
  if (q == NULL) return NULL;
  memcpy(q, (char *)h + HEAD, (h->total < total ? h->total : total) - HEAD);
  sift_big_free((char *)h + HEAD);
  return (Head *)((char *)q - HEAD);
}

void *sift_big_realloc (void *p, size_t bytes) {
  Head *h, *n = NULL;
  size_t total = bytes + HEAD, old;
  if (p == NULL) return sift_big_alloc(bytes);
  if (total < bytes) return NULL;
  h = (Head *)((char *)p - HEAD);
  old = h->total;
  if (h->fd == FROM_MALLOC) {
    n = (Head *)realloc(h, total);
    if (n == NULL) return NULL;
    if (total > old) memset((char *)n + old, 0, total - old);
  }
  else if (h->fd == FROM_ANON) {
    void *q;
    if (total > old && over_threshold(total - old)
        && (n = moved(h, total)) != NULL)  /* counted by alloc and free */
      return (char *)n + HEAD;
    q = mremap(h, old, total, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) {  /* out of memory: to a spill file, if any */
      n = moved(h, total);
      return n ? (char *)n + HEAD : NULL;
    }
    n = (Head *)q;
  }
  else {
    void *q;
    if ((total > old ? posix_fallocate(h->fd, 0, (off_t)total)
                     : ftruncate(h->fd, (off_t)total)) != 0)
      return NULL;
    q = mremap(h, old, total, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return NULL;
    n = (Head *)q;
  }
  n->total = old;
  count(n, -1);
  n->total = total;
  count(n, 1);
  return (char *)n + HEAD;
}

void sift_big_free (void *p) {
  Head *h;
  if (p == NULL) return;
  h = (Head *)((char *)p - HEAD);
  count(h, -1);
  if (h->fd == FROM_MALLOC) free(h);
  else {
    int fd = h->fd;
    munmap(h, h->total);
    if (fd >= 0) close(fd);
  }
}

void sift_big_spill (const char *dir, uint64_t limit) {
  budget.spilling = dir != NULL && strlen(dir) < sizeof budget.spill_dir;
  if (budget.spilling) memcpy(budget.spill_dir, dir, strlen(dir) + 1);
  budget.threshold = limit;
}

const char *sift_big_spilling (uint64_t *limit) {
  *limit = budget.threshold;
  return budget.spilling ? budget.spill_dir : NULL;
}

void sift_big_usage (uint64_t *memory, uint64_t *peak, uint64_t *disk, uint64_t *disk_peak) {
  *memory = budget.in_memory;
  *peak = budget.memory_peak;
  *disk = budget.spilled;
  *disk_peak = budget.spilled_peak;
}
