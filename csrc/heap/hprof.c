/*
** hprof.c
** Decode an HPROF file into the compact index of hprof.h, in one pass over
** the mapped bytes (after a quick walk of the top-level records to count
** the heap dumps); hprof_index.c then sorts and links what was collected.
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

#include "core/reader.h"
#include "hprof_build.h"

/* the sub-record table of hprof.h */
#define ROOT(name, ids, bytes, flags) {name, ids, bytes, HP_ROOT | (flags)}
const hp_SubRecord hp_subrecords[256] = {
  [HP_ROOT_UNKNOWN] = ROOT("unknown", 1, 0, 0),
  [HP_ROOT_JNI_GLOBAL] = ROOT("jni_global", 2, 0, 0),
  [HP_ROOT_JNI_LOCAL] = ROOT("jni_local", 1, 8, HP_THREAD | HP_FRAME),
  [HP_ROOT_JAVA_FRAME] = ROOT("java_frame", 1, 8, HP_THREAD | HP_FRAME),
  [HP_ROOT_NATIVE_STACK] = ROOT("native_stack", 1, 4, HP_THREAD),
  [HP_ROOT_STICKY_CLASS] = ROOT("sticky_class", 1, 0, 0),
  [HP_ROOT_THREAD_BLOCK] = ROOT("thread_block", 1, 4, HP_THREAD),
  [HP_ROOT_MONITOR_USED] = ROOT("monitor_used", 1, 0, 0),
  [HP_ROOT_THREAD_OBJECT] = ROOT("thread_object", 1, 8, HP_THREAD | HP_TRACE),
  [HP_ROOT_INTERNED_STRING] = ROOT("interned_string", 1, 0, 0),
  [HP_ROOT_FINALIZING] = ROOT("finalizing", 1, 0, 0),
  [HP_ROOT_DEBUGGER] = ROOT("debugger", 1, 0, 0),
  [HP_ROOT_REFERENCE_CLEANUP] = ROOT("reference_cleanup", 1, 0, 0),
  [HP_ROOT_VM_INTERNAL] = ROOT("vm_internal", 1, 0, 0),
  [HP_ROOT_JNI_MONITOR] = ROOT("jni_monitor", 1, 8, HP_THREAD),  /* u4 depth */
  [HP_ROOT_UNREACHABLE] = ROOT("unreachable", 1, 0, 0),
  [HP_CLASS_DUMP] = {"class", 0, 0, 0},
  [HP_INSTANCE_DUMP] = {"instance", 0, 0, 0},
  [HP_OBJ_ARRAY_DUMP] = {"object_array", 0, 0, 0},
  [HP_PRIM_ARRAY_DUMP] = {"primitive_array", 0, 0, 0},
  [HP_PRIM_ARRAY_NODATA] = {"primitive_array_nodata", 1, 9, 0},
  [HP_HEAP_DUMP_INFO] = {"heap_dump_info", 1, 4, 0}
};
#undef ROOT


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
  return hp_read_id(p, h->idsize);
}

static inline int read_id (sift_Reader *r, int idsize, uint64_t *v) {
  if (!sift_rd_has(r, (uint64_t)idsize))
    return sift_rd_fail(r, SIFT_ETRUNC, "id", (uint64_t)idsize);
  *v = hp_read_id(r->base + r->pos, idsize);
  r->pos += (size_t)idsize;
  return 1;
}


sift_Status hpb_nomem (Build *b) {
  return sift_fail(b->err, SIFT_ENOMEM, "not enough memory to index the dump");
}

