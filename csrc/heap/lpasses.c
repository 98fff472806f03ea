/*
** lpasses.c
** The raw methods of a sift.Heap that walk every object or record: the
** objects grouped by class, the class histogram, objects per Android heap,
** the GC roots, threads and their stack traces.
*/

#include <stdlib.h>
#include <string.h>

#include "core/split.h"
#include "hprof.h"
#include "lheap.h"

#define NSLOTS(h) ((h)->nclasses + 12 + 1)

/*
** {======================================================
** Android heaps
** =======================================================
*/

/* the heaps by name, as sift_heap_name names them; "other" is any heap id
   Android does not define */
static const char *const heap_names[] = {"default", "app", "image", "zygote",
                                         "jit", "other", NULL};
static const uint32_t heap_codes[] = {HP_HEAP_DEFAULT, HP_HEAP_APP,
  HP_HEAP_IMAGE, HP_HEAP_ZYGOTE, HP_HEAP_JIT, HP_HEAP_OTHER};

int sift_optheap (lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return -1;
  return (int)heap_codes[luaL_checkoption(L, i, NULL, heap_names)];
}

int sift_in_heap (const hp_Heap *h, uint64_t num, int heap) {
  uint32_t at;
  if (heap < 0) return 1;
  at = hp_heap_at(h, hp_obj_off(h, num));
  if (heap == HP_HEAP_OTHER)  /* (hp_heap_at gives the dump's own id) */
    return at != HP_HEAP_DEFAULT && at != HP_HEAP_APP && at != HP_HEAP_IMAGE
      && at != HP_HEAP_ZYGOTE && at != HP_HEAP_JIT;
  return at == (uint32_t)heap;
}

/* }====================================================== */


/*
** {======================================================
** Whole-heap passes
** =======================================================
*/

/* the group of an object that is not a class */
static uint64_t slot_of (const hp_Heap *h, const hp_ObjInfo *o) {
  if (o->kind == HP_PRIM_ARRAY_DUMP || o->kind == HP_PRIM_ARRAY_NODATA)
    return h->nclasses + (uint64_t)o->elem;
  if (o->cls >= 0) return (uint64_t)o->cls;
  return h->nclasses + 12;  /* class not in the dump */
}

/* group the objects by class (two passes: count, then place) */
static void build_groups (lua_State *L, LHeap *lh) {
  hp_Heap *h = &lh->h;
  uint64_t i, nslots = NSLOTS(h);
  lh->start = (uint64_t *)sift_big_alloc((nslots + 1) * sizeof(uint64_t));
  lh->by_class = h->nobjs <= UINT32_MAX
    ? (uint32_t *)sift_big_alloc((h->nobjs + 1) * sizeof(uint32_t)) : NULL;
  if (lh->start == NULL || lh->by_class == NULL) {
    sift_heap_free_groups(lh);
    luaL_error(L, "not enough memory to group objects by class");
  }
  for (i = 0; i < h->nobjs; i++) {
    hp_ObjInfo o;
    hp_object(h, i, &o);
    if (o.kind != HP_CLASS_DUMP) lh->start[slot_of(h, &o) + 1]++;
  }
  for (i = 0; i < nslots; i++) lh->start[i + 1] += lh->start[i];
  for (i = 0; i < h->nobjs; i++) {  /* start[s] runs ahead while placing */
    hp_ObjInfo o;
    hp_object(h, i, &o);
    if (o.kind != HP_CLASS_DUMP)
      lh->by_class[lh->start[slot_of(h, &o)]++] = (uint32_t)i;
  }
  for (i = nslots; i > 0; i--) lh->start[i] = lh->start[i - 1];
  lh->start[0] = 0;
}

/* the group slot named by arguments 2 (class number or element type) */
static uint64_t checkslot (lua_State *L, const hp_Heap *h) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    static const char *const elems[] = {"boolean", "char", "float", "double",
                                        "byte", "short", "int", "long", NULL};
    return h->nclasses + 4 + (uint64_t)luaL_checkoption(L, 2, NULL, elems);
  }
  return sift_checkclass(L, h, 2);
}

