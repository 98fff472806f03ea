/*
** split.c
** A pass over n items on both cores (split.h).
*/

#include <pthread.h>

#include "split.h"

typedef struct Part {
  sift_SplitFn fn;
  void *ud;
  uint64_t lo, hi;
} Part;

static void *run (void *p) {
  Part *part = (Part *)p;
  part->fn(part->ud, 0, part->lo, part->hi);
  return NULL;
}

int sift_split (uint64_t n, uint64_t min, sift_SplitFn fn, void *ud) {
  pthread_t thread;
  Part first;
  first.fn = fn;
  first.ud = ud;
  first.lo = 0;
  first.hi = n / 2;
  if (n < min || n < 2 || pthread_create(&thread, NULL, run, &first) != 0) {
    fn(ud, 0, 0, n);
    return 1;
  }
  fn(ud, 1, n / 2, n);
  pthread_join(thread, NULL);
  return 2;
}
