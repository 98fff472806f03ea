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
** With --paths, the floor under the tree of holder paths (sift growth): the
** same walk keeps each object's id and record; the ids are sorted (numbers
** are their ranks, as in sift's index); a second pass decodes each
** object's references (instances' fields, arrays' elements, classes'
** statics) into CSR arrays, each id found by a bucket and a binary search;
** then one plain breadth-first search from the roots. It prints each
** phase's milliseconds.
**
** Usage: hprof_walk [--paths] FILE
*/

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
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

/*
** What the walk does with each object and root: counts their references
** (the plain walk), or keeps their ids and records (--paths: `keep`).
*/
static int paths;
static uint64_t nrefs;
static uint64_t *ids, *root_ids;                  /* --paths: in file order */
static const unsigned char **recs;                /* each object's sub-record */
static size_t nobjects, cap_objects, nroots, cap_roots;
/* the second pass of --paths: the sorted keys, their buckets, the CSR */
static uint64_t *sorted;                          /* the ids ascending: a number is a rank */
static uint32_t *bucket, *order, *first, *succ;   /* order: number -> file index */
static uint64_t nsucc, cap_succ, id_min;
static int bucket_shift;

static void *grow (void *a, size_t *cap, size_t size) {
  *cap = *cap ? *cap * 2 : 1 << 16;
  a = realloc(a, *cap * size);
  if (a == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
  return a;
}

static void keep (const unsigned char *rec, uint64_t id) {
  if (nobjects == cap_objects) {
    size_t c = cap_objects;
    ids = grow(ids, &c, sizeof *ids);
    recs = grow(recs, &cap_objects, sizeof *recs);
  }
  ids[nobjects] = id;
  recs[nobjects++] = rec;
}

static void keep_root (uint64_t id) {
  if (!paths) return;
  if (nroots == cap_roots) root_ids = grow(root_ids, &cap_roots, sizeof *root_ids);
  root_ids[nroots++] = id;
}

/* the number of an id (its rank), UINT32_MAX when not an object */
static uint32_t find_number (uint64_t id) {
  uint64_t b, lo, hi;
  if (id < id_min) return UINT32_MAX;
  b = (id - id_min) >> bucket_shift;
  if (b >= nobjects / 4 + 1) return UINT32_MAX;
  lo = bucket[b];
  hi = bucket[b + 1];
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < id) lo = mid + 1; else hi = mid;
  }
  return lo < bucket[b + 1] && sorted[lo] == id ? (uint32_t)lo : UINT32_MAX;
}

/* a reference read: counted, or (--paths) found and added to the CSR */
static void edge (uint64_t id) {
  uint32_t t;
  if (id == 0) return;
  if (!paths) { nrefs++; return; }
  if ((t = find_number(id)) == UINT32_MAX) return;
  if (nsucc == cap_succ) { size_t c = cap_succ; succ = grow(succ, &c, sizeof *succ); cap_succ = c; }
  succ[nsucc++] = t;
}

/* an instance's references (q after its tag; data within lim): its class's
   fields, then each superclass's; 1 when its class is known */
static int instance_refs (const unsigned char *q) {
  uint64_t cls = rd(q + idsize + 4, idsize);
  uint32_t n = (uint32_t)rd(q + 2 * idsize + 4, 4);
  const unsigned char *data = q + 2 * idsize + 8, *part = data;
  Class *c = find(cls);
  if (!c) return 0;
  while (c && FITS(part, c->own, data + n)) {
    uint32_t k;
    for (k = 0; k < c->nrefs; k++) edge(rd(part + c->refs[k], idsize));
    part += c->own;
    c = c->super ? find(c->super) : NULL;
  }
  return 1;
}

static void array_refs (const unsigned char *q) {
  uint32_t n = (uint32_t)rd(q + idsize + 4, 4), k;
  const unsigned char *e = q + 2 * idsize + 8;
  for (k = 0; k < n; k++) edge(rd(e + (size_t)k * idsize, idsize));
}

