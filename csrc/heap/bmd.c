/*
** bmd.c
** Reading BMD (BMD.md 1-5) and writing it back as HPROF (BMD.md 10). One
** walk over the records serves both: bmd_open runs it with no output to
** check every record and learn the classes; bmd_decrunch runs it again
** with the checked file, writing HPROF as it goes.
*/

#include <stdlib.h>
#include <string.h>

#include "bmd.h"
#include "hprof.h"
#include "jstring.h"
#include "core/out.h"
#include "core/reader.h"

#define SEGMENT_BYTES ((size_t)1 << 20)
#define FIELD_REMOVED "field_removed"

enum { CHECK, TOP, HEAP };  /* the walks: checking, then decrunching's two */

typedef struct Walk {
  int pass;
  bmd_File *b;
  sift_Reader r;
  sift_Error *err;
  /* decrunching: NULL while checking */
  sift_Out *o;                /* the HPROF file */
  sift_Out *seg;              /* the heap dump segment being built */
  const bmd_DecrunchOptions *opt;
  bmd_DecrunchStats *st;
  uint32_t serial;            /* of the next LOAD_CLASS */
  uint32_t removed;           /* string id of "field_removed" */
  sift_Progress *pr;
  uint64_t base;              /* progress: bytes done before this walk */
  size_t kpos;                /* root kinds: where the next run starts in b->kinds */
  uint64_t kleft;             /* ... how many roots the current run has left */
  unsigned kcur;              /* ... and its kind */
  uint32_t threads;           /* thread object roots written so far */
} Walk;

/* where the heap pass writes a value (nowhere in the other walks) */
#define HEAP_OUT(w) ((w)->pass == HEAP ? (w)->seg : NULL)

/* the walk's failure: "bmd: " and the message (fmt a literal) */
#define FAIL(w, s, ...) sift_fail((w)->err, (s), "bmd: " __VA_ARGS__)

/* a failed read: the reader's own message ("truncated varint at byte 9...") */
static sift_Status rd_failed (Walk *w) {
  return sift_rd_error(&w->r, w->err, "bmd: ");
}

#define TRY(x) do { if (!(x)) return rd_failed(w); } while (0)

/* protobuf int32: up to 10 bytes, the low 32 bits taken as signed */
static int rd_int32 (Walk *w, int32_t *v) {
  uint64_t x;
  if (!sift_rd_varint(&w->r, &x)) return 0;
  *v = (int32_t)(uint32_t)x;
  return 1;
}

/* an id or count, which the format keeps in 0..2^31-1 */
static sift_Status rd_u31 (Walk *w, const char *what, uint32_t *v) {
  size_t at = w->r.pos;
  int32_t x;
  TRY(rd_int32(w, &x));
  if (x < 0) return FAIL(w, SIFT_ECORRUPT, "negative %s at byte %zu", what, at);
  *v = (uint32_t)x;
  return SIFT_OK;
}

/* a count of things of at least min bytes each, that the file can hold */
static sift_Status rd_count (Walk *w, const char *what, size_t min, uint32_t *v) {
  size_t at = w->r.pos;
  sift_Status s;
  if ((s = rd_u31(w, what, v)) != SIFT_OK) return s;
  if (min > 0 && *v > sift_rd_left(&w->r) / min)
    return FAIL(w, SIFT_ETRUNC, "%s of %u at byte %zu is more than the file holds", what, *v, at);
  return SIFT_OK;
}

static int hprof_size (int bmdtype) {
  static const int size[9] = { 4, 4, 1, 1, 2, 4, 8, 8, 2 };
  return size[bmdtype];
}

static sift_Status rd_type (Walk *w, int *t) {
  size_t at = w->r.pos;
  int32_t x;
  TRY(rd_int32(w, &x));
  if (x < 0 || x > 8) return FAIL(w, SIFT_ECORRUPT, "type code out of 0..8 at byte %zu", at);
  *t = x;
  return SIFT_OK;
}

