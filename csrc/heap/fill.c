/*
** fill.c
** Collections filled below their capacity (see fill.h), one object at a
** time as the waste pass meets it. A class falls under the rules of its
** own class and its superclasses (a mask per class, made once); a field
** name is resolved once per class that is read (a row of offsets per
** class, made when first needed), as `sift.heap`'s Object:field resolves
** it: the first field of that name in the class's layout, its own before
** its superclass's. The worst instances of a rule are a bounded heap, so
** memory is the rules' and the classes' (8 bytes per class), never a
** value per object.
*/

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"

/*
** {======================================================
** Fields
** =======================================================
*/

/* the offset and type of name k in class c: the first in its layout */
static hf_Field resolve (const hp_Heap *h, const hf_Fill *f, int64_t c, int k) {
  hf_Field r = {-1, 0};
  uint32_t i;
  for (i = 0; i < h->classes[c].nflat; i++) {
    const hp_Field *fl = &h->fields[h->classes[c].flat + i];
    size_t len;
    const char *s = hp_string(h, fl->name, &len);
    if (s != NULL && len == f->lens[k] && memcmp(s, f->names[k], len) == 0) {
      r.offset = (int32_t)fl->offset;
      r.type = fl->type;
      return r;
    }
  }
  return r;
}

/* the row of class c's fields (every name resolved), NULL: no memory */
static const hf_Field *row_of (const hp_Heap *h, hf_Fill *f, int64_t c) {
  hf_Field *row;
  int k;
  if (f->slot[c] >= 0) return f->fields + (uint64_t)f->slot[c] * (uint64_t)f->nnames;
  if (f->nslots == f->scap) {
    uint64_t cap = f->scap ? 2 * f->scap : 64;
    hf_Field *v = (hf_Field *)realloc(f->fields, (size_t)(cap * (uint64_t)f->nnames) * sizeof *v);
    if (v == NULL) return NULL;
    f->fields = v;
    f->scap = cap;
  }
  row = f->fields + f->nslots * (uint64_t)f->nnames;
  for (k = 0; k < f->nnames; k++) row[k] = resolve(h, f, c, k);
  f->slot[c] = (int32_t)f->nslots++;
  return row;
}

/*
** Field k of object num as Object:field reads it. 1: the instance has
** such a field and its data holds it (*fl: offset and type, *o: the
** object); 0: not an instance of a class in the dump, no such field, or
** short data; -1: no memory.
*/
static int field_at (const hg_Graph *g, hf_Fill *f, uint32_t num, int k,
                     hp_ObjInfo *o, hf_Field *fl) {
  const hf_Field *row;
  hp_object(g->h, num, o);
  if (k < 0 || o->kind != HP_INSTANCE_DUMP || o->cls < 0) return 0;
  if ((row = row_of(g->h, f, o->cls)) == NULL) return -1;
  *fl = row[k];
  if (fl->offset < 0
      || (uint64_t)fl->offset + (uint64_t)hp_type_size(g->h, fl->type) > o->length)
    return 0;
  return 1;
}

/* the object a reference field holds: 1 and *to; 0 when the field is
   absent, not a reference, null or names no object of the dump */
static int ref_field (const hg_Graph *g, hf_Fill *f, uint32_t num, int k,
                      uint32_t *to) {
  hp_ObjInfo o;
  hf_Field fl;
  uint64_t id;
  int r = field_at(g, f, num, k, &o, &fl);
  if (r <= 0) return r;
  if (fl.type != HP_OBJECT) return 0;
  id = hp_id_at(g->h, o.data + fl.offset);
  if (id == 0 || (*to = hg_find(g, id)) == HG_NONE) return 0;
  return 1;
}

