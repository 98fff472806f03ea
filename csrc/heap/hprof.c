/*
** hprof.c
** Decode an HPROF file into the compact index of hprof.h, in one pass over
** the mapped bytes (after a quick walk of the top-level records to count
** the heap dumps), then sort and link what was collected.
**
** File: "JAVA PROFILE 1.0.x" NUL, u4 id size, u8 ms timestamp, records of
** u1 tag, u4 time delta, u4 length, body (all big-endian). Heap dumps are
** one HEAP_DUMP (0x0C) record, or HEAP_DUMP_SEGMENTs (0x1C) up to a
** HEAP_DUMP_END (0x2C); their bodies are sub-records (hprof.h, HPROF.md).
*/

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof.h"
#include "core/reader.h"

/* top-level record tags */
enum {
  TAG_STRING = 0x01, TAG_LOAD_CLASS = 0x02, TAG_STACK_FRAME = 0x04,
  TAG_STACK_TRACE = 0x05, TAG_START_THREAD = 0x0A, TAG_HEAP_DUMP = 0x0C,
  TAG_HEAP_DUMP_SEGMENT = 0x1C, TAG_HEAP_DUMP_END = 0x2C
};

/* heap sub-record tags that are not objects */
enum {
  SUB_ROOT_UNKNOWN = 0xFF, SUB_ROOT_JNI_GLOBAL = 0x01,
  SUB_ROOT_JNI_LOCAL = 0x02, SUB_ROOT_JAVA_FRAME = 0x03,
  SUB_ROOT_NATIVE_STACK = 0x04, SUB_ROOT_STICKY_CLASS = 0x05,
  SUB_ROOT_THREAD_BLOCK = 0x06, SUB_ROOT_MONITOR_USED = 0x07,
  SUB_ROOT_THREAD_OBJECT = 0x08, SUB_ROOT_INTERNED_STRING = 0x89,
  SUB_ROOT_FINALIZING = 0x8A, SUB_ROOT_DEBUGGER = 0x8B,
  SUB_ROOT_REFERENCE_CLEANUP = 0x8C, SUB_ROOT_VM_INTERNAL = 0x8D,
  SUB_ROOT_JNI_MONITOR = 0x8E, SUB_ROOT_UNREACHABLE = 0x90,
  SUB_HEAP_DUMP_INFO = 0xFE
};


/*
** {======================================================
** Small helpers
** =======================================================
*/

int hp_type_size (const hp_Heap *h, int t) {
  static const unsigned char sizes[16] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
  if (t == HP_OBJECT) return h->idsize;
  return t >= 0 && t < 16 ? sizes[t] : 0;
}

uint64_t hp_id_at (const hp_Heap *h, const unsigned char *p) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < h->idsize; i++) v = v << 8 | p[i];
  return v;
}

static uint32_t u4_at (const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
       | p[3];
}

static int read_id (sift_Reader *r, int idsize, uint64_t *v) {
  return sift_rd_uint(r, idsize, 1, "id", v);
}

/* a growable array: push one element, doubling the capacity */
#define PUSH(arr, n, cap, value) \
  do { \
    if ((n) == (cap)) { \
      uint64_t ncap_ = (cap) ? (cap) * 2 : 1024; \
      void *na_ = realloc((arr), ncap_ * sizeof *(arr)); \
      if (na_ == NULL) return nomem(b); \
      (arr) = na_; \
      (cap) = ncap_; \
    } \
    (arr)[(n)++] = (value); \
  } while (0)

/* the state of one build */
typedef struct Build {
  hp_Heap *h;
  sift_Progress *pr;
  char *err;
  size_t errsize;
  uint64_t capobjs, capclasses, capstrings, capframes, captraces, caploads,
           caproots, capthreads, capheaps;  /* capacities of the arrays */
  uint32_t heap;          /* current Android heap */
  int segmented, ended;   /* the dump is segments; its HEAP_DUMP_END came */
  /* the class ids instances name (a set: open addressing, 0 = empty) */
  uint64_t *named, nnamed, named_mask, last_named;
} Build;

static sift_Status fail (Build *b, sift_Status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->err, b->errsize, fmt, ap);
  va_end(ap);
  return s;
}

static sift_Status nomem (Build *b) {
  return fail(b, SIFT_ENOMEM, "not enough memory to index the dump");
}

static void warn (hp_Heap *h, const char *fmt, ...) {
  va_list ap;
  if (h->nwarn == HP_MAXWARN) return;
  va_start(ap, fmt);
  vsnprintf(h->warn[h->nwarn++], sizeof h->warn[0], fmt, ap);
  va_end(ap);
}

/* the reader's failure as an error message */
static sift_Status readfail (Build *b, const sift_Reader *r,
                             const char *where) {
  char msg[200];
  sift_rd_message(r, msg, sizeof msg);
  return fail(b, r->status, "%s: %s", where, msg);
}

/* }====================================================== */


/*
** {======================================================
** Heap dump sub-records
** =======================================================
*/

static sift_Status add_root (Build *b, int kind, uint64_t id,
                             uint32_t thread, uint32_t frame) {
  hp_Heap *h = b->h;
  hp_Root root;
  root.id = id;
  root.thread = thread;
  root.frame = frame;
  root.kind = (uint8_t)kind;
  PUSH(h->roots, h->nroots, b->caproots, root);
  h->roots_by_kind[kind]++;
  return SIFT_OK;
}

static uint64_t hash_id (uint64_t id);