/* a typed value (BMD.md 3), written to dst as HPROF's big-endian bytes */
static sift_Status rd_value (Walk *w, int t, sift_Out *dst) {
  const unsigned char *q;
  unsigned char be[8];
  int32_t x;
  uint64_t v;
  int i;
  switch (t) {
    case 0: case 1: case 8:  /* object, int, short: int32 varints */
      TRY(rd_int32(w, &x));
      if (dst && t == 8) sift_out_u2be(dst, (uint32_t)x & 0xFFFF);
      else if (dst) sift_out_u4be(dst, (uint32_t)x);
      return SIFT_OK;
    case 7:  /* long */
      TRY(sift_rd_varint(&w->r, &v));
      if (dst) sift_out_u8be(dst, v);
      return SIFT_OK;
    case 5: case 6:  /* float, double: little-endian bits */
      TRY(sift_rd_bytes(&w->r, (uint64_t)hprof_size(t), &q));
      for (i = 0; i < hprof_size(t); i++) be[i] = q[hprof_size(t) - 1 - i];
      if (dst) sift_out_bytes(dst, be, (size_t)hprof_size(t));
      return SIFT_OK;
    default:  /* boolean, byte, char (big-endian already) */
      TRY(sift_rd_bytes(&w->r, (uint64_t)hprof_size(t), &q));
      if (dst) sift_out_bytes(dst, q, (size_t)hprof_size(t));
      return SIFT_OK;
  }
}

static bmd_Class *find_class (const bmd_File *b, uint32_t id) {
  uint32_t *v = sift_idmap_get(&b->byid, id);
  return v ? &b->classes[*v - 1] : NULL;
}

/* bytes of an instance's data: every class up the chain, with what was
   left out; 0 (and an error) when the chain loops */
static sift_Status chain_size (Walk *w, const bmd_Class *k, uint32_t *size, size_t at) {
  const bmd_File *b = w->b;
  uint64_t sum = 0;
  size_t steps = 0, f;
  for (; k != NULL; k = k->super ? find_class(b, k->super) : NULL) {
    if (++steps > b->nclasses) return FAIL(w, SIFT_ECORRUPT, "the class chain of the record at byte %zu loops", at);
    for (f = 0; f < k->nfields; f++) sum += (uint64_t)hprof_size(b->ftype[k->fields + f]);
    sum += k->discarded;
  }
  if (sum > UINT32_MAX) return FAIL(w, SIFT_ECORRUPT, "instances of the class at byte %zu are over 4 GiB", at);
  *size = (uint32_t)sum;
  return SIFT_OK;
}

static void top_record (Walk *w, int tag, uint32_t len) {
  sift_out_u1(w->o, (unsigned)tag);
  sift_out_u4be(w->o, 0);
  sift_out_u4be(w->o, len);
}

/* the placeholder fields' name, after the other strings; crunched again,
   it is the one string more */
static void removed_string (Walk *w) {
  if (w->b->removed != 0) return;
  top_record(w, HP_TAG_STRING, 4 + (uint32_t)strlen(FIELD_REMOVED));
  sift_out_u4be(w->o, w->removed);
  sift_out_bytes(w->o, FIELD_REMOVED, strlen(FIELD_REMOVED));
}

/* the segment built so far, as a HEAP_DUMP_SEGMENT */
static void flush_segment (Walk *w) {
  if (w->seg->n == 0) return;
  top_record(w, HP_TAG_HEAP_DUMP_SEGMENT, (uint32_t)w->seg->n);
  sift_out_bytes(w->o, w->seg->buf, w->seg->n);
  w->seg->n = 0;
}


/*
** The text of a hashed string with no name found: Hash$<hash>, padded with
** '+' up to the original length as Badoo's decruncher does, or with
** $<length> after it when the original was shorter, so that crunching it
** again gives back the same hash and length (crunch.c). Plain: no length.
** Returns the length; a long original is padded to at most size - 1.
*/
static size_t hash_placeholder (char *buf, size_t size, int32_t hash, uint32_t len, int plain) {
  size_t n = (size_t)snprintf(buf, size, "Hash$%ld", (long)hash);
  if (plain || n == len) return n;
  if (n > len) return n + (size_t)snprintf(buf + n, size - n, "$%lu", (unsigned long)len);
  return n;  /* the caller pads it */
}

