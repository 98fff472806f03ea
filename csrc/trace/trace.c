/*
** trace.c
** Android method traces: the decoder (see trace.h for the rules). The
** text block's methods and threads, the "SLOW" binary header, a streaming
** file's inline records; calltree.c then builds the call trees, and this
** file walks one thread's records on demand.
** Facts: ../shared/formats/ANDROID-TRACE.md.
*/

#include <stdlib.h>
#include <string.h>

#include "core/big.h"
#include "core/search.h"
#include "trace_build.h"


int mtb_grow (void **arr, uint32_t *cap, size_t size) {
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
    return sift_fail(c->err, SIFT_EHEADER, "trace at byte %zu: a method line needs tab-separated "
                "id, class and name", at);
  if (!parse_id(s, (size_t)(tab - s), &id))
    return sift_fail(c->err, SIFT_EHEADER, "trace at byte %zu: bad method id", at);
  if (!GROW(t->methods, t->nmethods, t->methodcap)) return sift_fail(c->err, SIFT_ENOMEM, "trace: out of memory");
  t->methods[t->nmethods].id = id & ~(uint64_t)3;
  t->methods[t->nmethods].line = tab + 1;
  t->methods[t->nmethods].len = (uint32_t)(len - (size_t)(tab + 1 - s));
  t->nmethods++;
  return SIFT_OK;
}

sift_Status mtb_add_thread (Ctx *c, uint32_t tid, const char *name, size_t len) {
  mt_Trace *t = c->t;
  uint32_t i;
  for (i = 0; i < t->nthreads; i++)
    if (t->threads[i].tid == tid) break;
  if (i == t->nthreads) {
    if (!GROW(t->threads, t->nthreads, t->threadcap)) return sift_fail(c->err, SIFT_ENOMEM, "trace: out of memory");
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
        return sift_fail(c->err, SIFT_EHEADER, "trace at byte %zu: a thread line needs a tab "
                    "between id and name", at);
      for (i = 0; s + i < tab && i < 10; i++) {
        if (s[i] < '0' || s[i] > '9')
          return sift_fail(c->err, SIFT_EHEADER, "trace at byte %zu: bad thread id", at);
        tid = tid * 10 + (uint64_t)(s[i] - '0');
      }
      if (tid > 0xFFFF) return sift_fail(c->err, SIFT_EHEADER, "trace at byte %zu: thread id over 65535", at);
      if ((st = mtb_add_thread(c, (uint32_t)tid, tab + 1, len - (size_t)(tab + 1 - s))) != SIFT_OK)
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
    return sift_fail(c->err, SIFT_EHEADER, "trace: no 'SLOW' binary header at byte %zu", at);
  version = u2le(p + 4);
  t->streaming = (version & 0xF0) == 0xF0;
  t->version = (int)(version & 0x0F);
  if (version > 0xFF || t->version < 1 || t->version > 3) {
    return sift_fail(c->err, SIFT_EUNSUPPORTED, "trace: binary version %u at byte %zu is not read "
                     "(sift reads 1-3 and streaming 0xF2/0xF3)", version, at + 4);
  }
  t->start_us = (uint64_t)u4le(p + 8) | (uint64_t)u4le(p + 12) << 32;
  t->data = at + u2le(p + 6);
  if (t->version >= 3) {
    if (t->n - at < 18) return sift_fail(c->err, SIFT_ETRUNC, "trace: header ends at byte %zu", t->n);
    t->recsize = u2le(p + 16);
  }
  else t->recsize = t->version == 1 ? 9 : 10;
  if (t->recsize < (t->version == 1 ? 9u : 10u) || t->data > t->n) {
    return sift_fail(c->err, SIFT_EHEADER, "trace: bad binary header at byte %zu: data offset %u, "
                     "record size %u", at, u2le(p + 6), t->recsize);
  }
  return SIFT_OK;
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
    if (t->n - pos < 2) return sift_fail(c->err, SIFT_ETRUNC, "trace: record cut short at byte %zu", pos);
    if (u2le(r) != 0) {
      if (t->n - pos < t->recsize)
        return sift_fail(c->err, SIFT_ETRUNC, "trace: record cut short at byte %zu", pos);
      k++;
      pos += t->recsize;
      continue;
    }
    if (t->n - pos < 3) return sift_fail(c->err, SIFT_ETRUNC, "trace: record cut short at byte %zu", pos);
    switch (r[2]) {
      case 1: {  /* new method: u2 length, the method line */
        size_t len;
        if (t->n - pos < 5 || t->n - pos - 5 < (len = u2le(r + 3)))
          return sift_fail(c->err, SIFT_ETRUNC, "trace: method record cut short at byte %zu", pos);
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
          return sift_fail(c->err, SIFT_ETRUNC, "trace: thread record cut short at byte %zu", pos);
        if ((st = mtb_add_thread(c, u2le(r + 3), (const char *)r + 7, len)) != SIFT_OK)
          return st;
        pos += 7 + len;
        break;
      }
      case 3: {  /* summary: u4 length, a text block */
        size_t len;
        if (t->n - pos < 7 || t->n - pos - 7 < (len = u4le(r + 3)))
          return sift_fail(c->err, SIFT_ETRUNC, "trace: summary record cut short at byte %zu", pos);
        if ((st = text_block(c, pos + 7, pos + 7 + len, &used)) != SIFT_OK) return st;
        pos += 7 + len;
        break;
      }
      default:
        return sift_fail(c->err, SIFT_EBADTAG, "trace: unknown streaming record opcode %u at byte %zu",
                         r[2], pos + 2);
    }
  }
  t->records = k;
  return SIFT_OK;
}