/* remember a class id an instance names (consecutive repeats are cheap) */
static sift_Status name_class (Build *b, uint64_t id) {
  uint64_t slot;
  if (id == b->last_named || id == 0) return SIFT_OK;
  b->last_named = id;
  if (2 * (b->nnamed + 1) > b->named_mask + 1) {  /* grow to keep it sparse */
    uint64_t size = b->named ? 2 * (b->named_mask + 1) : 1024, i;
    uint64_t *old = b->named, oldsize = b->named ? b->named_mask + 1 : 0;
    b->named = (uint64_t *)calloc(size, sizeof(uint64_t));
    if (b->named == NULL) {
      b->named = old;
      return nomem(b);
    }
    b->named_mask = size - 1;
    for (i = 0; i < oldsize; i++)
      if (old[i]) {
        slot = hash_id(old[i]) & b->named_mask;
        while (b->named[slot]) slot = (slot + 1) & b->named_mask;
        b->named[slot] = old[i];
      }
    free(old);
  }
  for (slot = hash_id(id) & b->named_mask; b->named[slot];
       slot = (slot + 1) & b->named_mask)
    if (b->named[slot] == id) return SIFT_OK;
  b->named[slot] = id;
  b->nnamed++;
  return SIFT_OK;
}

static inline sift_Status add_object (Build *b, uint64_t id, uint64_t off) {
  hp_Heap *h = b->h;
  hp_Idx o;
  o.id = id;
  o.off = off;
  PUSH(h->objs, h->nobjs, b->capobjs, o);
  return SIFT_OK;
}

/* skip a constant-pool or static value of basic type t */
static int skip_value (sift_Reader *r, const hp_Heap *h, uint8_t t) {
  int size = hp_type_size(h, t);
  if (size == 0) return sift_rd_fail(r, SIFT_ECORRUPT, "basic type", 0);
  return sift_rd_skip(r, (uint64_t)size);
}

/* a CLASS_DUMP; *ok is 0 when the reader failed (its status says why) */
static sift_Status class_dump (Build *b, sift_Reader *r, uint64_t at,
                               int *ok) {
  hp_Heap *h = b->h;
  int ids = h->idsize;
  hp_Class c;
  uint32_t u4;
  uint16_t n, i;
  uint8_t t;
  memset(&c, 0, sizeof c);
  c.off = at;
  c.super = -1;
  *ok = 0;
  if (!read_id(r, ids, &c.id) || !sift_rd_u4be(r, &u4)
      || !read_id(r, ids, &c.super_id) || !read_id(r, ids, &c.loader_id)
      || !sift_rd_skip(r, (uint64_t)ids * 4)   /* signers, domain, 2 reserved */
      || !sift_rd_u4be(r, &c.instance_size) || !sift_rd_u2be(r, &n))
    return SIFT_OK;
  for (i = 0; i < n; i++)   /* constant pool: u2 index, u1 type, value */
    if (!sift_rd_skip(r, 2) || !sift_rd_u1(r, &t) || !skip_value(r, h, t))
      return SIFT_OK;
  c.statics_off = r->pos;
  if (!sift_rd_u2be(r, &n)) return SIFT_OK;
  c.nstatics = n;
  for (i = 0; i < n; i++)   /* statics: name id, u1 type, value */
    if (!sift_rd_skip(r, (uint64_t)ids) || !sift_rd_u1(r, &t)
        || !skip_value(r, h, t))
      return SIFT_OK;
  c.fields_off = r->pos;
  if (!sift_rd_u2be(r, &n)) return SIFT_OK;
  c.nfields = n;
  for (i = 0; i < n; i++) {  /* instance fields: name id, u1 type */
    if (!sift_rd_skip(r, (uint64_t)ids) || !sift_rd_u1(r, &t)) return SIFT_OK;
    if (t == 0 || hp_type_size(h, t) == 0) {
      r->pos -= 1;
      sift_rd_fail(r, SIFT_ECORRUPT, "basic type", 0);
      return SIFT_OK;
    }
  }
  *ok = 1;
  PUSH(h->classes, h->nclasses, b->capclasses, c);
  h->count[0]++;
  return add_object(b, c.id, at);
}

