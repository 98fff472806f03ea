/*
** trace_build.h
** What the two halves of reading a trace share (trace.c decodes the
** headers and finds the records; calltree.c builds the call trees from
** them): the state of one build, growable arrays, little-endian reads,
** and the walk over the method records. Private to trace/.
*/

#if !defined(sift_trace_build_h)
#define sift_trace_build_h

#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define ALLOC(p, count) ((p) = calloc((size_t)(count) ? (size_t)(count) : 1, sizeof *(p)))

typedef struct Ctx {
  mt_Trace *t;
  sift_Error *err;
} Ctx;

/* grow an array to hold one more element; 0 when memory runs out */
#define GROW(arr, count, cap) \
  ((count) < (cap) || mtb_grow((void **)&(arr), &(cap), sizeof *(arr)))

int mtb_grow (void **arr, uint32_t *cap, size_t size);

/* add a thread (name NULL: one the file does not name) */
sift_Status mtb_add_thread (Ctx *c, uint32_t tid, const char *name, size_t len);

/* qsort order of the method table: by id */
int mtb_cmp_method (const void *a, const void *b);

static inline uint32_t u2le (const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t u4le (const unsigned char *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* passes over a mapped file give back the pages behind them this often */
#define DROP_EVERY ((size_t)4 << 20)

static inline size_t drop_behind (const mt_Trace *t, size_t dropped, size_t pos) {
  return t->mapped && pos - dropped >= DROP_EVERY ? sift_drop_pages(t->p, dropped, pos) : dropped;
}

static inline void drop_all (const mt_Trace *t) {
  if (t->mapped) sift_drop_pages(t->p, 0, t->n);
}

/* the thread of a record */
static inline uint32_t rec_thread (const mt_Trace *t, const unsigned char *r) {
  return t->version == 1 ? r[0] : u2le(r);
}

/* a record's method id and action (low 2 bits), and its times: both
   clocks of a dual record, else the file's one clock (the other is 0) */
static inline uint32_t rec_read (const mt_Trace *t, const unsigned char *r, uint64_t now[2]) {
  int tw = t->version == 1 ? 1 : 2;
  now[0] = now[1] = 0;
  if (t->dual) {
    now[MT_CPU] = u4le(r + tw + 4);
    now[MT_WALL] = u4le(r + tw + 8);
  }
  else now[t->clock] = u4le(r + tw + 4);
  return u4le(r + tw);
}

/* the method number of an id (all ids are in the table by then) */
static inline uint32_t mtb_method_of (const mt_Trace *t, uint64_t id) {
  if (id / 4 < t->ndense && t->dense[id / 4] != MT_NONE) return t->dense[id / 4];
  return (uint32_t)(mt_find_method(t, id) - t->methods);
}

/* the first method record at or after pos (n when none); streaming files'
   inline records are stepped over (mt_build has checked their lengths) */
static inline size_t next_record (const mt_Trace *t, size_t pos) {
  if (t->streaming)
    while (t->n - pos >= 3 && u2le(t->p + pos) == 0) {
      const unsigned char *r = t->p + pos;
      pos += r[2] == 1 ? 5 + (size_t)u2le(r + 3) : r[2] == 2 ? 7 + (size_t)u2le(r + 5)
           : 7 + (size_t)u4le(r + 3);
    }
  return pos <= t->n && t->n - pos >= t->recsize ? pos : t->n;
}

#define EACH_RECORD(t, pos) \
  for (pos = next_record(t, (t)->data); pos < (t)->n; pos = next_record(t, pos + (t)->recsize))

/* calltree.c: the call trees of every thread, once the records are found */
sift_Status mtb_call_trees (Ctx *c, sift_Progress *progress);

#endif
