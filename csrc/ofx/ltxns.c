/*
** ltxns.c
** A statement's transactions as a sift.OfxTransactions: a Lua list
** (index, length, ipairs, pairs, assign, append) whose transactions stay
** nodes of the tree until one is read (by the reader of lrecord.c), and
** whose JSON is written from the tree without making them (a million
** transactions are seven million strings otherwise).
*/

#include <stdlib.h>
#include <string.h>

#include "lofx.h"
#include "ofx.h"

/* user values: the list's reader and the transactions made or assigned
   (index -> table) */
enum { L_READER = 1, L_MADE };

typedef struct Txns {
  uint32_t n, cap;
  uint32_t *node;  /* each transaction's node, until it is made or assigned: then 0,
                     and it is the table in L_MADE (none: left out) */
} Txns;


static Txns *checktxns (lua_State *L, int arg) {
  return (Txns *)luaL_checkudata(L, arg, SIFT_OFX_TXNS_T);
}

static int txns_gc (lua_State *L) {
  Txns *x = checktxns(L, 1);
  free(x->node);
  x->node = NULL;
  x->n = x->cap = 0;
  return 0;
}

static void push_entry (lua_State *L, Txns *x, uint32_t node) {
  if (x->n == x->cap) {
    uint32_t cap = x->cap ? 2 * x->cap : 64, *more;
    if (x->cap > UINT32_MAX / 4 || (more = (uint32_t *)realloc(x->node, (size_t)cap * sizeof *more)) == NULL)
      luaL_error(L, "not enough memory for the transactions");
    x->node = more;
    x->cap = cap;
  }
  x->node[x->n++] = node;
}

/* the reader and tree of the list at idx pushed; the reader returned */
static const OfxReader *list_reader (lua_State *L, int idx, const ofx_Tree **t) {
  const OfxReader *r;
  lua_getiuservalue(L, idx, L_READER);
  r = (const OfxReader *)lua_touserdata(L, -1);
  lua_getiuservalue(L, -1, OFX_R_TREE);
  *t = sift_checkofxtree(L, -1);
  return r;
}

/*
** core.ofx_transactions(reader, list) -> transactions, others
** The transactions of a BANKTRANLIST or INVTRANLIST: each STMTTRN that
** reads (its date and amount do, and it holds no aggregate) stays a node;
** the others are left to the caller, in order, as {k, n, node, tag}: k
** their index in transactions (nil for an investment transaction, which is
** not one of them), n their number among the list's transactions (for
** messages). The caller assigns transactions[k] (nil: left out), then
** calls core.ofx_compact.
*/
static int l_transactions (lua_State *L) {
  const OfxReader *r = (const OfxReader *)luaL_checkudata(L, 1, SIFT_OFX_READER_T);
  const ofx_Tree *t;
  OfxField fields[OFX_MAX_KEYS];
  Txns *x;
  uint32_t list, c;
  int64_t stmttrn, invbanktran;
  lua_Integer n = 0, others = 0;
  lua_settop(L, 2);
  t = sift_ofx_reader_node(L, &list);
  x = (Txns *)lua_newuserdatauv(L, sizeof *x, 2);  /* 4 */
  memset(x, 0, sizeof *x);
  luaL_setmetatable(L, SIFT_OFX_TXNS_T);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 4, L_READER);
  lua_newtable(L);
  lua_setiuservalue(L, 4, L_MADE);
  lua_newtable(L);  /* 5: the others */
  stmttrn = ofx_tree_lookup(t, "STMTTRN", 7);
  invbanktran = ofx_tree_lookup(t, "INVBANKTRAN", 11);
  if (OFX_KIND(&t->nodes[list]) != OFX_AGGREGATE) return 2;
  for (c = t->nodes[list].a; c; c = t->nodes[c].next) {
    const ofx_Node *node = &t->nodes[c];
    int transaction = node->tag >> 2 == (uint32_t)stmttrn ||
      (node->tag >> 2 == (uint32_t)invbanktran && stmttrn >= 0 && ofx_tree_find(t, c, (uint32_t)stmttrn));
    if (OFX_KIND(node) != OFX_AGGREGATE) continue;  /* DTSTART, DTEND: the caller's */
    if (transaction) n++;
    if (transaction && node->tag >> 2 == (uint32_t)stmttrn && sift_ofx_read_fields(L, 3, t, r, c, fields) == 0) {
      push_entry(L, x, c);
      continue;
    }
    lua_createtable(L, 0, 4);
    if (transaction) {
      push_entry(L, x, 0);
      lua_pushinteger(L, x->n);
      lua_setfield(L, -2, "k");
      lua_pushinteger(L, n);
      lua_setfield(L, -2, "n");
    }
    sift_pushofxnode(L, 3, c);
    lua_setfield(L, -2, "node");
    sift_pushofxtag(L, 3, t, OFX_TAG(node));
    lua_setfield(L, -2, "tag");
    lua_rawseti(L, 5, ++others);
  }
  return 2;
}

