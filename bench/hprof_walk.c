/*
** hprof_walk.c
** The floor under sift's index and reference graph, for `make bench`
** (bench/hprof.lua): one bare pass over an HPROF file's records, doing the
** least the same answers need. The file is mapped; every record and heap
** sub-record is stepped over; each class dump's instance fields are kept
** (the offsets of its references, its superclass), in a hash table by id;
** each instance's references are read at those offsets (its class's, then
** its superclasses'), each object array's elements read; the non-null ones
** are counted. No index is kept, nothing is checked beyond what stepping
** needs (each sub-record within its record, each instance's fields within
** its data); a record that does not fit stops the walk, said. It prints
** what it counted.
**
** Usage: hprof_walk FILE
*/

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct Class {
  uint64_t id, super;
  uint32_t *refs;      /* offsets of its own reference fields, in its part of an instance */
  uint32_t nrefs, own; /* how many; the bytes of its own fields */
} Class;

static const unsigned char *p, *end;
static unsigned idsize;
static Class *classes;
static size_t nclasses, cap;
static size_t *slots;  /* open addressing: index + 1 into classes, 0 empty */
static size_t nslots;

static uint64_t rd (const unsigned char *q, unsigned n) {
  uint64_t v = 0;
  unsigned k;
  for (k = 0; k < n; k++) v = v << 8 | q[k];
  return v;
}

static size_t hash (uint64_t id) { return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 20); }

static Class *find (uint64_t id) {
  size_t k = hash(id) & (nslots - 1);
  while (slots[k]) {
    if (classes[slots[k] - 1].id == id) return &classes[slots[k] - 1];
    k = (k + 1) & (nslots - 1);
  }
  return NULL;
}

static void add (Class c) {
  size_t k;
  if (nclasses == cap) {
    cap = cap ? cap * 2 : 1024;
    classes = realloc(classes, cap * sizeof *classes);
  }
  if (2 * (nclasses + 1) > nslots) {  /* grow and rehash */
    size_t i;
    free(slots);
    nslots = nslots ? nslots * 2 : 4096;
    slots = calloc(nslots, sizeof *slots);
    for (i = 0; i < nclasses; i++) {
      k = hash(classes[i].id) & (nslots - 1);
      while (slots[k]) k = (k + 1) & (nslots - 1);
      slots[k] = i + 1;
    }
  }
  classes[nclasses++] = c;
  k = hash(c.id) & (nslots - 1);
  while (slots[k]) k = (k + 1) & (nslots - 1);
  slots[k] = nclasses;
}

static unsigned type_size (unsigned t) {
  switch (t) {
    case 2: return idsize;
    case 4: case 8: return 1;
    case 5: case 9: return 2;
    case 6: case 10: return 4;
    case 7: case 11: return 8;
    default: return 0;
  }
}

#define FITS(q, k, lim) ((size_t)((lim) - (q)) >= (size_t)(k))

/* the class dump at q (after its tag) within lim; its end, NULL if cut */
static const unsigned char *class_dump (const unsigned char *q, const unsigned char *lim) {
  Class c;
  unsigned n, k, t, off = 0;
  memset(&c, 0, sizeof c);
  if (!FITS(q, 7 * idsize + 10, lim)) return NULL;
  c.id = rd(q, idsize);
  c.super = rd(q + idsize + 4, idsize);
  q += 7 * idsize + 4 + 4;
  n = (unsigned)rd(q, 2); q += 2;  /* constant pool */
  for (k = 0; k < n; k++) {
    if (!FITS(q, 3, lim)) return NULL;
    t = q[2]; q += 3 + type_size(t);
  }
  if (!FITS(q, 2, lim)) return NULL;
  n = (unsigned)rd(q, 2); q += 2;  /* statics */
  for (k = 0; k < n; k++) {
    if (!FITS(q, idsize + 1, lim)) return NULL;
    t = q[idsize]; q += idsize + 1 + type_size(t);
  }
  if (!FITS(q, 2, lim)) return NULL;
  n = (unsigned)rd(q, 2); q += 2;  /* instance fields */
  if (!FITS(q, (size_t)n * (idsize + 1), lim)) return NULL;
  c.refs = malloc((n ? n : 1) * sizeof *c.refs);
  if (c.refs == NULL) return NULL;
  for (k = 0; k < n; k++) {
    t = q[idsize];
    if (t == 2) c.refs[c.nrefs++] = off;
    off += type_size(t);
    q += idsize + 1;
  }
  c.own = off;
  add(c);
  return q;
}

