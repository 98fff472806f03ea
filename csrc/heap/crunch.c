/*
** crunch.c
** HPROF -> BMD (BMD.md 6-9). Pass 1 writes strings, legacy records and a
** class definition per CLASS_DUMP; pass 2 writes instances and arrays in
** file order; the roots come last, as one record. Ids are renumbered from
** 1 in order of first appearance (strings and objects apart); 0 stays
** null. Nothing but the id maps and the class layouts stays in memory.
*/

#include <stdlib.h>
#include <string.h>

#include "bmd.h"
#include "hprof.h"
#include "core/idmap.h"
#include "jstring.h"
#include "core/out.h"
#include "core/reader.h"

/* BMD's type numbers (BMD.md 5.2) as HPROF basic types */
const uint8_t bmd_hprof_type[9] = {
  HP_OBJECT, HP_INT, HP_BOOLEAN, HP_BYTE, HP_CHAR, HP_FLOAT, HP_DOUBLE, HP_LONG, HP_SHORT
};

int bmd_type_of (int t) {
  int i;
  for (i = 0; i < 9; i++)
    if (bmd_hprof_type[i] == t) return i;
  return -1;
}

/* a class's own instance fields, for pass 2 */
typedef struct Klass {
  uint64_t super;
  size_t types, ntypes;   /* HPROF types: c->types[types .. types+ntypes) */
  int preserved;          /* its primitives are kept too */
} Klass;

typedef struct Cruncher {
  const unsigned char *p;
  size_t n;
  int idsize;
  const bmd_CrunchOptions *opt;
  sift_Out o;
  bmd_Counts *counts;
  sift_IdMap objs, strs;  /* original id -> BMD id */
  uint32_t next_obj, next_str;
  sift_IdMap loads;       /* class id -> LOAD_CLASS number + 1 */
  uint64_t *names;        /* LOAD_CLASS name string ids */
  size_t nnames, namecap;
  sift_IdMap text;        /* string ids written as text */
  sift_IdMap klass;       /* class id -> index + 1 */
  Klass *k;
  size_t nk, kcap;
  uint8_t *types;
  size_t ntypes, typecap;
  uint64_t *roots;
  uint8_t *kinds;         /* each root's HPROF tag */
  size_t nroots, rootcap, kindcap;
  size_t dumps;           /* HEAP_DUMP and HEAP_DUMP_SEGMENT records seen */
  unsigned char *scratch; /* re-encoded string bytes */
  size_t scratchcap;
  sift_Progress *pr;
  uint64_t done;          /* bytes of both passes */
  sift_Error *err;
} Cruncher;

#define FAIL(c, s, ...) sift_fail((c)->err, (s), __VA_ARGS__)
#define NOMEM(c) FAIL(c, SIFT_ENOMEM, "crunch: out of memory")

static int grow (void **arr, size_t *cap, size_t need, size_t size) {
  size_t ncap = *cap ? *cap : 64;
  void *p;
  if (need <= *cap) return 1;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / size) return 0;
    ncap *= 2;
  }
  if ((p = realloc(*arr, ncap * size)) == NULL) return 0;
  *arr = p;
  *cap = ncap;
  return 1;
}

static uint64_t id_at (const Cruncher *c, const unsigned char *q) {
  return hp_read_id(q, c->idsize);
}

/* the BMD number of an original id in a map, given out when new; 0 -> 0 */
static int number (sift_IdMap *m, uint32_t *next, uint64_t id, uint32_t *out) {
  int made;
  uint32_t *v;
  if (id == 0) return *out = 0, 1;
  if ((v = sift_idmap_put(m, id, &made)) == NULL) return 0;
  if (made) {
    if (*next > INT32_MAX) return 0;  /* BMD ids are Java ints */
    *v = (*next)++;
  }
  *out = *v;
  return 1;
}

static int obj (Cruncher *c, uint64_t id) {
  uint32_t v;
  if (!number(&c->objs, &c->next_obj, id, &v)) return 0;
  sift_out_int32(&c->o, (int32_t)v);
  return 1;
}

