/*
** waste.c
** Wasted memory counted as the fix would free it (see waste.h). One walk
** over the objects, in two halves on both cores, hashes every String's
** content and marks its value array (it belongs to the strings report
** only), hashes every other primitive array (those of zeros set apart; a
** value array met before its String is dropped once the walk is done),
** collects the boxes' values and measures the collections (fill.c). Equal
** content is then found by sorting (hash, object number) words, again in
** two halves, and comparing the bytes of each run of equal hashes: a hash
** only brings candidates together, it never decides that two values are
** equal. Then one more walk over the references, on both cores, finds the
** referrers of the copies shown (hw_referrers). Memory: 8 bytes per String
** and per primitive array (16 while they are sorted), 8 per box, 16 per
** array of zeros, two bits per object. Time: linear (radix sorts), and
** n log n in the boxes' values and the zero arrays' lengths.
*/

#include <stdlib.h>
#include <string.h>

#include "core/sort.h"
#include "core/split.h"
#include "waste.h"

/*
** {======================================================
** Content
** =======================================================
*/

/* a 64-bit hash of n bytes, 8 at a time; *zero: whether all are 0 */
static uint64_t hash_bytes (uint64_t seed, const unsigned char *p, uint64_t n,
                            int *zero) {
  const uint64_t k = 0xFF51AFD7ED558CCDu;
  uint64_t h = (seed + n) * 0x9E3779B97F4A7C15u, any = 0, w, i;
  for (i = 0; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    any |= w;
    h = (h ^ w) * k;
    h ^= h >> 32;
  }
  if (i < n) {
    w = 0;
    memcpy(&w, p + i, (size_t)(n - i));
    any |= w;
    h = (h ^ w) * k;
    h ^= h >> 32;
  }
  *zero = any == 0;
  return h ^ h >> 29;
}

/* where java.lang.String keeps its content: field offsets (-1: none) */
typedef struct StrLayout {
  int64_t value, coder, count, offset;
  int coder_t, count_t, offset_t;
} StrLayout;

/* offset and type of the field `name` of class c, -1 when it has none */
static int64_t field_of (const hp_Heap *h, int64_t c, const char *name,
                         int *type) {
  uint32_t k;
  size_t n = strlen(name);
  if (c < 0 || (uint64_t)c >= h->nclasses) return -1;
  for (k = 0; k < h->classes[c].nflat; k++) {
    const hp_Field *f = &h->fields[h->classes[c].flat + k];
    size_t len;
    const char *s = hp_string(h, f->name, &len);
    if (s != NULL && len == n && memcmp(s, name, n) == 0) {
      *type = f->type;
      return f->offset;
    }
  }
  return -1;
}

static void string_layout (const hp_Heap *h, int64_t c, StrLayout *sl) {
  int t = 0;
  sl->value = field_of(h, c, "value", &t);
  if (t != HP_OBJECT) sl->value = -1;
  sl->coder = field_of(h, c, "coder", &sl->coder_t);
  sl->count = field_of(h, c, "count", &sl->count_t);
  sl->offset = field_of(h, c, "offset", &sl->offset_t);
}

/* a signed field value of type t at off; 0 when the data is too short */
static int read_field (const hp_Heap *h, const hp_ObjInfo *o, int64_t off,
                       int t, int64_t *v) {
  int size = hp_type_size(h, t);
  if (off < 0 || size == 0 || (uint64_t)off + (uint64_t)size > o->length)
    return 0;
  *v = hp_read_signed(o->data + off, size);
  return 1;
}