/*
** heap:group(class | element type, k) -> object number of the k-th
** (1-based) instance of a class, or array of a primitive type; nil after
** the last. heap:group_size(class | type) -> how many there are.
*/
static int heap_group (lua_State *L) {
  LHeap *lh = sift_checkheap(L);
  uint64_t slot = checkslot(L, &lh->h);
  lua_Integer k = luaL_checkinteger(L, 3);
  if (lh->start == NULL) build_groups(L, lh);
  if (k < 1 || (uint64_t)k > lh->start[slot + 1] - lh->start[slot])
    lua_pushnil(L);
  else
    lua_pushinteger(L, (lua_Integer)lh->by_class[lh->start[slot] + (uint64_t)k - 1] + 1);
  return 1;
}

static int heap_group_size (lua_State *L) {
  LHeap *lh = sift_checkheap(L);
  uint64_t slot = checkslot(L, &lh->h);
  if (lh->start == NULL) build_groups(L, lh);
  lua_pushinteger(L, (lua_Integer)(lh->start[slot + 1] - lh->start[slot]));
  return 1;
}

/*
** heap:grouped() -> whether the objects are grouped by class now;
** heap:ungroup() gives the grouping's memory back (4 bytes an object; made
** again when next asked), for a pass that grouped them only for itself.
*/
static int heap_grouped (lua_State *L) {
  lua_pushboolean(L, sift_checkheap(L)->start != NULL);
  return 1;
}

static int heap_ungroup (lua_State *L) {
  sift_heap_free_groups(sift_checkheap(L));
  return 0;
}

/* the order of heap:group_top: a larger key first, then dump order */
#define BEFORE(key, a, b) \
  ((key)[a] > (key)[b] || ((key)[a] == (key)[b] && (a) < (b)))

/* restore the min-heap (the entry ranked last on top) below position i;
   entries are positions into key */
static void sink (uint32_t *heap, uint64_t size, uint64_t i, const uint64_t *key) {
  for (;;) {
    uint64_t l = 2 * i + 1, m = i;
    if (l < size && BEFORE(key, heap[m], heap[l])) m = l;
    if (l + 1 < size && BEFORE(key, heap[m], heap[l + 1])) m = l + 1;
    if (m == i) return;
    { uint32_t x = heap[i]; heap[i] = heap[m]; heap[m] = x; }
    i = m;
  }
}

