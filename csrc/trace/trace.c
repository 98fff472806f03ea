/*
** Android method traces: decoder and call trees (see trace.h for the
** rules). Facts: ../shared/formats/ANDROID-TRACE.md.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define ALLOC(p, count) ((p) = calloc((size_t)(count) ? (size_t)(count) : 1, sizeof *(p)))

typedef struct Ctx {
  mt_Trace *t;
  char *err;
  size_t errsize;
} Ctx;

static sift_Status fail (Ctx *c, sift_Status s, const char *fmt, size_t at,
                         const char *what) {
  snprintf(c->err, c->errsize, fmt, what, at);
  return s;
}

static uint32_t u2le (const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t u4le (const unsigned char *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* grow an array to hold one more element; 0 when memory runs out */
#define GROW(arr, count, cap) \
  ((count) < (cap) || grow((void **)&(arr), &(cap), sizeof *(arr)))

static int grow (void **arr, uint32_t *cap, size_t size) {
  uint32_t ncap = *cap ? *cap * 2 : 64;
  void *p;
  if (ncap < *cap || (size_t)ncap > SIZE_MAX / size) return 0;
  p = realloc(*arr, (size_t)ncap * size);
  if (p == NULL) return 0;
  memset((char *)p + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
  *arr = p;
  *cap = ncap;
  return 1;
}


/* passes over a mapped file give back the pages behind them this often */
#define DROP_EVERY ((size_t)4 << 20)

static size_t drop_behind (const mt_Trace *t, size_t dropped, size_t pos) {
  return t->mapped && pos - dropped >= DROP_EVERY ? sift_drop_pages(t->p, dropped, pos) : dropped;
}

static void drop_all (const mt_Trace *t) {
  if (t->mapped) sift_drop_pages(t->p, 0, t->n);
}

/*
** {======================================================
** Text: header lines, method lines, thread lines
** =======================================================
*/

/* the next line of [*pos, end): sets s and len (no newline or CR) */
static int nextline (const char *base, size_t end, size_t *pos,
                     const char **s, size_t *len) {
  const char *p = base + *pos, *nl;
  if (*pos >= end) return 0;
  nl = (const char *)memchr(p, '\n', end - *pos);
  *s = p;
  *len = nl ? (size_t)(nl - p) : end - *pos;
  *pos += *len + (nl != NULL);
  if (*len > 0 && p[*len - 1] == '\r') (*len)--;
  return 1;
}

static int lineis (const char *s, size_t len, const char *word) {
  return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* a method id: hexadecimal with or without 0x ("0" is method 0) */
static int parse_id (const char *s, size_t len, uint64_t *id) {
  size_t i = 0;
  uint64_t v = 0;
  if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) i = 2;
  if (i == len || len - i > 16) return 0;
  for (; i < len; i++) {
    int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v << 4 | (uint64_t)d;
  }
  *id = v;
  return 1;
}

static sift_Status add_method (Ctx *c, const char *s, size_t len, size_t at) {
  mt_Trace *t = c->t;
  const char *tab = (const char *)memchr(s, '\t', len);
  uint64_t id;
  if (tab == NULL || memchr(tab + 1, '\t', len - (size_t)(tab + 1 - s)) == NULL)
    return fail(c, SIFT_EHEADER, "%s at byte %zu: a method line needs tab-separated "
                "id, class and name", at, "trace");
  if (!parse_id(s, (size_t)(tab - s), &id))
    return fail(c, SIFT_EHEADER, "%s at byte %zu: bad method id", at, "trace");
  if (!GROW(t->methods, t->nmethods, t->methodcap)) return SIFT_ENOMEM;
  t->methods[t->nmethods].id = id & ~(uint64_t)3;
  t->methods[t->nmethods].line = tab + 1;
  t->methods[t->nmethods].len = (uint32_t)(len - (size_t)(tab + 1 - s));
  t->nmethods++;
  return SIFT_OK;
}

static sift_Status add_thread (Ctx *c, uint32_t tid, const char *name, size_t len) {
  mt_Trace *t = c->t;
  uint32_t i;
  for (i = 0; i < t->nthreads; i++)
    if (t->threads[i].tid == tid) break;
  if (i == t->nthreads) {
    if (!GROW(t->threads, t->nthreads, t->threadcap)) return SIFT_ENOMEM;
    t->threads[t->nthreads++].tid = tid;
  }
  if (t->threads[i].name == NULL) {
    t->threads[i].name = name;
    t->threads[i].namelen = (uint32_t)len;
  }
  return SIFT_OK;
}

/*
** A "*version" ... "*end" block (a regular file's start or a streaming
** file's summary). Sets the clock; adds threads and methods. Returns the
** block's length through *used, 0 when "*end" never comes.
*/
static sift_Status text_block (Ctx *c, size_t from, size_t end, size_t *used) {
  mt_Trace *t = c->t;
  const char *base = (const char *)t->p;
  size_t pos = from, len, at;
  const char *s;
  int section = 0;  /* 0 keys, 1 threads, 2 methods */
  sift_Status st;
  *used = 0;
  while (at = pos, nextline(base, end, &pos, &s, &len)) {
    if (lineis(s, len, "*end")) {
      *used = pos - from;
      t->header = base + from;
      t->headerlen = pos - from;
      return SIFT_OK;
    }
    if (lineis(s, len, "*threads")) section = 1;
    else if (lineis(s, len, "*methods")) section = 2;
    else if (lineis(s, len, "*version")) section = 0;
    else if (len == 0) continue;
    else if (section == 2) {
      if ((st = add_method(c, s, len, at)) != SIFT_OK) return st;
    }
    else if (section == 1) {
      const char *tab = (const char *)memchr(s, '\t', len);
      uint64_t tid = 0;
      size_t i;
      if (tab == NULL)
        return fail(c, SIFT_EHEADER, "%s at byte %zu: a thread line needs a tab "
                    "between id and name", at, "trace");
      for (i = 0; s + i < tab && i < 10; i++) {
        if (s[i] < '0' || s[i] > '9')
          return fail(c, SIFT_EHEADER, "%s at byte %zu: bad thread id", at, "trace");
        tid = tid * 10 + (uint64_t)(s[i] - '0');
      }
      if (tid > 0xFFFF) return fail(c, SIFT_EHEADER, "%s at byte %zu: thread id over 65535", at, "trace");
      if ((st = add_thread(c, (uint32_t)tid, tab + 1, len - (size_t)(tab + 1 - s))) != SIFT_OK)
        return st;
    }
    else if (len > 6 && memcmp(s, "clock=", 6) == 0) {
      t->clock = lineis(s + 6, len - 6, "wall") ? MT_WALL : MT_CPU;
      t->dual = lineis(s + 6, len - 6, "dual");
    }
  }
  return SIFT_OK;
}

/* }====================================================== */


/*
** {======================================================
** Binary layout: the "SLOW" header and the records
** =======================================================
*/

/* u4 magic "SLOW", u2 version, u2 data offset, u8 start time, u2 record
   size (version 3 and streaming) */
static sift_Status binary_header (Ctx *c, size_t at) {
  mt_Trace *t = c->t;
  const unsigned char *p = t->p + at;
  unsigned version;
  if (t->n - at < 16 || memcmp(p, "SLOW", 4) != 0)
    return fail(c, SIFT_EHEADER, "%s: no 'SLOW' binary header at byte %zu", at, "trace");
  version = u2le(p + 4);
  t->streaming = (version & 0xF0) == 0xF0;
  t->version = (int)(version & 0x0F);
  if (version > 0xFF || t->version < 1 || t->version > 3) {
    snprintf(c->err, c->errsize, "trace: binary version %u at byte %zu is not read "
             "(sift reads 1-3 and streaming 0xF2/0xF3)", version, at + 4);
    return SIFT_EUNSUPPORTED;
  }
  t->start_us = (uint64_t)u4le(p + 8) | (uint64_t)u4le(p + 12) << 32;
  t->data = at + u2le(p + 6);
  if (t->version >= 3) {
    if (t->n - at < 18) return fail(c, SIFT_ETRUNC, "%s: header ends at byte %zu", t->n, "trace");
    t->recsize = u2le(p + 16);
  }
  else t->recsize = t->version == 1 ? 9 : 10;
  if (t->recsize < (t->version == 1 ? 9u : 10u) || t->data > t->n) {
    snprintf(c->err, c->errsize, "trace: bad binary header at byte %zu: data offset %u, "
             "record size %u", at, u2le(p + 6), t->recsize);
    return SIFT_EHEADER;
  }
  return SIFT_OK;
}

/* the thread of a record */
static uint32_t rec_thread (const mt_Trace *t, const unsigned char *r) {
  return t->version == 1 ? r[0] : u2le(r);
}

/* a record's method id and action (low 2 bits), and its times: both
   clocks of a dual record, else the file's one clock (the other is 0) */
static uint32_t rec_read (const mt_Trace *t, const unsigned char *r, uint64_t now[2]) {
  int tw = t->version == 1 ? 1 : 2;
  now[0] = now[1] = 0;
  if (t->dual) {
    now[MT_CPU] = u4le(r + tw + 4);
    now[MT_WALL] = u4le(r + tw + 8);
  }
  else now[t->clock] = u4le(r + tw + 4);
  return u4le(r + tw);
}

/*
** Walk a streaming file once: methods, threads and the summary go to the
** tables, and the method records are counted.
*/
static sift_Status walk_streaming (Ctx *c) {
  mt_Trace *t = c->t;
  size_t pos = t->data, used, dropped = 0;
  uint64_t k = 0;
  sift_Status st;
  while (pos < t->n) {
    const unsigned char *r = t->p + pos;
    dropped = drop_behind(t, dropped, pos);
    if (t->n - pos < 2) return fail(c, SIFT_ETRUNC, "%s: record cut short at byte %zu", pos, "trace");
    if (u2le(r) != 0) {
      if (t->n - pos < t->recsize)
        return fail(c, SIFT_ETRUNC, "%s: record cut short at byte %zu", pos, "trace");
      k++;
      pos += t->recsize;
      continue;
    }
    if (t->n - pos < 3) return fail(c, SIFT_ETRUNC, "%s: record cut short at byte %zu", pos, "trace");
    switch (r[2]) {
      case 1: {  /* new method: u2 length, the method line */
        size_t len;
        if (t->n - pos < 5 || t->n - pos - 5 < (len = u2le(r + 3)))
          return fail(c, SIFT_ETRUNC, "%s: method record cut short at byte %zu", pos, "trace");
        {
          size_t l = len;
          if (l > 0 && r[5 + l - 1] == '\n') l--;
          if ((st = add_method(c, (const char *)r + 5, l, pos + 5)) != SIFT_OK) return st;
        }
        pos += 5 + len;
        break;
      }
      case 2: {  /* new thread: u2 tid, u2 length, the name */
        size_t len;
        if (t->n - pos < 7 || t->n - pos - 7 < (len = u2le(r + 5)))
          return fail(c, SIFT_ETRUNC, "%s: thread record cut short at byte %zu", pos, "trace");
        if ((st = add_thread(c, u2le(r + 3), (const char *)r + 7, len)) != SIFT_OK)
          return st;
        pos += 7 + len;
        break;
      }
      case 3: {  /* summary: u4 length, a text block */
        size_t len;
        if (t->n - pos < 7 || t->n - pos - 7 < (len = u4le(r + 3)))
          return fail(c, SIFT_ETRUNC, "%s: summary record cut short at byte %zu", pos, "trace");
        if ((st = text_block(c, pos + 7, pos + 7 + len, &used)) != SIFT_OK) return st;
        pos += 7 + len;
        break;
      }
      default:
        snprintf(c->err, c->errsize, "trace: unknown streaming record opcode %u at byte %zu",
                 r[2], pos + 2);
        return SIFT_EBADTAG;
    }
  }
  t->records = k;
  return SIFT_OK;
}

/* }====================================================== */


/*
** {======================================================
** Call trees
** =======================================================
*/

static int cmp_id (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_method (const void *a, const void *b) {
  uint64_t x = ((const mt_Method *)a)->id, y = ((const mt_Method *)b)->id;
  return x < y ? -1 : x > y;
}

const mt_Method *mt_find_method (const mt_Trace *t, uint64_t id) {
  uint32_t lo = 0, hi = t->nmethods;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->methods[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < t->nmethods && t->methods[lo].id == id ? &t->methods[lo] : NULL;
}

/* the method number of an id (all ids are in the table by then) */
static uint32_t method_of (const mt_Trace *t, uint64_t id) {
  if (id / 4 < t->ndense && t->dense[id / 4] != MT_NONE) return t->dense[id / 4];
  return (uint32_t)(mt_find_method(t, id) - t->methods);
}

/* ART numbers methods from 0 in steps of 4: a direct map then */
static int make_dense (mt_Trace *t) {
  uint64_t top = t->nmethods ? t->methods[t->nmethods - 1].id / 4 + 1 : 0;
  uint32_t i;
  if (top == 0 || top > (uint64_t)t->nmethods * 4 + 1024) return 1;  /* sparse (pointers) */
  if (!ALLOC(t->dense, top)) return 0;
  memset(t->dense, 0xFF, (size_t)top * sizeof *t->dense);
  t->ndense = (uint32_t)top;
  for (i = 0; i < t->nmethods; i++)
    if (t->methods[i].id % 4 == 0) t->dense[t->methods[i].id / 4] = i;
  return 1;
}

/* the first method record at or after pos (n when none); streaming files'
   inline records are stepped over (mt_build has checked their lengths) */
static size_t next_record (const mt_Trace *t, size_t pos) {
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

/*
** One pass before the call trees: each thread's records are counted (the
** threads the file does not name are added; slot maps a thread id to its
** number), and the ids the records use and the file does not name become
** methods with no line (named unknown@0x... above).
*/
static sift_Status survey (Ctx *c, uint32_t *slot) {
  mt_Trace *t = c->t;
  uint64_t *ids = NULL;
  uint32_t nids = 0, cap = 0, k;
  int tw = t->version == 1 ? 1 : 2;
  size_t pos, dropped = 0;
  sift_Status s;
  for (k = 0; k < t->nthreads; k++) slot[t->threads[k].tid] = k;
  EACH_RECORD(t, pos) {
    uint64_t id = u4le(t->p + pos + tw) & ~(uint32_t)3;
    uint32_t tid = rec_thread(t, t->p + pos);
    dropped = drop_behind(t, dropped, pos);
    if (slot[tid] == MT_NONE) {
      if ((s = add_thread(c, tid, NULL, 0)) != SIFT_OK) return free(ids), s;
      slot[tid] = t->nthreads - 1;
    }
    t->threads[slot[tid]].records++;
    if ((id / 4 < t->ndense && t->dense[id / 4] != MT_NONE) || mt_find_method(t, id)) continue;
    if (nids > 0 && ids[nids - 1] == id) continue;
    if (!GROW(ids, nids, cap)) return free(ids), SIFT_ENOMEM;
    ids[nids++] = id;
  }
  if (nids > 1) qsort(ids, nids, sizeof *ids, cmp_id);
  for (k = 0; k < nids; k++) {
    if (k > 0 && ids[k] == ids[k - 1]) continue;
    if (!GROW(t->methods, t->nmethods, t->methodcap)) return free(ids), SIFT_ENOMEM;
    memset(&t->methods[t->nmethods], 0, sizeof *t->methods);
    t->methods[t->nmethods++].id = ids[k];
    t->unknown++;
  }
  free(ids);
  drop_all(t);
  if (t->unknown) qsort(t->methods, t->nmethods, sizeof *t->methods, cmp_method);
  return SIFT_OK;
}

static uint32_t mix (uint32_t a, uint32_t b, uint32_t cap) {
  return (uint32_t)((((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* children past this many are found through the table */
#define SCAN 8

static void hash_insert (mt_Trace *t, uint32_t parent, uint32_t node) {
  uint32_t s = mix(parent, t->nodes[node].method, t->hashcap);
  while (t->hash[s].node != MT_NONE) s = (s + 1) & (t->hashcap - 1);
  t->hash[s].parent = parent;
  t->hash[s].node = node;
  t->nhashed++;
}

/* put a node's children in the table */
static void hash_children (mt_Trace *t, uint32_t parent) {
  uint32_t k;
  for (k = t->nodes[parent].child; k != MT_NONE; k = t->nodes[k].next) hash_insert(t, parent, k);
}

/* does the node have more children than a scan covers? */
static int wide (const mt_Trace *t, uint32_t node) {
  uint32_t k = t->nodes[node].child;
  int n = 0;
  for (; k != MT_NONE; k = t->nodes[k].next)
    if (++n > SCAN) return 1;
  return 0;
}

/* room for extra more entries (the table stays at most half full): a
   bigger table, refilled with the children of every wide node */
static int hash_reserve (mt_Trace *t, uint32_t extra) {
  uint64_t need = ((uint64_t)t->nhashed + extra) * 2;
  uint32_t cap = t->hashcap ? t->hashcap : 1024, i;
  mt_Edge *h;
  if (need <= t->hashcap) return 1;
  while (cap < need) {
    if (cap > UINT32_MAX / 2) return 0;
    cap *= 2;
  }
  if ((h = (mt_Edge *)malloc((size_t)cap * sizeof *h)) == NULL) return 0;
  memset(h, 0xFF, (size_t)cap * sizeof *h);
  free(t->hash);
  t->hash = h;
  t->hashcap = cap;
  t->nhashed = 0;
  for (i = 0; i < t->nnodes; i++)
    if (wide(t, i)) hash_children(t, i);
  return 1;
}

static uint32_t new_node (mt_Trace *t, uint32_t parent, uint32_t method) {
  mt_Node *nd;
  if (!GROW(t->nodes, t->nnodes, t->nodecap)) return MT_NONE;
  nd = &t->nodes[t->nnodes];
  memset(nd, 0, sizeof *nd);
  nd->method = method;
  nd->child = nd->next = MT_NONE;
  if (parent != MT_NONE) {
    nd->next = t->nodes[parent].child;
    t->nodes[parent].child = t->nnodes;
  }
  return t->nnodes++;
}

/*
** The child of parent for method, made when new. The first SCAN siblings
** are scanned, and a found child moves to the front, so calls made again
** are found at once. A node with more children also keeps them in the
** table, so it costs no more than one with few.
*/
static uint32_t child (mt_Trace *t, uint32_t parent, uint32_t method) {
  uint32_t k = t->nodes[parent].child, prev = MT_NONE, s;
  int n;
  for (n = 0; k != MT_NONE && n < SCAN; n++, prev = k, k = t->nodes[k].next)
    if (t->nodes[k].method == method) {
      if (prev != MT_NONE) {
        t->nodes[prev].next = t->nodes[k].next;
        t->nodes[k].next = t->nodes[parent].child;
        t->nodes[parent].child = k;
      }
      return k;
    }
  if (k != MT_NONE) {  /* a wide node: ask the table */
    for (s = mix(parent, method, t->hashcap); (k = t->hash[s].node) != MT_NONE; s = (s + 1) & (t->hashcap - 1))
      if (t->hash[s].parent == parent && t->nodes[k].method == method) return k;
    if (!hash_reserve(t, 1) || (k = new_node(t, parent, method)) == MT_NONE) return MT_NONE;
    hash_insert(t, parent, k);
    return k;
  }
  if (n == SCAN && !hash_reserve(t, SCAN + 1)) return MT_NONE;
  if ((k = new_node(t, parent, method)) == MT_NONE) return MT_NONE;
  if (n == SCAN) hash_children(t, parent);  /* it has just become wide */
  return k;
}

/*
** How many frames of a method each thread has on its stack: a table from
** (thread, method) to entries of an array that only grows, so a frame can
** keep its entry's index.
*/
typedef struct Active {
  uint32_t thread, method, count;
} Active;

typedef struct Actives {
  Active *a;
  uint32_t n, cap;
  uint32_t *slot;       /* open addressing, at most half full */
  uint32_t slotcap;
} Actives;

static int actives_grow (Actives *x) {
  uint32_t cap = x->slotcap ? x->slotcap * 2 : 1024, i, s;
  uint32_t *slot;
  if (cap < x->slotcap || (slot = (uint32_t *)malloc((size_t)cap * sizeof *slot)) == NULL) return 0;
  memset(slot, 0xFF, (size_t)cap * sizeof *slot);
  for (i = 0; i < x->n; i++) {
    for (s = mix(x->a[i].thread, x->a[i].method, cap); slot[s] != MT_NONE; s = (s + 1) & (cap - 1)) {}
    slot[s] = i;
  }
  free(x->slot);
  x->slot = slot;
  x->slotcap = cap;
  return 1;
}

/* the entry of (thread, method), made when new; MT_NONE without memory */
static uint32_t active (Actives *x, uint32_t thread, uint32_t method) {
  uint32_t s, i;
  if ((uint64_t)x->n * 2 + 2 > x->slotcap && !actives_grow(x)) return MT_NONE;
  for (s = mix(thread, method, x->slotcap); (i = x->slot[s]) != MT_NONE; s = (s + 1) & (x->slotcap - 1))
    if (x->a[i].thread == thread && x->a[i].method == method) return i;
  if (!GROW(x->a, x->n, x->cap)) return MT_NONE;
  x->a[x->n].thread = thread;
  x->a[x->n].method = method;
  x->a[x->n].count = 0;
  x->slot[s] = x->n;
  return x->n++;
}

typedef struct Frame {
  uint32_t node, method, active;
  uint64_t at[2];
} Frame;

typedef struct Run {  /* a thread's state during the pass */
  Frame *f;             /* its stack */
  uint32_t n, cap;
  int started;
  uint64_t last[2];     /* the times of its last event */
} Run;

/* the microseconds from then to now on a 32-bit counter that may wrap */
static uint64_t since (uint64_t now, uint64_t then) {
  return (uint32_t)(now - then);
}

static void close_frame (mt_Trace *t, Actives *x, Run *r, const uint64_t now[2]) {
  Frame *f = &r->f[--r->n];
  mt_Method *m = &t->methods[f->method];
  Active *a = &x->a[f->active];
  int k;
  for (k = 0; k < 2; k++) {
    uint64_t d = since(now[k], f->at[k]);
    t->nodes[f->node].incl[k] += d;
    if (a->count == 1) m->incl[k] += d;
  }
  a->count--;
}

/*
** An exit with no entry: the method was running when tracing began, so it
** becomes the caller of what the thread ran so far, entered at time 0 and
** closed now. The root moves to a new node and its old node becomes the
** orphan: the root's children stay where they are, and so do their entries
** in the child table.
*/
static sift_Status orphan_exit (mt_Trace *t, mt_Thread *th, uint32_t method,
                                const uint64_t now[2], uint32_t *out) {
  uint32_t orphan = th->root, root = new_node(t, MT_NONE, MT_NONE), kids;
  mt_Node *o;
  int i;
  if (root == MT_NONE) return SIFT_ENOMEM;
  o = &t->nodes[orphan];
  kids = o->child;
  t->nodes[root] = *o;  /* its times so far, method MT_NONE */
  t->nodes[root].child = orphan;
  memset(o, 0, sizeof *o);
  o->method = method;
  o->child = kids;
  o->next = MT_NONE;
  o->calls = 1;
  th->root = root;
  t->methods[method].calls++;
  for (i = 0; i < 2; i++) {
    o->incl[i] += now[i];
    t->methods[method].incl[i] += now[i];
  }
  t->orphans++;
  *out = orphan;
  return SIFT_OK;
}

/* the time since the thread's last event goes to a node and its method */
static void charge_method (mt_Trace *t, uint32_t node, uint32_t method,
                           const uint64_t now[2], const uint64_t last[2]) {
  int k;
  for (k = 0; k < 2; k++) {
    uint64_t d = since(now[k], last[k]);
    t->nodes[node].excl[k] += d;
    if (method != MT_NONE) t->methods[method].excl[k] += d;
  }
}

/* ... to the top of the stack (node is its node, or the thread's root) */
static void charge (mt_Trace *t, const Run *r, uint32_t node,
                    const uint64_t now[2], const uint64_t last[2]) {
  charge_method(t, node, r->n ? r->f[r->n - 1].method : MT_NONE, now, last);
}

/* one record of thread number i */
static sift_Status step (mt_Trace *t, Actives *x, uint32_t i, Run *r,
                         const unsigned char *rec) {
  mt_Thread *th = &t->threads[i];
  uint64_t now[2];
  uint32_t md = rec_read(t, rec, now), action = md & 3;
  uint32_t method = method_of(t, md & ~(uint32_t)3), a, node;
  sift_Status s;
  if (!r->started) {
    r->started = 1;
    th->first[0] = r->last[0] = now[0];
    th->first[1] = r->last[1] = now[1];
  }
  if (action == 0) {  /* enter: the gap was the caller's */
    uint32_t parent = r->n ? r->f[r->n - 1].node : th->root;
    node = child(t, parent, method);
    charge(t, r, parent, now, r->last);
    if (node == MT_NONE || (a = active(x, i, method)) == MT_NONE || !GROW(r->f, r->n, r->cap))
      return SIFT_ENOMEM;
    t->nodes[node].calls++;
    if (x->a[a].count++ > 0) t->methods[method].recursive++;
    else t->methods[method].calls++;
    r->f[r->n].node = node;
    r->f[r->n].method = method;
    r->f[r->n].active = a;
    r->f[r->n].at[0] = now[0];
    r->f[r->n].at[1] = now[1];
    r->n++;
  }
  else {  /* exit, unroll (exit by exception), or the unused 3 */
    uint32_t d = r->n;
    if (d == 0 || r->f[d - 1].method != method) {
      /* the method's frame, when it has one: the scan pops what it passes,
         so it costs no more than the frames it closes */
      if ((a = active(x, i, method)) == MT_NONE) return SIFT_ENOMEM;
      if (x->a[a].count == 0) d = 0;
      else while (d > 0 && r->f[d - 1].method != method) d--;
    }
    if (d == 0) {  /* the gap was the orphan's: it was running */
      if ((s = orphan_exit(t, th, method, now, &node)) != SIFT_OK) return s;
      if (r->n) t->anomalies++;
      charge_method(t, node, method, now, r->last);
    }
    else {
      charge(t, r, r->f[r->n - 1].node, now, r->last);
      if (d != r->n) t->anomalies++;
      while (r->n >= d) close_frame(t, x, r, now);
    }
  }
  r->last[0] = now[0];
  r->last[1] = now[1];
  return SIFT_OK;
}

/* }====================================================== */


sift_Status mt_build (mt_Trace *t, const unsigned char *p, size_t n, int mapped,
                      sift_Progress *progress, char *err, size_t errsize) {
  Ctx c;
  sift_Status s;
  uint64_t done = 0;
  size_t dropped = 0;  /* pages before this offset are given back */
  uint32_t i, *slot = NULL;  /* thread id -> thread number */
  size_t pos;
  Run *runs = NULL;
  Actives x;
  memset(t, 0, sizeof *t);
  memset(&x, 0, sizeof x);
  t->p = p;
  t->n = n;
  t->mapped = mapped;
  c.t = t;
  c.err = err;
  c.errsize = errsize;
  /* the text block and the binary header */
  if (n >= 8 && memcmp(p, "*version", 8) == 0) {
    size_t used;
    if ((s = text_block(&c, 0, n, &used)) != SIFT_OK) return s;
    if (used == 0) return fail(&c, SIFT_ETRUNC, "%s: the text header has no '*end' line (%zu bytes)", n, "trace");
    if ((s = binary_header(&c, used)) != SIFT_OK) return s;
    if (t->streaming) return fail(&c, SIFT_EHEADER, "%s: streaming header after a text block at byte %zu", used, "trace");
  }
  else if (n >= 4 && memcmp(p, "SLOW", 4) == 0) {
    if ((s = binary_header(&c, 0)) != SIFT_OK) return s;
    if (!t->streaming) return fail(&c, SIFT_EHEADER, "%s: regular trace data without its text header (byte %zu)", 0, "trace");
  }
  else return fail(&c, SIFT_EUNKNOWN, "%s: not an Android method trace (byte %zu)", 0, "trace");
  if (t->dual && t->recsize < (unsigned)(t->version == 1 ? 13 : 14))
    t->dual = 0;  /* a dual clock needs room for the second time */
  /* the records' offsets */
  if (t->streaming) {
    if ((s = walk_streaming(&c)) != SIFT_OK) return s;
    drop_all(t);
    if (t->header == NULL) return fail(&c, SIFT_ETRUNC, "%s: streaming trace has no summary (ends at byte %zu)", n, "trace");
  }
  else {
    if ((n - t->data) % t->recsize != 0)
      return fail(&c, SIFT_ETRUNC, "%s: the last record is cut short at byte %zu",
                  t->data + (n - t->data) / t->recsize * t->recsize, "trace");
    t->records = (n - t->data) / t->recsize;
  }
  if (t->nmethods > 1) qsort(t->methods, t->nmethods, sizeof *t->methods, cmp_method);
  if (n > UINT32_MAX) {
    snprintf(err, errsize, "trace: files over 4 GiB are not read yet (%zu bytes)", n);
    return SIFT_EUNSUPPORTED;
  }
  if (!make_dense(t) || !ALLOC(slot, 65536)) { s = SIFT_ENOMEM; goto out; }
  memset(slot, 0xFF, 65536 * sizeof *slot);
  if ((s = survey(&c, slot)) != SIFT_OK) goto out;
  if (t->unknown > 0) {  /* method numbers moved */
    free(t->dense);
    t->dense = NULL;
    t->ndense = 0;
    if (!make_dense(t)) { s = SIFT_ENOMEM; goto out; }
  }
  /* nodes: at most one per entry (half the records, as entries pair with
     exits) and a root per thread; calloc'd pages cost nothing until used */
  t->nodecap = (uint32_t)((t->records / 2 + t->nthreads + 64) < UINT32_MAX / 2
                          ? t->records / 2 + t->nthreads + 64 : UINT32_MAX / 2);
  if (!ALLOC(t->nodes, t->nodecap) || !ALLOC(runs, t->nthreads)) { s = SIFT_ENOMEM; goto out; }
  for (i = 0; i < t->nthreads; i++)
    if ((t->threads[i].root = new_node(t, MT_NONE, MT_NONE)) == MT_NONE) { s = SIFT_ENOMEM; goto out; }
  /* the records in file order, each on its thread's stack */
  EACH_RECORD(t, pos) {
    uint32_t k = slot[rec_thread(t, p + pos)];
    if ((s = step(t, &x, k, &runs[k], p + pos)) != SIFT_OK) goto out;
    if (!sift_progress(progress, ++done)) { s = SIFT_ECANCEL; goto out; }
    dropped = drop_behind(t, dropped, pos);
  }
  drop_all(t);
  /* frames still open close at their thread's last event */
  for (i = 0; i < t->nthreads; i++) {
    Run *r = &runs[i];
    t->threads[i].last[0] = r->last[0];
    t->threads[i].last[1] = r->last[1];
    while (r->n) close_frame(t, &x, r, r->last);
  }
  s = SIFT_OK;
out:
  if (s == SIFT_ENOMEM) snprintf(err, errsize, "trace: out of memory");
  if (s == SIFT_ECANCEL) snprintf(err, errsize, "trace: cancelled");
  for (i = 0; runs && i < t->nthreads; i++) free(runs[i].f);
  free(runs);
  free(slot);
  free(x.a);
  free(x.slot);
  return s;
}

void mt_free (mt_Trace *t) {
  free(t->dense);
  free(t->methods);
  free(t->threads);
  free(t->nodes);
  free(t->hash);
  free(t->by_thread);
  free(t->thread_first);
  memset(t, 0, sizeof *t);
}

size_t mt_method_field (const mt_Method *m, int k, const char **s) {
  const char *p = m->line, *end = m->line ? m->line + m->len : NULL;
  if (p == NULL) return 0;
  for (; k > 0; k--) {
    const char *tab = (const char *)memchr(p, '\t', (size_t)(end - p));
    if (tab == NULL) return 0;
    p = tab + 1;
  }
  *s = p;
  {
    const char *tab = (const char *)memchr(p, '\t', (size_t)(end - p));
    return (size_t)((tab ? tab : end) - p);
  }
}

/*
** Each method record of one thread, in file order: fn(ud, method number,
** action, times). The file was checked by mt_build, so the walk trusts the
** lengths it reads. Stops early when fn returns 0.
*/
/* group the records' offsets by thread (a counting sort: two passes);
   0 when memory is short (the caller then scans the file) */
static int group_by_thread (mt_Trace *t) {
  size_t pos;
  uint32_t k;
  if (t->by_thread) return 1;
  if (!(t->thread_first = (uint32_t *)calloc(65536 + 1, sizeof *t->thread_first))) return 0;
  EACH_RECORD(t, pos) t->thread_first[rec_thread(t, t->p + pos) + 1]++;
  for (k = 0; k < 65536; k++) t->thread_first[k + 1] += t->thread_first[k];
  t->by_thread = (uint32_t *)malloc((t->thread_first[65536] + 1) * sizeof *t->by_thread);
  if (t->by_thread == NULL) {
    free(t->thread_first);
    t->thread_first = NULL;
    return 0;
  }
  EACH_RECORD(t, pos) t->by_thread[t->thread_first[rec_thread(t, t->p + pos)]++] = (uint32_t)pos;
  for (k = 65536; k > 0; k--) t->thread_first[k] = t->thread_first[k - 1];  /* back to starts */
  t->thread_first[0] = 0;
  return 1;
}

void mt_each_record (mt_Trace *t, uint32_t tid, mt_RecordFn fn, void *ud) {
  size_t pos, dropped = 0;
  uint64_t now[2];
  if (tid < 65536 && group_by_thread(t)) {  /* this thread's records only */
    uint32_t i;
    for (i = t->thread_first[tid]; i < t->thread_first[tid + 1]; i++) {
      uint32_t md = rec_read(t, t->p + t->by_thread[i], now);
      if (!fn(ud, method_of(t, md & ~(uint32_t)3), (int)(md & 3), now)) return;
    }
    return;
  }
  EACH_RECORD(t, pos) {
    dropped = drop_behind(t, dropped, pos);
    if (rec_thread(t, t->p + pos) == tid) {
      uint32_t md = rec_read(t, t->p + pos, now);
      if (!fn(ud, method_of(t, md & ~(uint32_t)3), (int)(md & 3), now)) return;
    }
  }
}