static int str (Cruncher *c, uint64_t id) {
  uint32_t v;
  if (!number(&c->strs, &c->next_str, id, &v)) return 0;
  sift_out_int32(&c->o, (int32_t)v);
  return 1;
}

static int hsize (const Cruncher *c, int t) {
  switch (t) {
    case 2: return c->idsize;
    case 4: case 8: return 1;
    case 5: case 9: return 2;
    case 6: case 10: return 4;
    case 7: case 11: return 8;
    default: return 0;
  }
}

/* one HPROF value of type t at q as a BMD typed value (BMD.md 3) */
static int value (Cruncher *c, int t, const unsigned char *q) {
  unsigned char le[8];
  int i;
  switch (t) {
    case 2: return obj(c, id_at(c, q));
    case 10: sift_out_int32(&c->o, (int32_t)hp_read_u4(q)); return 1;
    case 9: sift_out_int32(&c->o, (int16_t)(q[0] << 8 | q[1])); return 1;
    case 11: sift_out_varint(&c->o, (uint64_t)hp_read_u4(q) << 32 | hp_read_u4(q + 4)); return 1;
    case 6: case 7:  /* float, double: the bits little-endian */
      for (i = 0; i < hsize(c, t); i++) le[i] = q[hsize(c, t) - 1 - i];
      sift_out_bytes(&c->o, le, (size_t)hsize(c, t));
      return 1;
    default:  /* boolean, byte, char: as they are */
      sift_out_bytes(&c->o, q, (size_t)hsize(c, t));
      return 1;
  }
}

static int starts (const unsigned char *s, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(s, prefix, k) == 0;
}

/* strings kept as text: java.lang*, the primitive type names, the user's */
static int clear_text (const Cruncher *c, const unsigned char *s, size_t n) {
  static const char *const prims[] = { "V", "boolean", "byte", "short", "char", "int", "long", "float", "double" };
  size_t i;
  if (starts(s, n, "java.lang")) return 1;
  for (i = 0; i < sizeof prims / sizeof *prims; i++)
    if (n == strlen(prims[i]) && memcmp(s, prims[i], n) == 0) return 1;
  for (i = 0; i < c->opt->nkeep; i++)
    if (starts(s, n, c->opt->keep[i])) return 1;
  return 0;
}

/*
** A placeholder a decruncher wrote for a string it could not name:
** Hash$<hash> padded with '+' to the original length, or Hash$<hash>$<len>
** (bmd.c). Crunched again, it is that hash and length once more.
*/
static int placeholder (const unsigned char *s, size_t n, int32_t *hash, uint32_t *len) {
  size_t i = 5;
  int64_t h = 0, l = 0;
  int neg = 0, digits = 0;
  if (!starts(s, n, "Hash$")) return 0;
  if (i < n && s[i] == '-') { neg = 1; i++; }
  for (; i < n && s[i] >= '0' && s[i] <= '9' && digits < 11; i++, digits++) h = h * 10 + (s[i] - '0');
  if (digits == 0 || (neg ? -h : h) < INT32_MIN || (neg ? -h : h) > INT32_MAX) return 0;
  *hash = (int32_t)(neg ? -h : h);
  if (i < n && s[i] == '$') {  /* the original length */
    for (i++, digits = 0; i < n && s[i] >= '0' && s[i] <= '9' && digits < 10; i++, digits++) l = l * 10 + (s[i] - '0');
    if (digits == 0 || i != n || l > INT32_MAX) return 0;
    *len = (uint32_t)l;
    return 1;
  }
  while (i < n && s[i] == '+') i++;
  if (i != n) return 0;
  *len = (uint32_t)n;
  return 1;
}