/*
** heap:group_top(class | element type, by, skip, count [, model]) -> the
** object numbers of the instances ranked skip+1 .. skip+count when all of
** the group are ordered by `by`, largest first: "retained" (the dominator
** tree's; objects no root reaches last) or "shallow" (under model,
** default the tree's); ties in dump order; "id" is dump order itself.
** One pass keeps a min-heap of the skip+count best, so the first page of
** a class with millions of instances costs no sort and no Lua value per
** instance.
*/
static int heap_group_top (lua_State *L) {
  static const char *const keys[] = {"retained", "shallow", "id", NULL};
  LHeap *lh = sift_checkheap(L);
  uint64_t slot = checkslot(L, &lh->h);
  int by = luaL_checkoption(L, 3, NULL, keys);
  lua_Integer skip = luaL_checkinteger(L, 4), count = luaL_checkinteger(L, 5);
  hg_Graph *g = sift_checkgraph(L);
  int model = lua_isnoneornil(L, 6) ? g->model : sift_checkmodel(L, 6);
  const uint32_t *objs;
  uint64_t n, k, want, size = 0, *key;
  uint32_t *heap;
  luaL_argcheck(L, skip >= 0, 4, "must not be negative");
  luaL_argcheck(L, count >= 0, 5, "must not be negative");
  if (by == 0 && g->idom == NULL)
    return luaL_error(L, "dominators are not computed: call heap:dominators() first");
  if (lh->start == NULL) build_groups(L, lh);
  objs = lh->by_class + lh->start[slot];
  n = lh->start[slot + 1] - lh->start[slot];
  want = (uint64_t)skip >= n ? 0 : (uint64_t)count > n - (uint64_t)skip ? n : (uint64_t)(skip + count);
  if (by == 2) {  /* dump order: the group's own */
    lua_createtable(L, (int)(want - (want > 0 ? (uint64_t)skip : 0)), 0);
    for (k = (uint64_t)skip; k < want; k++) {
      lua_pushinteger(L, (lua_Integer)objs[k] + 1);
      lua_rawseti(L, -2, (lua_Integer)(k - (uint64_t)skip + 1));
    }
    return 1;
  }
  key = (uint64_t *)lua_newuserdatauv(L, (n + 1) * sizeof *key, 0);
  heap = (uint32_t *)lua_newuserdatauv(L, (want + 1) * sizeof *heap, 0);
  for (k = 0; k < n; k++) {  /* retained + 1, so that unreachable (0) is last */
    uint32_t v = objs[k];
    key[k] = by == 0 ? (g->idom[v] == HG_NONE ? 0 : hg_retained(g, v) + 1) : hg_shallow(g, v, model);
  }
  for (k = 0; k < n && want > 0; k++) {  /* positions kept: objs is in dump order */
    if (size < want) {  /* sift up */
      uint64_t i = size++;
      heap[i] = (uint32_t)k;
      while (i > 0 && BEFORE(key, heap[(i - 1) / 2], heap[i])) {
        uint32_t x = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
      }
    }
    else if (BEFORE(key, k, heap[0])) {  /* better than the last kept */
      heap[0] = (uint32_t)k;
      sink(heap, size, 0, key);
    }
  }
  lua_createtable(L, (int)(want - (uint64_t)(want > 0 ? skip : 0)), 0);
  while (size > 0) {  /* the last ranked first: fill the list from its end */
    if (size > (uint64_t)skip) {
      lua_pushinteger(L, (lua_Integer)objs[heap[0]] + 1);
      lua_rawseti(L, -2, (lua_Integer)(size - (uint64_t)skip));
    }
    heap[0] = heap[--size];
    sink(heap, size, 0, key);
  }
  return 1;
}
#undef BEFORE

/* heap:class_name(c) -> the raw name of class c (as the dump spells it) */
static int heap_class_name (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  sift_push_string_id(L, h, h->classes[sift_checkclass(L, h, 2)].name);
  return 1;
}

/*
** heap:histogram([heap]) -> rows { class = class number | nil, elem =
** primitive element type | nil, count, shallow } one per class and per
** primitive array type that has objects; only the objects of an Android
** heap ("app", "zygote", ...: see sift_optheap) when one is named
*/
/* one part of the histogram's pass: counts and bytes per row */
typedef struct Histogram {
  const hp_Heap *h;
  int heap;
  uint64_t nrows;
  uint64_t *sums;  /* per part: count[nrows], then shallow[nrows] */
} Histogram;

static void histogram_part (void *ud, int part, uint64_t lo, uint64_t hi) {
  const Histogram *hs = (const Histogram *)ud;
  const hp_Heap *h = hs->h;
  uint64_t i, *count = hs->sums + (uint64_t)part * 2 * hs->nrows;
  uint64_t *shallow = count + hs->nrows;
  for (i = lo; i < hi; i++) {
    hp_ObjInfo o;
    uint64_t slot;
    if (!sift_in_heap(h, i, hs->heap)) continue;
    hp_object(h, i, &o);
    if (o.kind == HP_CLASS_DUMP) continue;  /* classes are counted apart */
    slot = slot_of(h, &o);
    count[slot]++;
    shallow[slot] += o.shallow;
  }
}

static int heap_histogram (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  Histogram hs;
  uint64_t i, *count, *shallow;
  int row = 0;
  hs.h = h;
  hs.heap = sift_optheap(L, 2);
  hs.nrows = h->nclasses + 12 + 1;
  hs.sums = (uint64_t *)lua_newuserdatauv(L, 4 * hs.nrows * sizeof(uint64_t), 0);
  memset(hs.sums, 0, 4 * hs.nrows * sizeof(uint64_t));
  if (sift_split(h->nobjs, SIFT_SPLIT_FROM, histogram_part, &hs) == 2)
    for (i = 0; i < 2 * hs.nrows; i++) hs.sums[i] += hs.sums[2 * hs.nrows + i];
  count = hs.sums;
  shallow = count + hs.nrows;
  lua_createtable(L, 64, 0);
  for (i = 0; i < hs.nrows; i++) {
    if (count[i] == 0) continue;
    lua_createtable(L, 0, 4);
    if (i < h->nclasses) SIFT_SETINT("class", i + 1);
    else if (i < h->nclasses + 12) {
      lua_pushstring(L, sift_type_names[i - h->nclasses]);
      lua_setfield(L, -2, "elem");
    }
    SIFT_SETINT("count", count[i]);
    SIFT_SETINT("shallow", shallow[i]);
    lua_rawseti(L, -2, ++row);
  }
  return 1;
}

