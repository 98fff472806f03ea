/*
** lwaste.c
** heap:waste(): the C waste pass (waste.c) as a raw method of a sift.Heap.
** It returns the groups a report shows and their totals, never a value
** per object; lua/sift/heap/waste.lua turns them into the reports.
*/

#include <string.h>

#include "lheap.h"
#include "waste.h"

#define SAMPLE 20  /* copies named per group (for "held by") */

/* the pass's arrays live in a userdata until the tables are made, so an
   error while making them frees them too */
static int scratch_gc (lua_State *L) {
  hw_free((hw_Waste *)luaL_checkudata(L, 1, SIFT_WASTE_T));
  return 0;
}

/* how many groups of a set are rows: the first `top`, and any after them
   that waste as much as the last of those (the caller's tie rule picks) */
static uint64_t rows_of (const hw_Set *s, lua_Integer top) {
  uint64_t n = 0;
  while (n < s->ngroups && ((lua_Integer)n < top
         || (n > 0 && s->groups[n].wasted == s->groups[n - 1].wasted)))
    n++;
  return n;
}

/* the copies the rows of a set name (their referrers are wanted) into
   w->targets, or only counted when it is NULL */
static void add_copies (hw_Waste *w, const hw_Set *s, lua_Integer top) {
  uint64_t i, k, n = rows_of(s, top);
  for (i = 0; i < n; i++)
    for (k = 0; k < s->groups[i].count && k < SAMPLE; k++) {
      if (w->targets != NULL)
        w->targets[w->ntargets] = HW_NUM(s->entries[s->groups[i].start + k]);
      w->ntargets++;
    }
}

