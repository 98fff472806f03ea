/*
** hprof_index.c
** The HPROF index once the records are walked (hprof.c): object ids sorted
** (radix) and deduplicated, the class index, superclass chains flattened
** into each class's field list; then the lookups every reader of the
** index uses: ids to object numbers, strings, objects' facts.
*/

#include <stdlib.h>
#include <string.h>

#include "core/search.h"
#include "core/sort.h"
#include "hprof_build.h"

/*
** {======================================================
** Sorting and linking
** =======================================================
*/

/* sort (id, off) pairs by id: a radix sort on the bits that differ (ids
   share their low bits, the alignment, and their bits above the highest
   where the smallest and the largest differ) */
int hpb_sort_idx (hp_Idx *v, uint64_t n) {
  uint64_t i, min = UINT64_MAX, max = 0, common = 0;
  hp_Idx *tmp;
  int sorted = 1, lo = 0, hi = 64;
  for (i = 0; i < n; i++) {
    if (v[i].id < min) min = v[i].id;
    if (v[i].id > max) max = v[i].id;
    if (i > 0 && v[i].id < v[i - 1].id) sorted = 0;
  }
  if (sorted) return 1;
  for (i = 0; i < n; i++) common |= v[i].id - min;
  while (lo < 63 && !(common >> lo & 1)) lo++;
  while (hi > lo && !((min ^ max) >> (hi - 1) & 1)) hi--;
  tmp = (hp_Idx *)sift_big_alloc(n * sizeof *tmp);
  if (tmp == NULL) return 0;
  sift_radix_sort(v, n, sizeof *v, lo, hi, tmp);
  sift_big_free(tmp);
  return 1;
}

/* drop entries whose id repeats, keeping the first; returns how many went */
uint64_t hpb_dedup_idx (hp_Idx *v, uint64_t *n) {
  uint64_t i, k = 0, before = *n;
  for (i = 0; i < *n; i++)
    if (k == 0 || v[i].id != v[k - 1].id) v[k++] = v[i];
  *n = k;
  return before - k;
}

const hp_Idx *hp_find_idx (const hp_Idx *v, uint64_t n, uint64_t id) {
  uint64_t lo = 0, hi = n;
  SIFT_LOWER_BOUND(lo, hi, mid, v[mid].id < id);
  return lo < n && v[lo].id == id ? &v[lo] : NULL;
}

