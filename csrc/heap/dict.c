/*
** dict.c
** Names to give hashed BMD strings back their text: every string of the
** class files (constant pools) and dex files (string tables) in jars and
** apks, in the forms a heap dump spells them (com/foo/Bar, com.foo.Bar,
** [Lcom/foo/Bar;, com.foo.Bar[]), keyed by Java's hashCode and UTF-8
** length as the cruncher stored them (BMD.md 8).
*/

#include <stdlib.h>
#include <string.h>
#include "core/search.h"
#include "core/zip.h"
#include "dict.h"
#include "jstring.h"

typedef struct Entry {
  int32_t hash;
  uint32_t len;       /* of the re-encoded text */
  size_t off, n;      /* the text in the arena */
} Entry;

struct bmd_Dict {
  unsigned char *arena;
  size_t used, cap;
  Entry *e;
  size_t ne, ecap;
  unsigned char *scratch;
  size_t scratchcap;
};

bmd_Dict *bmd_dict_new (void) {
  return (bmd_Dict *)calloc(1, sizeof(bmd_Dict));
}

void bmd_dict_free (bmd_Dict *d) {
  if (d == NULL) return;
  free(d->arena);
  free(d->e);
  free(d->scratch);
  free(d);
}

size_t bmd_dict_size (const bmd_Dict *d) { return d->ne; }