void hpb_warn (hp_Heap *h, const char *fmt, ...) {
  va_list ap;
  if (h->nwarn == HP_MAXWARN) return;
  va_start(ap, fmt);
  vsnprintf(h->warn[h->nwarn++], sizeof h->warn[0], fmt, ap);
  va_end(ap);
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

/* remember a class id an instance names (consecutive repeats are cheap) */
static sift_Status name_class (Build *b, uint64_t id) {
  int made;
  if (id == b->last_named || id == 0) return SIFT_OK;
  b->last_named = id;
  if (sift_idmap_get(&b->named, id) != NULL) return SIFT_OK;
  return sift_idmap_put(&b->named, id, &made) ? SIFT_OK : hpb_nomem(b);
}

/* an object's id and offset, in file order (32-bit offsets in a file
   under 4 GiB) */
static inline sift_Status add_object (Build *b, uint64_t id, uint64_t off) {
  hp_Heap *h = b->h;
  if (h->nobjs == b->capobjs) {
    uint64_t cap = b->capobjs ? b->capobjs * 2 : 1024;
    uint64_t *ids = (uint64_t *)sift_big_realloc(h->ids, cap * sizeof *ids);
    if (ids == NULL) return hpb_nomem(b);
    h->ids = ids;
    if (h->n <= UINT32_MAX) {
      uint32_t *o = (uint32_t *)sift_big_realloc(h->offs32, cap * sizeof *o);
      if (o == NULL) return hpb_nomem(b);
      h->offs32 = o;
    }
    else {
      uint64_t *o = (uint64_t *)sift_big_realloc(h->offs64, cap * sizeof *o);
      if (o == NULL) return hpb_nomem(b);
      h->offs64 = o;
    }
    b->capobjs = cap;
  }
  h->ids[h->nobjs] = id;
  if (h->offs32) h->offs32[h->nobjs] = (uint32_t)off;
  else h->offs64[h->nobjs] = off;
  h->nobjs++;
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
sift_Status hpb_heap_records (Build *b, sift_Reader *r, int cut) {
  hp_Heap *h = b->h;
  int ids = h->idsize;
  while (sift_rd_left(r) > 0) {
    uint64_t at = r->pos, id, other, cls;
    uint32_t u4a, u4b, n;
    uint8_t tag, t;
    int ok = 1, isobj = 0;
    sift_Status s = SIFT_OK;
    if (!sift_progress(b->pr, at)) return sift_fail(b->err, SIFT_ECANCEL, "cancelled");
    tag = r->base[r->pos++];  /* a byte is left */
    switch (tag) {
      case HP_HEAP_DUMP_INFO:  /* u4 heap id, name string id */
        ok = sift_rd_u4be(r, &u4a) && read_id(r, ids, &other);
        if (ok && (u4a != b->heap || b->heap_unknown)) {  /* Dalvik repeats it every segment */
          hp_Switch sw;
          b->heap_unknown = 0;
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
      default: {  /* a root: id (and another), u4 thread, u4 frame */
        const hp_SubRecord *sr = &hp_subrecords[tag];
        if (!(sr->flags & HP_ROOT))
          return sift_fail(b->err, SIFT_EBADTAG, "unknown heap dump sub-record tag 0x%02X "
                      "at byte %llu", tag, (unsigned long long)at);
        u4a = u4b = 0;
        ok = read_id(r, ids, &id) && (sr->ids < 2 || read_id(r, ids, &other))
          && (sr->bytes < 4 || sift_rd_u4be(r, &u4a))
          && (sr->bytes < 8 || sift_rd_u4be(r, &u4b));
        if (ok) s = add_root(b, tag, id, u4a, u4b);
        break;
      }
    }
    if (s != SIFT_OK) return s;
    if (!ok) {
      r->pos = at;
      if (r->status == SIFT_ETRUNC && cut) {
        h->truncated_at = at;
        return SIFT_ETRUNC;
      }
      if (r->status == SIFT_ECORRUPT)
        return sift_fail(b->err, SIFT_ECORRUPT, "bad %s at byte %llu in the heap "
                    "sub-record (tag 0x%02X) at byte %llu", r->what,
                    (unsigned long long)r->at, tag, (unsigned long long)at);
      return sift_fail(b->err, SIFT_ECORRUPT, "heap sub-record (tag 0x%02X) at byte "
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
  if (tag == HP_TAG_HEAP_DUMP) {
    d->in_segments = 0;
    return (int64_t)d->ndumps++;
  }
  if (tag == HP_TAG_HEAP_DUMP_SEGMENT) {
    if (!d->in_segments) {
      d->in_segments = 1;
      d->ndumps++;
    }
    return (int64_t)d->ndumps - 1;
  }
  if (tag == HP_TAG_HEAP_DUMP_END) d->in_segments = 0;
  return -1;
}

/* count the heap dumps: tags and lengths only, bodies skipped */
static uint64_t count_dumps (const unsigned char *p, size_t n, size_t start) {
  DumpCounter d = {0, 0};
  size_t at = start;
  while (n - at >= 9) {
    uint64_t len = hp_read_u4(p + at + 5);
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
      hpb_warn(h, "truncated record header at byte %llu: the file ends after %llu "
           "bytes", (unsigned long long)at, (unsigned long long)(r->size - at));
      h->truncated_at = at;
      return SIFT_OK;
    }
    body = r->pos;
    end = body + len;
    if (len > sift_rd_left(r)) {  /* the file was cut inside this record */
      cut = 1;
      end = r->size;
      hpb_warn(h, "truncated record (tag 0x%02X) at byte %llu: it says %lu bytes, "
           "%llu are left", tag, (unsigned long long)at, (unsigned long)len,
           (unsigned long long)(r->size - body));
      h->truncated_at = at;
    }
    dump = dump_of(&dumps, tag);
    switch (tag) {
      case HP_TAG_STRING:
        if (len >= (uint32_t)ids && !cut && read_id(r, ids, &id))
          s = add_idx(b, &h->strings, &h->nstrings, &b->capstrings, id, body);
        break;
      case HP_TAG_LOAD_CLASS:  /* u4 serial, class id, u4 stack, name id */
        if (!cut && len >= 8 + 2 * (uint32_t)ids && sift_rd_u4be(r, &serial)
            && read_id(r, ids, &id))
          s = add_idx(b, &h->loads, &h->nloads, &b->caploads, id, body);
        break;
      case HP_TAG_STACK_FRAME:  /* 4 ids (frame, method, signature, source),
                                u4 class serial, u4 line */
        if (!cut && len >= 8 + 4 * (uint32_t)ids && read_id(r, ids, &id))
          s = add_idx(b, &h->frames, &h->nframes, &b->capframes, id, body);
        break;
      case HP_TAG_STACK_TRACE:  /* u4 serial, u4 thread, u4 n, n frame ids */
        if (!cut && len >= 12 && sift_rd_u4be(r, &serial))
          s = add_idx(b, &h->traces, &h->ntraces, &b->captraces, serial,
                      body);
        break;
      case HP_TAG_START_THREAD:  /* u4 serial, id, u4 stack, 3 name ids */
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
      case HP_TAG_HEAP_DUMP: case HP_TAG_HEAP_DUMP_SEGMENT:
        if ((uint64_t)dump == h->dump) {  /* walked after the top records */
          hpb_Segment seg;
          seg.body = body;
          seg.end = end;
          seg.cut = cut;
          b->segmented = tag == HP_TAG_HEAP_DUMP_SEGMENT;
          PUSH(b->segs, b->nsegs, b->capsegs, seg);
        }
        break;
      case HP_TAG_HEAP_DUMP_END:
        if (dumps.ndumps == h->dump + 1) b->ended = 1;
        break;
      default:
        if (tag > HP_TAG_HEAP_DUMP_END || tag == 0) h->unknown_records++;
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
    return sift_fail(bp->err, SIFT_EHEADER, "not an HPROF file: no 'JAVA PROFILE' "
                "header at byte 0");
  if (!sift_rd_cstring(&r, &text, &len) || len > 18)
    return sift_fail(bp->err, SIFT_EHEADER, "bad HPROF header at byte 0");
  memcpy(h->version, text + 13, len - 13);
  if (strcmp(h->version, "1.0.1") != 0 && strcmp(h->version, "1.0.2") != 0
      && strcmp(h->version, "1.0.3") != 0)
    return sift_fail(bp->err, SIFT_EUNSUPPORTED, "unknown HPROF version '%s' at byte "
                "13 (sift reads 1.0.1, 1.0.2 and 1.0.3)", h->version);
  if (!sift_rd_u4be(&r, &idsize) || !sift_rd_u8be(&r, &h->timestamp))
    return sift_rd_error(&r, bp->err, "HPROF header: ");
  if (idsize != 4 && idsize != 8)
    return sift_fail(bp->err, SIFT_EHEADER, "bad HPROF identifier size %lu at byte 19 "
                "(must be 4 or 8)", (unsigned long)idsize);
  h->idsize = (int)idsize;
  h->header_size = r.pos;
  h->ndumps = count_dumps(p, n, r.pos);
  if (opt->dump < 0 || (uint64_t)opt->dump > h->ndumps
      || (opt->dump > 0 && h->ndumps == 0))
    return sift_fail(bp->err, SIFT_EUNSUPPORTED, "no heap dump %lld: the file has %llu",
                (long long)opt->dump, (unsigned long long)h->ndumps);
  h->dump = opt->dump > 0 ? (uint64_t)opt->dump - 1
          : h->ndumps > 0 ? h->ndumps - 1 : 0;
  s = top_records(bp, &r);
  if (s == SIFT_OK) s = hpb_walk_segments(bp, opt->threads);
  sift_big_free(bp->segs);
  if (s != SIFT_OK) return s;
  if (!sift_progress(pr, n)) return sift_fail(bp->err, SIFT_ECANCEL, "cancelled");
  s = hpb_sort_objects(bp);
  if (s != SIFT_OK) return s;
  if (h->duplicates)
    hpb_warn(h, "%llu object ids appear more than once; the first is kept",
         (unsigned long long)h->duplicates);
  if (!hpb_sort_idx(h->strings, h->nstrings) || !hpb_sort_idx(h->frames, h->nframes)
      || !hpb_sort_idx(h->traces, h->ntraces))
    return hpb_nomem(bp);
  hpb_dedup_idx(h->strings, &h->nstrings);
  s = hpb_link_classes(bp);
  if (s != SIFT_OK) return s;
  hpb_count_missing_classes(bp);
  if (h->ndumps == 0) hpb_warn(h, "the file holds no heap dump");
  else if (bp->segmented && !bp->ended && !h->truncated_at)
    hpb_warn(h, "the heap dump has no HEAP_DUMP_END record: the file may be cut "
         "short");
  if (h->unknown_records)
    hpb_warn(h, "%llu top-level records with unknown tags were skipped",
         (unsigned long long)h->unknown_records);
  return SIFT_OK;
}


sift_Status hp_build (hp_Heap *h, const unsigned char *p, size_t n,
                      const hp_Options *opt, sift_Progress *pr,
                      sift_Error *err) {
  Build b;
  sift_Status s;
  memset(&b, 0, sizeof b);
  b.h = h;
  b.pr = pr;
  b.err = err;
  h->threads_opt = opt->threads;
  s = build(&b, p, n, opt);
  sift_idmap_free(&b.named);
  return s;
}


void hp_free (hp_Heap *h) {
  sift_big_free(h->ids);
  sift_big_free(h->keys32);
  sift_big_free(h->keys64);
  sift_big_free(h->offs32);
  sift_big_free(h->offs64);
  sift_big_free(h->heaps);
  sift_big_free(h->classes);
  sift_idmap_free(&h->class_index);
  sift_big_free(h->fields);
  sift_big_free(h->strings);
  sift_big_free(h->frames);
  sift_big_free(h->traces);
  sift_big_free(h->loads);
  sift_big_free(h->roots);
  sift_big_free(h->threads);
  memset(h, 0, sizeof *h);
}