static sift_Status string_record (Cruncher *c, const unsigned char *q, uint32_t len) {
  uint64_t id = id_at(c, q);
  const unsigned char *s = q + c->idsize;
  size_t n = len - (size_t)c->idsize, m;
  int32_t hash;
  uint32_t bmd, hashed_len;
  int made, named;
  if (!grow((void **)&c->scratch, &c->scratchcap, 3 * n + 1, 1)) return NOMEM(c);
  m = sift_java_string(s, n, &hash, c->scratch);
  if (!number(&c->strs, &c->next_str, id, &bmd)) return NOMEM(c);
  named = !placeholder(s, n, &hash, &hashed_len);
  if (!named) m = hashed_len;
  if (named && clear_text(c, c->scratch, m)) {
    if (id != 0 && sift_idmap_put(&c->text, id, &made) == NULL) return NOMEM(c);
    sift_out_varint(&c->o, BMD_STRING);
    sift_out_int32(&c->o, (int32_t)bmd);
    sift_out_int32(&c->o, (int32_t)m);
    sift_out_bytes(&c->o, c->scratch, m);
    c->counts->records[BMD_STRING]++;
  }
  else {
    sift_out_varint(&c->o, BMD_HASHED_STRING);
    sift_out_int32(&c->o, (int32_t)bmd);
    sift_out_int32(&c->o, (int32_t)m);
    sift_out_int32(&c->o, hash);
    c->counts->records[BMD_HASHED_STRING]++;
  }
  return SIFT_OK;
}

/* the bytes a heap sub-record takes after its tag, or 0 when it cannot be
   known (an unknown tag); class dumps are measured by walking them */
static size_t sub_size (const Cruncher *c, int tag, const unsigned char *q, size_t left) {
  size_t I = (size_t)c->idsize;
  const hp_SubRecord *sr = &hp_subrecords[tag];
  if (sr->ids > 0) return sr->ids * I + sr->bytes;  /* a fixed layout */
  switch (tag) {
    case HP_INSTANCE_DUMP:
      if (left < 2 * I + 8) return SIZE_MAX;
      return 2 * I + 8 + hp_read_u4(q + 2 * I + 4);
    case HP_OBJ_ARRAY_DUMP:
      if (left < 2 * I + 8) return SIZE_MAX;
      return 2 * I + 8 + (size_t)hp_read_u4(q + I + 4) * I;
    case HP_PRIM_ARRAY_DUMP: {
      int s;
      if (left < I + 9) return SIZE_MAX;
      s = hsize(c, q[I + 8]);
      if (s == 0 || q[I + 8] == HP_OBJECT) return 0;
      return I + 9 + (size_t)hp_read_u4(q + I + 4) * (size_t)s;
    }
    case HP_CLASS_DUMP: {  /* id, u4, 6 ids, u4, then three lists */
      size_t at = 7 * I + 8, k, cnt;
      int t, s;
      if (left < at + 2) return SIZE_MAX;
      for (cnt = (size_t)(q[at] << 8 | q[at + 1]), at += 2, k = 0; k < cnt; k++) {  /* constants */
        if (left < at + 3 || (s = hsize(c, t = q[at + 2])) == 0) return left < at + 3 ? SIZE_MAX : 0;
        at += 3 + (size_t)s;
      }
      if (left < at + 2) return SIZE_MAX;
      for (cnt = (size_t)(q[at] << 8 | q[at + 1]), at += 2, k = 0; k < cnt; k++) {  /* statics */
        if (left < at + I + 1 || (s = hsize(c, t = q[at + I])) == 0) return left < at + I + 1 ? SIZE_MAX : 0;
        at += I + 1 + (size_t)s;
      }
      if (left < at + 2) return SIZE_MAX;
      cnt = (size_t)(q[at] << 8 | q[at + 1]);
      at += 2;
      if (left < at || (left - at) / (I + 1) < cnt) return SIZE_MAX;
      for (k = 0; k < cnt; k++)
        if (hsize(c, q[at + k * (I + 1) + I]) == 0) return 0;
      return at + cnt * (I + 1);
    }
    default: return 0;
  }
}

static Klass *find_klass (const Cruncher *c, uint64_t id) {
  uint32_t *v = sift_idmap_get(&c->klass, id);
  return v ? &c->k[*v - 1] : NULL;
}