/* the referrers of object num (w->pairs) as a list of object numbers */
static void push_referrers (lua_State *L, const hw_Waste *w, uint32_t num) {
  uint64_t lo = 0, hi = w->npairs, key = (uint64_t)num << 32;
  lua_Integer k = 0;
  while (lo < hi) {  /* the first pair of num */
    uint64_t mid = lo + (hi - lo) / 2;
    if (w->pairs[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  lua_newtable(L);
  for (; lo < w->npairs && w->pairs[lo] >> 32 == num; lo++) {
    lua_pushinteger(L, (lua_Integer)(w->pairs[lo] & UINT32_MAX) + 1);
    lua_rawseti(L, -2, ++k);
  }
}

/* rows of the groups of a set (rows_of) */
static void push_set (lua_State *L, const hw_Waste *w, const hw_Set *s,
                      lua_Integer top, int arrays, const hg_Graph *g) {
  uint64_t i, k, n = rows_of(s, top);
  lua_createtable(L, 0, 3);
  SIFT_SETINT("groups", s->ngroups);
  SIFT_SETINT("wasted", s->wasted);
  lua_createtable(L, (int)n, 0);
  for (i = 0; i < n; i++) {
    const hw_Group *gr = &s->groups[i];
    const hw_Entry *e = s->entries + gr->start;
    lua_createtable(L, 0, 7);
    SIFT_SETINT("count", gr->count);
    SIFT_SETINT("arrays", gr->arrays);
    SIFT_SETINT("bytes", gr->bytes);
    SIFT_SETINT("wasted", gr->wasted);
    if (arrays) {
      hp_ObjInfo o;
      hp_object(g->h, HW_NUM(e[0]), &o);
      lua_pushstring(L, sift_type_names[o.elem]);
      lua_setfield(L, -2, "type");
      SIFT_SETINT("length", o.length);
    }
    lua_createtable(L, SAMPLE, 0);
    for (k = 0; k < gr->count && k < SAMPLE; k++) {
      lua_pushinteger(L, (lua_Integer)HW_NUM(e[k]) + 1);
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "copies");
    lua_createtable(L, SAMPLE, 0);
    for (k = 0; k < gr->count && k < SAMPLE; k++) {
      push_referrers(L, w, HW_NUM(e[k]));
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "referrers");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "rows");
}

/* the index of field name `name` in f's names, added if new */
static int name_index (lua_State *L, hf_Fill *f, const char *name, size_t len) {
  int k;
  for (k = 0; k < f->nnames; k++)
    if (f->lens[k] == len && memcmp(f->names[k], name, len) == 0) return k;
  luaL_argcheck(L, f->nnames < HF_MAXNAMES, 6, "too many field names");
  f->names[f->nnames] = name;  /* (the rules table, on the stack, keeps it) */
  f->lens[f->nnames] = len;
  return f->nnames++;
}

/* field `key` of the rule on top: a name's index, -1 when absent */
static int rule_name (lua_State *L, hf_Fill *f, const char *key) {
  size_t len;
  const char *s;
  int k = -1;
  if (lua_getfield(L, -1, key) == LUA_TSTRING) {
    s = lua_tolstring(L, -1, &len);
    k = name_index(L, f, s, len);
  }
  else luaL_argcheck(L, lua_isnil(L, -1), 6, "a rule's field names are strings");
  lua_pop(L, 1);
  return k;
}

/* list `key` of the rule on top (names tried in turn) into idx */
static int rule_names (lua_State *L, hf_Fill *f, const char *key, int *idx) {
  int n = 0, i;
  if (lua_getfield(L, -1, key) == LUA_TTABLE) {
    n = (int)lua_rawlen(L, -1);
    luaL_argcheck(L, n <= HF_ALT, 6, "too many fields tried in a rule");
    for (i = 0; i < n; i++) {
      size_t len;
      const char *s;
      luaL_argcheck(L, lua_rawgeti(L, -1, i + 1) == LUA_TSTRING, 6,
                    "a rule's field names are strings");
      s = lua_tolstring(L, -1, &len);
      idx[i] = name_index(L, f, s, len);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  return n;
}

/* the collection rules at argument 6 (see heap_waste) into f */
static void check_rules (lua_State *L, const hp_Heap *h, hf_Fill *f) {
  int k;
  if (lua_isnoneornil(L, 6)) return;
  luaL_checktype(L, 6, LUA_TTABLE);
  f->nrules = (int)lua_rawlen(L, 6);
  luaL_argcheck(L, f->nrules <= HF_MAXRULES, 6, "too many collection rules");
  f->keep = (uint64_t)luaL_optinteger(L, 7, 5);
  luaL_argcheck(L, luaL_optinteger(L, 7, 5) >= 0, 7, "a count of instances");
  for (k = 0; k < f->nrules; k++) {
    hf_Rule *r = &f->rules[k];
    lua_Integer c;
    luaL_argcheck(L, lua_rawgeti(L, 6, k + 1) == LUA_TTABLE, 6, "rules are tables");
    lua_getfield(L, -1, "class");
    c = lua_tointeger(L, -1);
    luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, 6, "no such class number");
    r->cls = (int64_t)c - 1;
    lua_getfield(L, -2, "times");
    r->times = (int)luaL_optinteger(L, -1, 1);
    lua_pop(L, 2);
    r->via = rule_name(L, f, "via");
    r->head = rule_name(L, f, "head");
    r->tail = rule_name(L, f, "tail");
    luaL_argcheck(L, (r->head < 0) == (r->tail < 0), 6, "a ring has a head and a tail");
    r->narray = rule_names(L, f, "array", r->array);
    r->nsize = rule_names(L, f, "size", r->size);
    lua_pop(L, 1);
  }
}

/* the collections found, one row per rule */
static void push_fill (lua_State *L, const hf_Fill *f) {
  int k;
  uint64_t i;
  lua_createtable(L, f->nrules, 0);
  for (k = 0; k < f->nrules; k++) {
    const hf_Rule *r = &f->rules[k];
    lua_createtable(L, 0, 5);
    SIFT_SETINT("count", r->count);
    SIFT_SETINT("capacity", r->capacity);
    SIFT_SETINT("size", r->size_sum);
    SIFT_SETINT("wasted", r->wasted);
    lua_createtable(L, (int)r->nworst, 0);
    for (i = 0; i < r->nworst; i++) {
      lua_createtable(L, 0, 4);
      SIFT_SETINT("id", r->worst[i].id);
      SIFT_SETINT("capacity", r->worst[i].capacity);
      SIFT_SETINT("size", r->worst[i].size);
      SIFT_SETINT("wasted", r->worst[i].wasted);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "worst");
    lua_rawseti(L, -2, k + 1);
  }
}

/* a box's raw value as its bytes, big-endian (Lua decodes by type) */
static void push_raw (lua_State *L, const hp_Heap *h, int type, uint64_t v) {
  char b[8];
  int size = hp_type_size(h, type), i;
  for (i = size - 1; i >= 0; i--, v >>= 8) b[i] = (char)(v & 0xFF);
  lua_pushlstring(L, b, (size_t)size);
}

/*
** heap:waste(model, string class | nil, { box class... }, top [, rules
** [, worst [, content]]]) -> { strings = set, arrays = set, zeros = {
** {type, count, wasted, lengths = {{length, count}...}}... }, boxes = {
** {count, bytes, type | nil, distinct, wasted, values = {{raw,
** count}...}}... (as the box classes) }, collections = { {count,
** capacity, size, wasted, worst = {{id, capacity, size, wasted}...}}...
** (as the rules) } } where a set is { groups, wasted, rows = { {count,
** arrays, bytes, wasted, copies = {object numbers}, type, length
** (arrays)}... } }, rows most wasted first. Sizes under `model`. A rule
** is { class = class number, array = {names}, size = {names}, via =
** name, head = name, tail = name, times = n } (fill.h); `worst`
** instances kept per rule (5). content false: the collections alone.
*/
static int heap_waste (lua_State *L) {
  hg_Graph *g = sift_checkgraph(L);
  const hp_Heap *h = g->h;
  int model = sift_checkmodel(L, 2), nboxes, b, t;
  int64_t string_cls = lua_isnoneornil(L, 3) ? -1 : (int64_t)sift_checkclass(L, h, 3);
  int64_t box_cls[HW_MAXBOX];
  lua_Integer top = luaL_checkinteger(L, 5);
  hw_Waste *w;
  sift_Status s;
  luaL_checktype(L, 4, LUA_TTABLE);
  lua_settop(L, 8);  /* (the scratch userdata goes above the arguments) */
  nboxes = (int)lua_rawlen(L, 4);
  luaL_argcheck(L, nboxes <= HW_MAXBOX, 4, "too many box classes");
  for (b = 0; b < nboxes; b++) {
    lua_Integer c;
    lua_rawgeti(L, 4, b + 1);
    c = lua_tointeger(L, -1);
    luaL_argcheck(L, c >= 1 && (lua_Unsigned)c <= h->nclasses, 4, "no such class number");
    box_cls[b] = (int64_t)c - 1;
    lua_pop(L, 1);
  }
  w = (hw_Waste *)lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  luaL_setmetatable(L, SIFT_WASTE_T);
  check_rules(L, h, &w->fill);
  s = hw_waste(g, model, string_cls, box_cls, nboxes,
               lua_isnoneornil(L, 8) || lua_toboolean(L, 8), w);
  if (s == SIFT_OK) {  /* the referrers of the copies the rows name */
    uint64_t n;
    add_copies(w, &w->strings, top);
    add_copies(w, &w->arrays, top);
    n = w->ntargets;
    w->ntargets = 0;
    if (n > 0 && (w->targets = (uint32_t *)sift_big_alloc((size_t)n * sizeof *w->targets)) == NULL)
      s = SIFT_ENOMEM;
    else if (n > 0) {
      add_copies(w, &w->strings, top);
      add_copies(w, &w->arrays, top);
      s = hw_referrers(g, w->targets, w->ntargets, &w->pairs, &w->npairs);
    }
  }
  if (s != SIFT_OK) {
    hw_free(w);
    return luaL_error(L, "not enough memory for the waste report");
  }
  lua_createtable(L, 0, 4);
  push_set(L, w, &w->strings, top, 0, g);
  lua_setfield(L, -2, "strings");
  push_set(L, w, &w->arrays, top, 1, g);
  lua_setfield(L, -2, "arrays");
  lua_newtable(L);
  for (t = 0; t < HW_NTYPES; t++) {
    const hw_Zeros *z = &w->zeros[t];
    int k;
    if (z->count == 0) continue;
    lua_createtable(L, 0, 4);
    lua_pushstring(L, sift_type_names[t]);
    lua_setfield(L, -2, "type");
    SIFT_SETINT("count", z->count);
    SIFT_SETINT("wasted", z->wasted);
    lua_createtable(L, z->nlengths, 0);
    for (k = 0; k < z->nlengths; k++) {
      lua_createtable(L, 0, 2);
      SIFT_SETINT("length", z->length[k]);
      SIFT_SETINT("count", z->lcount[k]);
      lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "lengths");
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  }
  lua_setfield(L, -2, "zeros");
  lua_createtable(L, w->nboxes, 0);
  for (b = 0; b < w->nboxes; b++) {
    const hw_Box *bx = &w->boxes[b];
    int k;
    lua_createtable(L, 0, 7);
    SIFT_SETINT("count", bx->count);
    SIFT_SETINT("bytes", bx->bytes);
    if (bx->type) {
      lua_pushstring(L, sift_type_names[bx->type]);
      lua_setfield(L, -2, "type");
      SIFT_SETINT("distinct", bx->distinct);
      SIFT_SETINT("wasted", bx->wasted);
    }
    lua_createtable(L, bx->ntop, 0);
    for (k = 0; k < bx->ntop; k++) {
      lua_createtable(L, 0, 2);
      push_raw(L, h, bx->type, bx->value[k]);
      lua_setfield(L, -2, "raw");
      SIFT_SETINT("count", bx->vcount[k]);
      lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, b + 1);
  }
  lua_setfield(L, -2, "boxes");
  push_fill(L, &w->fill);
  lua_setfield(L, -2, "collections");
  hw_free(w);
  return 1;
}

static const luaL_Reg waste_methods[] = {
  {"waste", heap_waste},
  {NULL, NULL}
};

void sift_open_heap_waste (lua_State *L) {
  static const luaL_Reg scratch_meta[] = {
    {"__gc", scratch_gc},
    {NULL, NULL}
  };
  luaL_newmetatable(L, SIFT_WASTE_T);
  luaL_setfuncs(L, scratch_meta, 0);
  lua_pop(L, 1);
  sift_addmethods(L, SIFT_HEAP_T, waste_methods);
}