/* heap:heaps() -> { [heap name] = { instances, classes, object_arrays,
   primitive_arrays } } (Android's app/zygote/image heaps); {} when the dump
   has no heap tags */
static int heap_heaps (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  static const char *const kinds[] = {"classes", "instances", "object_arrays",
                                      "primitive_arrays"};
  uint64_t count[6][4], i;
  int k, j;
  memset(count, 0, sizeof count);
  lua_newtable(L);
  if (h->nheaps == 0) return 1;
  for (i = 0; i < h->nobjs; i++) {  /* objects in file order per switch */
    uint64_t off = hp_obj_off(h, i);
    uint32_t heap = hp_heap_at(h, off);
    int kind = h->p[off];
    for (k = 0; k < 5 && heap_codes[k] != heap; k++) {}
    j = kind == HP_CLASS_DUMP ? 0 : kind == HP_INSTANCE_DUMP ? 1
      : kind == HP_OBJ_ARRAY_DUMP ? 2 : 3;
    count[k][j]++;
  }
  for (k = 0; k < 6; k++) {
    int any = 0;
    for (j = 0; j < 4; j++) any |= count[k][j] != 0;
    if (!any) continue;
    lua_createtable(L, 0, 4);
    for (j = 0; j < 4; j++)
      if (count[k][j]) SIFT_SETINT(kinds[j], count[k][j]);
    lua_setfield(L, -2, heap_names[k]);
  }
  return 1;
}