/*
** The content of String num as `sift.heap`'s Object:string() reads it: a
** char[] value (UTF-16BE) from `offset` for `count` units; a byte[] value
** with coder 1 (UTF-16LE, whole units) or else Latin-1 (`count` bytes when
** there is such a field). tag says which; *array is the value array
** (HG_NONE for an empty string with no array). 0: no content known (no
** value, or an array without data as in a BMD).
*/
static int string_content (const hg_Graph *g, const StrLayout *sl,
                           uint32_t num, uint64_t *tag,
                           const unsigned char **p, uint64_t *len,
                           uint32_t *array) {
  const hp_Heap *h = g->h;
  hp_ObjInfo o, a;
  int64_t count = 0, first = 0, coder = 0;
  int has_count;
  uint64_t id = 0, units;
  hp_object(h, num, &o);
  if (o.kind != HP_INSTANCE_DUMP || sl->value < 0) return 0;
  has_count = read_field(h, &o, sl->count, sl->count_t, &count);
  if ((uint64_t)sl->value + (uint64_t)h->idsize <= o.length)
    id = hp_id_at(h, o.data + sl->value);
  *array = id != 0 ? hg_find(g, id) : HG_NONE;
  if (*array == HG_NONE) {  /* "" with no array (Android's count of 0) */
    if (!has_count || count != 0) return 0;
    *tag = 0; *p = o.data; *len = 0;
    return 1;
  }
  hp_object(h, *array, &a);
  if (a.kind != HP_PRIM_ARRAY_DUMP || a.data == NULL) return 0;
  if (a.elem == HP_CHAR) {
    units = a.length;
    if (!read_field(h, &o, sl->offset, sl->offset_t, &first)) first = 0;
    if (first < 0 || (uint64_t)first > units) first = (int64_t)units;
    if (!has_count || (uint64_t)count > units - (uint64_t)first)
      count = (int64_t)(units - (uint64_t)first);
    *tag = 2; *p = a.data + 2 * (uint64_t)first; *len = 2 * (uint64_t)count;
    return 1;
  }
  if (a.elem == HP_BYTE) {
    if (read_field(h, &o, sl->coder, sl->coder_t, &coder) && coder == 1) {
      *tag = 1; *p = a.data; *len = a.length / 2 * 2;
      return 1;
    }
    *tag = 0; *p = a.data;
    *len = has_count && count >= 0 && (uint64_t)count < a.length
           ? (uint64_t)count : a.length;
    return 1;
  }
  return 0;
}

/* }====================================================== */


/*
** {======================================================
** Lists the parts of a split walk grow
** =======================================================
*/

/*
** A list of words one part of a walk over the objects (sift_split's)
** grows: with realloc, not big.c, as a worker thread may not allocate
** there. The parts' lists are joined, the first part's before the
** second's (the order of one walk over all), into one big array.
*/
typedef struct Words {
  uint64_t *v, n, cap;
} Words;

static sift_Status push_word (Words *l, uint64_t x) {
  if (l->n == l->cap) {
    uint64_t c = l->cap ? 2 * l->cap : 1024;
    uint64_t *v = (uint64_t *)realloc(l->v, (size_t)c * sizeof *v);
    if (v == NULL) return SIFT_ENOMEM;
    l->v = v;
    l->cap = c;
  }
  l->v[l->n++] = x;
  return SIFT_OK;
}

/* a's words then b's into *out (a big array, NULL when both are empty),
   *n of them; a and b freed in every case */
static sift_Status join_words (Words *a, Words *b, uint64_t **out,
                               uint64_t *n) {
  sift_Status st = SIFT_OK;
  *out = NULL;
  *n = a->n + b->n;
  if (*n > 0 && (*out = (uint64_t *)sift_big_alloc((size_t)*n * sizeof **out)) == NULL)
    st = SIFT_ENOMEM;
  else if (*n > 0) {
    if (a->n > 0) memcpy(*out, a->v, (size_t)a->n * sizeof **out);
    if (b->n > 0) memcpy(*out + a->n, b->v, (size_t)b->n * sizeof **out);
  }
  if (st != SIFT_OK) *n = 0;
  free(a->v);
  free(b->v);
  memset(a, 0, sizeof *a);
  memset(b, 0, sizeof *b);
  return st;
}

/* }====================================================== */


/*
** {======================================================
** Sets of equal content
** =======================================================
*/

static sift_Status add_group (hw_Set *s, const hw_Group *gr) {
  if (s->ngroups == s->gcap) {
    uint64_t cap = s->gcap ? 2 * s->gcap : 256;
    hw_Group *v = (hw_Group *)sift_big_realloc(s->groups, cap * sizeof *v);
    if (v == NULL) return SIFT_ENOMEM;
    s->groups = v;
    s->gcap = cap;
  }
  s->groups[s->ngroups++] = *gr;
  s->wasted += gr->wasted;
  return SIFT_OK;
}

static int asc_u64 (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}


