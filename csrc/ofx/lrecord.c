/*
** lrecord.c
** Reading a record (a transaction) straight from the tree (ltree.c): a
** reader, made once per document from a spec (which element goes to
** which key, read how), reads an aggregate's elements in one pass, into a
** table or (for ltxns.c) into fields that point into the text.
*/

#include <stdlib.h>
#include <string.h>

#include "lofx.h"
#include "ofx.h"

static const char *const kind_names[REC_KINDS] = { "text", "date", "amount", "upper" };

typedef sift_Key Key;

/* the number of key (the string on top) among keys[0..n) (sorted) */
static int key_number (lua_State *L, const Key *keys, int n) {
  Key k;
  const Key *found;
  k.s = lua_tolstring(L, -1, &k.n);
  found = (const Key *)bsearch(&k, keys, (size_t)n, sizeof k, sift_keycmp);
  return found ? (int)(found - keys) : -1;
}

/*
** core.ofx_reader(node, spec) -> reader
** spec.text, spec.date, spec.amount and spec.upper map an element's tag to
** the key it goes to: text is kept as written (the first non-empty one), a
** date becomes ISO 8601, an amount its exact decimal, upper its upper
** case. spec.fallback maps a key to the key whose value it takes when the
** record has none of its own (payee = name); spec.required lists the keys
** a record must have to read (posted, amount). Keys are numbered in byte
** order, the order JSON writes them in.
*/
static int l_reader (lua_State *L) {
  ofx_Tree *t;
  OfxReader *r;
  Key keys[OFX_MAX_KEYS];
  int nkeys = 0, kind, k;
  uint32_t i, id;
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  t = sift_checkofxnode(L, 1, &id);  /* 3: the tree */
  /* the keys: every value of the maps, and fallback's keys */
  lua_newtable(L);  /* 4: the keys as a set, keeping them alive */
  for (kind = 0; kind <= REC_KINDS; kind++) {
    if (lua_getfield(L, 2, kind < REC_KINDS ? kind_names[kind] : "fallback") != LUA_TTABLE) {
      if (kind == REC_KINDS && lua_isnil(L, -1)) { lua_pop(L, 1); break; }
      return luaL_error(L, "spec.%s is not a table", kind < REC_KINDS ? kind_names[kind] : "fallback");
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -1) != LUA_TSTRING || lua_type(L, -2) != LUA_TSTRING)
        return luaL_error(L, "spec maps strings to strings");
      lua_pushvalue(L, -1);
      lua_pushboolean(L, 1);
      lua_rawset(L, 4);
      if (kind == REC_KINDS) {
        lua_pushvalue(L, -2);
        lua_pushboolean(L, 1);
        lua_rawset(L, 4);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    lua_pop(L, 1);
    if (nkeys == OFX_MAX_KEYS) return luaL_error(L, "spec has more than %d keys", OFX_MAX_KEYS);
    keys[nkeys].s = lua_tolstring(L, -1, &keys[nkeys].n);
    nkeys++;
  }
  qsort(keys, (size_t)nkeys, sizeof *keys, sift_keycmp);
  r = (OfxReader *)lua_newuserdatauv(L, sizeof *r + t->tags * sizeof r->field[0], 2);  /* 5 */
  luaL_setmetatable(L, SIFT_OFX_READER_T);
  r->nkeys = nkeys;
  r->ntags = t->tags;
  for (k = 0; k < OFX_MAX_KEYS; k++) {
    r->fallback[k] = -1;
    r->required[k] = 0;
  }
  for (i = 0; i < t->tags; i++) r->field[i] = OFX_NO_FIELD;
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, 5, OFX_R_TREE);
  lua_createtable(L, nkeys, 0);
  for (k = 0; k < nkeys; k++) {
    size_t j;
    for (j = 0; j < keys[k].n && keys[k].n <= OFX_MAX_KEY_LEN; j++) {
      char c = keys[k].s[j];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) break;
    }
    luaL_argcheck(L, j == keys[k].n && j <= OFX_MAX_KEY_LEN, 2, "keys are lower-case words of at most 28 bytes");
    r->json_key[k][0] = '"';
    memcpy(r->json_key[k] + 1, keys[k].s, keys[k].n);
    memcpy(r->json_key[k] + 1 + keys[k].n, "\":", 2);
    r->json_key_len[k] = keys[k].n + 3;
    lua_pushlstring(L, keys[k].s, keys[k].n);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setiuservalue(L, 5, OFX_R_KEYS);
  for (kind = 0; kind <= REC_KINDS; kind++) {
    if (lua_getfield(L, 2, kind < REC_KINDS ? kind_names[kind] : "fallback") != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {  /* tag (or key), key */
      int key = key_number(L, keys, nkeys);
      lua_pop(L, 1);
      if (kind == REC_KINDS) r->fallback[key_number(L, keys, nkeys)] = key;
      else {
        size_t n;
        const char *name = lua_tolstring(L, -1, &n);
        int64_t tag = ofx_tree_lookup(t, name, n);
        if (tag >= 0 && (uint32_t)tag < r->ntags) r->field[tag] = (uint16_t)(kind << 8 | key);
      }
    }
    lua_pop(L, 1);
  }
  if (lua_getfield(L, 2, "required") == LUA_TTABLE) {
    lua_Integer j;
    for (j = 1; lua_rawgeti(L, -1, j) == LUA_TSTRING; j++) {
      k = key_number(L, keys, nkeys);
      luaL_argcheck(L, k >= 0, 2, "spec.required names a key no map gives");
      r->required[k] = 1;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return 1;
}

/*
** Read the elements of aggregate id into fields (by key). Returns 0, 1
** when it also has aggregates (left to the caller), or -1 when a date or
** amount is empty or does not read or a required key is missing (the
** caller takes the slow way, to say why). tree: the stack index of the
** reader's tree.
*/
int sift_ofx_read_fields (lua_State *L, int tree, const ofx_Tree *t, const OfxReader *r,
                        uint32_t id, OfxField *fields) {
  uint32_t c;
  int k, aggregates = 0;
  for (k = 0; k < r->nkeys; k++) fields[k].set = 0;
  c = OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE ? t->nodes[id].a : 0;
  for (; c; c = t->nodes[c].next) {
    const ofx_Node *n = &t->nodes[c];
    uint32_t tag = OFX_TAG(n);
    OfxField *f;
    int kind;
    size_t len;
    const char *s;
    if (OFX_KIND(n) == OFX_AGGREGATE) {
      aggregates = 1;
      continue;
    }
    if (tag >= r->ntags || r->field[tag] == OFX_NO_FIELD) continue;
    kind = r->field[tag] >> 8;
    f = &fields[r->field[tag] & 0xFF];
    s = sift_ofxbytes(L, tree, t, c, &len);
    if (len == 0) {
      if (kind == REC_DATE || kind == REC_AMOUNT) return -1;
      continue;
    }
    if (kind == REC_TEXT && f->set) continue;  /* the first one stays */
    if (kind == REC_DATE && ofx_date(s, len, &f->date)) return -1;
    if (kind == REC_AMOUNT && ofx_amount(s, len, &f->units, &f->scale)) return -1;
    f->s = s;
    f->n = len;
    f->kind = kind;
    f->set = 1;
  }
  for (k = 0; k < r->nkeys; k++) {
    if (!fields[k].set && r->fallback[k] >= 0 && fields[r->fallback[k]].set)
      fields[k] = fields[r->fallback[k]];
    if (!fields[k].set && r->required[k]) return -1;
  }
  return aggregates;
}

/* the value of a field as it is kept: into buf (room for 48 bytes, or
   the value's length for upper case) unless it is kept as written */
const char *sift_ofx_field_value (const OfxField *f, char *buf, size_t *n) {
  switch (f->kind) {
    case REC_DATE:
      ofx_format_iso(&f->date, buf);
      *n = strlen(buf);
      return buf;
    case REC_AMOUNT:
      *n = ofx_format_decimal(f->units, f->scale, buf);
      return buf;
    case REC_UPPER: {
      size_t i;
      for (i = 0; i < f->n; i++) buf[i] = (f->s[i] >= 'a' && f->s[i] <= 'z') ? (char)(f->s[i] - 32) : f->s[i];
      *n = f->n;
      return buf;
    }
    default:
      *n = f->n;
      return f->s;
  }
}

/* push the value of a field */
static void push_field (lua_State *L, const OfxField *f) {
  char small[OFX_SMALL_VALUE], *buf = small;
  size_t n;
  const char *s;
  if (f->kind == REC_UPPER && f->n > sizeof small) buf = (char *)lua_newuserdatauv(L, f->n, 0);
  s = sift_ofx_field_value(f, buf, &n);
  lua_pushlstring(L, s, n);
  if (buf != small) lua_remove(L, -2);
}

/* push the table of a transaction read into fields (reader at idx) */
void sift_ofx_push_record (lua_State *L, int reader, const OfxReader *r, const OfxField *fields) {
  int k;
  lua_getiuservalue(L, reader, OFX_R_KEYS);
  lua_createtable(L, 0, 8);
  for (k = 0; k < r->nkeys; k++) {
    if (!fields[k].set) continue;
    lua_rawgeti(L, -2, k + 1);
    push_field(L, &fields[k]);
    lua_rawset(L, -3);
  }
  lua_remove(L, -2);
}

/* the node at 2, of the tree of the reader at 1 (pushed, at 3). (An
   element has no children: as a record it reads as one with no fields.) */
ofx_Tree *sift_ofx_reader_node (lua_State *L, uint32_t *id) {
  ofx_Tree *t = sift_checkofxnode(L, 2, id);
  lua_getiuservalue(L, 1, OFX_R_TREE);
  luaL_argcheck(L, lua_rawequal(L, 3, 4), 2, "a node of another tree");
  lua_pop(L, 1);
  return t;
}

/* core.ofx_record(reader, node) -> record, aggregates | nil
   aggregates: whether the node has any (left to the caller); nil when a
   date or amount is empty or does not read */
static int l_record (lua_State *L) {
  OfxReader *r = (OfxReader *)luaL_checkudata(L, 1, SIFT_OFX_READER_T);
  OfxField fields[OFX_MAX_KEYS];
  uint32_t id;
  ofx_Tree *t;
  int status;
  lua_settop(L, 2);
  t = sift_ofx_reader_node(L, &id);
  status = sift_ofx_read_fields(L, 3, t, r, id, fields);
  if (status < 0) {
    lua_pushnil(L);
    return 1;
  }
  sift_ofx_push_record(L, 1, r, fields);
  lua_pushboolean(L, status);
  return 2;
}


static const luaL_Reg record_functions[] = {
  {"ofx_reader", l_reader},
  {"ofx_record", l_record},
  {NULL, NULL}
};

void sift_open_ofxrecords (lua_State *L) {
  luaL_newmetatable(L, SIFT_OFX_READER_T);
  lua_pop(L, 1);
  luaL_setfuncs(L, record_functions, 0);
}