static int reserve (void **p, size_t *cap, size_t need, size_t size) {
  size_t c = *cap ? *cap : 4096;
  void *q;
  if (need <= *cap) return 1;
  while (c < need) {
    if (c > SIZE_MAX / 2 / size) return 0;
    c *= 2;
  }
  if ((q = realloc(*p, c * size)) == NULL) return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* one string as it would appear in a dump */
static int add (bmd_Dict *d, const unsigned char *s, size_t n) {
  Entry *e;
  if (n == 0 || n > 0xFFFF) return 1;
  if (!reserve((void **)&d->e, &d->ecap, d->ne + 1, sizeof *d->e) ||
      !reserve((void **)&d->arena, &d->cap, d->used + n, 1)) return 0;
  e = &d->e[d->ne++];
  e->len = (uint32_t)sift_java_string(s, n, &e->hash, NULL);
  e->off = d->used;
  e->n = n;
  memcpy(d->arena + d->used, s, n);
  d->used += n;
  return 1;
}

static const char *primitive (int c) {
  switch (c) {
    case 'Z': return "boolean"; case 'B': return "byte"; case 'C': return "char";
    case 'S': return "short"; case 'I': return "int"; case 'J': return "long";
    case 'F': return "float"; case 'D': return "double"; default: return NULL;
  }
}

/* s, and the other spellings of the class names in it */
static int add_forms (bmd_Dict *d, const unsigned char *s, size_t n) {
  size_t i, j, dims = 0;
  unsigned char *t;
  if (!add(d, s, n)) return 0;
  if (!reserve((void **)&d->scratch, &d->scratchcap, 3 * n + 16, 1)) return 0;  /* room for x.Y[][] */
  t = d->scratch;
  if (memchr(s, '/', n) && !memchr(s, ';', n) && !memchr(s, '(', n)) {  /* an internal name */
    for (i = 0; i < n; i++) t[i] = s[i] == '/' ? '.' : s[i];
    if (!add(d, t, n)) return 0;
  }
  if (memchr(s, '.', n) && !memchr(s, '/', n) && !memchr(s, '[', n) && !memchr(s, ' ', n)) {
    /* a dotted class name: HotSpot spells it com/foo/Bar, its arrays [Lcom/foo/Bar; */
    t[0] = '[';
    t[1] = 'L';
    for (i = 0; i < n; i++) t[i + 2] = s[i] == '.' ? '/' : s[i];
    t[n + 2] = ';';
    if (!add(d, t + 2, n) || !add(d, t, n + 3)) return 0;
  }
  while (dims < n && s[dims] == '[') dims++;
  if (dims > 0 && dims < n) {  /* an array class: Android's "x.Y[]" */
    size_t k = 0;
    const char *prim = primitive(s[dims]);
    if (prim && n == dims + 1) { memcpy(t, prim, strlen(prim)); k = strlen(prim); }
    else if (s[dims] == 'L' && s[n - 1] == ';') {
      for (i = dims + 1; i < n - 1; i++) t[k++] = s[i] == '/' ? '.' : s[i];
    }
    if (k > 0) {
      for (i = 0; i < dims; i++) { t[k++] = '['; t[k++] = ']'; }
      if (!add(d, t, k)) return 0;
    }
  }
  for (i = 0; i < n; i++) {  /* class names inside descriptors: Lcom/foo/Bar; */
    if (s[i] != 'L' || (i > 0 && s[i - 1] != '(' && s[i - 1] != ')' && s[i - 1] != ';' && s[i - 1] != '[')) continue;
    for (j = i + 1; j < n && s[j] != ';' && s[j] != '<' && s[j] != '('; j++) {}
    if (j < n && s[j] == ';' && j > i + 1) {
      size_t k;
      if (!add(d, s + i + 1, j - i - 1)) return 0;
      for (k = 0; k < j - i - 1; k++) t[k] = s[i + 1 + k] == '/' ? '.' : s[i + 1 + k];
      if (!add(d, t, j - i - 1)) return 0;
    }
  }
  return 1;
}

static uint32_t le2 (const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t le4 (const unsigned char *p) { return le2(p) | le2(p + 2) << 16; }
static uint32_t be2 (const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }

/* a class file's constant pool: every Utf8 entry */
static int add_class (bmd_Dict *d, const unsigned char *p, size_t n, uint64_t *added) {
  size_t pos = 10, count, k;
  if (n < 10 || le4(p) != 0xBEBAFECAu) return 1;  /* not a class file */
  count = be2(p + 8);
  for (k = 1; k < count; k++) {
    int tag;
    if (pos >= n) return 1;
    tag = p[pos];
    switch (tag) {
      case 1: {
        size_t len;
        if (n - pos < 3 || n - pos - 3 < (len = be2(p + pos + 1))) return 1;
        if (!add_forms(d, p + pos + 3, len)) return 0;
        (*added)++;
        pos += 3 + len;
        break;
      }
      case 7: case 8: case 16: case 19: case 20: pos += 3; break;
      case 15: pos += 4; break;
      case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: pos += 5; break;
      case 5: case 6: pos += 9; k++; break;  /* two slots */
      default: return 1;  /* not a pool we know: stop here */
    }
  }
  return 1;
}

/* a dex file's string table */
static int add_dex (bmd_Dict *d, const unsigned char *p, size_t n, uint64_t *added) {
  uint32_t count, off, k;
  if (n < 0x70 || memcmp(p, "dex\n", 4) != 0) return 1;
  count = le4(p + 0x38);
  off = le4(p + 0x3C);
  if (off > n || count > (n - off) / 4) return 1;
  for (k = 0; k < count; k++) {
    size_t at = le4(p + off + 4 * (size_t)k), end;
    int shift = 0;
    while (at < n && (p[at] & 0x80) && shift < 35) { at++; shift += 7; }  /* uleb128 length */
    if (at >= n) continue;
    at++;
    for (end = at; end < n && p[end] != 0; end++) {}
    if (end >= n) continue;
    if (!add_forms(d, p + at, end - at)) return 0;
    (*added)++;
  }
  return 1;
}

/* a zip (jar, apk): class and dex entries, and the class entries' names */
static sift_Status add_zip (bmd_Dict *d, const unsigned char *p, size_t n, uint64_t *added,
                            sift_Error *err) {
  sift_Zip z;
  sift_ZipEntry e;
  sift_Status st = sift_zip_open(&z, p, n, err->msg, sizeof err->msg);
  if (st != SIFT_OK) return st;
  while (sift_zip_next(&z, &e)) {
    const unsigned char *body;
    unsigned char *owned;
    size_t size;
    int is_class = sift_zip_ends(&e, ".class"), ok;
    if (!is_class && !sift_zip_ends(&e, ".dex")) continue;
    if (is_class) {  /* its name: com/foo/Bar and com.foo.Bar */
      if (!add_forms(d, e.name, e.namelen - 6)) goto nomem;
      (*added)++;
    }
    st = sift_zip_read(&z, &e, (size_t)1 << 30, &body, &size, &owned);
    if (st == SIFT_ENOMEM) goto nomem;
    if (st != SIFT_OK) continue;  /* damaged or too big: skipped */
    ok = is_class ? add_class(d, body, size, added) : add_dex(d, body, size, added);
    free(owned);
    if (!ok) goto nomem;
  }
  return SIFT_OK;
nomem:
  return sift_fail(err, SIFT_ENOMEM, "out of memory");
}

int bmd_dict_add_string (bmd_Dict *d, const unsigned char *s, size_t n) {
  return add_forms(d, s, n);
}

static int cmp_entry (const void *a, const void *b) {
  const Entry *x = (const Entry *)a, *y = (const Entry *)b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}

sift_Status bmd_dict_add_file (bmd_Dict *d, const unsigned char *p, size_t n,
                               uint64_t *added, sift_Error *err) {
  int ok = 1;
  sift_Status s = SIFT_OK;
  *added = 0;
  if (n >= 4 && le4(p) == 0x04034b50u) s = add_zip(d, p, n, added, err);
  else if (n >= 4 && memcmp(p, "dex\n", 4) == 0) ok = add_dex(d, p, n, added);
  else if (n >= 4 && le4(p) == 0xBEBAFECAu) ok = add_class(d, p, n, added);
  else return sift_fail(err, SIFT_EUNKNOWN, "not a jar, apk, dex or class file");
  if (!ok) s = sift_fail(err, SIFT_ENOMEM, "out of memory");
  bmd_dict_sort(d);
  return s;
}

void bmd_dict_sort (bmd_Dict *d) {
  if (d->ne > 1) qsort(d->e, d->ne, sizeof *d->e, cmp_entry);  /* for bmd_dict_find */
}

const unsigned char *bmd_dict_find (const bmd_Dict *d, int32_t hash,
                                    uint32_t len, size_t *textlen) {
  size_t lo = 0, hi = d->ne;
  SIFT_LOWER_BOUND(lo, hi, mid, d->e[mid].hash < hash
                   || (d->e[mid].hash == hash && d->e[mid].len < len));
  if (lo < d->ne && d->e[lo].hash == hash && d->e[lo].len == len) {
    *textlen = d->e[lo].n;
    return d->arena + d->e[lo].off;
  }
  return NULL;
}