static int32_t removed_hash (void) {
  int32_t h;
  sift_java_string((const unsigned char *)FIELD_REMOVED, strlen(FIELD_REMOVED), &h, NULL);
  return h;
}

static sift_Status string_record (Walk *w, int hashed) {
  uint32_t id, len, pad = 0;
  int32_t hash = 0;
  const unsigned char *text;
  size_t textlen = 0;
  sift_Status s;
  char placeholder[64];
  if ((s = rd_u31(w, "string id", &id)) != SIFT_OK) return s;
  if (hashed) {
    if ((s = rd_u31(w, "string length", &len)) != SIFT_OK) return s;
    TRY(rd_int32(w, &hash));
  }
  else {
    if ((s = rd_count(w, "string length", 1, &len)) != SIFT_OK) return s;
    TRY(sift_rd_bytes(&w->r, len, &text));
    textlen = len;
  }
  if (id > w->b->max_string) w->b->max_string = id;
  if (w->pass == CHECK && !hashed && id == BMD_KINDS_ID && len >= strlen(BMD_KINDS_PREFIX)
      && memcmp(text, BMD_KINDS_PREFIX, strlen(BMD_KINDS_PREFIX)) == 0) {  /* sift's root kinds (bmd.h) */
    w->b->kinds = text + strlen(BMD_KINDS_PREFIX);
    w->b->kindslen = len - strlen(BMD_KINDS_PREFIX);
  }
  if (w->pass == CHECK) {  /* a decrunched file crunched again has its placeholder name */
    int32_t h;
    size_t m = hashed ? len : sift_java_string(text, len, &h, NULL);
    if (!hashed) hash = h;
    if (m == strlen(FIELD_REMOVED) && hash == removed_hash()) w->b->removed = id;
    return SIFT_OK;
  }
  if (w->pass != TOP) return SIFT_OK;
  if (!hashed && id == BMD_KINDS_ID && w->b->kinds && text + strlen(BMD_KINDS_PREFIX) == w->b->kinds)
    return SIFT_OK;  /* sift's root kinds: written as the roots' own tags, not as a string */
  if (id == w->removed) {
    text = (const unsigned char *)FIELD_REMOVED;
    textlen = strlen(FIELD_REMOVED);
  }
  else if (hashed) {
    text = w->opt->dict ? bmd_dict_find(w->opt->dict, hash, len, &textlen) : NULL;
    if (text) w->st->recovered++;
    else {
      text = (const unsigned char *)placeholder;
      textlen = hash_placeholder(placeholder, sizeof placeholder, hash, len, w->opt->plain_names);
      if (!w->opt->plain_names && textlen < len) pad = len - textlen;
      w->st->placeholders++;
    }
  }
  top_record(w, HP_TAG_STRING, (uint32_t)(4 + textlen + pad));
  sift_out_u4be(w->o, id);
  sift_out_bytes(w->o, text, textlen);
  sift_out_fill(w->o, '+', pad);
  return SIFT_OK;
}