/*
** Walk the sub-records of one heap dump record, body r->pos .. r->size.
** Returns SIFT_OK, SIFT_ETRUNC (stopped by the end of a cut file: what
** came before is kept), or an error.
*/
static sift_Status heap_records (Build *b, sift_Reader *r, int cut) {
  hp_Heap *h = b->h;
  int ids = h->idsize;
  while (sift_rd_left(r) > 0) {
    uint64_t at = r->pos, id, other, cls;
    uint32_t u4a, u4b, n;
    uint8_t tag, t;
    int ok = 1, isobj = 0;
    sift_Status s = SIFT_OK;
    if (!sift_progress(b->pr, at)) return fail(b, SIFT_ECANCEL, "cancelled");
    tag = r->base[r->pos++];  /* a byte is left */
    switch (tag) {
      case SUB_ROOT_UNKNOWN: case SUB_ROOT_STICKY_CLASS:
      case SUB_ROOT_MONITOR_USED: case SUB_ROOT_INTERNED_STRING:
      case SUB_ROOT_FINALIZING: case SUB_ROOT_DEBUGGER:
      case SUB_ROOT_REFERENCE_CLEANUP: case SUB_ROOT_VM_INTERNAL:
      case SUB_ROOT_UNREACHABLE:
        ok = read_id(r, ids, &id);
        if (ok) s = add_root(b, tag, id, 0, 0);
        break;
      case SUB_ROOT_JNI_GLOBAL:
        ok = read_id(r, ids, &id) && read_id(r, ids, &other);
        if (ok) s = add_root(b, tag, id, 0, 0);
        break;
      case SUB_ROOT_JNI_LOCAL: case SUB_ROOT_JAVA_FRAME:
      case SUB_ROOT_THREAD_OBJECT: case SUB_ROOT_JNI_MONITOR:
        ok = read_id(r, ids, &id) && sift_rd_u4be(r, &u4a)
          && sift_rd_u4be(r, &u4b);
        if (ok) s = add_root(b, tag, id, u4a, u4b);
        break;
      case SUB_ROOT_NATIVE_STACK: case SUB_ROOT_THREAD_BLOCK:
        ok = read_id(r, ids, &id) && sift_rd_u4be(r, &u4a);
        if (ok) s = add_root(b, tag, id, u4a, 0);
        break;
      case SUB_HEAP_DUMP_INFO:  /* u4 heap id, name string id */
        ok = sift_rd_u4be(r, &u4a) && read_id(r, ids, &other);
        if (ok && u4a != b->heap) {  /* Dalvik repeats it every segment */
          hp_Switch sw;
          sw.off = r->pos;
          sw.heap = u4a;
          b->heap = u4a;
          PUSH(h->heaps, h->nheaps, b->capheaps, sw);
        }
        break;
      case HP_CLASS_DUMP:
        s = class_dump(b, r, at, &ok);
        break;
      case HP_INSTANCE_DUMP:  /* id, u4 stack, class id, u4 length, data */
        ok = read_id(r, ids, &id) && sift_rd_u4be(r, &u4a)
          && read_id(r, ids, &cls) && sift_rd_u4be(r, &n)
          && sift_rd_skip(r, n);
        isobj = 1;
        h->count[1] += ok;
        if (ok) s = name_class(b, cls);
        break;
      case HP_OBJ_ARRAY_DUMP:  /* id, u4 stack, u4 n, class id, n ids */
        ok = read_id(r, ids, &id) && sift_rd_u4be(r, &u4a)
          && sift_rd_u4be(r, &n) && read_id(r, ids, &cls)
          && sift_rd_fits(r, n, (uint64_t)ids, "object array")
          && sift_rd_skip(r, (uint64_t)n * (uint64_t)ids);
        isobj = 1;
        h->count[2] += ok;
        break;
      case HP_PRIM_ARRAY_DUMP:  /* id, u4 stack, u4 n, u1 type, elements */
      case HP_PRIM_ARRAY_NODATA:  /* the same without the elements */
        ok = read_id(r, ids, &id) && sift_rd_u4be(r, &u4a)
          && sift_rd_u4be(r, &n) && sift_rd_u1(r, &t);
        if (ok && (t == HP_OBJECT || hp_type_size(h, t) == 0)) {
          r->pos -= 1;
          ok = sift_rd_fail(r, SIFT_ECORRUPT, "primitive array type", 0);
        }
        if (ok && tag == HP_PRIM_ARRAY_DUMP) {
          uint64_t size = (uint64_t)hp_type_size(h, t);
          ok = sift_rd_fits(r, n, size, "primitive array")
            && sift_rd_skip(r, (uint64_t)n * size);
        }
        isobj = 1;
        h->count[3] += ok;
        break;
      default:
        return fail(b, SIFT_EBADTAG, "unknown heap dump sub-record tag 0x%02X "
                    "at byte %llu", tag, (unsigned long long)at);
    }
    if (s != SIFT_OK) return s;
    if (!ok) {
      r->pos = at;
      if (r->status == SIFT_ETRUNC && cut) {
        h->truncated_at = at;
        return SIFT_ETRUNC;
      }
      if (r->status == SIFT_ECORRUPT)
        return fail(b, SIFT_ECORRUPT, "bad %s at byte %llu in the heap "
                    "sub-record (tag 0x%02X) at byte %llu", r->what,
                    (unsigned long long)r->at, tag, (unsigned long long)at);
      return fail(b, SIFT_ECORRUPT, "heap sub-record (tag 0x%02X) at byte "
                  "%llu runs past the end of its record at byte %llu", tag,
                  (unsigned long long)at, (unsigned long long)r->size);
    }
    if (isobj && (s = add_object(b, id, at)) != SIFT_OK) return s;
  }
  return SIFT_OK;
}

/* }====================================================== */


/*
** {======================================================
** Top-level records
** =======================================================
*/

static sift_Status add_idx (Build *b, hp_Idx **v, uint64_t *n,
                            uint64_t *cap, uint64_t id, uint64_t off) {
  hp_Idx e;
  e.id = id;
  e.off = off;
  PUSH(*v, *n, *cap, e);
  return SIFT_OK;
}

/* which heap dump a heap record belongs to, counting as it goes */
typedef struct DumpCounter {
  uint64_t ndumps;
  int in_segments;   /* inside a run of segments not yet ended */
} DumpCounter;

/* returns the 0-based dump of a heap record with this tag, or -1 */
static int64_t dump_of (DumpCounter *d, int tag) {
  if (tag == TAG_HEAP_DUMP) {
    d->in_segments = 0;
    return (int64_t)d->ndumps++;
  }
  if (tag == TAG_HEAP_DUMP_SEGMENT) {
    if (!d->in_segments) {
      d->in_segments = 1;
      d->ndumps++;
    }
    return (int64_t)d->ndumps - 1;
  }
  if (tag == TAG_HEAP_DUMP_END) d->in_segments = 0;
  return -1;
}

