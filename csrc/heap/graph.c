/*
** graph.c
** References and shortest paths over the HPROF index (dominators.c builds
** the dominator tree on them).
**
** References are read from the records each time they are needed (no
** labels are stored): an instance's object fields (per-class tables of
** layout indexes, each with flags set from Lua), an object array's
** elements, a class's object statics; for the dominator model also an
** instance's class and a class's superclass and loader.
*/

#include <stdlib.h>
#include <string.h>

#include "core/search.h"
#include "graph.h"


/*
** {======================================================
** Set-up and lookups
** =======================================================
*/

static int cmp_defined (const void *a, const void *b) {
  const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* the class loaders of the dump and the classes each defined: the JVM keeps
   a class alive as long as its loader */
static sift_Status find_loaders (hg_Graph *g) {
  const hp_Heap *h = g->h;
  uint32_t *pairs;
  uint64_t c, k = 0;
  if (!(g->is_loader = (uint8_t *)sift_big_alloc((g->n / 8 + 1) * 1))
      || !HG_ALLOC(pairs, h->nclasses * 2))
    return SIFT_ENOMEM;
  for (c = 0; c < h->nclasses; c++) {
    uint32_t loader = h->classes[c].loader_id
                    ? hg_find(g, h->classes[c].loader_id) : HG_NONE;
    if (loader == HG_NONE) continue;
    pairs[2 * k] = loader;
    pairs[2 * k + 1] = (uint32_t)c;
    k++;
    HG_SETBIT(g->is_loader, loader);
  }
  qsort(pairs, k, 2 * sizeof *pairs, cmp_defined);
  g->ndefined = k;
  if (!HG_ALLOC(g->defined_by, k) || !HG_ALLOC(g->defined, k)) {
    sift_big_free(pairs);
    return SIFT_ENOMEM;
  }
  for (c = 0; c < k; c++) {
    g->defined_by[c] = pairs[2 * c];
    g->defined[c] = pairs[2 * c + 1];
  }
  sift_big_free(pairs);
  return SIFT_OK;
}

sift_Status hg_init (hg_Graph *g, const hp_Heap *h) {
  uint64_t c, i, total = 0, statics = 0;
  memset(g, 0, sizeof *g);
  g->h = h;
  g->threads = h->threads_opt;
  if (h->nobjs >= HG_NONE - 1) return SIFT_EUNSUPPORTED;
  g->n = (uint32_t)h->nobjs;
  /* per-class tables of object fields and statics */
  if (!HG_ALLOC(g->ref_first, h->nclasses + 1)
      || !HG_ALLOC(g->static_first, h->nclasses + 1))
    return SIFT_ENOMEM;
  for (c = 0; c < h->nclasses; c++) {
    const hp_Class *k = &h->classes[c];
    g->ref_first[c] = (uint32_t)total;
    g->static_first[c] = (uint32_t)statics;
    for (i = 0; i < k->nflat; i++)
      total += h->fields[k->flat + i].type == HP_OBJECT;
    statics += k->nstatics;
  }
  g->ref_first[h->nclasses] = (uint32_t)total;
  g->static_first[h->nclasses] = (uint32_t)statics;
  if (!HG_ALLOC(g->ref_field, total) || !HG_ALLOC(g->ref_flags, total)
      || !HG_ALLOC(g->static_flags, statics))
    return SIFT_ENOMEM;
  memset(g->ref_flags, 0, total ? total : 1);
  memset(g->static_flags, 0, statics ? statics : 1);
  for (c = 0; c < h->nclasses; c++) {
    const hp_Class *k = &h->classes[c];
    uint32_t at = g->ref_first[c];
    for (i = 0; i < k->nflat; i++)
      if (h->fields[k->flat + i].type == HP_OBJECT) g->ref_field[at++] = (uint32_t)i;
  }
  /* buckets of keys for id lookups: about one per four objects */
  if (h->keys32 && g->n > 0) {
    uint64_t maxkey = h->keys32[g->n - 1], b;
    while ((maxkey >> g->bucket_shift) > g->n / 4 + 1) g->bucket_shift++;
    g->nbuckets = (maxkey >> g->bucket_shift) + 1;
    if (!HG_ALLOC(g->bucket, g->nbuckets + 1)) return SIFT_ENOMEM;
    for (b = 0, i = 0; b <= g->nbuckets; b++) {
      while (i < g->n && (h->keys32[i] >> g->bucket_shift) < b) i++;
      g->bucket[b] = (uint32_t)i;
    }
  }
  /* the roots that point at objects of the dump */
  if (!HG_ALLOC(g->root_obj, h->nroots) || !HG_ALLOC(g->root_rec, h->nroots)
      || !(g->root_obj_flags = (uint8_t *)sift_big_alloc((h->nroots + 1) * 1)))
    return SIFT_ENOMEM;
  for (i = 0; i < h->nroots; i++) {
    uint32_t num = hg_find(g, h->roots[i].id);
    if (num == HG_NONE) continue;
    g->root_obj[g->nroots] = num;
    g->root_rec[g->nroots++] = i;
  }
  return find_loaders(g);
}

void hg_free (hg_Graph *g) {
  sift_big_free(g->ref_first);
  sift_big_free(g->ref_field);
  sift_big_free(g->ref_flags);
  sift_big_free(g->static_flags);
  sift_big_free(g->static_first);
  sift_big_free(g->bucket);
  sift_big_free(g->root_obj);
  sift_big_free(g->root_rec);
  sift_big_free(g->root_obj_flags);
  sift_big_free(g->is_loader);
  hg_search_close(g->search);
  sift_big_free(g->path_parent);
  sift_big_free(g->run_start);
  sift_big_free(g->run_len);
  sift_big_free(g->jvm_instance);
  sift_big_free(g->jvm_mirror);
  sift_big_free(g->vvm_instance);
  sift_big_free(g->defined_by);
  sift_big_free(g->defined);
  sift_big_free(g->first);
  sift_big_free(g->succ);
  sift_big_free(g->pfirst);
  sift_big_free(g->pred);
  hg_free_tree(g);
  memset(g, 0, sizeof *g);
}

void hg_free_tree (hg_Graph *g) {
  sift_big_free(g->idom);
  sift_big_free(g->retained32);
  sift_big_free(g->retained64);
  sift_big_free(g->children);
  g->idom = NULL;
  g->retained32 = NULL;
  g->retained64 = NULL;
  g->children = NULL;
  g->nchildren = 0;
}

uint32_t hg_find (const hg_Graph *g, uint64_t id) {
  const hp_Heap *h = g->h;
  uint64_t d, key, b, lo, hi;
  if (g->bucket == NULL) {
    int64_t num = hp_find(h, id);
    return num < 0 ? HG_NONE : (uint32_t)num;
  }
  d = id - h->id_base;
  if (id < h->id_base || (d & ((UINT64_C(1) << h->id_shift) - 1)) != 0)
    return HG_NONE;
  key = d >> h->id_shift;
  b = key >> g->bucket_shift;
  if (b >= g->nbuckets) return HG_NONE;
  lo = g->bucket[b];
  hi = g->bucket[b + 1];
  SIFT_LOWER_BOUND(lo, hi, mid, h->keys32[mid] < key);
  return lo < g->bucket[b + 1] && h->keys32[lo] == key ? (uint32_t)lo : HG_NONE;
}

void hg_flag_field (hg_Graph *g, uint32_t cls, uint32_t field, int flags) {
  uint32_t i;
  for (i = g->ref_first[cls]; i < g->ref_first[cls + 1]; i++)
    if (g->ref_field[i] == field) g->ref_flags[i] = (uint8_t)flags;
}

void hg_flag_static (hg_Graph *g, uint32_t cls, uint32_t index, int flags) {
  if (g->static_first[cls] + index < g->static_first[cls + 1])
    g->static_flags[g->static_first[cls] + index] = (uint8_t)flags;
}

/* }====================================================== */


/*
** {======================================================
** References of one object
** =======================================================
*/

void hg_refs_begin (hg_Iter *it, const hg_Graph *g, uint32_t num,
                    int synthetic) {
  hp_ObjInfo o;
  hp_object(g->h, num, &o);
  it->g = g;
  it->num = num;
  it->kind = o.kind;
  it->synthetic = synthetic;
  it->step = 0;
  it->elem = o.elem;
  it->missed = 0;
  it->along = it->along_end = NULL;
  it->want_id = 0;
  it->data = o.data;
  it->cls = o.cls;
  it->i = 0;
  it->count = o.length;  /* elements, or instance data bytes */
  it->next_defined = HG_NONE;
  it->statics = NULL;
  if (o.kind == HP_CLASS_DUMP && o.cls >= 0) {
    it->statics = g->h->p + g->h->classes[o.cls].statics_off + 2;
    it->count = g->h->classes[o.cls].nstatics;
  }
  else if (o.kind == HP_INSTANCE_DUMP && o.cls >= 0)
    it->i = g->ref_first[o.cls];
}

/* fill ref with a reference to id, or return 0 when it points nowhere */
static int resolve (hg_Iter *it, uint64_t id, int kind, uint64_t index,
                    int flags, hg_Ref *ref) {
  uint32_t target;
  if (id == 0) return 0;
  if (it->want_id != 0) {  /* (hg_refs_to) */
    if (id != it->want_id) return 0;
    target = it->want;
  }
  else if (it->along != NULL) {  /* the CSR entries say (hg_refs_along) */
    if (flags & (HG_NEVER | HG_SKIP)) target = HG_NONE;
    else if (it->along < it->along_end
             && (!it->along_checked
                 || hp_obj_id(it->g->h, *it->along & ~HG_LOW_EDGE) == id))
      target = *it->along++ & ~HG_LOW_EDGE;
    else return 0;  /* an id not in the dump */
  }
  else if ((target = hg_find(it->g, id)) == HG_NONE) {
    it->missed++;
    return 0;
  }
  ref->target = target;
  ref->kind = (uint8_t)kind;
  ref->index = (uint32_t)index;
  ref->flags = (uint8_t)flags;
  return 1;
}

/* the first of a loader's (loader, class) pairs */
static uint64_t first_defined (const hg_Graph *g, uint32_t loader) {
  uint64_t lo = 0, hi = g->ndefined;
  SIFT_LOWER_BOUND(lo, hi, mid, g->defined_by[mid] < loader);
  return lo;
}

/*
** What the JVM keeps alive without a field, one at a time: an instance's
** or object array's class; a class's superclass, loader, signers and
** protection domain (CLASS_DUMP: id, u4 serial, super, loader, signers,
** domain); the classes a loader defined.
*/
static int synthetic_next (hg_Iter *it, hg_Ref *ref) {
  const hg_Graph *g = it->g;
  const hp_Heap *h = g->h;
  const hp_Class *c = it->cls >= 0 ? &h->classes[it->cls] : NULL;
  int ids = h->idsize, is_class = it->kind == HP_CLASS_DUMP;
  for (;;) {
    switch (it->step++) {
      case 0:
        if (c && !is_class && resolve(it, c->id, HG_CLASS, 0, HG_LOW, ref)) return 1;
        break;
      case 1:
        if (c && is_class && resolve(it, c->super_id, HG_SUPER, 0, HG_LOW, ref)) return 1;
        break;
      case 2:
        if (c && is_class && resolve(it, c->loader_id, HG_LOADER, 0, HG_LOW, ref)) return 1;
        break;
      case 3: case 4:
        if (c && is_class
            && resolve(it, hp_id_at(h, h->p + c->off + 1 + ids + 4
                                       + (uint64_t)ids * (it->step - 2)),
                       it->step == 4 ? HG_SIGNERS : HG_DOMAIN, 0, HG_LOW, ref))
          return 1;
        break;
      case 5:
        if (it->kind != HP_INSTANCE_DUMP || !HG_BIT(g->is_loader, it->num)) return 0;
        if (it->next_defined == HG_NONE) it->next_defined = first_defined(g, it->num);
        while (it->next_defined < g->ndefined
               && g->defined_by[it->next_defined] == it->num) {
          uint32_t k = g->defined[it->next_defined++];
          if (resolve(it, h->classes[k].id, HG_DEFINED, k, HG_LOW, ref)) {
            it->step = 5;
            return 1;
          }
        }
        return 0;
      default:
        return 0;
    }
  }
}

int hg_refs_next (hg_Iter *it, hg_Ref *ref) {
  const hg_Graph *g = it->g;
  const hp_Heap *h = g->h;
  int ids = h->idsize;
  switch (it->kind) {
    case HP_INSTANCE_DUMP:
      if (it->cls < 0) return 0;
      while (it->i < g->ref_first[it->cls + 1]) {
        uint64_t k = it->i++;
        const hp_Field *f = &h->fields[h->classes[it->cls].flat + g->ref_field[k]];
        if (f->offset + (uint64_t)ids <= it->count
            && resolve(it, hp_id_at(h, it->data + f->offset), HG_FIELD,
                       g->ref_field[k], g->ref_flags[k], ref))
          return 1;
      }
      break;
    case HP_OBJ_ARRAY_DUMP:
      while (it->i < it->count) {
        uint64_t k = it->i++;
        if (resolve(it, hp_id_at(h, it->data + k * (uint64_t)ids), HG_ELEMENT,
                    k, 0, ref))
          return 1;
      }
      break;
    case HP_CLASS_DUMP:
      if (it->cls < 0) return 0;
      while (it->i < it->count) {  /* statics: name id, u1 type, value */
        uint64_t k = it->i++;
        const unsigned char *s = it->statics;
        int t = s[ids];
        it->statics += ids + 1 + hp_type_size(h, t);
        if (t == HP_OBJECT
            && resolve(it, hp_id_at(h, s + ids + 1), HG_STATIC, k,
                       g->static_flags[g->static_first[it->cls] + k], ref))
          return 1;
      }
      break;
    default:
      return 0;
  }
  return it->synthetic && synthetic_next(it, ref);
}

/* }====================================================== */


#define ALIGN8(n) (((n) + 7) & ~(uint64_t)7)

/*
** VisualVM's ObjectSizeSettings and ClassDump.getInstanceSize. When
** java.lang.Object's CLASS_DUMP states an instance size (Android), sizes
** are the dump's: an instance is its class's stated size, unaligned, and
** Object's is the header. Otherwise (HotSpot writes 0) the header is an id
** and a reference, a reference is an id (4-byte ids) or the guessed size
** (8-byte ids), and an instance is the header plus its fields, references
** at that size, with no packing, aligned to 8.
*/
sift_Status hg_set_visualvm (hg_Graph *g, int oop, int64_t object_cls,
                             int64_t class_cls) {
  const hp_Heap *h = g->h;
  uint64_t c;
  int ids = h->idsize;
  int stated = object_cls >= 0 && h->classes[object_cls].instance_size > 0;
  uint32_t *sizes;
  if (!HG_ALLOC(sizes, h->nclasses)) return SIFT_ENOMEM;
  if (stated) {
    g->vvm_min = h->classes[object_cls].instance_size;
    g->vvm_oop = ids == 8 ? g->vvm_min - 8 : (uint32_t)ids;
  }
  else {
    g->vvm_oop = ids == 8 ? (uint32_t)oop : (uint32_t)ids;
    g->vvm_min = (uint32_t)ids + g->vvm_oop;
  }
  for (c = 0; c < h->nclasses; c++) {
    const hp_Class *k = &h->classes[c];
    uint64_t refs = g->ref_first[c + 1] - g->ref_first[c];
    sizes[c] = stated ? k->instance_size
             : (uint32_t)ALIGN8(g->vvm_min + k->data_size - refs * (ids - g->vvm_oop));
  }
  sift_big_free(g->vvm_instance);
  g->vvm_instance = sizes;
  g->vvm_class = class_cls >= 0 ? sizes[class_cls] : (uint32_t)ALIGN8(g->vvm_min);
  g->vvm_class_num = class_cls;
  return SIFT_OK;
}

uint64_t hg_shallow (const hg_Graph *g, uint32_t num, int model) {
  const hp_Heap *h = g->h;
  hp_ObjInfo o;
  uint64_t bytes;
  hp_object(h, num, &o);
  if (model == HG_SHARK) return o.shallow;
  if (model == HG_JVM && g->jvm_instance != NULL) {
    switch (o.kind) {
      case HP_CLASS_DUMP:
        if (o.cls >= 0) return g->jvm_mirror[o.cls];
        break;
      case HP_INSTANCE_DUMP:
        if (o.cls >= 0) return g->jvm_instance[o.cls];
        break;
      case HP_OBJ_ARRAY_DUMP:
        return ALIGN8(g->jvm_array_base + o.length * g->jvm_oop);
      default: {  /* primitive arrays */
        int wide = o.elem == HP_LONG || o.elem == HP_DOUBLE;
        return ALIGN8((wide ? g->jvm_array_base_wide : g->jvm_array_base)
                      + o.shallow);
      }
    }
  }
  if (model == HG_VISUALVM && g->vvm_instance != NULL) {
    switch (o.kind) {
      case HP_CLASS_DUMP:  /* a java.lang.Class instance, not its statics */
        return g->vvm_class;
      case HP_INSTANCE_DUMP:  /* no class: the header (HprofHeap's retained sizes) */
        return o.cls >= 0 ? g->vvm_instance[o.cls] : g->vvm_min;
      case HP_OBJ_ARRAY_DUMP:  /* ClassDumpSegment.getArraySize: a u4 length more */
        return ALIGN8(g->vvm_min + 4 + o.length * g->vvm_oop);
      default:
        return ALIGN8(g->vvm_min + 4 + o.shallow);
    }
  }
  /* what neither layout placed: a one-id header, arrays a u4 length more,
     everything aligned to 8 */
  bytes = (uint64_t)h->idsize + o.shallow;
  if (o.kind == HP_OBJ_ARRAY_DUMP || o.kind == HP_PRIM_ARRAY_DUMP
      || o.kind == HP_PRIM_ARRAY_NODATA)
    bytes += 4;
  return ALIGN8(bytes);
}


/*
** {======================================================
** Shortest paths from the roots
** =======================================================
*/

/*
** A queue of object numbers in a ring that grows as needed: the search
** holds its frontier, not every object it has queued (an object enters
** each of the two queues once at most).
*/
typedef struct Ring {
  uint32_t *a;
  uint64_t cap, head, len;
} Ring;

static int ring_push (Ring *r, uint32_t v) {
  if (r->len == r->cap) {
    uint64_t cap = r->cap + r->cap / 2 + 1024, tail = r->cap - r->head;
    uint32_t *a = sift_big_realloc(r->a, cap * sizeof *a);
    if (a == NULL) return 0;
    /* the part from head to the old end goes to the new end */
    if (r->len > 0) memmove(a + cap - tail, a + r->head, tail * sizeof *a);
    r->head = r->len > 0 ? cap - tail : 0;
    r->a = a;
    r->cap = cap;
  }
  {
    uint64_t at = r->head + r->len++;
    r->a[at >= r->cap ? at - r->cap : at] = v;
  }
  return 1;
}

static uint32_t ring_pop (Ring *r) {
  uint32_t v = r->a[r->head];
  if (++r->head == r->cap) r->head = 0;
  r->len--;
  return v;
}

/*
** Object c met through a reference from u (clow: at low priority, or from
** an object reached so): the BFS's one rule. 1 when u became c's parent,
** 2 when c was promoted (its parent was *old), 0 when nothing changed, -1
** for want of memory.
*/
static int reach (uint32_t u, uint32_t c, int clow, uint32_t *parent,
                  uint8_t *low, const uint8_t *done, Ring *q, Ring *lq,
                  uint32_t *old) {
  if (parent[c] == HG_NONE) {
    parent[c] = u;
    if (clow) HG_SETBIT(low, c);
    return ring_push(clow ? lq : q, c) ? 1 : -1;
  }
  if (!clow && HG_BIT(low, c) && !HG_BIT(done, c)) {  /* promote */
    *old = parent[c];
    parent[c] = u;
    HG_CLEARBIT(low, c);
    return ring_push(q, c) ? 2 : -1;
  }
  return 0;
}

/*
** u's references from its CSR entries, marking in held the entry that
** holds each object: the first from its parent. An object reached at low
** priority and promoted has a mark on its old parent's entry too, always a
** low one (a promotion comes from an object at normal priority, through a
** reference at normal priority, so the old one was low): readers take a
** low entry's mark only where the entry's object is the target's parent.
** The first entry from u to a promoted object comes before the one that
** promoted it only when it is low: only from u's first low entry on is it
** looked for.
*/
static int expand_csr (const hg_PathCsr *csr, uint32_t u, int ulow,
                       uint32_t *parent, uint8_t *low, const uint8_t *done,
                       Ring *q, Ring *lq) {
  uint64_t j, k, end = csr->first[u + 1], first_low = end;
  for (j = csr->first[u]; j < end; j++)
    SIFT_PREFETCH(&parent[csr->succ[j] & ~HG_LOW_EDGE]);
  for (j = csr->first[u]; j < end; j++) {
    uint32_t e = csr->succ[j], c = e & ~HG_LOW_EDGE, old = HG_NONE;
    if ((e & HG_LOW_EDGE) && first_low == end) first_low = j;
    switch (reach(u, c, ulow || (e & HG_LOW_EDGE), parent, low, done, q, lq, &old)) {
      case -1: return 0;
      case 1: HG_SETBIT(csr->held, j); break;
      case 2:
        if (old == u) break;  /* (its first entry from u holds it already) */
        for (k = first_low; k < j && (csr->succ[k] & ~HG_LOW_EDGE) != c; k++) {}
        HG_SETBIT(csr->held, k < j ? k : j);
        break;
      default: break;
    }
  }
  return 1;
}

/* u's references decoded from its record */
static int expand_record (const hg_Graph *g, uint32_t u, int ulow,
                          uint32_t *parent, uint8_t *low, const uint8_t *done,
                          Ring *q, Ring *lq) {
  hg_Iter it;
  hg_Ref ref;
  uint32_t old;
  hg_refs_begin(&it, g, u, 1);
  while (hg_refs_next(&it, &ref))
    if (!(ref.flags & (HG_NEVER | HG_SKIP))
        && reach(u, ref.target, ulow || (ref.flags & HG_LOW), parent, low,
                 done, q, lq, &old) < 0)
      return 0;
  return 1;
}

/*
** Objects are taken from the queue in an order that has nothing to do with
** where their entries are: the entries of the objects a few places ahead
** are asked for before they are needed (their offsets first, further
** ahead), and each object's targets' parents before they are looked at.
*/
#define AHEAD 4

/* a search between its runs (graph.h): its parents are the caller's */
struct hg_Search {
  uint32_t *parent;
  uint8_t *low, *done;
  Ring q, lq;
  uint64_t expanded;  /* objects expanded since it opened */
};

void hg_search_close (hg_Search *S) {
  if (S == NULL) return;
  sift_big_free(S->q.a);
  sift_big_free(S->lq.a);
  sift_big_free(S->low);
  sift_big_free(S->done);
  free(S);
}

sift_Status hg_search_open (const hg_Graph *g, uint32_t *parent,
                            hg_Search **out) {
  uint64_t n = g->n, i;
  hg_Search *S = (hg_Search *)calloc(1, sizeof *S);
  *out = NULL;
  if (S == NULL) return SIFT_ENOMEM;
  S->parent = parent;
  if (!HG_ALLOC(S->low, n / 8 + 1) || !HG_ALLOC(S->done, n / 8 + 1)) {
    hg_search_close(S);
    return SIFT_ENOMEM;
  }
  for (i = 0; i < n; i++) parent[i] = HG_NONE;
  for (i = 0; i < g->nroots; i++) {  /* the roots, in file order */
    uint32_t r = g->root_obj[i];
    int flags = g->root_flags[g->h->roots[g->root_rec[i]].kind]
              | g->root_obj_flags[i];
    int pushed;
    if (flags & HG_SKIP) continue;
    if (flags & HG_LOW) {
      if (parent[r] != HG_NONE) continue;
      HG_SETBIT(S->low, r);
      pushed = ring_push(&S->lq, r);
    }
    else {
      if (parent[r] != HG_NONE && !HG_BIT(S->low, r)) continue;
      HG_CLEARBIT(S->low, r);
      pushed = ring_push(&S->q, r);
    }
    if (!pushed) {
      hg_search_close(S);
      return SIFT_ENOMEM;
    }
    parent[r] = g->n;
  }
  *out = S;
  return SIFT_OK;
}

/* how many of the targets the search has expanded */
static uint64_t targets_done (const hg_Search *S, const uint8_t *targets,
                              uint64_t n) {
  uint64_t i, found = 0;
  for (i = 0; i < n / 8 + 1; i++) {
    unsigned x = targets[i] & S->done[i];
    for (; x != 0; x &= x - 1) found++;
  }
  return found;
}

sift_Status hg_search_run (hg_Search *S, const hg_Graph *g,
                           const uint8_t *targets, uint64_t ntargets,
                           sift_Progress *pr) {
  uint64_t found = targets ? targets_done(S, targets, g->n) : 0;
  if (targets && found == ntargets) return SIFT_OK;
  while (S->q.len > 0 || S->lq.len > 0) {
    Ring *from = S->q.len > 0 ? &S->q : &S->lq;
    uint32_t u;
    int ulow, ok;
    u = ring_pop(from);
    ulow = HG_BIT(S->low, u);
    if (HG_BIT(S->done, u)) continue;  /* promoted, and expanded already */
    HG_SETBIT(S->done, u);
    ok = expand_record(g, u, ulow, S->parent, S->low, S->done, &S->q, &S->lq);
    if (!ok) return SIFT_ENOMEM;
    S->expanded++;
    /* (expanded first: a run that goes on starts from the next one) */
    if (targets && HG_BIT(targets, u) && ++found == ntargets) break;
    if (!sift_progress(pr, S->expanded)) return SIFT_ECANCEL;
  }
  return SIFT_OK;
}

/*
** The search to its end over a CSR, on both cores: the queue taken a block
** at a time (its next objects: one thread expands them all before any
** object they reach), each half of the block on a core, in two passes.
** The parents, the held entries that are read and the queues' order come
** out as one thread makes them:
**  - first each core reads its half's references and keeps in each
**    target's parent the least key met in the block: a normal reference's
**    (base + the place of its object in the block) below any low one's
**    (base + BLOCK_OBJECTS + place). One thread makes the first object to
**    reach it at normal priority its parent, else the first at low
**    priority. Where it has a parent already, only a normal reference to
**    one held at low priority competes (a promotion);
**  - then each core walks its half again: the object whose key won
**    becomes the parent, its first entry to the target is marked held, and
**    the target is queued where one thread queues it: at low priority at
**    that entry, at normal priority at its first normal entry. Each core
**    keeps its own list; the first half's go first.
** One thread also leaves a promoted object in the low queue and its old
** parent's entry marked: neither is read (the object is expanded before
** the low queue is, and readers take a low entry's mark only from the
** target's parent), so neither is done here.
*/
#define BLOCK_OBJECTS (UINT32_C(1) << 14)  /* (what they reach stays in cache for the second pass) */

typedef struct BlockPart {
  uint64_t lo, hi;  /* its places in the block */
  uint64_t edges;   /* its objects' entries */
  uint32_t *queued; /* the targets it queues: normal priority from the front, low from the back */
  uint64_t cap, nq, nlq;
} BlockPart;

typedef struct Block {
  const hg_PathCsr *csr;
  uint32_t *parent;
  uint8_t *low;
  uint32_t *obj;    /* the block's objects, in queue order */
  uint32_t base;    /* g->n + 1: above every parent */
  int ulow;         /* taken from the low queue */
  BlockPart part[2];
} Block;

static void bit_set (uint8_t *set, uint64_t i) {
  __atomic_fetch_or(&set[i >> 3], (uint8_t)(1 << (i & 7)), __ATOMIC_RELAXED);
}

static void bit_clear (uint8_t *set, uint64_t i) {
  __atomic_fetch_and(&set[i >> 3], (uint8_t)~(1 << (i & 7)), __ATOMIC_RELAXED);
}

static int bit_get (const uint8_t *set, uint64_t i) {
  return __atomic_load_n(&set[i >> 3], __ATOMIC_RELAXED) >> (i & 7) & 1;
}

/* the first pass: the least key of each target (items: the parts) */
static void block_claim (void *ud, int item, uint64_t lo, uint64_t hi) {
  Block *b = (Block *)ud;
  const uint32_t *first = b->csr->first, *succ = b->csr->succ;
  uint64_t k;
  (void)item;
  for (k = lo; k < hi; k++) {
    uint64_t p, end = b->part[k].hi, edges = 0;
    for (p = b->part[k].lo; p < end; p++) {
      uint32_t u = b->obj[p];
      uint64_t j, stop = first[u + 1];
      edges += stop - first[u];
      if (p + 2 * AHEAD < end) SIFT_PREFETCH(&first[b->obj[p + 2 * AHEAD]]);
      if (p + AHEAD < end) SIFT_PREFETCH(&succ[first[b->obj[p + AHEAD]]]);
      for (j = first[u]; j < stop; j++)
        SIFT_PREFETCH(&b->parent[succ[j] & ~HG_LOW_EDGE]);
      for (j = first[u]; j < stop; j++) {
        uint32_t e = succ[j], c = e & ~HG_LOW_EDGE;
        int clow = b->ulow || (e & HG_LOW_EDGE);
        uint32_t key = b->base + (clow ? BLOCK_OBJECTS : 0) + (uint32_t)p;
        uint32_t cur = __atomic_load_n(&b->parent[c], __ATOMIC_RELAXED);
        for (;;) {
          if (cur == HG_NONE) {}
          else if (cur >= b->base) { if (key >= cur) break; }
          else if (clow || !HG_BIT(b->low, c)) break;  /* (low: read only now) */
          if (__atomic_compare_exchange_n(&b->parent[c], &cur, key, 1,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
        }
      }
    }
    b->part[k].edges = edges;
  }
}

/* the second pass: the winners made parents, their entries marked and
   their targets queued (items: the parts) */
static void block_settle (void *ud, int item, uint64_t lo, uint64_t hi) {
  Block *b = (Block *)ud;
  const uint32_t *first = b->csr->first, *succ = b->csr->succ;
  uint8_t *held = b->csr->held;
  uint64_t k;
  (void)item;
  for (k = lo; k < hi; k++) {
    BlockPart *part = &b->part[k];
    uint64_t p;
    part->nq = part->nlq = 0;
    for (p = part->lo; p < part->hi; p++) {
      uint32_t u = b->obj[p], normal = b->base + (uint32_t)p,
               low = normal + BLOCK_OBJECTS;
      uint64_t j, stop = first[u + 1];
      if (p + 2 * AHEAD < part->hi) SIFT_PREFETCH(&first[b->obj[p + 2 * AHEAD]]);
      if (p + AHEAD < part->hi) SIFT_PREFETCH(&succ[first[b->obj[p + AHEAD]]]);
      for (j = first[u]; j < stop; j++)
        SIFT_PREFETCH(&b->parent[succ[j] & ~HG_LOW_EDGE]);
      for (j = first[u]; j < stop; j++) {
        uint32_t e = succ[j], c = e & ~HG_LOW_EDGE;
        int clow = b->ulow || (e & HG_LOW_EDGE);
        uint32_t v = __atomic_load_n(&b->parent[c], __ATOMIC_RELAXED);
        if (v == normal || v == low) {  /* u's first entry to c */
          __atomic_store_n(&b->parent[c], u, __ATOMIC_RELAXED);
          bit_set(held, j);
          if (v == low) {
            bit_set(b->low, c);
            part->queued[part->cap - 1 - part->nlq++] = c;
          }
          else if (clow) bit_set(b->low, c);  /* queued at u's first normal entry */
          else {
            bit_clear(b->low, c);
            part->queued[part->nq++] = c;
          }
        }
        else if (v == u && !clow && bit_get(b->low, c)) {  /* that entry */
          bit_clear(b->low, c);
          part->queued[part->nq++] = c;
        }
      }
    }
  }
}

/* room in each part's list for as many targets as it has entries */
static int block_room (BlockPart *part) {
  if (part->edges > part->cap) {
    uint32_t *a = (uint32_t *)sift_big_realloc(part->queued, part->edges * sizeof *a);
    if (a == NULL) return 0;
    part->queued = a;
    part->cap = part->edges;
  }
  return 1;
}

static sift_Status search_blocks (hg_Search *S, const hg_Graph *g,
                                  const hg_PathCsr *csr, sift_Progress *pr,
                                  uint64_t base) {
  uint64_t min = hg_split_from(g), expanded = 0;
  sift_Status s = SIFT_OK;
  Block b;
  memset(&b, 0, sizeof b);
  b.csr = csr;
  b.parent = S->parent;
  b.low = S->low;
  b.base = g->n + 1;
  if (!HG_ALLOC(b.obj, BLOCK_OBJECTS)) return SIFT_ENOMEM;
  while (S->q.len > 0 || S->lq.len > 0) {
    Ring *from = S->q.len > 0 ? &S->q : &S->lq;
    uint64_t n = 0, p;
    int k;
    b.ulow = from == &S->lq;
    while (from->len > 0 && n < BLOCK_OBJECTS) {  /* the block */
      uint32_t u = ring_pop(from);
      if (HG_BIT(S->done, u)) continue;  /* promoted, and expanded already */
      HG_SETBIT(S->done, u);
      b.obj[n++] = u;
    }
    if (!sift_progress(pr, base + (expanded += n))) {
      s = SIFT_ECANCEL;
      goto out;
    }
    if (n < 2 || n * 16 < min) {  /* (too few to share: an object's step of
                                      the search costs some sixteen of a pass's) */
      for (p = 0; p < n; p++)
        if (!expand_csr(csr, b.obj[p], b.ulow, S->parent, S->low, S->done,
                        &S->q, &S->lq)) {
          s = SIFT_ENOMEM;
          goto out;
        }
      continue;
    }
    b.part[0].lo = 0; b.part[0].hi = n / 2;
    b.part[1].lo = n / 2; b.part[1].hi = n;
    sift_split(2, 2, block_claim, &b);
    if (!block_room(&b.part[0]) || !block_room(&b.part[1])) {
      s = SIFT_ENOMEM;
      goto out;
    }
    sift_split(2, 2, block_settle, &b);
    for (k = 0; k < 2; k++)
      for (p = 0; p < b.part[k].nq; p++)
        if (!ring_push(&S->q, b.part[k].queued[p])) { s = SIFT_ENOMEM; goto out; }
    for (k = 0; k < 2; k++)
      for (p = 0; p < b.part[k].nlq; p++)
        if (!ring_push(&S->lq, b.part[k].queued[b.part[k].cap - 1 - p])) {
          s = SIFT_ENOMEM;
          goto out;
        }
  }
out:
  sift_big_free(b.obj);
  sift_big_free(b.part[0].queued);
  sift_big_free(b.part[1].queued);
  return s;
}

sift_Status hg_paths (const hg_Graph *g, const hg_PathCsr *csr,
                      uint32_t *parent, sift_Progress *pr, uint64_t base) {
  hg_Search *S;
  sift_Status s = hg_search_open(g, parent, &S);
  if (s == SIFT_OK)  /* (a CSR's objects number under HG_LOW_EDGE: its keys fit) */
    s = csr != NULL ? search_blocks(S, g, csr, pr, base) : hg_search_run(S, g, NULL, 0, NULL);
  hg_search_close(S);
  return s;
}

/* }====================================================== */


/*
** {======================================================
** Referrers: every reference turned around
** =======================================================
*/

/*
** The objects split where sift_split splits them (mid: the first of the
** second part; n when one part ran), each part counting, then placing, the
** references of its own objects: per target, cur[0] counts those of the
** objects before mid and cur[1] the others, then each becomes where its
** part's next referrer goes, the first part's before the second's. So the
** lists come out in object order, as one thread makes them, and once
** filled cur[1][t] is where t's list ends.
*/
typedef struct Referrers {
  const hg_Graph *g;
  uint32_t *cur[2];
  uint32_t *pred;
  uint64_t mid, total[2];
} Referrers;

static void referrers_count (void *ud, int part, uint64_t lo, uint64_t hi) {
  Referrers *r = (Referrers *)ud;
  uint32_t *count = r->cur[part];
  uint64_t i, total = 0;
  hg_Iter it;
  hg_Ref ref;
  if (part == 1) r->mid = lo;
  for (i = lo; i < hi; i++) {
    hg_refs_begin(&it, r->g, (uint32_t)i, 0);
    while (hg_refs_next(&it, &ref)) count[ref.target]++, total++;
  }
  r->total[part] = total;
}

static void referrers_fill (void *ud, int part, uint64_t lo, uint64_t hi) {
  Referrers *r = (Referrers *)ud;
  uint64_t i;
  hg_Iter it;
  hg_Ref ref;
  (void)part;  /* the count's split decides: this one may differ */
  for (i = lo; i < hi; i++) {
    uint32_t *cur = r->cur[i >= r->mid];
    hg_refs_begin(&it, r->g, (uint32_t)i, 0);
    while (hg_refs_next(&it, &ref)) r->pred[cur[ref.target]++] = (uint32_t)i;
  }
}

sift_Status hg_referrers (hg_Graph *g) {
  uint64_t n = g->n, t, at, min;
  Referrers r;
  if (g->pfirst != NULL) return SIFT_OK;
  memset(&r, 0, sizeof r);
  r.g = g;
  r.mid = n;
  min = hg_split_from(g);
  if (!HG_ALLOC(r.cur[0], n + 1) || !HG_ALLOC(r.cur[1], n + 1)) goto nomem;  /* zeroed (big.h) */
  sift_split(n, min, referrers_count, &r);
  if (r.total[0] + r.total[1] > UINT32_MAX) {
    sift_big_free(r.cur[0]);
    sift_big_free(r.cur[1]);
    return SIFT_ETOOBIG;
  }
  for (t = 0, at = 0; t < n; t++) {
    uint32_t a = r.cur[0][t], b = r.cur[1][t];
    r.cur[0][t] = (uint32_t)at;
    r.cur[1][t] = (uint32_t)(at + a);
    at += (uint64_t)a + b;
  }
  if (!HG_ALLOC(r.pred, at)) goto nomem;
  sift_split(n, min, referrers_fill, &r);
  sift_big_free(r.cur[0]);
  for (t = n; t > 0; t--) r.cur[1][t] = r.cur[1][t - 1];  /* ends to offsets */
  r.cur[1][0] = 0;
  g->pfirst = r.cur[1];
  g->pred = r.pred;
  return SIFT_OK;
nomem:
  sift_big_free(r.cur[0]);
  sift_big_free(r.cur[1]);
  return SIFT_ENOMEM;
}

/* }====================================================== */