static int by_wasted (const void *a, const void *b) {
  const hw_Group *x = (const hw_Group *)a, *y = (const hw_Group *)b;
  if (x->wasted != y->wasted) return x->wasted > y->wasted ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

typedef struct Ctx {
  const hg_Graph *g;
  hw_Waste *w;
  const StrLayout *sl;
  int model;
} Ctx;

static int equal_strings (const Ctx *c, uint32_t a, uint32_t b) {
  const unsigned char *pa, *pb;
  uint64_t ta = 0, tb = 0, la = 0, lb = 0;
  uint32_t xa, xb;
  if (!string_content(c->g, c->sl, a, &ta, &pa, &la, &xa)
      || !string_content(c->g, c->sl, b, &tb, &pb, &lb, &xb))
    return 0;
  return ta == tb && la == lb && (la == 0 || memcmp(pa, pb, (size_t)la) == 0);
}

static int equal_arrays (const Ctx *c, uint32_t a, uint32_t b) {
  hp_ObjInfo x, y;
  hp_object(c->g->h, a, &x);
  hp_object(c->g->h, b, &y);
  return x.elem == y.elem && x.length == y.length
    && memcmp(x.data, y.data,
              (size_t)(x.length * (uint64_t)hp_type_size(c->g->h, x.elem))) == 0;
}

/* a group of equal strings: the kept copy is the first; its String and
   array stay, every other String goes, and every distinct array not yet
   charged (an array shared by copies is one array) */
static void charge_strings (const Ctx *c, const hw_Entry *e, hw_Group *gr) {
  uint64_t i, tag;
  const unsigned char *p;
  uint64_t len;
  uint32_t kept = HG_NONE, arr;
  for (i = 0; i < gr->count; i++) {
    if (!string_content(c->g, c->sl, HW_NUM(e[i]), &tag, &p, &len, &arr)) continue;
    if (i == 0) {
      kept = arr;
      gr->bytes = hg_shallow(c->g, HW_NUM(e[i]), c->model)
                  + (arr != HG_NONE ? hg_shallow(c->g, arr, c->model) : 0);
    }
    else gr->wasted += hg_shallow(c->g, HW_NUM(e[i]), c->model);
    if (arr != HG_NONE && !HG_BIT(c->w->charged, arr)) {
      HG_SETBIT(c->w->charged, arr);
      gr->arrays++;
      if (arr != kept) gr->wasted += hg_shallow(c->g, arr, c->model);
    }
  }
}

static void charge_arrays (const Ctx *c, const hw_Entry *e, hw_Group *gr) {
  uint64_t i;
  gr->bytes = hg_shallow(c->g, HW_NUM(e[0]), c->model);
  gr->arrays = gr->count;
  for (i = 1; i < gr->count; i++) gr->wasted += hg_shallow(c->g, HW_NUM(e[i]), c->model);
}

/*
** The entries in two halves, by the top bit of their hash, each sorted
** by the rest of its bits (stable: a run of equal bits stays in object
** order) and split into groups, on both cores: together, the order and
** the groups of one sort of all. Each run of equal hash bits is split
** into groups of equal content, each made contiguous (in place: the
** copies of the run's first remaining entry are swapped to its side, then
** sorted by number again).
*/
typedef struct Halves {
  const Ctx *c;
  int (*equal) (const Ctx *, uint32_t, uint32_t);
  hw_Entry *e, *tmp;
  uint64_t from[3];   /* half h: e[from[h] .. from[h + 1]) */
  Words groups[2];    /* start << 32 | count of each group of two or more */
  int failed[2];
} Halves;

static void group_halves (void *ud, int part, uint64_t lo, uint64_t hi) {
  Halves *x = (Halves *)ud;
  hw_Entry *e = x->e;
  uint64_t h;
  (void)part;
  for (h = lo; h < hi; h++) {
    uint64_t i = x->from[h], n = x->from[h + 1];
    sift_radix_sort(e + i, (size_t)(n - i), sizeof *e, 32, 63, x->tmp + i);
    while (i < n) {
      uint64_t end = i + 1;
      while (end < n && e[end] >> 32 == e[i] >> 32) end++;
      while (i < end) {  /* the groups of this run */
        uint64_t j = i + 1, k;
        for (k = i + 1; k < end; k++)
          if (x->equal(x->c, HW_NUM(e[i]), HW_NUM(e[k]))) {
            hw_Entry t = e[j];
            e[j++] = e[k];
            e[k] = t;
          }
        if (j - i >= 2) {
          qsort(e + i, (size_t)(j - i), sizeof *e, asc_u64);  /* by number */
          if (push_word(&x->groups[h], i << 32 | (j - i)) != SIFT_OK) {
            x->failed[h] = 1;
            return;
          }
        }
        i = j;
      }
    }
  }
}

/*
** s's entries: the walk's parts' lists (the first part's, then the
** second's; both freed) but the objects in `drop` (NULL: none), in
** groups of equal content (group_halves), each charged in the order of
** their hashes (a String's array is charged to the first group that
** meets it), then ordered by what they waste.
*/
static sift_Status find_groups (const Ctx *c, hw_Set *s, Words *first,
                                Words *second, const uint8_t *drop,
                                int (*equal) (const Ctx *, uint32_t, uint32_t),
                                void (*charge) (const Ctx *, const hw_Entry *,
                                                hw_Group *)) {
  Words *part[2] = { first, second };
  uint64_t i, n = 0, low = 0, high, k;
  sift_Status st = SIFT_OK;
  Halves x;
  int h;
  if (part[0]->n + part[1]->n == 0) return SIFT_OK;
  memset(&x, 0, sizeof x);
  if ((x.e = (hw_Entry *)sift_big_alloc((size_t)(part[0]->n + part[1]->n) * sizeof *x.e)) == NULL)
    return SIFT_ENOMEM;
  for (h = 0; h < 2; h++)
    for (i = 0; i < part[h]->n; i++)
      if (drop == NULL || !HG_BIT(drop, HW_NUM(part[h]->v[i]))) {
        n++;
        low += !(part[h]->v[i] >> 63);
      }
  for (h = 0, high = low, k = 0; h < 2; h++)  /* the halves, each in order */
    for (i = 0; i < part[h]->n; i++)
      if (drop == NULL || !HG_BIT(drop, HW_NUM(part[h]->v[i])))
        x.e[part[h]->v[i] >> 63 ? high++ : k++] = part[h]->v[i];
  for (h = 0; h < 2; h++) {
    free(part[h]->v);
    memset(part[h], 0, sizeof *part[h]);
  }
  s->entries = x.e;
  s->nentries = n;
  if ((x.tmp = (hw_Entry *)sift_big_alloc((size_t)(n ? n : 1) * sizeof *x.tmp)) == NULL)
    return SIFT_ENOMEM;
  x.c = c;
  x.equal = equal;
  x.from[1] = low;
  x.from[2] = n;
  sift_split(2, n >= hg_split_from(c->g) ? 2 : UINT64_MAX, group_halves, &x);
  sift_big_free(x.tmp);
  if (x.failed[0] || x.failed[1]) st = SIFT_ENOMEM;
  for (h = 0; h < 2 && st == SIFT_OK; h++)
    for (i = 0; i < x.groups[h].n && st == SIFT_OK; i++) {
      hw_Group gr;
      memset(&gr, 0, sizeof gr);
      gr.start = x.groups[h].v[i] >> 32;
      gr.count = x.groups[h].v[i] & UINT32_MAX;
      charge(c, s->entries + gr.start, &gr);
      st = add_group(s, &gr);
    }
  free(x.groups[0].v);
  free(x.groups[1].v);
  if (st == SIFT_OK && s->ngroups > 1)
    qsort(s->groups, (size_t)s->ngroups, sizeof *s->groups, by_wasted);
  return st;
}

/* }====================================================== */


/*
** {======================================================
** Arrays of zeros and boxes
** =======================================================
*/

static int desc_u64 (const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x > y ? -1 : x < y;
}

/* v ascending: a radix sort (a pass per byte that differs), or qsort
   when its scratch array cannot be had */
static void sort_u64 (uint64_t *v, uint64_t n) {
  uint64_t *tmp;
  if (n < 2) return;
  if ((tmp = (uint64_t *)sift_big_alloc((size_t)n * sizeof *tmp)) == NULL) {
    qsort(v, (size_t)n, sizeof *v, asc_u64);
    return;
  }
  sift_radix_sort(v, (size_t)n, sizeof *v, 0, 64, tmp);
  sift_big_free(tmp);
}

/*
** The commonest lengths of each type's arrays of zeros: the keys (type <<
** 32 | length) sorted, each run becomes count << 32 | ~length in place
** (sorted descending: most first, then shortest), the first HW_TOP kept.
*/
static void zero_lengths (hw_Waste *w) {
  uint64_t *z = w->zkeys, i = 0, n = w->nzkeys;
  if (n == 0) return;
  sort_u64(z, n);
  while (i < n) {
    uint64_t type = z[i] >> 32, start = i, out = i, k;
    hw_Zeros *zs = &w->zeros[type];
    while (i < n && z[i] >> 32 == type) {
      uint64_t len = z[i] & UINT32_MAX, run = 0;
      while (i < n && z[i] == (type << 32 | len)) { i++; run++; }
      z[out++] = run << 32 | (UINT32_MAX - len);
    }
    qsort(z + start, (size_t)(out - start), sizeof *z, desc_u64);
    for (k = start; k < out && zs->nlengths < HW_TOP; k++) {
      zs->lcount[zs->nlengths] = z[k] >> 32;
      zs->length[zs->nlengths++] = UINT32_MAX - (z[k] & UINT32_MAX);
    }
  }
}

/* distinct values of a box class and its most repeated ones */
static void box_values (hw_Box *b) {
  uint64_t *v = b->values, i = 0;
  sort_u64(v, b->nvalues);
  while (i < b->nvalues) {
    uint64_t run = 0, x = v[i];
    int k;
    while (i < b->nvalues && v[i] == x) { i++; run++; }
    b->distinct++;
    if (run < 2) continue;
    /* insert into the top list: count descending, then value ascending */
    for (k = b->ntop; k > 0 && b->vcount[k - 1] < run; k--)
      if (k < HW_TOP) { b->vcount[k] = b->vcount[k - 1]; b->value[k] = b->value[k - 1]; }
    if (k < HW_TOP) {
      b->vcount[k] = run;
      b->value[k] = x;
      if (b->ntop < HW_TOP) b->ntop++;
    }
  }
  if (b->count > 0) b->wasted = (b->count - b->distinct) * (b->bytes / b->count);
}

/* count box instance o (number i) in bx and keep its value in values */
static sift_Status add_box (const hg_Graph *g, hw_Box *bx, Words *values,
                            const hp_ObjInfo *o, uint64_t i, int model) {
  int64_t v;
  int size = hp_type_size(g->h, bx->type);
  bx->count++;
  bx->bytes += hg_shallow(g, (uint32_t)i, model);
  if (!bx->type) return SIFT_OK;
  if (!read_field(g->h, o, bx->offset, bx->type, &v)) {  /* short data */
    bx->type = 0;
    return SIFT_OK;
  }
  return push_word(values, (uint64_t)v
                   & (size == 8 ? UINT64_MAX : ((uint64_t)1 << 8 * size) - 1));
}

/* }====================================================== */


/*
** {======================================================
** The walk over every object, on both cores
** =======================================================
*/

/* a String's value array marked, and read, while both parts walk: the
   parts share the byte that holds its bit */
static void mark_shared (uint8_t *set, uint64_t i) {
  __atomic_fetch_or(&set[i >> 3], (uint8_t)(1 << (i & 7)), __ATOMIC_RELAXED);
}

static int marked_shared (const uint8_t *set, uint64_t i) {
  return __atomic_load_n(&set[i >> 3], __ATOMIC_RELAXED) >> (i & 7) & 1;
}

/* what one part of the walk found, joined to w's after both are done */
typedef struct Part {
  Words strings, arrays;               /* hw_Entry */
  Words zeros, zkeys;                  /* arrays of zeros: number, type << 32 | length */
  uint64_t zcount[HW_NTYPES], zwasted[HW_NTYPES];  /* arrays of zeros by type */
  hw_Box boxes[HW_MAXBOX];             /* counts and bytes (type 0: short data) */
  Words values[HW_MAXBOX];             /* each box's values */
  hf_Fill fill;                        /* w->fill's rules (hf_fork) */
  int failed;
} Part;

typedef struct Walk {
  const hg_Graph *g;
  hw_Waste *w;
  const StrLayout *sl;
  const uint8_t *box_of;  /* per class: 1 + its box, 0 none */
  int64_t string_cls;
  int model, content;
  Part part[2];
} Walk;

static uint64_t entry_of (uint64_t hash, uint64_t num) {
  return hash >> 32 << 32 | num;
}

/* object i: a string (its value array marked), another primitive array
   (one met before its String is dropped once the walk is done), a box,
   a collection */
static sift_Status visit (const Walk *k, Part *p, uint64_t i) {
  const hg_Graph *g = k->g;
  const hp_Heap *h = g->h;
  hp_ObjInfo o;
  int zero;
  hp_object(h, i, &o);
  if (o.kind == HP_CLASS_DUMP) return SIFT_OK;
  if (o.cls >= 0 && p->fill.nrules > 0 && p->fill.mask[o.cls]
      && hf_visit(g, &p->fill, (uint32_t)i, &o, k->model) != SIFT_OK)
    return SIFT_ENOMEM;
  if (!k->content) return SIFT_OK;
  if (o.kind == HP_PRIM_ARRAY_DUMP && o.data != NULL && o.length > 0
      && !marked_shared(k->w->is_value, i)) {
    uint64_t hash = hash_bytes((uint64_t)o.elem << 3, o.data,
                               o.length * (uint64_t)hp_type_size(h, o.elem), &zero);
    if (!zero) return push_word(&p->arrays, entry_of(hash, i));
    p->zcount[o.elem]++;
    p->zwasted[o.elem] += hg_shallow(g, (uint32_t)i, k->model);
    if (push_word(&p->zkeys, (uint64_t)o.elem << 32 | o.length) != SIFT_OK) return SIFT_ENOMEM;
    return push_word(&p->zeros, i);
  }
  if (o.kind != HP_INSTANCE_DUMP || o.cls < 0) return SIFT_OK;
  if (o.cls == k->string_cls) {
    uint64_t tag, len;
    const unsigned char *at;
    uint32_t arr;
    if (!string_content(g, k->sl, (uint32_t)i, &tag, &at, &len, &arr)) return SIFT_OK;
    if (arr != HG_NONE) mark_shared(k->w->is_value, arr);
    return push_word(&p->strings, entry_of(hash_bytes(tag, at, len, &zero), i));
  }
  if (k->box_of[o.cls]) {
    int b = k->box_of[o.cls] - 1;
    return add_box(g, &p->boxes[b], &p->values[b], &o, i, k->model);
  }
  return SIFT_OK;
}

/* (each part works on a copy of its own: the parts share a cache line) */
static void walk_run (void *ud, int part, uint64_t lo, uint64_t hi) {
  Walk *k = (Walk *)ud;
  Part p = k->part[part];
  uint64_t i;
  for (i = lo; i < hi && !p.failed; i++)
    if (visit(k, &p, i) != SIFT_OK) p.failed = 1;
  k->part[part] = p;
}

/* the parts' counts, boxes and collections into w, their values joined
   (the first part's before the second's) */
static sift_Status join_parts (Walk *k) {
  hw_Waste *w = k->w;
  Part *a = &k->part[0], *b = &k->part[1];
  sift_Status st = a->failed || b->failed ? SIFT_ENOMEM : SIFT_OK;
  int x;
  for (x = 0; x < HW_NTYPES; x++) {
    w->zeros[x].count = a->zcount[x] + b->zcount[x];
    w->zeros[x].wasted = a->zwasted[x] + b->zwasted[x];
  }
  for (x = 0; x < HW_MAXBOX; x++) {
    hw_Box *bx = &w->boxes[x];
    bx->count = a->boxes[x].count + b->boxes[x].count;
    bx->bytes = a->boxes[x].bytes + b->boxes[x].bytes;
    if (!a->boxes[x].type || !b->boxes[x].type) bx->type = 0;
    if (join_words(&a->values[x], &b->values[x], &bx->values, &bx->nvalues) != SIFT_OK)
      st = SIFT_ENOMEM;
  }
  if (hf_join(&w->fill, &a->fill) != SIFT_OK || hf_join(&w->fill, &b->fill) != SIFT_OK)
    st = SIFT_ENOMEM;
  return st;
}

/* the keys of the parts' arrays of zeros, but of those that turned out
   to be Strings' values (their counts and bytes taken back) */
static sift_Status zero_keys (const Walk *k) {
  hw_Waste *w = k->w;
  uint64_t i, n = k->part[0].zkeys.n + k->part[1].zkeys.n;
  int h;
  if (n == 0) return SIFT_OK;
  if ((w->zkeys = (uint64_t *)sift_big_alloc((size_t)n * sizeof *w->zkeys)) == NULL)
    return SIFT_ENOMEM;
  for (h = 0; h < 2; h++)
    for (i = 0; i < k->part[h].zkeys.n; i++) {
      uint32_t num = (uint32_t)k->part[h].zeros.v[i];
      uint64_t key = k->part[h].zkeys.v[i];
      if (!HG_BIT(w->is_value, num)) w->zkeys[w->nzkeys++] = key;
      else {
        w->zeros[key >> 32].count--;
        w->zeros[key >> 32].wasted -= hg_shallow(k->g, num, k->model);
      }
    }
  return SIFT_OK;
}

static void free_parts (Walk *k) {
  int h, x;
  for (h = 0; h < 2; h++) {
    Part *p = &k->part[h];
    free(p->strings.v);
    free(p->arrays.v);
    free(p->zeros.v);
    free(p->zkeys.v);
    for (x = 0; x < HW_MAXBOX; x++) free(p->values[x].v);
    memset(p, 0, sizeof *p);
  }
}

/* }====================================================== */


sift_Status hw_waste (const hg_Graph *g, int model, int64_t string_cls,
                      const int64_t *box_cls, int nboxes, int content,
                      hw_Waste *w) {
  const hp_Heap *h = g->h;
  uint64_t nbits = ((uint64_t)g->n + 8) / 8;
  StrLayout sl;
  Ctx c;
  Walk k;
  uint8_t *box_of = NULL;
  sift_Status st = SIFT_ENOMEM;
  int b, part;
  c.g = g; c.w = w; c.sl = &sl; c.model = model;
  memset(&k, 0, sizeof k);
  string_layout(h, string_cls, &sl);
  w->nboxes = nboxes < HW_MAXBOX ? nboxes : HW_MAXBOX;
  w->is_value = (uint8_t *)sift_big_alloc((size_t)nbits);
  w->charged = (uint8_t *)sift_big_alloc((size_t)nbits);
  box_of = (uint8_t *)calloc((size_t)h->nclasses + 1, 1);
  if (w->is_value == NULL || w->charged == NULL || box_of == NULL
      || (w->fill.nrules > 0 && hf_prepare(h, &w->fill) != SIFT_OK))
    goto done;
  for (b = 0; b < w->nboxes; b++) {
    hw_Box *bx = &w->boxes[b];
    int64_t off;
    bx->cls = box_cls[b];
    if (bx->cls < 0 || (uint64_t)bx->cls >= h->nclasses) continue;
    box_of[bx->cls] = (uint8_t)(b + 1);
    off = field_of(h, bx->cls, "value", &bx->type);
    if (off < 0 || bx->type == HP_OBJECT) bx->type = 0;
    else bx->offset = (uint32_t)off;
  }
  k.g = g; k.w = w; k.sl = &sl; k.box_of = box_of;
  k.string_cls = string_cls; k.model = model; k.content = content;
  for (part = 0; part < 2; part++) {
    memcpy(k.part[part].boxes, w->boxes, sizeof w->boxes);
    if (w->fill.nrules > 0 && hf_fork(h, &w->fill, &k.part[part].fill) != SIFT_OK)
      k.part[part].failed = 1;
  }
  if (!k.part[0].failed && !k.part[1].failed)
    sift_split(g->n, hg_split_from(g), walk_run, &k);
  if (join_parts(&k) != SIFT_OK) goto done;
  hf_finish(&w->fill);
  if (!content) {  /* the collections alone */
    st = SIFT_OK;
    goto done;
  }
  if ((st = zero_keys(&k)) != SIFT_OK) goto done;
  if ((st = find_groups(&c, &w->strings, &k.part[0].strings, &k.part[1].strings, NULL,
                        equal_strings, charge_strings)) != SIFT_OK
      || (st = find_groups(&c, &w->arrays, &k.part[0].arrays, &k.part[1].arrays, w->is_value,
                           equal_arrays, charge_arrays)) != SIFT_OK)
    goto done;
  zero_lengths(w);
  for (b = 0; b < w->nboxes; b++)
    if (w->boxes[b].type) box_values(&w->boxes[b]);
  st = SIFT_OK;
done:
  free_parts(&k);
  free(box_of);
  return st;
}

/*
** {======================================================
** Referrers
** =======================================================
*/

/* a set of ids (open addressing, a power of two of slots, 0: empty), each
   with its object number */
typedef struct IdSet {
  uint64_t *ids;
  uint32_t *nums;
  uint64_t mask;
} IdSet;

static uint64_t slot_of (const IdSet *s, uint64_t id) {
  uint64_t i = (id * 0x9E3779B97F4A7C15u) >> 17 & s->mask;
  while (s->ids[i] != 0 && s->ids[i] != id) i = (i + 1) & s->mask;
  return i;
}

/* the object id refers to, when it is in the set; HG_NONE if not */
static uint32_t lookup (const IdSet *s, uint64_t id) {
  uint64_t i;
  if (id == 0) return HG_NONE;
  i = slot_of(s, id);
  return s->ids[i] == id ? s->nums[i] : HG_NONE;
}

/*
** The references of object i to the set's objects, as hg_refs_next reads
** them (fields of the class's reference layout, elements, statics; no
** synthetic ones), but matched by id: no id is looked up in the index
** unless it is a target's.
*/
static sift_Status refs_to (const hg_Graph *g, const IdSet *s, uint64_t i,
                            Words *p) {
  const hp_Heap *h = g->h;
  int ids = h->idsize;
  hp_ObjInfo o;
  uint64_t k;
  uint32_t t;
  int tag = h->p[hp_obj_off(h, i)];
  if (tag == HP_PRIM_ARRAY_DUMP || tag == HP_PRIM_ARRAY_NODATA)
    return SIFT_OK;  /* (no references: not decoded) */
  hp_object(h, i, &o);
  if (o.kind == HP_INSTANCE_DUMP && o.cls >= 0) {
    for (k = g->ref_first[o.cls]; k < g->ref_first[o.cls + 1]; k++) {
      const hp_Field *f = &h->fields[h->classes[o.cls].flat + g->ref_field[k]];
      if (f->offset + (uint64_t)ids <= o.length
          && (t = lookup(s, hp_read_id(o.data + f->offset, ids))) != HG_NONE
          && push_word(p, (uint64_t)t << 32 | i) != SIFT_OK)
        return SIFT_ENOMEM;
    }
  }
  else if (o.kind == HP_OBJ_ARRAY_DUMP) {
    for (k = 0; k < o.length; k++)
      if ((t = lookup(s, hp_read_id(o.data + k * (uint64_t)ids, ids))) != HG_NONE
          && push_word(p, (uint64_t)t << 32 | i) != SIFT_OK)
        return SIFT_ENOMEM;
  }
  else if (o.kind == HP_CLASS_DUMP && o.cls >= 0) {
    const unsigned char *st = h->p + h->classes[o.cls].statics_off + 2;
    for (k = 0; k < h->classes[o.cls].nstatics; k++) {  /* name, type, value */
      int type = st[ids];
      if (type == HP_OBJECT
          && (t = lookup(s, hp_read_id(st + ids + 1, ids))) != HG_NONE
          && push_word(p, (uint64_t)t << 32 | i) != SIFT_OK)
        return SIFT_ENOMEM;
      st += ids + 1 + hp_type_size(h, type);
    }
  }
  return SIFT_OK;
}

/* the walk over objects lo .. hi of one part (sift_split's) */
typedef struct RefWalk {
  const hg_Graph *g;
  const IdSet *s;
  Words part[2];  /* target << 32 | referrer */
  int failed[2];
} RefWalk;

/* (each part grows a copy of its list: the parts share a cache line) */
static void refs_run (void *ud, int part, uint64_t lo, uint64_t hi) {
  RefWalk *w = (RefWalk *)ud;
  Words pairs = w->part[part];
  uint64_t i;
  int failed = 0;
  for (i = lo; i < hi && !failed; i++)
    failed = refs_to(w->g, w->s, i, &pairs) != SIFT_OK;
  w->part[part] = pairs;
  w->failed[part] = failed;
}

/* the objects split in two halves on both cores, each half's pairs in
   object order, the first half's before the second's: the order of one
   walk over all */
sift_Status hw_referrers (const hg_Graph *g, const uint32_t *targets,
                          uint64_t ntargets, uint64_t **pairs,
                          uint64_t *npairs) {
  IdSet s;
  RefWalk w;
  uint64_t *v = NULL, *tmp, n, i, k, slots = 16;
  sift_Status st = SIFT_ENOMEM;
  *pairs = NULL;
  *npairs = 0;
  if (ntargets == 0) return SIFT_OK;
  memset(&w, 0, sizeof w);
  while (slots < 2 * ntargets) slots *= 2;
  s.mask = slots - 1;
  s.ids = (uint64_t *)sift_big_alloc((size_t)slots * sizeof *s.ids);
  s.nums = (uint32_t *)sift_big_alloc((size_t)slots * sizeof *s.nums);
  if (s.ids == NULL || s.nums == NULL) goto done;
  for (i = 0; i < ntargets; i++) {
    uint64_t id = hp_obj_id(g->h, targets[i]), at;
    if (id == 0 || hg_find(g, id) != targets[i]) continue;  /* no reference finds it */
    at = slot_of(&s, id);
    s.ids[at] = id;
    s.nums[at] = targets[i];
  }
  w.g = g;
  w.s = &s;
  sift_split(g->n, hg_split_from(g), refs_run, &w);
  if (w.failed[0] || w.failed[1]
      || join_words(&w.part[0], &w.part[1], &v, &n) != SIFT_OK)
    goto done;
  if (n > 1) {  /* by target; each target's referrers stay in order */
    if ((tmp = (uint64_t *)sift_big_alloc((size_t)n * sizeof *tmp)) == NULL) goto done;
    sift_radix_sort(v, (size_t)n, sizeof *v, 32, 64, tmp);
    sift_big_free(tmp);
  }
  for (i = 0, k = 0; i < n; i++)  /* a referrer holding a target twice: once */
    if (k == 0 || v[i] != v[k - 1]) v[k++] = v[i];
  *pairs = v;
  *npairs = k;
  v = NULL;
  st = SIFT_OK;
done:
  free(w.part[0].v);
  free(w.part[1].v);
  sift_big_free(v);
  sift_big_free(s.ids);
  sift_big_free(s.nums);
  return st;
}

/* }====================================================== */


void hw_free (hw_Waste *w) {
  int b;
  sift_big_free(w->strings.entries);
  sift_big_free(w->strings.groups);
  sift_big_free(w->arrays.entries);
  sift_big_free(w->arrays.groups);
  for (b = 0; b < HW_MAXBOX; b++) sift_big_free(w->boxes[b].values);
  sift_big_free(w->zkeys);
  sift_big_free(w->is_value);
  sift_big_free(w->charged);
  hf_free(&w->fill);
  sift_big_free(w->targets);
  sift_big_free(w->pairs);
  memset(w, 0, sizeof *w);
}