/* CLASS_DUMP -> CLASS_DEFINITION (BMD.md 5.3), remembering the layout */
static sift_Status class_dump (Cruncher *c, const unsigned char *q, size_t at) {
  size_t I = (size_t)c->idsize, pos = 7 * I + 8, k, cnt, first;
  uint64_t id = id_at(c, q), super = id_at(c, q + I + 4), name = 0;
  uint32_t *load = sift_idmap_get(&c->loads, id), *slot, kept = 0, discarded = 0;
  Klass *kl;
  int made;
  if (load) name = c->names[*load - 1];
  if ((slot = sift_idmap_put(&c->klass, id, &made)) == NULL) return NOMEM(c);
  if (!made) return FAIL(c, SIFT_ECORRUPT, "crunch: class 0x%llx dumped twice (byte %zu)", (unsigned long long)id, at);
  if (!grow((void **)&c->k, &c->kcap, c->nk + 1, sizeof *c->k)) return NOMEM(c);
  *slot = (uint32_t)++c->nk;
  kl = &c->k[c->nk - 1];
  kl->super = super;
  kl->preserved = c->opt->keep_primitives || (name != 0 && sift_idmap_get(&c->text, name) != NULL);
  sift_out_varint(&c->o, BMD_CLASS);
  if (!obj(c, id) || !obj(c, super) || !str(c, name)) return NOMEM(c);
  cnt = (size_t)(q[pos] << 8 | q[pos + 1]);
  pos += 2;
  sift_out_int32(&c->o, (int32_t)cnt);
  for (k = 0; k < cnt; k++) {  /* constants: pool index, type, value */
    int t = q[pos + 2];
    sift_out_int32(&c->o, q[pos] << 8 | q[pos + 1]);
    sift_out_int32(&c->o, bmd_type_of(t));
    if (!value(c, t, q + pos + 3)) return NOMEM(c);
    pos += 3 + (size_t)hsize(c, t);
  }
  cnt = (size_t)(q[pos] << 8 | q[pos + 1]);
  pos += 2;
  sift_out_int32(&c->o, (int32_t)cnt);
  for (k = 0; k < cnt; k++) {  /* statics: name, type, value */
    int t = q[pos + I];
    if (!str(c, id_at(c, q + pos))) return NOMEM(c);
    sift_out_int32(&c->o, bmd_type_of(t));
    if (!value(c, t, q + pos + I + 1)) return NOMEM(c);
    pos += I + 1 + (size_t)hsize(c, t);
  }
  cnt = (size_t)(q[pos] << 8 | q[pos + 1]);
  pos += 2;
  first = pos;
  if (!grow((void **)&c->types, &c->typecap, c->ntypes + cnt, 1)) return NOMEM(c);
  kl->types = c->ntypes;
  kl->ntypes = cnt;
  for (k = 0; k < cnt; k++) {
    int t = q[first + k * (I + 1) + I];
    c->types[c->ntypes++] = (uint8_t)t;
    if (kl->preserved || t == 2) kept++;
    else discarded += (uint32_t)hsize(c, t);
  }
  sift_out_int32(&c->o, (int32_t)kept);
  for (k = 0; k < cnt; k++) {
    int t = q[first + k * (I + 1) + I];
    if (!kl->preserved && t != 2) continue;
    if (!str(c, id_at(c, q + first + k * (I + 1)))) return NOMEM(c);
    sift_out_int32(&c->o, bmd_type_of(t));
  }
  sift_out_int32(&c->o, (int32_t)discarded);
  c->counts->records[BMD_CLASS]++;
  return SIFT_OK;
}