/* count the heap dumps: tags and lengths only, bodies skipped */
static uint64_t count_dumps (const unsigned char *p, size_t n, size_t start) {
  DumpCounter d = {0, 0};
  size_t at = start;
  while (n - at >= 9) {
    uint64_t len = u4_at(p + at + 5);
    dump_of(&d, p[at]);
    if (len > n - at - 9) break;
    at += 9 + (size_t)len;
  }
  return d.ndumps;
}

static sift_Status top_records (Build *b, sift_Reader *r) {
  hp_Heap *h = b->h;
  int ids = h->idsize;
  DumpCounter dumps = {0, 0};
  while (sift_rd_left(r) > 0) {
    uint64_t at = r->pos, body, end, id, id2;
    uint32_t time, len, serial, u4;
    uint8_t tag;
    int64_t dump;
    int cut = 0;
    sift_Status s = SIFT_OK;
    if (!sift_rd_u1(r, &tag) || !sift_rd_u4be(r, &time)
        || !sift_rd_u4be(r, &len)) {
      warn(h, "truncated record header at byte %llu: the file ends after %llu "
           "bytes", (unsigned long long)at, (unsigned long long)(r->size - at));
      h->truncated_at = at;
      return SIFT_OK;
    }
    body = r->pos;
    end = body + len;
    if (len > sift_rd_left(r)) {  /* the file was cut inside this record */
      cut = 1;
      end = r->size;
      warn(h, "truncated record (tag 0x%02X) at byte %llu: it says %lu bytes, "
           "%llu are left", tag, (unsigned long long)at, (unsigned long)len,
           (unsigned long long)(r->size - body));
      h->truncated_at = at;
    }
    dump = dump_of(&dumps, tag);
    switch (tag) {
      case TAG_STRING:
        if (len >= (uint32_t)ids && !cut && read_id(r, ids, &id))
          s = add_idx(b, &h->strings, &h->nstrings, &b->capstrings, id, body);
        break;
      case TAG_LOAD_CLASS:  /* u4 serial, class id, u4 stack, name id */
        if (!cut && len >= 8 + 2 * (uint32_t)ids && sift_rd_u4be(r, &serial)
            && read_id(r, ids, &id))
          s = add_idx(b, &h->loads, &h->nloads, &b->caploads, id, body);
        break;
      case TAG_STACK_FRAME:  /* 4 ids (frame, method, signature, source),
                                u4 class serial, u4 line */
        if (!cut && len >= 8 + 4 * (uint32_t)ids && read_id(r, ids, &id))
          s = add_idx(b, &h->frames, &h->nframes, &b->capframes, id, body);
        break;
      case TAG_STACK_TRACE:  /* u4 serial, u4 thread, u4 n, n frame ids */
        if (!cut && len >= 12 && sift_rd_u4be(r, &serial))
          s = add_idx(b, &h->traces, &h->ntraces, &b->captraces, serial,
                      body);
        break;
      case TAG_START_THREAD:  /* u4 serial, id, u4 stack, 3 name ids */
        if (!cut && sift_rd_u4be(r, &serial) && read_id(r, ids, &id)
            && sift_rd_u4be(r, &u4) && read_id(r, ids, &id2)) {
          hp_Thread t;
          t.serial = serial;
          t.object = id;
          t.trace = u4;
          t.name = id2;
          PUSH(h->threads, h->nthreads, b->capthreads, t);
        }
        break;
      case TAG_HEAP_DUMP: case TAG_HEAP_DUMP_SEGMENT:
        if ((uint64_t)dump == h->dump) {
          b->segmented = tag == TAG_HEAP_DUMP_SEGMENT;
          sift_Reader sub = *r;
          sub.size = (size_t)end;
          s = heap_records(b, &sub, cut);
          if (s == SIFT_ETRUNC) {
            warn(h, "the heap dump is indexed up to byte %llu, where the "
                 "file ends inside a sub-record",
                 (unsigned long long)h->truncated_at);
            return SIFT_OK;
          }
        }
        break;
      case TAG_HEAP_DUMP_END:
        if (dumps.ndumps == h->dump + 1) b->ended = 1;
        break;
      default:
        if (tag > TAG_HEAP_DUMP_END || tag == 0) h->unknown_records++;
        break;
    }
    if (s != SIFT_OK) return s;
    if (cut) return SIFT_OK;
    r->pos = (size_t)end;
    r->status = SIFT_OK;
  }
  return SIFT_OK;
}

/* }====================================================== */


/*
** {======================================================
** Sorting and linking
** =======================================================
*/

/* sort (id, off) pairs by id: LSD radix sort on the bytes that differ */
static int sort_idx (hp_Idx *v, uint64_t n) {
  uint64_t i, min = UINT64_MAX, max = 0, count[256], common = 0;
  hp_Idx *tmp, *src = v, *dst;
  int sorted = 1, byte, shift = 0;
  for (i = 0; i < n; i++) {
    if (v[i].id < min) min = v[i].id;
    if (v[i].id > max) max = v[i].id;
    if (i > 0 && v[i].id < v[i - 1].id) sorted = 0;
  }
  if (sorted) return 1;
  for (i = 0; i < n; i++) common |= v[i].id - min;  /* the shared alignment */
  while (shift < 63 && !(common >> shift & 1)) shift++;
  tmp = (hp_Idx *)malloc(n * sizeof *tmp);
  if (tmp == NULL) return 0;
  dst = tmp;
  for (byte = 0; byte < 8 && ((max - min) >> shift >> (8 * byte)) > 0;
       byte++) {
    uint64_t sum = 0;
    int d;
    memset(count, 0, sizeof count);
    for (i = 0; i < n; i++)
      count[((src[i].id - min) >> shift >> (8 * byte)) & 0xff]++;
    for (d = 0; d < 256; d++) {
      uint64_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++)
      dst[count[((src[i].id - min) >> shift >> (8 * byte)) & 0xff]++] = src[i];
    { hp_Idx *x = src; src = dst; dst = x; }
  }
  if (src != v) memcpy(v, src, n * sizeof *v);
  free(tmp);
  return 1;
}