int main (int argc, char **argv) {
  int fd;
  struct stat st;
  const unsigned char *base;
  uint64_t objects = 0, instances = 0, arrays = 0, refs = 0, roots = 0, unresolved = 0;
  if (argc != 2) { fprintf(stderr, "usage: hprof_walk FILE\n"); return 2; }
  fd = open(argv[1], O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 1; }
  base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) { perror("mmap"); return 1; }
  end = base + st.st_size;
  p = memchr(base, 0, (size_t)st.st_size);
  if (!p || end - p < 13) { fprintf(stderr, "not an HPROF file\n"); return 1; }
  idsize = (unsigned)rd(p + 1, 4);
  p += 13;
  while (end - p >= 9) {
    unsigned tag = p[0];
    uint64_t len = rd(p + 5, 4);
    const unsigned char *q = p + 9, *rend = q + len;
    if (len > (uint64_t)(end - q)) {
      fprintf(stderr, "a record past the file's end at byte %ld: the file is cut\n", (long)(p - base));
      return 1;
    }
    if (tag == 0x0C || tag == 0x1C) {
      while (q != NULL && q < rend) {
        unsigned sub = *q++;
        switch (sub) {
          case 0xFF: case 0x05: case 0x07: q += idsize; roots++; break;
          case 0x01: q += 2 * idsize; roots++; break;
          case 0x02: case 0x03: case 0x08: q += idsize + 8; roots++; break;
          case 0x04: case 0x06: q += idsize + 4; roots++; break;
          case 0x20: q = class_dump(q, rend); objects++; break;
          case 0x21: {
            uint64_t cls;
            uint32_t n;
            const unsigned char *data, *part;
            Class *c;
            if (!FITS(q, 2 * idsize + 8, rend)) { q = NULL; break; }
            cls = rd(q + idsize + 4, idsize);
            n = (uint32_t)rd(q + 2 * idsize + 4, 4);
            data = part = q + 2 * idsize + 8;
            if (!FITS(data, n, rend)) { q = NULL; break; }
            c = find(cls);
            if (!c) unresolved++;
            while (c && FITS(part, c->own, data + n)) {  /* its own fields, then each superclass's */
              uint32_t k;
              for (k = 0; k < c->nrefs; k++) refs += rd(part + c->refs[k], idsize) != 0;
              part += c->own;
              c = c->super ? find(c->super) : NULL;
            }
            q = data + n;
            objects++; instances++;
            break;
          }
          case 0x22: {
            uint32_t n, k;
            const unsigned char *e;
            if (!FITS(q, 2 * idsize + 8, rend)) { q = NULL; break; }
            n = (uint32_t)rd(q + idsize + 4, 4);
            e = q + 2 * idsize + 8;
            if (!FITS(e, (size_t)n * idsize, rend)) { q = NULL; break; }
            for (k = 0; k < n; k++) refs += rd(e + (size_t)k * idsize, idsize) != 0;
            q = e + (size_t)n * idsize;
            objects++; arrays++;
            break;
          }
          case 0x23: {
            uint32_t n;
            unsigned t;
            if (!FITS(q, idsize + 9, rend)) { q = NULL; break; }
            n = (uint32_t)rd(q + idsize + 4, 4);
            t = q[idsize + 8];
            if (!FITS(q, idsize + 9 + (size_t)n * type_size(t), rend)) { q = NULL; break; }
            q += idsize + 9 + (size_t)n * type_size(t);
            objects++; arrays++;
            break;
          }
          default:
            fprintf(stderr, "sub-record 0x%02x not walked: stopped\n", sub);
            q = rend;
        }
      }
      if (q == NULL || q > rend) {
        fprintf(stderr, "a sub-record past its record's end at byte %ld: stopped\n", (long)(p - base));
        return 1;
      }
    }
    p = rend;
  }
  printf("objects=%llu instances=%llu arrays=%llu classes=%zu refs=%llu roots=%llu unresolved=%llu\n",
         (unsigned long long)objects, (unsigned long long)instances, (unsigned long long)arrays, nclasses,
         (unsigned long long)refs, (unsigned long long)roots, (unsigned long long)unresolved);
  return 0;
}