/* INSTANCE_DUMP -> INSTANCE_DUMP: the fields of each class up the chain */
static sift_Status instance_dump (Cruncher *c, const unsigned char *q, size_t at) {
  size_t I = (size_t)c->idsize, len = hp_read_u4(q + 2 * I + 4), pos = 0, steps = 0, k;
  const unsigned char *data = q + 2 * I + 8;
  uint64_t cls = id_at(c, q + I + 4);
  const Klass *kl = find_klass(c, cls);
  if (kl == NULL)
    return FAIL(c, SIFT_ECORRUPT, "crunch: instance at byte %zu: class 0x%llx has no CLASS_DUMP", at, (unsigned long long)cls);
  sift_out_varint(&c->o, BMD_INSTANCE);
  if (!obj(c, id_at(c, q)) || !obj(c, cls)) return NOMEM(c);
  for (; kl != NULL; kl = find_klass(c, kl->super)) {
    if (++steps > c->nk)
      return FAIL(c, SIFT_ECORRUPT, "crunch: instance at byte %zu: its class chain loops", at);
    for (k = 0; k < kl->ntypes; k++) {
      int t = c->types[kl->types + k], s = hsize(c, t);
      if (len - pos < (size_t)s)
        return FAIL(c, SIFT_ECORRUPT, "crunch: instance at byte %zu: %zu bytes of fields, its classes declare more", at, len);
      if (kl->preserved || t == 2) {
        if (!value(c, t, data + pos)) return NOMEM(c);
      }
      pos += (size_t)s;
    }
  }
  if (pos != len)
    return FAIL(c, SIFT_ECORRUPT, "crunch: instance at byte %zu: %zu bytes of fields, its classes declare %zu", at, len, pos);
  c->counts->records[BMD_INSTANCE]++;
  return SIFT_OK;
}

/* sift's STRING record of the roots' kinds (bmd.h), before ROOT_OBJECTS;
   none when every root's kind is unknown */
static int root_kinds (Cruncher *c) {
  size_t k = 0, len = strlen(BMD_KINDS_PREFIX), cap = len + 32;
  char *text;
  while (k < c->nroots && c->kinds[k] == HP_ROOT_UNKNOWN) k++;
  if (k == c->nroots) return 1;  /* every root of unknown kind: nothing to keep */
  k = 0;
  if ((text = (char *)malloc(cap)) == NULL) return 0;
  memcpy(text, BMD_KINDS_PREFIX, len);
  while (k < c->nroots) {
    size_t run = 1;
    while (k + run < c->nroots && c->kinds[k + run] == c->kinds[k]) run++;
    if (cap - len < 32) {
      char *grown = (char *)realloc(text, cap *= 2);
      if (grown == NULL) { free(text); return 0; }
      text = grown;
    }
    len += (size_t)snprintf(text + len, cap - len, "%02X*%zu,", c->kinds[k], run);
    k += run;
  }
  sift_out_varint(&c->o, BMD_STRING);
  sift_out_int32(&c->o, (int32_t)BMD_KINDS_ID);
  sift_out_int32(&c->o, (int32_t)len);
  sift_out_bytes(&c->o, (const unsigned char *)text, len);
  free(text);
  c->counts->records[BMD_STRING]++;
  c->counts->kinds = c->nroots;
  return 1;
}