/* an integral field's value (byte, short, int, long): 1 and *v, else 0 */
static int int_field (const hg_Graph *g, hf_Fill *f, uint32_t num, int k,
                      int64_t *v) {
  hp_ObjInfo o;
  hf_Field fl;
  int r = field_at(g, f, num, k, &o, &fl);
  if (r <= 0) return r;
  if (fl.type != HP_BYTE && fl.type != HP_SHORT && fl.type != HP_INT
      && fl.type != HP_LONG)
    return 0;
  *v = hp_read_signed(o.data + fl.offset, hp_type_size(g->h, fl.type));
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** The worst instances
** =======================================================
*/

/* a's rank against b's: most wasted first, then by the id's text
   ("0x%x", as the report shows and orders them) */
static int rank (const hf_Worst *a, const hf_Worst *b) {
  char x[24], y[24];
  if (a->wasted != b->wasted) return a->wasted > b->wasted ? -1 : 1;
  snprintf(x, sizeof x, "%" PRIx64, a->id);
  snprintf(y, sizeof y, "%" PRIx64, b->id);
  return strcmp(x, y);
}

static int by_rank (const void *a, const void *b) {
  return rank((const hf_Worst *)a, (const hf_Worst *)b);
}

/* restore the heap below i: the entry ranked last on top */
static void sink (hf_Worst *w, uint64_t n, uint64_t i) {
  for (;;) {
    uint64_t l = 2 * i + 1, m = i;
    if (l < n && rank(&w[m], &w[l]) < 0) m = l;
    if (l + 1 < n && rank(&w[m], &w[l + 1]) < 0) m = l + 1;
    if (m == i) return;
    { hf_Worst t = w[i]; w[i] = w[m]; w[m] = t; }
    i = m;
  }
}

/* keep x if it is among the f->keep worst of rule r */
static sift_Status keep_worst (const hf_Fill *f, hf_Rule *r, const hf_Worst *x) {
  uint64_t i;
  if (f->keep == 0) return SIFT_OK;
  if (r->nworst == f->keep) {  /* full: replace the last ranked if x beats it */
    if (rank(x, &r->worst[0]) < 0) {
      r->worst[0] = *x;
      sink(r->worst, r->nworst, 0);
    }
    return SIFT_OK;
  }
  if (r->nworst == r->wcap) {
    uint64_t cap = r->wcap ? 2 * r->wcap : 16;
    hf_Worst *v;
    if (cap > f->keep) cap = f->keep;
    v = (hf_Worst *)realloc(r->worst, (size_t)cap * sizeof *v);
    if (v == NULL) return SIFT_ENOMEM;
    r->worst = v;
    r->wcap = cap;
  }
  i = r->nworst++;  /* sift x up */
  while (i > 0 && rank(&r->worst[(i - 1) / 2], x) < 0) {
    r->worst[i] = r->worst[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  r->worst[i] = *x;
  return SIFT_OK;
}

/* }====================================================== */


sift_Status hf_prepare (const hp_Heap *h, hf_Fill *f) {
  uint64_t c;
  int k;
  f->mask = (uint32_t *)calloc((size_t)h->nclasses + 1, sizeof *f->mask);
  f->slot = (int32_t *)malloc(((size_t)h->nclasses + 1) * sizeof *f->slot);
  if (f->mask == NULL || f->slot == NULL) return SIFT_ENOMEM;
  for (c = 0; c < h->nclasses; c++) {
    int64_t s = (int64_t)c;
    uint64_t depth = 0;
    f->slot[c] = -1;
    /* the class and its superclasses (a loop in a bad dump ends) */
    while (s >= 0 && (uint64_t)s < h->nclasses && depth++ <= h->nclasses) {
      for (k = 0; k < f->nrules; k++)
        if (f->rules[k].cls == s) f->mask[c] |= (uint32_t)1 << k;
      s = h->classes[s].super;
    }
  }
  return SIFT_OK;
}

/* the array and size of collection num under rule r: 1 when both are
   known, with *arr, *capacity, *size; 0 when not; -1: no memory */
static int array_and_size (const hg_Graph *g, hf_Fill *f, const hf_Rule *r,
                           uint32_t num, uint32_t *arr, uint64_t *capacity,
                           int64_t *size) {
  uint32_t at = num;
  hp_ObjInfo a;
  int i, k = 0, got = 0;
  if (r->via >= 0 && (k = ref_field(g, f, num, r->via, &at)) <= 0) return k;
  for (i = 0; i < r->narray && !got; i++)
    if ((got = ref_field(g, f, at, r->array[i], arr)) < 0) return -1;
  if (!got) return 0;
  hp_object(g->h, *arr, &a);
  if (a.kind != HP_OBJ_ARRAY_DUMP && a.kind != HP_PRIM_ARRAY_DUMP
      && a.kind != HP_PRIM_ARRAY_NODATA)
    return 0;
  *capacity = a.length;
  if (*capacity == 0) return 0;  /* no array yet: nothing wasted */
  if (r->head >= 0) {  /* a ring: (tail - head) mod capacity */
    int64_t head, tail, n = (int64_t)*capacity, d;
    if ((k = int_field(g, f, at, r->head, &head)) <= 0
        || (k = int_field(g, f, at, r->tail, &tail)) <= 0)
      return k;
    d = (tail - head) % n;
    *size = d < 0 ? d + n : d;
    return 1;
  }
  for (i = 0, got = 0; i < r->nsize && !got; i++)
    if ((got = int_field(g, f, at, r->size[i], size)) < 0) return -1;
  *size *= r->times;
  return got;
}

sift_Status hf_visit (const hg_Graph *g, hf_Fill *f, uint32_t num,
                      const hp_ObjInfo *o, int model) {
  uint32_t m;
  int k;
  if (o->cls < 0 || (uint64_t)o->cls >= g->h->nclasses) return SIFT_OK;
  m = f->mask[o->cls];
  for (k = 0; m != 0; k++, m >>= 1) {
    hf_Rule *r = &f->rules[k];
    uint32_t arr;
    uint64_t capacity, unused, wasted;
    int64_t size;
    int got;
    if (!(m & 1)) continue;
    r->count++;
    if ((got = array_and_size(g, f, r, num, &arr, &capacity, &size)) < 0)
      return SIFT_ENOMEM;
    if (!got) continue;
    unused = size < (int64_t)capacity ? (uint64_t)((int64_t)capacity - size) : 0;
    wasted = hg_shallow(g, arr, model) * unused / capacity;
    r->capacity += capacity;
    r->size_sum += size;
    r->wasted += wasted;
    if (wasted > 0) {
      hf_Worst x;
      x.id = hp_obj_id(g->h, num);
      x.capacity = capacity;
      x.size = size;
      x.wasted = wasted;
      if (keep_worst(f, r, &x) != SIFT_OK) return SIFT_ENOMEM;
    }
  }
  return SIFT_OK;
}

sift_Status hf_fork (const hp_Heap *h, const hf_Fill *f, hf_Fill *part) {
  uint64_t c;
  int k;
  *part = *f;
  part->fields = NULL;
  part->nslots = part->scap = 0;
  for (k = 0; k < part->nrules; k++) {
    hf_Rule *r = &part->rules[k];
    r->count = r->capacity = r->wasted = 0;
    r->size_sum = 0;
    r->worst = NULL;
    r->nworst = r->wcap = 0;
  }
  part->slot = (int32_t *)malloc(((size_t)h->nclasses + 1) * sizeof *part->slot);
  if (part->slot == NULL) return SIFT_ENOMEM;
  for (c = 0; c <= h->nclasses; c++) part->slot[c] = -1;
  return SIFT_OK;
}

sift_Status hf_join (hf_Fill *f, hf_Fill *part) {
  sift_Status st = SIFT_OK;
  uint64_t i;
  int k;
  for (k = 0; k < part->nrules; k++) {
    hf_Rule *r = &f->rules[k], *p = &part->rules[k];
    r->count += p->count;
    r->capacity += p->capacity;
    r->wasted += p->wasted;
    r->size_sum += p->size_sum;
    for (i = 0; i < p->nworst && st == SIFT_OK; i++)
      st = keep_worst(f, r, &p->worst[i]);
    free(p->worst);
  }
  free(part->slot);
  free(part->fields);
  memset(part, 0, sizeof *part);  /* (its masks are f's) */
  return st;
}

void hf_finish (hf_Fill *f) {
  int k;
  for (k = 0; k < f->nrules; k++)
    if (f->rules[k].nworst > 1)
      qsort(f->rules[k].worst, (size_t)f->rules[k].nworst, sizeof(hf_Worst), by_rank);
}

void hf_free (hf_Fill *f) {
  int k;
  for (k = 0; k < f->nrules; k++) free(f->rules[k].worst);
  free(f->mask);
  free(f->slot);
  free(f->fields);
  memset(f, 0, sizeof *f);
}