/* heap:roots() -> { {kind, id, thread, frame}... } in file order */
static int heap_roots (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t i;
  lua_createtable(L, h->nroots < 1 << 24 ? (int)h->nroots : 0, 0);
  for (i = 0; i < h->nroots; i++) {
    const hp_Root *r = &h->roots[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, sift_root_name(r->kind));
    lua_setfield(L, -2, "kind");
    SIFT_SETINT("id", r->id);
    if (hp_subrecords[r->kind].flags & HP_THREAD) SIFT_SETINT("thread", r->thread);
    if (hp_subrecords[r->kind].flags & HP_FRAME) SIFT_SETINT("frame", r->frame);
    if (hp_subrecords[r->kind].flags & HP_TRACE) SIFT_SETINT("trace", r->frame);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Threads and stack traces
** =======================================================
*/

/* heap:threads() -> START_THREAD records { serial, object, trace, name } */
static int heap_threads (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t i;
  lua_createtable(L, (int)h->nthreads, 0);
  for (i = 0; i < h->nthreads; i++) {
    lua_createtable(L, 0, 4);
    SIFT_SETINT("serial", h->threads[i].serial);
    SIFT_SETINT("object", h->threads[i].object);
    SIFT_SETINT("trace", h->threads[i].trace);
    sift_push_string_id(L, h, h->threads[i].name);
    lua_setfield(L, -2, "name");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/*
** heap:trace(serial) -> { thread = serial, frames = { {method, signature,
** source, class_serial, line}... } } or nil
*/
static int heap_trace (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  const hp_Idx *t = hp_find_idx(h->traces, h->ntraces,
                                (uint64_t)luaL_checkinteger(L, 2));
  const unsigned char *p, *end;
  uint32_t i, n;
  int ids = h->idsize;
  if (t == NULL) {
    lua_pushnil(L);
    return 1;
  }
  p = h->p + t->off;  /* u4 serial, u4 thread, u4 n, n frame ids */
  end = p + ((uint32_t)p[-4] << 24 | (uint32_t)p[-3] << 16
             | (uint32_t)p[-2] << 8 | p[-1]);
  n = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8
    | p[11];
  lua_createtable(L, 0, 2);
  SIFT_SETINT("thread", (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16
         | (uint32_t)p[6] << 8 | p[7]);
  lua_createtable(L, 0, 0);
  for (i = 0; i < n && p + 12 + (uint64_t)(i + 1) * (uint64_t)ids <= end;
       i++) {
    uint64_t fid = hp_id_at(h, p + 12 + (uint64_t)i * (uint64_t)ids);
    const hp_Idx *f = hp_find_idx(h->frames, h->nframes, fid);
    lua_createtable(L, 0, 5);
    if (f != NULL) {  /* frame id, method, signature, source ids, u4, u4 */
      const unsigned char *q = h->p + f->off;
      const unsigned char *v = q + 4 * ids;
      sift_push_string_id(L, h, hp_id_at(h, q + ids));
      lua_setfield(L, -2, "method");
      sift_push_string_id(L, h, hp_id_at(h, q + 2 * ids));
      lua_setfield(L, -2, "signature");
      sift_push_string_id(L, h, hp_id_at(h, q + 3 * ids));
      lua_setfield(L, -2, "source");
      SIFT_SETINT("class_serial", (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16
             | (uint32_t)v[2] << 8 | v[3]);
      SIFT_SETINT("line", (int32_t)((uint32_t)v[4] << 24 | (uint32_t)v[5] << 16
             | (uint32_t)v[6] << 8 | v[7]));
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "frames");
  return 1;
}

/* heap:class_serial(serial) -> class number of the LOAD_CLASS serial */
static int heap_class_by_serial (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint32_t serial = (uint32_t)luaL_checkinteger(L, 2);
  uint64_t i;
  for (i = 0; i < h->nclasses; i++)
    if (h->classes[i].serial == serial) {
      lua_pushinteger(L, (lua_Integer)i + 1);
      return 1;
    }
  lua_pushnil(L);
  return 1;
}

/*
** heap:new_since(base, max) -> count, bytes, {object numbers}
** The objects whose ids the baseline dump base does not have (as ahat
** marks objects new since a baseline: ids are addresses, so an object the
** GC moved counts as new). bytes: their shallow sizes (the dump's); the
** list: the first max of them, in id order. One merge of the two sorted id
** arrays.
*/
static int heap_new_since (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  const hp_Heap *b = &((LHeap *)luaL_checkudata(L, 2, SIFT_HEAP_T))->h;
  lua_Integer max = luaL_optinteger(L, 3, 100);
  uint64_t i, j = 0, count = 0, bytes = 0;
  lua_Integer listed = 0;
  lua_createtable(L, max > 0 && max < 1024 ? (int)max : 0, 0);
  for (i = 0; i < h->nobjs; i++) {
    uint64_t id = hp_obj_id(h, i);
    hp_ObjInfo o;
    while (j < b->nobjs && hp_obj_id(b, j) < id) j++;
    if (j < b->nobjs && hp_obj_id(b, j) == id) continue;
    hp_object(h, i, &o);
    count++;
    bytes += o.shallow;
    if (listed < max) {
      lua_pushinteger(L, (lua_Integer)i + 1);
      lua_rawseti(L, -2, ++listed);
    }
  }
  lua_pushinteger(L, (lua_Integer)count);
  lua_pushinteger(L, (lua_Integer)bytes);
  lua_rotate(L, -3, 2);
  return 3;
}

/* }====================================================== */


static const luaL_Reg pass_methods[] = {
  {"histogram", heap_histogram},
  {"group", heap_group},
  {"group_size", heap_group_size},
  {"group_top", heap_group_top},
  {"grouped", heap_grouped},
  {"ungroup", heap_ungroup},
  {"class_name", heap_class_name},
  {"heaps", heap_heaps},
  {"roots", heap_roots},
  {"threads", heap_threads},
  {"trace", heap_trace},
  {"class_by_serial", heap_class_by_serial},
  {"new_since", heap_new_since},
  {NULL, NULL}
};

void sift_open_heap_passes (lua_State *L) {
  sift_addmethods(L, SIFT_HEAP_T, pass_methods);
}