/* drop entries whose id repeats, keeping the first; returns how many went */
static uint64_t dedup_idx (hp_Idx *v, uint64_t *n) {
  uint64_t i, k = 0, before = *n;
  for (i = 0; i < *n; i++)
    if (k == 0 || v[i].id != v[k - 1].id) v[k++] = v[i];
  *n = k;
  return before - k;
}

const hp_Idx *hp_find_idx (const hp_Idx *v, uint64_t n, uint64_t id) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (v[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo].id == id ? &v[lo] : NULL;
}

int64_t hp_find (const hp_Heap *h, uint64_t id) {
  uint64_t lo = 0, hi = h->nobjs;
  if (h->keys32) {
    uint64_t d = id - h->id_base, key;
    if (id < h->id_base || (d & ((UINT64_C(1) << h->id_shift) - 1)) != 0
        || (key = d >> h->id_shift) > UINT32_MAX)
      return -1;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (h->keys32[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo < h->nobjs && h->keys32[lo] == key ? (int64_t)lo : -1;
  }
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (h->keys64[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < h->nobjs && h->keys64[lo] == id ? (int64_t)lo : -1;
}

static int cmp_u64 (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* merge the sorted a[0..na) and b[0..nb) into out */
static void merge (const uint64_t *a, uint64_t na, const uint64_t *b,
                   uint64_t nb, uint64_t *out) {
  uint64_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) out[k++] = b[j] < a[i] ? b[j++] : a[i++];
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

/* LSD radix sort on the high 32 bits (the keys), 8 bits a pass */
static void radix_words (uint64_t *w, uint64_t n, uint64_t *tmp) {
  uint64_t i, *src = w, *dst = tmp;
  int pass;
  for (pass = 4; pass < 8; pass++) {
    uint64_t count[256], sum = 0, *x;
    int d;
    memset(count, 0, sizeof count);
    for (i = 0; i < n; i++) count[(src[i] >> (8 * pass)) & 0xff]++;
    if (count[(src[0] >> (8 * pass)) & 0xff] == n) continue;  /* one digit */
    for (d = 0; d < 256; d++) {
      uint64_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++) dst[count[(src[i] >> (8 * pass)) & 0xff]++] = src[i];
    x = src; src = dst; dst = x;
  }
  if (src != w) memcpy(w, src, n * sizeof(uint64_t));
}

#define MAXRUNS 32

/*
** Sort n words ascending. Heap dumps are nearly sorted: HotSpot writes a
** short run of class dumps, then each heap space in address order. So the
** words of short ascending runs are set aside and sorted on their own, the
** few long runs are merged pairwise, and the set-aside words are merged in
** from the back. Input that is not shaped like that gets a radix sort.
*/
static int sort_words (uint64_t *w, uint64_t n) {
  uint64_t minrun = n / 1024 > 4096 ? n / 1024 : 4096;
  uint64_t i, start, r = 0, kept = 0, na = 0, nruns = 0, run[MAXRUNS + 1];
  uint64_t *tmp, *aside, *src, *dst;
  for (start = 0, i = 1; i <= n; i++) {  /* measure the runs */
    if (i < n && w[i] >= w[i - 1]) continue;
    if (i - start >= minrun) nruns++;
    else r += i - start;
    start = i;
  }
  if (n == 0 || (nruns <= 1 && r == 0)) return 1;  /* sorted already */
  tmp = (uint64_t *)malloc(n * sizeof(uint64_t));
  if (tmp == NULL) return 0;
  if (nruns > MAXRUNS || r > n / 8) {
    radix_words(w, n, tmp);
    free(tmp);
    return 1;
  }
  aside = tmp + (n - r);  /* the last r slots of tmp */
  for (start = 0, nruns = 0, i = 1; i <= n; i++) {  /* long runs to the front */
    uint64_t len = i - start;
    if (i < n && w[i] >= w[i - 1]) continue;
    if (len >= minrun) {
      run[nruns++] = kept;
      memmove(w + kept, w + start, len * sizeof(uint64_t));
      kept += len;
    }
    else {
      memcpy(aside + na, w + start, len * sizeof(uint64_t));
      na += len;
    }
    start = i;
  }
  run[nruns] = kept;
  qsort(aside, na, sizeof *aside, cmp_u64);
  src = w;
  dst = tmp;  /* its first `kept` slots are free */
  while (nruns > 1) {  /* merge the long runs pairwise */
    uint64_t k, m = 0, *x;
    for (k = 0; k < nruns; k += 2) {
      if (k + 1 < nruns)
        merge(src + run[k], run[k + 1] - run[k], src + run[k + 1],
              run[k + 2] - run[k + 1], dst + run[k]);
      else
        memcpy(dst + run[k], src + run[k], (run[k + 1] - run[k]) * sizeof *w);
      run[m++] = run[k];
    }
    run[m] = kept;
    nruns = m;
    x = src; src = dst; dst = x;
  }
  if (src != w) memcpy(w, src, kept * sizeof *w);
  for (i = n; na > 0; ) {  /* merge the set-aside words in from the back */
    if (kept > 0 && w[kept - 1] > aside[na - 1]) w[--i] = w[--kept];
    else w[--i] = aside[--na];
  }
  free(tmp);
  return 1;
}

/*
** Sort the objects by id and keep them as keys and offsets. Keys are ids
** relative to the smallest, shifted right by the alignment they all share;
** when every key fits in 32 bits (the usual case) the sort runs on words
** (key << 32 | file-order index) and the offsets are gathered through the
** indexes; otherwise the (id, offset) pairs are sorted whole and the ids
** kept as they are. An id seen twice keeps its first object.
*/
static sift_Status sort_objects (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, k, common = 0, max = 0, n = h->nobjs, min = UINT64_MAX;
  uint64_t *words;
  int shift = 0;
  for (i = 0; i < n; i++) {
    if (h->objs[i].id < min) min = h->objs[i].id;
    if (h->objs[i].id > max) max = h->objs[i].id;
  }
  if (n == 0) min = 0;
  for (i = 0; i < n; i++) common |= h->objs[i].id - min;
  while (common != 0 && shift < 63 && !(common >> shift & 1)) shift++;
  h->id_base = min;
  h->id_shift = shift;
  h->offs = (uint64_t *)malloc((n ? n : 1) * sizeof(uint64_t));
  if (h->offs == NULL) return nomem(b);
  if ((max - min) >> shift > UINT32_MAX || n > UINT32_MAX) {
    if (!sort_idx(h->objs, n)) return nomem(b);
    h->duplicates = dedup_idx(h->objs, &h->nobjs);
    h->keys64 = (uint64_t *)malloc((h->nobjs ? h->nobjs : 1)
                                   * sizeof(uint64_t));
    if (h->keys64 == NULL) return nomem(b);
    for (i = 0; i < h->nobjs; i++) {
      h->keys64[i] = h->objs[i].id;
      h->offs[i] = h->objs[i].off;
    }
    return SIFT_OK;
  }
  words = (uint64_t *)malloc((n ? n : 1) * sizeof(uint64_t));
  h->keys32 = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
  if (words == NULL || h->keys32 == NULL) {
    free(words);
    return nomem(b);
  }
  for (i = 0; i < n; i++)
    words[i] = ((h->objs[i].id - min) >> shift) << 32 | i;
  if (!sort_words(words, n)) {
    free(words);
    return nomem(b);
  }
  for (i = 0, k = 0; i < n; i++) {
    uint32_t key = (uint32_t)(words[i] >> 32);
    if (k > 0 && h->keys32[k - 1] == key) continue;  /* a repeated id */
    h->keys32[k] = key;
    h->offs[k++] = h->objs[words[i] & 0xffffffffu].off;
  }
  h->duplicates = n - k;
  h->nobjs = k;
  free(words);
  free(h->objs);
  h->objs = NULL;
  return SIFT_OK;
}

/* a 64-bit mix of the id bits, so aligned addresses spread over slots */
static uint64_t hash_id (uint64_t id) {
  id ^= id >> 33;
  id *= UINT64_C(0xff51afd7ed558ccd);
  id ^= id >> 33;
  return id;
}

int64_t hp_find_class (const hp_Heap *h, uint64_t id) {
  uint64_t slot;
  if (h->class_hash == NULL) return -1;
  for (slot = hash_id(id) & h->class_mask; h->class_hash[slot] >= 0;
       slot = (slot + 1) & h->class_mask)
    if (h->classes[h->class_hash[slot]].id == id)
      return h->class_hash[slot];
  return -1;
}

/* the class hash: at least twice as many slots as classes */
static sift_Status hash_classes (Build *b) {
  hp_Heap *h = b->h;
  uint64_t size = 16, i;
  while (size < 2 * h->nclasses) size *= 2;
  if (h->nclasses > INT32_MAX) return nomem(b);
  h->class_hash = (int32_t *)malloc(size * sizeof(int32_t));
  if (h->class_hash == NULL) return nomem(b);
  memset(h->class_hash, 0xff, size * sizeof(int32_t));  /* all -1 */
  h->class_mask = size - 1;
  for (i = 0; i < h->nclasses; i++) {
    uint64_t slot = hash_id(h->classes[i].id) & h->class_mask;
    while (h->class_hash[slot] >= 0) slot = (slot + 1) & h->class_mask;
    h->class_hash[slot] = (int32_t)i;
  }
  return SIFT_OK;
}

static int cmp_class (const void *a, const void *b) {
  uint64_t x = ((const hp_Class *)a)->id, y = ((const hp_Class *)b)->id;
  return x < y ? -1 : x > y;
}

/*
** The flattened layout of class i: its declared fields at offsets from 0,
** then its superclass's layout shifted past them. Supers are laid out
** first; a superclass chain that loops (hostile input) is cut.
*/
static sift_Status flatten (Build *b, uint64_t i, uint64_t *cap,
                            unsigned char *state) {
  hp_Heap *h = b->h;
  hp_Class *c = &h->classes[i];
  const unsigned char *p;
  uint32_t k, offset = 0;
  if (state[i] == 2) return SIFT_OK;
  if (state[i] == 1) {  /* a cycle: lay this class out without its super */
    c->super = -1;
    warn(h, "the superclass chain of class 0x%llx loops; cut there",
         (unsigned long long)c->id);
  }
  state[i] = 1;
  if (c->super >= 0) {
    sift_Status s = flatten(b, (uint64_t)c->super, cap, state);
    if (s != SIFT_OK) return s;
    c = &h->classes[i];
  }
  c->flat = (uint32_t)h->nfields;
  p = h->p + c->fields_off + 2;
  for (k = 0; k < c->nfields; k++, p += h->idsize + 1) {
    hp_Field f;
    f.name = hp_id_at(h, p);
    f.type = p[h->idsize];
    f.offset = offset;
    f.owner = (uint32_t)i;
    offset += (uint32_t)hp_type_size(h, f.type);
    PUSH(h->fields, h->nfields, *cap, f);
  }
  if (c->super >= 0) {
    const hp_Class *sc = &h->classes[c->super];
    uint32_t j;
    for (j = 0; j < sc->nflat; j++) {
      hp_Field f = h->fields[sc->flat + j];
      f.offset += offset;
      PUSH(h->fields, h->nfields, *cap, f);
    }
    offset += sc->data_size;
  }
  c = &h->classes[i];
  c->nflat = (uint32_t)(h->nfields - c->flat);
  c->data_size = offset;
  state[i] = 2;
  return SIFT_OK;
}

static sift_Status link_classes (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, cap = 0, dups = 0, missing_super = 0;
  unsigned char *state;
  sift_Status s = SIFT_OK;
  if (h->nclasses > 1)
    qsort(h->classes, h->nclasses, sizeof *h->classes, cmp_class);
  for (i = 0; i < h->nclasses; i++)  /* a class dumped twice: keep one */
    if (i - dups == 0 || h->classes[i].id != h->classes[i - dups - 1].id)
      h->classes[i - dups] = h->classes[i];
    else dups++;
  h->nclasses -= dups;
  if ((s = hash_classes(b)) != SIFT_OK) return s;
  if (!sort_idx(h->loads, h->nloads)) return nomem(b);
  for (i = 0; i < h->nclasses; i++) {
    hp_Class *c = &h->classes[i];
    const hp_Idx *load = hp_find_idx(h->loads, h->nloads, c->id);
    if (load != NULL) {  /* u4 serial, class id, u4 stack, name id */
      c->serial = u4_at(h->p + load->off);
      c->name = hp_id_at(h, h->p + load->off + 8 + h->idsize);
    }
    c->super = c->super_id ? hp_find_class(h, c->super_id) : -1;
    if (c->super_id && c->super < 0) missing_super++;
  }
  if (missing_super)
    warn(h, "%llu classes have a superclass that is not in the dump",
         (unsigned long long)missing_super);
  state = (unsigned char *)calloc(h->nclasses + 1, 1);
  if (state == NULL) return nomem(b);
  for (i = 0; i < h->nclasses && s == SIFT_OK; i++)
    s = flatten(b, i, &cap, state);
  free(state);
  return s;
}

/* instances whose class is not in the dump: counted by a pass over the
   objects only when a class id that instances name is missing */
static void count_missing_classes (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, absent = 0;
  for (i = 0; i <= b->named_mask && b->named; i++)
    if (b->named[i] && hp_find_class(h, b->named[i]) < 0) absent++;
  if (absent == 0) return;
  for (i = 0; i < h->nobjs; i++) {
    const unsigned char *q = h->p + hp_obj_off(h, i);
    if (*q == HP_INSTANCE_DUMP
        && hp_find_class(h, hp_id_at(h, q + 1 + h->idsize + 4)) < 0)
      h->missing_classes++;
  }
  warn(h, "%llu instances have a class that is not in the dump (%llu "
       "class ids)", (unsigned long long)h->missing_classes,
       (unsigned long long)absent);
}

/* }====================================================== */


static sift_Status build (Build *bp, const unsigned char *p, size_t n,
                          const hp_Options *opt) {
  hp_Heap *h = bp->h;
  sift_Progress *pr = bp->pr;
  sift_Reader r;
  const char *text;
  size_t len;
  uint32_t idsize;
  sift_Status s;
  h->p = p;
  h->n = n;
  sift_reader_init(&r, p, n);
  if (n < 13 || memcmp(p, "JAVA PROFILE ", 13) != 0)
    return fail(bp, SIFT_EHEADER, "not an HPROF file: no 'JAVA PROFILE' "
                "header at byte 0");
  if (!sift_rd_cstring(&r, &text, &len) || len > 18)
    return fail(bp, SIFT_EHEADER, "bad HPROF header at byte 0");
  memcpy(h->version, text + 13, len - 13);
  if (strcmp(h->version, "1.0.1") != 0 && strcmp(h->version, "1.0.2") != 0
      && strcmp(h->version, "1.0.3") != 0)
    return fail(bp, SIFT_EUNSUPPORTED, "unknown HPROF version '%s' at byte "
                "13 (sift reads 1.0.1, 1.0.2 and 1.0.3)", h->version);
  if (!sift_rd_u4be(&r, &idsize) || !sift_rd_u8be(&r, &h->timestamp))
    return readfail(bp, &r, "HPROF header");
  if (idsize != 4 && idsize != 8)
    return fail(bp, SIFT_EHEADER, "bad HPROF identifier size %lu at byte 19 "
                "(must be 4 or 8)", (unsigned long)idsize);
  h->idsize = (int)idsize;
  h->header_size = r.pos;
  h->ndumps = count_dumps(p, n, r.pos);
  if (opt->dump < 0 || (uint64_t)opt->dump > h->ndumps
      || (opt->dump > 0 && h->ndumps == 0))
    return fail(bp, SIFT_EUNSUPPORTED, "no heap dump %lld: the file has %llu",
                (long long)opt->dump, (unsigned long long)h->ndumps);
  h->dump = opt->dump > 0 ? (uint64_t)opt->dump - 1
          : h->ndumps > 0 ? h->ndumps - 1 : 0;
  s = top_records(bp, &r);
  if (s != SIFT_OK) return s;
  if (!sift_progress(pr, n)) return fail(bp, SIFT_ECANCEL, "cancelled");
  s = sort_objects(bp);
  if (s != SIFT_OK) return s;
  if (h->duplicates)
    warn(h, "%llu object ids appear more than once; the first is kept",
         (unsigned long long)h->duplicates);
  if (!sort_idx(h->strings, h->nstrings) || !sort_idx(h->frames, h->nframes)
      || !sort_idx(h->traces, h->ntraces))
    return nomem(bp);
  dedup_idx(h->strings, &h->nstrings);
  s = link_classes(bp);
  if (s != SIFT_OK) return s;
  count_missing_classes(bp);
  if (h->ndumps == 0) warn(h, "the file holds no heap dump");
  else if (bp->segmented && !bp->ended && !h->truncated_at)
    warn(h, "the heap dump has no HEAP_DUMP_END record: the file may be cut "
         "short");
  if (h->unknown_records)
    warn(h, "%llu top-level records with unknown tags were skipped",
         (unsigned long long)h->unknown_records);
  return SIFT_OK;
}


sift_Status hp_build (hp_Heap *h, const unsigned char *p, size_t n,
                      const hp_Options *opt, sift_Progress *pr,
                      char *err, size_t errsize) {
  Build b;
  sift_Status s;
  memset(&b, 0, sizeof b);
  b.h = h;
  b.pr = pr;
  b.err = err;
  b.errsize = errsize;
  s = build(&b, p, n, opt);
  free(b.named);
  return s;
}


void hp_free (hp_Heap *h) {
  free(h->objs);
  free(h->keys32);
  free(h->keys64);
  free(h->offs);
  free(h->heaps);
  free(h->classes);
  free(h->class_hash);
  free(h->fields);
  free(h->strings);
  free(h->frames);
  free(h->traces);
  free(h->loads);
  free(h->roots);
  free(h->threads);
  memset(h, 0, sizeof *h);
}


/*
** {======================================================
** Reading what the index points at
** =======================================================
*/

const char *hp_string (const hp_Heap *h, uint64_t id, size_t *len) {
  const hp_Idx *e = hp_find_idx(h->strings, h->nstrings, id);
  if (e == NULL) return NULL;
  *len = u4_at(h->p + e->off - 4) - (size_t)h->idsize;
  return (const char *)h->p + e->off + h->idsize;
}

uint32_t hp_heap_at (const hp_Heap *h, uint64_t off) {
  uint64_t lo = 0, hi = h->nheaps;  /* the last switch at or before off */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (h->heaps[mid].off <= off) lo = mid + 1;
    else hi = mid;
  }
  return lo == 0 ? HP_HEAP_DEFAULT : h->heaps[lo - 1].heap;
}

void hp_object (const hp_Heap *h, uint64_t num, hp_ObjInfo *o) {
  const unsigned char *q = h->p + hp_obj_off(h, num);
  int ids = h->idsize;
  memset(o, 0, sizeof *o);
  o->kind = *q;
  o->cls = -1;
  switch (*q) {
    case HP_CLASS_DUMP: {
      int64_t self = hp_find_class(h, hp_obj_id(h, num));
      o->cls = self;
      if (self >= 0) {  /* a class holds its static values */
        const hp_Class *c = &h->classes[self];
        const unsigned char *s = h->p + c->statics_off + 2;
        uint32_t k;
        for (k = 0; k < c->nstatics; k++) {
          int size = hp_type_size(h, s[ids]);
          o->shallow += (uint64_t)size;
          s += ids + 1 + size;
        }
      }
      break;
    }
    case HP_INSTANCE_DUMP:
      o->class_id = hp_id_at(h, q + 1 + ids + 4);
      o->cls = hp_find_class(h, o->class_id);
      o->length = u4_at(q + 1 + ids + 4 + ids);
      o->data = q + 1 + ids + 4 + ids + 4;
      o->shallow = o->cls >= 0 ? h->classes[o->cls].instance_size : o->length;
      break;
    case HP_OBJ_ARRAY_DUMP:
      o->length = u4_at(q + 1 + ids + 4);
      o->class_id = hp_id_at(h, q + 1 + ids + 8);
      o->cls = hp_find_class(h, o->class_id);
      o->elem = HP_OBJECT;
      o->data = q + 1 + ids + 8 + ids;
      o->shallow = o->length * (uint64_t)ids;
      break;
    case HP_PRIM_ARRAY_DUMP: case HP_PRIM_ARRAY_NODATA:
      o->length = u4_at(q + 1 + ids + 4);
      o->elem = q[1 + ids + 8];
      o->data = *q == HP_PRIM_ARRAY_DUMP ? q + 1 + ids + 9 : NULL;
      o->shallow = o->length * (uint64_t)hp_type_size(h, o->elem);
      break;
  }
}

/* }====================================================== */