static sift_Status class_record (Walk *w, size_t at) {
  bmd_File *b = w->b;
  uint32_t id, super, name, n, k, f, size = 0;
  bmd_Class *kl = NULL;
  sift_Status s;
  int t;
  if ((s = rd_u31(w, "class id", &id)) != SIFT_OK || (s = rd_u31(w, "superclass id", &super)) != SIFT_OK ||
      (s = rd_u31(w, "name id", &name)) != SIFT_OK) return s;
  if (w->pass == CHECK) {  /* learn the class */
    uint32_t *slot;
    int made;
    if (id == 0) return FAIL(w, SIFT_ECORRUPT, "class id 0 at byte %zu", at);
    if ((slot = sift_idmap_put(&b->byid, id, &made)) == NULL) return FAIL(w, SIFT_ENOMEM, "out of memory (byte %zu)", at);
    if (!made) return FAIL(w, SIFT_ECORRUPT, "class defined twice at byte %zu", at);
    if (b->nclasses == b->classcap) {
      size_t cap = b->classcap ? b->classcap * 2 : 256;
      bmd_Class *c = (bmd_Class *)realloc(b->classes, cap * sizeof *c);
      if (c == NULL) return FAIL(w, SIFT_ENOMEM, "out of memory (byte %zu)", at);
      b->classes = c;
      b->classcap = cap;
    }
    kl = &b->classes[b->nclasses++];
    *slot = (uint32_t)b->nclasses;
    kl->id = id;
    kl->super = super;
    kl->name = name;
  }
  else if (w->pass == TOP) {  /* its LOAD_CLASS */
    kl = find_class(b, id);
    top_record(w, HP_TAG_LOAD_CLASS, 16);
    sift_out_u4be(w->o, ++w->serial);
    sift_out_u4be(w->o, id);
    sift_out_u4be(w->o, 0);
    sift_out_u4be(w->o, name);
  }
  else {  /* its CLASS_DUMP */
    kl = find_class(b, id);
    if ((s = chain_size(w, kl, &size, at)) != SIFT_OK) return s;
    sift_out_u1(w->seg, HP_CLASS_DUMP);
    sift_out_u4be(w->seg, id);
    sift_out_u4be(w->seg, 0);
    sift_out_u4be(w->seg, super);
    sift_out_zeros(w->seg, 5 * 4);  /* loader, signers, domain, reserved */
    sift_out_u4be(w->seg, size);
  }
  /* constants: pool index, type, value */
  if ((s = rd_count(w, "constant count", 3, &n)) != SIFT_OK) return s;
  if (n > 0xFFFF) return FAIL(w, SIFT_ECORRUPT, "more constants than HPROF holds in the class at byte %zu", at);
  if (w->pass == HEAP) sift_out_u2be(w->seg, n);
  for (k = 0; k < n; k++) {
    uint32_t index;
    if ((s = rd_u31(w, "constant pool index", &index)) != SIFT_OK || (s = rd_type(w, &t)) != SIFT_OK) return s;
    if (w->pass == HEAP) {
      sift_out_u2be(w->seg, index & 0xFFFF);
      sift_out_u1(w->seg, bmd_hprof_type[t]);
    }
    if ((s = rd_value(w, t, HEAP_OUT(w))) != SIFT_OK) return s;
  }
  /* statics: name, type, value */
  if ((s = rd_count(w, "static field count", 3, &n)) != SIFT_OK) return s;
  if (n > 0xFFFF) return FAIL(w, SIFT_ECORRUPT, "more static fields than HPROF holds in the class at byte %zu", at);
  if (w->pass == HEAP) sift_out_u2be(w->seg, n);
  for (k = 0; k < n; k++) {
    uint32_t fname;
    if ((s = rd_u31(w, "field name id", &fname)) != SIFT_OK || (s = rd_type(w, &t)) != SIFT_OK) return s;
    if (w->pass == HEAP) {
      sift_out_u4be(w->seg, fname);
      sift_out_u1(w->seg, bmd_hprof_type[t]);
    }
    if ((s = rd_value(w, t, HEAP_OUT(w))) != SIFT_OK) return s;
  }
  /* kept instance fields, then the bytes left out */
  if ((s = rd_count(w, "instance field count", 2, &n)) != SIFT_OK) return s;
  if (w->pass == CHECK) {
    if (b->nfields + n > b->fieldcap) {
      size_t cap = b->fieldcap ? b->fieldcap : 1024;
      uint8_t *ft;
      uint32_t *fn;
      while (cap < b->nfields + n) cap *= 2;
      ft = (uint8_t *)realloc(b->ftype, cap);
      if (ft) b->ftype = ft;
      fn = (uint32_t *)realloc(b->fname, cap * sizeof *fn);
      if (fn) b->fname = fn;
      if (ft == NULL || fn == NULL) return FAIL(w, SIFT_ENOMEM, "out of memory (byte %zu)", at);
      b->fieldcap = cap;
    }
    kl->fields = (uint32_t)b->nfields;
    kl->nfields = n;
  }
  for (k = 0; k < n; k++) {
    uint32_t fname;
    if ((s = rd_u31(w, "field name id", &fname)) != SIFT_OK || (s = rd_type(w, &t)) != SIFT_OK) return s;
    if (w->pass == CHECK) {
      b->ftype[b->nfields] = (uint8_t)t;
      b->fname[b->nfields++] = fname;
    }
  }
  if ((s = rd_u31(w, "left-out field bytes", &size)) != SIFT_OK) return s;
  if (w->pass == CHECK) {
    kl->discarded = size;
    if ((uint64_t)n + size / 4 + size % 4 > 0xFFFF)
      return FAIL(w, SIFT_ECORRUPT, "more instance fields than HPROF holds in the class at byte %zu", at);
    return SIFT_OK;
  }
  if (w->pass != HEAP) return SIFT_OK;
  /* the kept fields, then placeholders for the bytes left out: an int
     per 4 bytes and a byte per remaining byte, so sizes stay right */
  sift_out_u2be(w->seg, kl->nfields + size / 4 + size % 4);
  for (f = 0; f < kl->nfields; f++) {
    sift_out_u4be(w->seg, b->fname[kl->fields + f]);
    sift_out_u1(w->seg, bmd_hprof_type[b->ftype[kl->fields + f]]);
  }
  for (f = 0; f < size / 4 + size % 4; f++) {
    sift_out_u4be(w->seg, w->removed);
    sift_out_u1(w->seg, f < size / 4 ? 10 : 8);
  }
  return SIFT_OK;
}