/* }====================================================== */


/*
** {======================================================
** The method table
** =======================================================
*/


int mtb_cmp_method (const void *a, const void *b) {
  uint64_t x = ((const mt_Method *)a)->id, y = ((const mt_Method *)b)->id;
  return x < y ? -1 : x > y;
}

const mt_Method *mt_find_method (const mt_Trace *t, uint64_t id) {
  uint64_t lo = 0, hi = t->nmethods;
  SIFT_LOWER_BOUND(lo, hi, mid, t->methods[mid].id < id);
  return lo < t->nmethods && t->methods[lo].id == id ? &t->methods[lo] : NULL;
}


sift_Status mt_build (mt_Trace *t, const unsigned char *p, size_t n, int mapped,
                      sift_Progress *progress, sift_Error *err) {
  Ctx c;
  sift_Status s;
  memset(t, 0, sizeof *t);
  t->p = p;
  t->n = n;
  t->mapped = mapped;
  c.t = t;
  c.err = err;
  /* the text block and the binary header */
  if (n >= 8 && memcmp(p, "*version", 8) == 0) {
    size_t used;
    if ((s = text_block(&c, 0, n, &used)) != SIFT_OK) return s;
    if (used == 0) return sift_fail(c.err, SIFT_ETRUNC, "trace: the text header has no '*end' line (%zu bytes)", n);
    if ((s = binary_header(&c, used)) != SIFT_OK) return s;
    if (t->streaming) return sift_fail(c.err, SIFT_EHEADER, "trace: streaming header after a text block at byte %zu", used);
  }
  else if (n >= 4 && memcmp(p, "SLOW", 4) == 0) {
    if ((s = binary_header(&c, 0)) != SIFT_OK) return s;
    if (!t->streaming) return sift_fail(c.err, SIFT_EHEADER, "trace: regular trace data without its text header (byte 0)");
  }
  else return sift_fail(c.err, SIFT_EUNKNOWN, "trace: not an Android method trace (byte 0)");
  if (t->dual && t->recsize < (unsigned)(t->version == 1 ? 13 : 14))
    t->dual = 0;  /* a dual clock needs room for the second time */
  /* the records' offsets */
  if (t->streaming) {
    if ((s = walk_streaming(&c)) != SIFT_OK) return s;
    drop_all(t);
    if (t->header == NULL) return sift_fail(c.err, SIFT_ETRUNC, "trace: streaming trace has no summary (ends at byte %zu)", n);
  }
  else {
    if ((n - t->data) % t->recsize != 0)
      return sift_fail(c.err, SIFT_ETRUNC, "trace: the last record is cut short at byte %zu",
                       t->data + (n - t->data) / t->recsize * t->recsize);
    t->records = (n - t->data) / t->recsize;
  }
  if (t->nmethods > 1) qsort(t->methods, t->nmethods, sizeof *t->methods, mtb_cmp_method);
  if (n > UINT32_MAX)
    return sift_fail(err, SIFT_EUNSUPPORTED, "trace: files over 4 GiB are not read yet (%zu bytes)", n);
  return mtb_call_trees(&c, progress);
}

void mt_free (mt_Trace *t) {
  free(t->dense);
  free(t->methods);
  free(t->threads);
  sift_big_free(t->nodes);
  sift_idmap_free(&t->children);
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
      if (!fn(ud, mtb_method_of(t, md & ~(uint32_t)3), (int)(md & 3), now)) return;
    }
    return;
  }
  EACH_RECORD(t, pos) {
    dropped = drop_behind(t, dropped, pos);
    if (rec_thread(t, t->p + pos) == tid) {
      uint32_t md = rec_read(t, t->p + pos, now);
      if (!fn(ud, mtb_method_of(t, md & ~(uint32_t)3), (int)(md & 3), now)) return;
    }
  }
}