/* one HEAP_DUMP or segment body, in pass 1 or 2 */
static sift_Status heap_records (Cruncher *c, size_t from, size_t to, int pass) {
  size_t I = (size_t)c->idsize, pos = from;
  sift_Status s;
  while (pos < to) {
    int tag = c->p[pos];
    const unsigned char *q = c->p + pos + 1;
    size_t size = sub_size(c, tag, q, to - pos - 1), k;
    if (size == 0)
      return FAIL(c, SIFT_EBADTAG, "crunch: heap sub-record tag 0x%02x at byte %zu is not one BMD can hold", tag, pos);
    if (size == SIZE_MAX || size > to - pos - 1)
      return FAIL(c, SIFT_ETRUNC, "crunch: heap sub-record 0x%02x at byte %zu runs past its record", tag, pos);
    if (pass == 1 && tag == HP_CLASS_DUMP && (s = class_dump(c, q, pos)) != SIFT_OK) return s;
    if (pass == 2) {
      switch (tag) {
        case HP_CLASS_DUMP: break;
        case HP_INSTANCE_DUMP:
          if ((s = instance_dump(c, q, pos)) != SIFT_OK) return s;
          break;
        case HP_OBJ_ARRAY_DUMP: {
          uint32_t count = hp_read_u4(q + I + 4);
          sift_out_varint(&c->o, BMD_OBJECT_ARRAY);
          if (!obj(c, id_at(c, q)) || !obj(c, id_at(c, q + I + 8))) return NOMEM(c);
          sift_out_int32(&c->o, (int32_t)count);
          for (k = 0; k < count; k++)
            if (!obj(c, id_at(c, q + 2 * I + 8 + k * I))) return NOMEM(c);
          c->counts->records[BMD_OBJECT_ARRAY]++;
          break;
        }
        case HP_PRIM_ARRAY_DUMP:
          sift_out_varint(&c->o, BMD_PRIMITIVE_ARRAY);
          if (!obj(c, id_at(c, q))) return NOMEM(c);
          sift_out_int32(&c->o, bmd_type_of(q[I + 8]));
          sift_out_int32(&c->o, (int32_t)hp_read_u4(q + I + 4));
          c->counts->records[BMD_PRIMITIVE_ARRAY]++;
          break;
        case HP_HEAP_DUMP_INFO: case HP_ROOT_UNREACHABLE: case HP_PRIM_ARRAY_NODATA:
          c->counts->dropped++;
          break;
        default:  /* a root */
          if (!grow((void **)&c->roots, &c->rootcap, c->nroots + 1, sizeof *c->roots)
              || !grow((void **)&c->kinds, &c->kindcap, c->nroots + 1, 1)) return NOMEM(c);
          c->kinds[c->nroots] = (uint8_t)tag;
          c->roots[c->nroots++] = id_at(c, q);
      }
    }
    pos += 1 + size;
    if (!sift_progress(c->pr, c->done + pos)) return FAIL(c, SIFT_ECANCEL, "crunch: cancelled");
  }
  return SIFT_OK;
}

static sift_Status pass (Cruncher *c, size_t data, int which) {
  size_t pos = data;
  sift_Status s;
  while (pos < c->n) {
    int tag;
    uint32_t len;
    const unsigned char *q;
    if (c->n - pos < 9) return FAIL(c, SIFT_ETRUNC, "crunch: record header cut short at byte %zu", pos);
    tag = c->p[pos];
    len = hp_read_u4(c->p + pos + 5);
    q = c->p + pos + 9;
    if (len > c->n - pos - 9)
      return FAIL(c, SIFT_ETRUNC, "crunch: record 0x%02x at byte %zu needs %u bytes, %zu left", tag, pos, len, c->n - pos - 9);
    if (tag == HP_TAG_HEAP_DUMP || tag == HP_TAG_HEAP_DUMP_SEGMENT) {
      if (which == 1) c->dumps++;
      if ((s = heap_records(c, pos + 9, pos + 9 + len, which)) != SIFT_OK) return s;
    }
    else if (which == 1) {
      switch (tag) {
        case HP_TAG_STRING:
          if (len < (uint32_t)c->idsize) return FAIL(c, SIFT_ETRUNC, "crunch: STRING at byte %zu is shorter than an id", pos);
          if ((s = string_record(c, q, len)) != SIFT_OK) return s;
          break;
        case HP_TAG_LOAD_CLASS: {
          int made;
          uint32_t *v;
          if (len < 8 + 2 * (uint32_t)c->idsize) return FAIL(c, SIFT_ETRUNC, "crunch: LOAD_CLASS at byte %zu is cut short", pos);
          if ((v = sift_idmap_put(&c->loads, id_at(c, q + 4), &made)) == NULL ||
              !grow((void **)&c->names, &c->namecap, c->nnames + 1, sizeof *c->names)) return NOMEM(c);
          c->names[c->nnames++] = id_at(c, q + 8 + c->idsize);
          *v = (uint32_t)c->nnames;
          break;
        }
        case HP_TAG_UNLOAD_CLASS: case HP_TAG_HEAP_DUMP_END: break;
        default:  /* kept as they are: their ids are not renumbered */
          sift_out_varint(&c->o, BMD_LEGACY);
          sift_out_int32(&c->o, tag);
          sift_out_int32(&c->o, (int32_t)len);
          sift_out_bytes(&c->o, q, len);
          c->counts->records[BMD_LEGACY]++;
          c->counts->legacy_tags[tag]++;
      }
    }
    pos += 9 + (size_t)len;
    if (!sift_progress(c->pr, c->done + pos)) return FAIL(c, SIFT_ECANCEL, "crunch: cancelled");
  }
  c->done += c->n;
  return SIFT_OK;
}