static sift_Status instance_record (Walk *w, size_t at) {
  const bmd_File *b = w->b;
  uint32_t id, cls, size = 0, f;
  const bmd_Class *k;
  sift_Status s;
  if ((s = rd_u31(w, "object id", &id)) != SIFT_OK || (s = rd_u31(w, "class id", &cls)) != SIFT_OK) return s;
  if ((k = find_class(b, cls)) == NULL)
    return FAIL(w, SIFT_ECORRUPT, "instance at byte %zu: its class is not defined before it", at);
  if ((s = chain_size(w, k, &size, at)) != SIFT_OK) return s;
  if (w->pass == HEAP) {
    sift_out_u1(w->seg, HP_INSTANCE_DUMP);
    sift_out_u4be(w->seg, id);
    sift_out_u4be(w->seg, 0);
    sift_out_u4be(w->seg, cls);
    sift_out_u4be(w->seg, size);
  }
  for (; k != NULL; k = k->super ? find_class(b, k->super) : NULL) {
    for (f = 0; f < k->nfields; f++)
      if ((s = rd_value(w, b->ftype[k->fields + f], HEAP_OUT(w))) != SIFT_OK) return s;
    if (w->pass == HEAP) sift_out_zeros(w->seg, k->discarded);
  }
  return SIFT_OK;
}