/* core.ofx_compact(transactions): those assigned nil left out */
static int l_compact (lua_State *L) {
  Txns *x = checktxns(L, 1);
  uint32_t i, k = 0;
  lua_settop(L, 1);
  lua_getiuservalue(L, 1, L_MADE);  /* 2 */
  lua_newtable(L);  /* 3: made, renumbered */
  for (i = 0; i < x->n; i++) {
    int made = lua_rawgeti(L, 2, (lua_Integer)i + 1) != LUA_TNIL;
    if (x->node[i] == 0 && !made) {
      lua_pop(L, 1);
      continue;
    }
    if (made) lua_rawseti(L, 3, (lua_Integer)k + 1);
    else lua_pop(L, 1);
    x->node[k++] = x->node[i];
  }
  x->n = k;
  lua_setiuservalue(L, 1, L_MADE);
  return 0;
}

/* push transaction i (0-based) of the list at idx, made (and kept) when
   read for the first time */
static void push_transaction (lua_State *L, int idx, Txns *x, uint32_t i) {
  const ofx_Tree *t;
  const OfxReader *r;
  OfxField fields[OFX_MAX_KEYS];
  int top = lua_gettop(L);
  lua_getiuservalue(L, idx, L_MADE);
  if (lua_rawgeti(L, -1, (lua_Integer)i + 1) != LUA_TNIL || x->node[i] == 0) {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return;
  }
  lua_pop(L, 1);
  r = list_reader(L, idx, &t);  /* top + 2, top + 3 */
  sift_ofx_read_fields(L, top + 3, t, r, x->node[i], fields);
  sift_ofx_push_record(L, top + 2, r, fields);
  lua_pushvalue(L, -1);
  lua_rawseti(L, top + 1, (lua_Integer)i + 1);
  x->node[i] = 0;  /* the table is the transaction now: what is done to it counts */
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

static int txns_index (lua_State *L) {
  Txns *x = checktxns(L, 1);
  lua_Integer i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 0;
  if (i < 1 || (lua_Unsigned)i > x->n) return 0;
  push_transaction(L, 1, x, (uint32_t)(i - 1));
  return 1;
}

/* transactions[i] = t, for 1 <= i <= #transactions + 1 (append) */
static int txns_newindex (lua_State *L) {
  Txns *x = checktxns(L, 1);
  lua_Integer i = lua_isinteger(L, 2) ? lua_tointeger(L, 2) : 0;
  luaL_argcheck(L, i >= 1 && (lua_Unsigned)i <= (lua_Unsigned)x->n + 1, 2,
                "transactions take an index from 1 to one past the last");
  luaL_argcheck(L, lua_istable(L, 3) || (lua_isnil(L, 3) && (lua_Unsigned)i <= x->n), 3,
                "a transaction is a table");
  if ((lua_Unsigned)i == (lua_Unsigned)x->n + 1) push_entry(L, x, 0);
  else x->node[i - 1] = 0;
  lua_getiuservalue(L, 1, L_MADE);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, i);
  return 0;
}

/* core.ofx_totable(transactions) -> a table of them all, made */
static int l_totable (lua_State *L) {
  Txns *x = checktxns(L, 1);
  uint32_t i;
  lua_settop(L, 1);
  lua_createtable(L, (int)(x->n < INT32_MAX ? x->n : INT32_MAX), 0);
  for (i = 0; i < x->n; i++) {
    push_transaction(L, 1, x, i);
    lua_rawseti(L, 2, (lua_Integer)i + 1);
  }
  return 1;
}

static int cmp_bytes (const char *a, size_t an, const char *b, size_t bn) {
  sift_Key x, y;
  x.s = a; x.n = an; y.s = b; y.n = bn;
  return sift_keycmp(&x, &y);
}

/* core.ofx_range(transactions, key) -> the smallest and largest value of
   key (byte order, as Lua compares strings in the C locale), nil when
   none has it; nothing is made */