int64_t hp_find (const hp_Heap *h, uint64_t id) {
  uint64_t lo = 0, hi = h->nobjs;
  if (h->keys32) {
    uint64_t d = id - h->id_base, key;
    if (id < h->id_base || (d & ((UINT64_C(1) << h->id_shift) - 1)) != 0
        || (key = d >> h->id_shift) > UINT32_MAX)
      return -1;
    SIFT_LOWER_BOUND(lo, hi, mid, h->keys32[mid] < key);
    return lo < h->nobjs && h->keys32[lo] == key ? (int64_t)lo : -1;
  }
  SIFT_LOWER_BOUND(lo, hi, mid, h->keys64[mid] < id);
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
  tmp = (uint64_t *)sift_big_alloc(n * sizeof(uint64_t));
  if (tmp == NULL) return 0;
  if (nruns > MAXRUNS || r > n / 8) {
    sift_radix_sort(w, n, sizeof *w, 32, 64, tmp);  /* by key, stable */
    sift_big_free(tmp);
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
  sift_big_free(tmp);
  return 1;
}

/* the ids too far apart for 32-bit keys: sort (id, offset) pairs whole
   and keep the ids as they are */
static sift_Status sort_pairs (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, n = h->nobjs;
  hp_Idx *pairs = (hp_Idx *)sift_big_alloc((n ? n : 1) * sizeof *pairs);
  if (pairs == NULL) return hpb_nomem(b);
  for (i = 0; i < n; i++) {
    pairs[i].id = h->ids[i];
    pairs[i].off = hp_obj_off(h, i);
  }
  sift_big_free(h->ids);
  h->ids = NULL;
  if (!hpb_sort_idx(pairs, n)) {
    sift_big_free(pairs);
    return hpb_nomem(b);
  }
  h->duplicates = hpb_dedup_idx(pairs, &h->nobjs);
  h->keys64 = (uint64_t *)sift_big_alloc((h->nobjs ? h->nobjs : 1)
                                         * sizeof(uint64_t));
  if (h->keys64 == NULL) {
    sift_big_free(pairs);
    return hpb_nomem(b);
  }
  for (i = 0; i < h->nobjs; i++) {  /* the offsets back in id order */
    h->keys64[i] = pairs[i].id;
    if (h->offs32) h->offs32[i] = (uint32_t)pairs[i].off;
    else h->offs64[i] = pairs[i].off;
  }
  sift_big_free(pairs);
  return SIFT_OK;
}

/*
** Sort the objects by id and keep them as keys and offsets. Keys are ids
** relative to the smallest, shifted right by the alignment they all share.
** When every key fits in 32 bits (the usual case) the ids become, in
** place, the sort's words (key << 32 | file-order index), and the offsets
** are gathered through the indexes; the keys are then packed into the
** words' own memory. An id seen twice keeps its first object.
*/
sift_Status hpb_sort_objects (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, k, common = 0, max = 0, n = h->nobjs, min = UINT64_MAX;
  uint64_t *words;
  uint32_t last = 0;
  int shift = 0;
  for (i = 0; i < n; i++) {  /* an alignment all differences from the first
                               id share, those from the smallest share */
    uint64_t id = h->ids[i];
    if (id < min) min = id;
    if (id > max) max = id;
    common |= id - h->ids[0];
  }
  if (n == 0) min = 0;
  while (common != 0 && shift < 63 && !(common >> shift & 1)) shift++;
  h->id_base = min;
  h->id_shift = shift;
  if ((max - min) >> shift > UINT32_MAX || n > UINT32_MAX) return sort_pairs(b);
  words = h->ids;
  h->ids = NULL;
  for (i = 0; i < n; i++) words[i] = ((words[i] - min) >> shift) << 32 | i;
  if (!sort_words(words, n)) {
    sift_big_free(words);
    return hpb_nomem(b);
  }
  {  /* the offsets in id order, from those in file order */
    uint32_t *by_file32 = h->offs32;
    uint64_t *by_file64 = h->offs64;
    size_t size = by_file32 ? sizeof(uint32_t) : sizeof(uint64_t);
    void *offs = sift_big_alloc((n ? n : 1) * size);
    if (offs == NULL) {
      sift_big_free(words);
      return hpb_nomem(b);
    }
    if (by_file32) h->offs32 = (uint32_t *)offs;
    else h->offs64 = (uint64_t *)offs;
    /* the keys packed into the words' memory: key k goes to bytes 4k..4k+3,
       before word k + 1, which is read after it */
    for (i = 0, k = 0; i < n; i++) {
      uint64_t w = words[i], at = w & 0xffffffffu;
      uint32_t key = (uint32_t)(w >> 32);
      if (k > 0 && key == last) continue;  /* a repeated id */
      if (by_file32) h->offs32[k] = by_file32[at];
      else h->offs64[k] = by_file64[at];
      memcpy((unsigned char *)words + 4 * k, &key, sizeof key);
      last = key;
      k++;
    }
    sift_big_free(by_file32);
    sift_big_free(by_file64);
  }
  h->duplicates = n - k;
  h->nobjs = k;
  h->keys32 = (uint32_t *)sift_big_realloc(words, (k ? k : 1) * sizeof(uint32_t));
  if (h->keys32 == NULL) {
    sift_big_free(words);
    return hpb_nomem(b);
  }
  return SIFT_OK;
}

int64_t hp_find_class (const hp_Heap *h, uint64_t id) {
  const uint32_t *v = sift_idmap_get(&h->class_index, id);
  return v ? (int64_t)*v - 1 : -1;
}

/* the class index: id -> number + 1 */
static sift_Status index_classes (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i;
  int made;
  if (h->nclasses >= UINT32_MAX) return hpb_nomem(b);
  for (i = 0; i < h->nclasses; i++) {
    uint32_t *v;
    if (h->classes[i].id == 0) continue;  /* null: never a class */
    if ((v = sift_idmap_put(&h->class_index, h->classes[i].id, &made)) == NULL) return hpb_nomem(b);
    if (made) *v = (uint32_t)i + 1;
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
    hpb_warn(h, "the superclass chain of class 0x%llx loops; cut there",
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

sift_Status hpb_link_classes (Build *b) {
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
  if ((s = index_classes(b)) != SIFT_OK) return s;
  if (!hpb_sort_idx(h->loads, h->nloads)) return hpb_nomem(b);
  for (i = 0; i < h->nclasses; i++) {
    hp_Class *c = &h->classes[i];
    const hp_Idx *load = hp_find_idx(h->loads, h->nloads, c->id);
    if (load != NULL) {  /* u4 serial, class id, u4 stack, name id */
      c->serial = hp_read_u4(h->p + load->off);
      c->name = hp_id_at(h, h->p + load->off + 8 + h->idsize);
    }
    c->super = c->super_id ? hp_find_class(h, c->super_id) : -1;
    if (c->super_id && c->super < 0) missing_super++;
  }
  if (missing_super)
    hpb_warn(h, "%llu classes have a superclass that is not in the dump",
         (unsigned long long)missing_super);
  state = (unsigned char *)sift_big_alloc((h->nclasses + 1) * 1);
  if (state == NULL) return hpb_nomem(b);
  for (i = 0; i < h->nclasses && s == SIFT_OK; i++)
    s = flatten(b, i, &cap, state);
  sift_big_free(state);
  return s;
}

/* instances whose class is not in the dump: counted by a pass over the
   objects only when a class id that instances name is missing */
void hpb_count_missing_classes (Build *b) {
  hp_Heap *h = b->h;
  uint64_t i, absent = 0;
  for (i = 0; i < b->named.cap; i++)
    if (b->named.slots[i].key && hp_find_class(h, b->named.slots[i].key) < 0) absent++;
  if (absent == 0) return;
  for (i = 0; i < h->nobjs; i++) {
    const unsigned char *q = h->p + hp_obj_off(h, i);
    if (*q == HP_INSTANCE_DUMP
        && hp_find_class(h, hp_id_at(h, q + 1 + h->idsize + 4)) < 0)
      h->missing_classes++;
  }
  hpb_warn(h, "%llu instances have a class that is not in the dump (%llu "
       "class ids)", (unsigned long long)h->missing_classes,
       (unsigned long long)absent);
}

/* }====================================================== */


/*
** {======================================================
** Reading what the index points at
** =======================================================
*/

const char *hp_string (const hp_Heap *h, uint64_t id, size_t *len) {
  const hp_Idx *e = hp_find_idx(h->strings, h->nstrings, id);
  if (e == NULL) return NULL;
  *len = hp_read_u4(h->p + e->off - 4) - (size_t)h->idsize;
  return (const char *)h->p + e->off + h->idsize;
}

uint32_t hp_heap_at (const hp_Heap *h, uint64_t off) {
  uint64_t lo = 0, hi = h->nheaps;  /* the last switch at or before off */
  SIFT_LOWER_BOUND(lo, hi, mid, h->heaps[mid].off <= off);
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
      o->length = hp_read_u4(q + 1 + ids + 4 + ids);
      o->data = q + 1 + ids + 4 + ids + 4;
      o->shallow = o->cls >= 0 ? h->classes[o->cls].instance_size : o->length;
      break;
    case HP_OBJ_ARRAY_DUMP:
      o->length = hp_read_u4(q + 1 + ids + 4);
      o->class_id = hp_id_at(h, q + 1 + ids + 8);
      o->cls = hp_find_class(h, o->class_id);
      o->elem = HP_OBJECT;
      o->data = q + 1 + ids + 8 + ids;
      o->shallow = o->length * (uint64_t)ids;
      break;
    case HP_PRIM_ARRAY_DUMP: case HP_PRIM_ARRAY_NODATA:
      o->length = hp_read_u4(q + 1 + ids + 4);
      o->elem = q[1 + ids + 8];
      o->data = *q == HP_PRIM_ARRAY_DUMP ? q + 1 + ids + 9 : NULL;
      o->shallow = o->length * (uint64_t)hp_type_size(h, o->elem);
      break;
  }
}

/* }====================================================== */