static sift_Status array_record (Walk *w, int tag) {
  uint32_t id, cls = 0, n, k, e;
  int t = 0;
  sift_Status s;
  if ((s = rd_u31(w, "array id", &id)) != SIFT_OK) return s;
  if (tag == BMD_OBJECT_ARRAY) {
    if ((s = rd_u31(w, "array class id", &cls)) != SIFT_OK ||
        (s = rd_count(w, "element count", 1, &n)) != SIFT_OK) return s;
    if (w->pass == HEAP) {
      sift_out_u1(w->seg, HP_OBJ_ARRAY_DUMP);
      sift_out_u4be(w->seg, id);
      sift_out_u4be(w->seg, 0);
      sift_out_u4be(w->seg, n);
      sift_out_u4be(w->seg, cls);
    }
    for (k = 0; k < n; k++) {
      if ((s = rd_u31(w, "element id", &e)) != SIFT_OK) return s;
      if (w->pass == HEAP) sift_out_u4be(w->seg, e);
    }
    return SIFT_OK;
  }
  if ((s = rd_type(w, &t)) != SIFT_OK || (s = rd_u31(w, "element count", &n)) != SIFT_OK) return s;
  if (t == 0) return FAIL(w, SIFT_ECORRUPT, "primitive array of objects before byte %zu", w->r.pos);
  if (w->pass == CHECK) w->b->counts.zeros += (uint64_t)n * (uint64_t)hprof_size(t);
  if (w->pass == HEAP) {
    /* the contents are gone: zeros (none for a no-data record); a big
       array is a segment of its own, streamed to the file */
    uint64_t bytes = w->opt->nodata ? 0 : (uint64_t)n * (uint64_t)hprof_size(t);
    sift_Out *dst = w->seg;
    if (w->seg->n + 14 + bytes > SEGMENT_BYTES) {
      flush_segment(w);
      if (14 + bytes > SEGMENT_BYTES) {
        if (14 + bytes > UINT32_MAX)
          return FAIL(w, SIFT_EUNSUPPORTED, "a primitive array before byte %zu is over the 4 GiB an HPROF record holds", w->r.pos);
        top_record(w, HP_TAG_HEAP_DUMP_SEGMENT, (uint32_t)(14 + bytes));
        dst = w->o;
      }
    }
    sift_out_u1(dst, w->opt->nodata ? HP_PRIM_ARRAY_NODATA : HP_PRIM_ARRAY_DUMP);
    sift_out_u4be(dst, id);
    sift_out_u4be(dst, 0);
    sift_out_u4be(dst, n);
    sift_out_u1(dst, bmd_hprof_type[t]);
    sift_out_zeros(dst, bytes);
  }
  return SIFT_OK;
}

/* a legacy record's ids were copied from the HPROF: the ones whose size
   shows ids other than 4 bytes wide cannot go into a 4-byte-id file */
static int fits_id4 (int tag, const unsigned char *q, uint32_t len) {
  switch (tag) {
    case HP_TAG_STACK_FRAME: case HP_TAG_START_THREAD: return len == 24;
    case HP_TAG_STACK_TRACE:  /* serial, thread, count, frame ids */
      return len >= 12 && (uint64_t)len - 12 == 4 * (uint64_t)((uint32_t)q[8] << 24 | (uint32_t)q[9] << 16 | (uint32_t)q[10] << 8 | q[11]);
    default: return 1;
  }
}

/* the kind of the next root: from sift's record (runs "KK*N,", KK its
   tag in hex), else UNKNOWN as Badoo writes every root; a malformed run
   ends the kinds */
static unsigned next_kind (Walk *w) {
  const unsigned char *t = w->b->kinds;
  size_t n = w->b->kindslen, pos = w->kpos;
  while (w->kleft == 0) {
    unsigned kind = 0;
    uint64_t count = 0;
    int k;
    if (t == NULL || pos + 4 > n || t[pos + 2] != '*') return HP_ROOT_UNKNOWN;
    for (k = 0; k < 2; k++) {
      int c = t[pos + k];
      kind = kind * 16 + (unsigned)(c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99);
    }
    for (pos += 3; pos < n && t[pos] >= '0' && t[pos] <= '9' && count < (1ull << 40); pos++)
      count = count * 10 + (uint64_t)(t[pos] - '0');
    if (kind > 0xFF || count == 0 || pos >= n || t[pos] != ',') {  /* malformed: the rest are unknown */
      w->kpos = n;
      return HP_ROOT_UNKNOWN;
    }
    w->kpos = pos = pos + 1;
    w->kcur = kind;
    w->kleft = count;
  }
  w->kleft--;
  return w->kcur;
}

/* one root as an HPROF sub-record of its kind (hprof.h's layout, 4-byte
   ids); what BMD does not keep (threads, frames, JNI references) is 0, and
   thread objects are numbered. UNREACHABLE (crunching drops it) and what
   is no root tag are written as UNKNOWN. */