/* a class dump's statics that are references (q after its tag; walked) */
static void static_refs (const unsigned char *q) {
  unsigned n, k, t;
  q += 7 * idsize + 8;
  n = (unsigned)rd(q, 2); q += 2;
  for (k = 0; k < n; k++) { t = q[2]; q += 3 + type_size(t); }
  n = (unsigned)rd(q, 2); q += 2;
  for (k = 0; k < n; k++) {
    t = q[idsize];
    if (t == 2) edge(rd(q + idsize + 1, idsize));
    q += idsize + 1 + type_size(t);
  }
}

static double now (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* words (key << 32 | file index) sorted by key, a byte a pass (LSD
   radix: four passes, from words to tmp and back twice) */
static void radix_sort (uint64_t *words, uint64_t *tmp, size_t n) {
  int shift;
  for (shift = 32; shift < 64; shift += 8) {
    size_t count[257] = {0}, i;
    uint64_t *swap;
    for (i = 0; i < n; i++) count[(words[i] >> shift & 0xFF) + 1]++;
    for (i = 1; i < 257; i++) count[i] += count[i - 1];
    for (i = 0; i < n; i++) tmp[count[words[i] >> shift & 0xFF]++] = words[i];
    swap = words; words = tmp; tmp = swap;
  }
}

/* --paths after the walk: sort, CSR, breadth-first search; prints each
   phase's milliseconds */
static void paths_floor (double t0) {
  double t1 = now(), t2, t3, t4;
  uint64_t i, b, nb = nobjects / 4 + 1, reached = 0, head = 0, tail = 0, span;
  uint32_t *parent, *queue;
  uint64_t *words, *tmp, span_all = 0, align = 0;
  int shift = 0;
  order = malloc((nobjects ? nobjects : 1) * sizeof *order);
  sorted = malloc((nobjects ? nobjects : 1) * sizeof *sorted);
  bucket = malloc((nb + 1) * sizeof *bucket);
  first = malloc((nobjects + 1) * sizeof *first);
  parent = malloc((nobjects ? nobjects : 1) * sizeof *parent);
  queue = malloc((nobjects ? nobjects : 1) * sizeof *queue);
  if (!order || !sorted || !bucket || !first || !parent || !queue) { fprintf(stderr, "out of memory\n"); exit(1); }
  /* ids as 32-bit keys: less the smallest, shifted by the alignment all share */
  for (i = 0, id_min = UINT64_MAX; i < nobjects; i++) if (ids[i] < id_min) id_min = ids[i];
  for (i = 0; i < nobjects; i++) {
    align |= ids[i] - id_min;
    if (ids[i] - id_min > span_all) span_all = ids[i] - id_min;
  }
  while (align != 0 && !(align >> shift & 1)) shift++;
  if ((span_all >> shift) > UINT32_MAX) { fprintf(stderr, "ids too far apart for 32-bit keys\n"); exit(1); }
  words = malloc((nobjects ? nobjects : 1) * sizeof *words);
  tmp = malloc((nobjects ? nobjects : 1) * sizeof *tmp);
  if (!words || !tmp) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (i = 0; i < nobjects; i++) words[i] = ((ids[i] - id_min) >> shift) << 32 | i;
  radix_sort(words, tmp, nobjects);
  for (i = 0; i < nobjects; i++) {
    order[i] = (uint32_t)words[i];
    sorted[i] = ids[order[i]];
  }
  free(words);
  free(tmp);
  span = nobjects ? sorted[nobjects - 1] - id_min : 0;
  for (bucket_shift = 0; (span >> bucket_shift) >= nb; bucket_shift++) {}
  for (b = 0, i = 0; b <= nb; b++) {
    while (i < nobjects && ((sorted[i] - id_min) >> bucket_shift) < b) i++;
    bucket[b] = (uint32_t)i;
  }
  t2 = now();
  for (i = 0; i < nobjects; i++) {  /* in id order, as sift numbers them */
    const unsigned char *q = recs[order[i]];
    first[i] = (uint32_t)nsucc;
    switch (q[-1]) {
      case 0x20: static_refs(q); break;
      case 0x21: instance_refs(q); break;
      case 0x22: array_refs(q); break;
      default: break;
    }
  }
  first[nobjects] = (uint32_t)nsucc;
  t3 = now();
  for (i = 0; i < nobjects; i++) parent[i] = UINT32_MAX;
  for (i = 0; i < nroots; i++) {
    uint32_t r = find_number(root_ids[i]);
    if (r != UINT32_MAX && parent[r] == UINT32_MAX) { parent[r] = r; queue[tail++] = r; }
  }
  while (head < tail) {
    uint32_t u = queue[head++], j;
    for (j = first[u]; j < first[u + 1]; j++)
      if (parent[succ[j]] == UINT32_MAX) { parent[succ[j]] = u; queue[tail++] = succ[j]; }
  }
  reached = tail;
  t4 = now();
  printf("objects=%zu refs=%llu roots=%zu reached=%llu walk_ms=%.0f sort_ms=%.0f csr_ms=%.0f bfs_ms=%.0f\n",
         nobjects, (unsigned long long)nsucc, nroots, (unsigned long long)reached,
         (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t3) * 1e3);
}

/* a root sub-record of `size` bytes: its object's id kept (--paths) */
#define ROOT(size) \
  (keep_root(FITS(q, (size), rend) ? rd(q, idsize) : 0), q += (size), roots++)

int main (int argc, char **argv) {
  int fd;
  struct stat st;
  const unsigned char *base;
  uint64_t objects = 0, instances = 0, arrays = 0, roots = 0, unresolved = 0;
  double t0 = now();
  if (argc == 3 && strcmp(argv[1], "--paths") == 0) { paths = 1; argv++; argc--; }
  if (argc != 2) { fprintf(stderr, "usage: hprof_walk [--paths] FILE\n"); return 2; }
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
          case 0xFF: case 0x05: case 0x07: ROOT(idsize); break;
          case 0x01: ROOT(2 * idsize); break;
          case 0x02: case 0x03: case 0x08: ROOT(idsize + 8); break;
          case 0x04: case 0x06: ROOT(idsize + 4); break;
          case 0x20: {
            const unsigned char *at = q;
            q = class_dump(q, rend);
            if (q != NULL && paths) keep(at, rd(at, idsize));
            objects++;
            break;
          }
          case 0x21: {
            uint32_t n;
            if (!FITS(q, 2 * idsize + 8, rend)) { q = NULL; break; }
            n = (uint32_t)rd(q + 2 * idsize + 4, 4);
            if (!FITS(q + 2 * idsize + 8, n, rend)) { q = NULL; break; }
            if (paths) keep(q, rd(q, idsize));
            else if (!instance_refs(q)) unresolved++;
            q += 2 * idsize + 8 + n;
            objects++; instances++;
            break;
          }
          case 0x22: {
            uint32_t n;
            if (!FITS(q, 2 * idsize + 8, rend)) { q = NULL; break; }
            n = (uint32_t)rd(q + idsize + 4, 4);
            if (!FITS(q + 2 * idsize + 8, (size_t)n * idsize, rend)) { q = NULL; break; }
            if (paths) keep(q, rd(q, idsize));
            else array_refs(q);
            q += 2 * idsize + 8 + (size_t)n * idsize;
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
            if (paths) keep(q, rd(q, idsize));
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
  if (paths) {
    paths_floor(t0);
    return 0;
  }
  printf("objects=%llu instances=%llu arrays=%llu classes=%zu refs=%llu roots=%llu unresolved=%llu\n",
         (unsigned long long)objects, (unsigned long long)instances, (unsigned long long)arrays, nclasses,
         (unsigned long long)nrefs, (unsigned long long)roots, (unsigned long long)unresolved);
  return 0;
}