sift_Status bmd_crunch (const unsigned char *p, size_t n, FILE *out,
                        const bmd_CrunchOptions *opt, bmd_Counts *counts,
                        sift_Progress *pr, sift_Error *err) {
  Cruncher c;
  const unsigned char *nul = n > 0 ? (const unsigned char *)memchr(p, 0, n < 64 ? n : 64) : NULL;
  size_t hlen, data, k;
  sift_Status s;
  memset(&c, 0, sizeof c);
  memset(counts, 0, sizeof *counts);
  c.p = p;
  c.n = n;
  c.opt = opt;
  c.counts = counts;
  c.next_obj = c.next_str = 1;
  c.pr = pr;
  c.err = err;
  if (nul == NULL || !starts(p, n, "JAVA PROFILE "))
    return FAIL(&c, SIFT_EUNKNOWN, "crunch: not an HPROF file (byte 0)");
  hlen = (size_t)(nul - p);
  data = hlen + 1 + 12;
  if (n < data) return FAIL(&c, SIFT_ETRUNC, "crunch: HPROF header cut short at byte %zu", n);
  c.idsize = (int)hp_read_u4(p + hlen + 1);
  if (c.idsize != 4 && c.idsize != 8)
    return FAIL(&c, SIFT_EHEADER, "crunch: id size %d at byte %zu (4 or 8 expected)", c.idsize, hlen + 1);
  sift_out_init(&c.o, out);
  sift_out_int32(&c.o, 1);  /* version */
  sift_out_int32(&c.o, (int32_t)hlen);
  sift_out_bytes(&c.o, p, hlen);
  s = pass(&c, data, 1);
  if (s == SIFT_OK && c.dumps == 0)  /* a header and strings only (a dump cut before its heap): no BMD */
    s = FAIL(&c, SIFT_EEMPTY, "holds no heap dump (no HEAP_DUMP record): nothing to analyse");
  if (s == SIFT_OK && (s = pass(&c, data, 2)) == SIFT_OK) {
    if (!(opt && opt->badoo) && c.nroots > 0 && !root_kinds(&c)) s = NOMEM(&c);
  }
  if (s == SIFT_OK) {
    sift_out_varint(&c.o, BMD_ROOTS);
    sift_out_int32(&c.o, (int32_t)c.nroots);
    for (k = 0; k < c.nroots; k++)
      if (!obj(&c, c.roots[k])) { s = NOMEM(&c); break; }
    counts->records[BMD_ROOTS]++;
    counts->roots = c.nroots;
  }
  if (s == SIFT_OK && !sift_out_flush(&c.o)) s = FAIL(&c, SIFT_EIO, "crunch: cannot write the output");
  if (s == SIFT_OK && c.o.failed) s = NOMEM(&c);
  counts->bytes_in = n;
  counts->bytes_out = sift_out_size(&c.o);
  sift_out_free(&c.o);
  sift_idmap_free(&c.objs);
  sift_idmap_free(&c.strs);
  sift_idmap_free(&c.loads);
  sift_idmap_free(&c.text);
  sift_idmap_free(&c.klass);
  free(c.names);
  free(c.k);
  free(c.types);
  free(c.roots);
  free(c.kinds);
  free(c.scratch);
  return s;
}