static void root (Walk *w, uint32_t id) {
  unsigned kind = next_kind(w);
  sift_Out *o = w->seg;
  const hp_SubRecord *sr = &hp_subrecords[kind];
  if (!(sr->flags & HP_ROOT) || kind == HP_ROOT_UNREACHABLE) sr = &hp_subrecords[kind = HP_ROOT_UNKNOWN];
  sift_out_u1(o, kind);
  sift_out_u4be(o, id);
  if (kind == HP_ROOT_THREAD_OBJECT) {  /* thread serial, stack trace */
    sift_out_u4be(o, ++w->threads);
    sift_out_u4be(o, 0);
  }
  else sift_out_zeros(o, 4 * (size_t)(sr->ids - 1) + sr->bytes);
}

static sift_Status record (Walk *w) {
  bmd_File *b = w->b;
  size_t at = w->r.pos;
  int32_t tag;
  uint32_t n, k, id, htag;
  const unsigned char *q;
  sift_Status s;
  TRY(rd_int32(w, &tag));
  if (w->pass == CHECK && tag > 0 && tag < BMD_NTAGS) b->counts.records[tag]++;
  switch (tag) {
    case BMD_STRING: return string_record(w, 0);
    case BMD_HASHED_STRING: return string_record(w, 1);
    case BMD_CLASS: return class_record(w, at);
    case BMD_INSTANCE: return instance_record(w, at);
    case BMD_OBJECT_ARRAY: case BMD_PRIMITIVE_ARRAY: return array_record(w, tag);
    case BMD_ROOTS:
      if ((s = rd_count(w, "root count", 1, &n)) != SIFT_OK) return s;
      if (w->pass == CHECK) {
        b->counts.roots += n;
        if (b->kinds) b->counts.kinds = b->counts.roots;
      }
      for (k = 0; k < n; k++) {
        if ((s = rd_u31(w, "root id", &id)) != SIFT_OK) return s;
        if (w->pass == HEAP) root(w, id);
      }
      return SIFT_OK;
    case BMD_LEGACY:
      if ((s = rd_u31(w, "HPROF tag", &htag)) != SIFT_OK || (s = rd_count(w, "record length", 1, &n)) != SIFT_OK) return s;
      if (htag > 0xFF) return FAIL(w, SIFT_ECORRUPT, "legacy record with an HPROF tag over 0xFF at byte %zu", at);
      TRY(sift_rd_bytes(&w->r, n, &q));
      if (w->pass == CHECK) b->counts.legacy_tags[htag]++;
      else if (w->pass == HEAP) {}
      else if (!fits_id4((int)htag, q, n)) w->st->legacy_dropped++;
      else {
        top_record(w, (int)htag, n);
        sift_out_bytes(w->o, q, n);
      }
      return SIFT_OK;
    default:
      return FAIL(w, SIFT_EBADTAG, "unknown record tag at byte %zu (records have no length: nothing after it can be read)", at);
  }
}

static sift_Status walk (Walk *w) {
  sift_Status s;
  sift_reader_init(&w->r, w->b->p, w->b->n);
  w->r.pos = w->b->data;
  while (sift_rd_left(&w->r) > 0) {
    if ((s = record(w)) != SIFT_OK) return s;
    if (w->pass == HEAP && w->seg->n >= SEGMENT_BYTES) flush_segment(w);
    if (w->o && w->o->failed) return FAIL(w, SIFT_EIO, "cannot write the output (after byte %zu)", w->r.pos);
    if (!sift_progress(w->pr, w->base + w->r.pos)) return FAIL(w, SIFT_ECANCEL, "cancelled at byte %zu", w->r.pos);
  }
  return SIFT_OK;
}