static int l_range (lua_State *L) {
  Txns *x = checktxns(L, 1);
  size_t kn, n, low_n = 0, high_n = 0;
  const char *key = luaL_checklstring(L, 2, &kn), *v;
  const ofx_Tree *t;
  const OfxReader *r;
  OfxField fields[OFX_MAX_KEYS];
  char low[OFX_SMALL_VALUE], high[OFX_SMALL_VALUE], buf[OFX_SMALL_VALUE];
  int k, found = 0, made;
  uint32_t i;
  lua_settop(L, 2);
  lua_getiuservalue(L, 1, L_MADE);  /* 3 */
  made = 3;
  r = list_reader(L, 1, &t);  /* 4 the reader, 5 its tree */
  lua_getiuservalue(L, 4, OFX_R_KEYS);  /* 6 */
  for (k = 0; k < r->nkeys; k++) {
    lua_rawgeti(L, 6, k + 1);
    if (lua_rawequal(L, -1, 2)) break;
    lua_pop(L, 1);
  }
  for (i = 0; i < x->n; i++) {
    if (x->node[i] == 0) {  /* a table: its field, if a string that fits */
      lua_rawgeti(L, made, (lua_Integer)i + 1);
      if (!lua_istable(L, -1) || lua_getfield(L, -1, key) != LUA_TSTRING) {
        lua_pop(L, lua_istable(L, -1) ? 2 : 1);
        continue;
      }
      v = lua_tolstring(L, -1, &n);
      if (n > sizeof buf) return luaL_error(L, "%s values too long to compare", key);
      memcpy(buf, v, n);
      v = buf;
      lua_pop(L, 2);
    }
    else {
      if (k == r->nkeys) continue;  /* (a key the reader does not give) */
      sift_ofx_read_fields(L, 5, t, r, x->node[i], fields);
      if (!fields[k].set) continue;
      if (fields[k].kind == REC_UPPER && fields[k].n > sizeof buf)
        return luaL_error(L, "%s values too long to compare", key);
      v = sift_ofx_field_value(&fields[k], buf, &n);
    }
    if (!found || cmp_bytes(v, n, low, low_n) < 0) {
      memcpy(low, v, n);
      low_n = n;
    }
    if (!found || cmp_bytes(v, n, high, high_n) > 0) {
      memcpy(high, v, n);
      high_n = n;
    }
    found = 1;
  }
  if (!found) return 0;
  lua_pushlstring(L, low, low_n);
  lua_pushlstring(L, high, high_n);
  return 2;
}

/* for i, t in pairs(transactions): as ipairs */
static int txns_next (lua_State *L) {
  Txns *x = checktxns(L, 1);
  lua_Integer i = luaL_optinteger(L, 2, 0);
  if (i < 0 || (lua_Unsigned)i >= x->n) return 0;
  lua_pushinteger(L, i + 1);
  push_transaction(L, 1, x, (uint32_t)i);
  return 2;
}

static int txns_pairs (lua_State *L) {
  checktxns(L, 1);
  lua_pushcfunction(L, txns_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

static int txns_len (lua_State *L) {
  lua_pushinteger(L, checktxns(L, 1)->n);
  return 1;
}

static int txns_tostring (lua_State *L) {
  lua_pushfstring(L, "%d OFX transactions", (int)checktxns(L, 1)->n);
  return 1;
}

/* the JSON array of the transactions: as written from the tree, or as the
   table made or assigned */
static void txns_json (lua_State *L, sift_Json *j, int depth) {
  int idx = lua_gettop(L), made, tree;
  Txns *x = checktxns(L, idx);
  const ofx_Tree *t;
  const OfxReader *r;
  OfxField fields[OFX_MAX_KEYS];
  uint32_t i;
  lua_getiuservalue(L, idx, L_MADE);
  made = lua_gettop(L);
  r = list_reader(L, idx, &t);
  tree = made + 2;
  sift_json_raw(L, j, "[", 1);
  for (i = 0; i < x->n; i++) {
    int k, first = 1;
    if (i > 0) sift_json_raw(L, j, ",", 1);
    if (x->node[i] == 0) {
      lua_rawgeti(L, made, (lua_Integer)i + 1);
      sift_json_value(L, j, depth);
      lua_pop(L, 1);
      continue;
    }
    sift_ofx_read_fields(L, tree, t, r, x->node[i], fields);
    sift_json_raw(L, j, "{", 1);
    for (k = 0; k < r->nkeys; k++) {
      char small[OFX_SMALL_VALUE], *buf = small;
      size_t n;
      const char *s;
      if (!fields[k].set) continue;
      if (!first) sift_json_raw(L, j, ",", 1);
      first = 0;
      sift_json_raw(L, j, r->json_key[k], r->json_key_len[k]);
      if (fields[k].kind == REC_UPPER && fields[k].n > sizeof small)
        buf = (char *)lua_newuserdatauv(L, fields[k].n, 0);
      s = sift_ofx_field_value(&fields[k], buf, &n);
      sift_json_string(L, j, s, n);
      if (buf != small) lua_pop(L, 1);
    }
    sift_json_raw(L, j, "}", 1);
  }
  sift_json_raw(L, j, "]", 1);
  lua_settop(L, idx);
}

static sift_JsonHook json_hook = { txns_json };  /* (not const: Lua keeps a void *) */


static const luaL_Reg txns_meta[] = {
  {"__gc", txns_gc},
  {"__index", txns_index},
  {"__newindex", txns_newindex},
  {"__len", txns_len},
  {"__pairs", txns_pairs},
  {"__tostring", txns_tostring},
  {NULL, NULL}
};

static const luaL_Reg txns_functions[] = {
  {"ofx_compact", l_compact},
  {"ofx_range", l_range},
  {"ofx_totable", l_totable},
  {"ofx_transactions", l_transactions},
  {NULL, NULL}
};

void sift_open_ofxtxns (lua_State *L) {
  luaL_newmetatable(L, SIFT_OFX_TXNS_T);
  luaL_setfuncs(L, txns_meta, 0);
  lua_pushlightuserdata(L, &json_hook);
  lua_setfield(L, -2, "__json");
  lua_pop(L, 1);
  luaL_setfuncs(L, txns_functions, 0);
}