sift_Status bmd_open (bmd_File *b, const unsigned char *p, size_t n,
                      sift_Progress *pr, sift_Error *err) {
  Walk w;
  int32_t version;
  uint32_t len;
  sift_Status s;
  size_t k;
  memset(b, 0, sizeof *b);
  memset(&w, 0, sizeof w);
  b->p = p;
  b->n = n;
  w.b = b;
  w.err = err;
  w.pr = pr;
  sift_reader_init(&w.r, p, n);
  if (!rd_int32(&w, &version)) return rd_failed(&w);
  if (version != 1) return FAIL(&w, SIFT_EUNSUPPORTED, "version %lu is not BMD 1 (byte 0)", (unsigned long)(uint32_t)version);
  if ((s = rd_count(&w, "header length", 1, &len)) != SIFT_OK) return s;
  if (!sift_rd_bytes(&w.r, len, &b->meta)) return rd_failed(&w);
  b->metalen = len;
  b->data = w.r.pos;
  b->counts.bytes_in = n;
  if ((s = walk(&w)) != SIFT_OK) return s;
  for (k = 0; k < b->nclasses; k++) {  /* no class chain may loop */
    uint32_t size;
    if ((s = chain_size(&w, &b->classes[k], &size, b->data)) != SIFT_OK)
      return FAIL(&w, SIFT_ECORRUPT, "the superclass chain of a class loops (records from byte %zu)", b->data);
  }
  return SIFT_OK;
}

void bmd_close (bmd_File *b) {
  free(b->classes);
  free(b->ftype);
  free(b->fname);
  sift_idmap_free(&b->byid);
  memset(b, 0, sizeof *b);
}

sift_Status bmd_decrunch (const bmd_File *b, FILE *out,
                          const bmd_DecrunchOptions *opt,
                          bmd_DecrunchStats *st, sift_Progress *pr,
                          sift_Error *err) {
  Walk w;
  sift_Out o, seg;
  sift_Status s;
  memset(&w, 0, sizeof w);
  memset(st, 0, sizeof *st);
  w.b = (bmd_File *)(uintptr_t)b;  /* the walk reads it only, with output on */
  w.err = err;
  w.o = &o;
  w.seg = &seg;
  w.opt = opt;
  w.st = st;
  w.pr = pr;
  w.removed = b->removed ? b->removed : b->max_string + 1;
  st->kinds = b->kinds ? b->counts.roots : 0;
  /* what a BMD amplifies is its primitive arrays, written as zeros: the
     output is at most the input's records re-encoded (each BMD byte
     becomes at most 8) plus those zeros */
  if (opt->max_out > 0 && !opt->nodata
      && b->counts.zeros + 8 * (uint64_t)b->n > opt->max_out) {
    return sift_fail(err, SIFT_ETOOBIG, "decrunching would write up to %llu bytes (%llu of them zeros for "
                     "primitive arrays BMD does not hold), over the %llu allowed (--max-output): nothing written",
                     (unsigned long long)(b->counts.zeros + 8 * (uint64_t)b->n),
                     (unsigned long long)b->counts.zeros, (unsigned long long)opt->max_out);
  }
  sift_out_init(&o, out);
  sift_out_init(&seg, NULL);
  sift_out_bytes(&o, b->meta, b->metalen);
  sift_out_u1(&o, 0);
  sift_out_u4be(&o, 4);   /* id size */
  sift_out_u8be(&o, 0);   /* time stamp: BMD has none */
  /* strings, LOAD_CLASS and legacy records first, then the heap as
     contiguous segments (VisualVM wants nothing between them) */
  w.pass = TOP;
  w.base = b->n;  /* progress: after bmd_open's walk */
  if ((s = walk(&w)) == SIFT_OK) {
    removed_string(&w);
    w.pass = HEAP;
    w.base = 2 * (uint64_t)b->n;
    s = walk(&w);
  }
  if (s == SIFT_OK) {
    flush_segment(&w);
    top_record(&w, HP_TAG_HEAP_DUMP_END, 0);
    if (!sift_out_flush(&o)) s = FAIL(&w, SIFT_EIO, "cannot write the output (%zu bytes written)", (size_t)o.flushed);
  }
  st->bytes_out = sift_out_size(&o);
  sift_out_free(&o);
  sift_out_free(&seg);
  return s;
}
