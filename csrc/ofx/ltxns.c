/*
** ltxns.c
** A statement's transactions read straight from the tree (ltree.c). A
** reader, made once per document from a spec (which element goes to which
** key, read how), reads one transaction into a table, or a whole list
** into a sift.OfxTransactions: a Lua list (index, length, ipairs, assign)
** whose transactions stay nodes of the tree until one is read, and whose
** JSON is written from the tree without making them (a million
** transactions are seven million strings otherwise).
*/

#include <stdlib.h>
#include <string.h>

#include "lofx.h"
#include "ofx.h"

#define READER "sift.OfxReader"
#define TXNS "sift.OfxTransactions"

enum { TEXT, DATE, AMOUNT, UPPER, KINDS };
static const char *const kind_names[KINDS] = { "text", "date", "amount", "upper" };

#define MAX_KEYS 64
#define NO_FIELD 0xFFFF

/* user values: a reader's tree and keys (key number + 1 -> name); a
   list's reader and the transactions made or assigned (index -> table) */
enum { R_TREE = 1, R_KEYS };
enum { L_READER = 1, L_MADE };

#define MAX_KEY_LEN 28

typedef struct Reader {
  int nkeys;
  char json_key[MAX_KEYS][MAX_KEY_LEN + 4];  /* each key as JSON writes it: "key": */
  size_t json_key_len[MAX_KEYS];
  int fallback[MAX_KEYS];  /* a key left unset takes this key's value (-1: none) */
  int required[MAX_KEYS];  /* 1: a record without this key does not read */
  uint32_t ntags;
  uint16_t field[1];       /* per tag of the tree: kind << 8 | key, or NO_FIELD */
} Reader;

typedef struct Txns {
  uint32_t n, cap;
  uint32_t *node;  /* each transaction's node, until it is made or assigned: then 0,
                     and it is the table in L_MADE (none: left out) */
} Txns;

/* a transaction's fields as read: where each value's bytes are */
typedef struct Field {
  const char *s;
  size_t n;
  int kind, set;
} Field;


/* {======================================================
** The reader
** =======================================================
*/

typedef struct Key {
  const char *s;
  size_t n;
} Key;

static int cmp_key (const void *a, const void *b) {
  const Key *x = (const Key *)a, *y = (const Key *)b;
  int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
  return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

/* the number of key (the string on top) among keys[0..n) (sorted) */
static int key_number (lua_State *L, const Key *keys, int n) {
  Key k;
  const Key *found;
  k.s = lua_tolstring(L, -1, &k.n);
  found = (const Key *)bsearch(&k, keys, (size_t)n, sizeof k, cmp_key);
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
  Reader *r;
  Key keys[MAX_KEYS];
  int nkeys = 0, kind, k;
  uint32_t i, id;
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  t = sift_checkofxnode(L, 1, &id);  /* 3: the tree */
  /* the keys: every value of the maps, and fallback's keys */
  lua_newtable(L);  /* 4: the keys as a set, keeping them alive */
  for (kind = 0; kind <= KINDS; kind++) {
    if (lua_getfield(L, 2, kind < KINDS ? kind_names[kind] : "fallback") != LUA_TTABLE) {
      if (kind == KINDS && lua_isnil(L, -1)) { lua_pop(L, 1); break; }
      return luaL_error(L, "spec.%s is not a table", kind < KINDS ? kind_names[kind] : "fallback");
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -1) != LUA_TSTRING || lua_type(L, -2) != LUA_TSTRING)
        return luaL_error(L, "spec maps strings to strings");
      lua_pushvalue(L, -1);
      lua_pushboolean(L, 1);
      lua_rawset(L, 4);
      if (kind == KINDS) {
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
    if (nkeys == MAX_KEYS) return luaL_error(L, "spec has more than %d keys", MAX_KEYS);
    keys[nkeys].s = lua_tolstring(L, -1, &keys[nkeys].n);
    nkeys++;
  }
  qsort(keys, (size_t)nkeys, sizeof *keys, cmp_key);
  r = (Reader *)lua_newuserdatauv(L, sizeof *r + t->tags * sizeof r->field[0], 2);  /* 5 */
  luaL_setmetatable(L, READER);
  r->nkeys = nkeys;
  r->ntags = t->tags;
  for (k = 0; k < MAX_KEYS; k++) {
    r->fallback[k] = -1;
    r->required[k] = 0;
  }
  for (i = 0; i < t->tags; i++) r->field[i] = NO_FIELD;
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, 5, R_TREE);
  lua_createtable(L, nkeys, 0);
  for (k = 0; k < nkeys; k++) {
    size_t j;
    for (j = 0; j < keys[k].n && keys[k].n <= MAX_KEY_LEN; j++) {
      char c = keys[k].s[j];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) break;
    }
    luaL_argcheck(L, j == keys[k].n && j <= MAX_KEY_LEN, 2, "keys are lower-case words of at most 28 bytes");
    r->json_key[k][0] = '"';
    memcpy(r->json_key[k] + 1, keys[k].s, keys[k].n);
    memcpy(r->json_key[k] + 1 + keys[k].n, "\":", 2);
    r->json_key_len[k] = keys[k].n + 3;
    lua_pushlstring(L, keys[k].s, keys[k].n);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setiuservalue(L, 5, R_KEYS);
  for (kind = 0; kind <= KINDS; kind++) {
    if (lua_getfield(L, 2, kind < KINDS ? kind_names[kind] : "fallback") != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushnil(L);
    while (lua_next(L, -2)) {  /* tag (or key), key */
      int key = key_number(L, keys, nkeys);
      lua_pop(L, 1);
      if (kind == KINDS) r->fallback[key_number(L, keys, nkeys)] = key;
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
static int read_fields (lua_State *L, int tree, const ofx_Tree *t, const Reader *r,
                        uint32_t id, Field *fields) {
  uint32_t c;
  int k, aggregates = 0;
  for (k = 0; k < r->nkeys; k++) fields[k].set = 0;
  c = OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE ? t->nodes[id].a : 0;
  for (; c; c = t->nodes[c].next) {
    const ofx_Node *n = &t->nodes[c];
    uint32_t tag = OFX_TAG(n);
    Field *f;
    int kind;
    size_t len;
    const char *s;
    if (OFX_KIND(n) == OFX_AGGREGATE) {
      aggregates = 1;
      continue;
    }
    if (tag >= r->ntags || r->field[tag] == NO_FIELD) continue;
    kind = r->field[tag] >> 8;
    f = &fields[r->field[tag] & 0xFF];
    s = sift_ofxbytes(L, tree, t, c, &len);
    if (len == 0) {
      if (kind == DATE || kind == AMOUNT) return -1;
      continue;
    }
    if (kind == TEXT && f->set) continue;  /* the first one stays */
    if (kind == DATE) {
      ofx_Date d;
      if (ofx_date(s, len, &d)) return -1;
    }
    else if (kind == AMOUNT) {
      int64_t units;
      int scale;
      if (ofx_amount(s, len, &units, &scale)) return -1;
    }
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
static const char *field_value (const Field *f, char *buf, size_t *n) {
  switch (f->kind) {
    case DATE: {
      ofx_Date d;
      ofx_date(f->s, f->n, &d);  /* (read before) */
      ofx_format_iso(&d, buf);
      *n = strlen(buf);
      return buf;
    }
    case AMOUNT: {
      int64_t units;
      int scale;
      ofx_amount(f->s, f->n, &units, &scale);
      *n = ofx_format_decimal(units, scale, buf);
      return buf;
    }
    case UPPER: {
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

/* a buffer big enough for any field's value: upper case needs its length */
#define SMALL_VALUE 64

/* push the value of a field */
static void push_field (lua_State *L, const Field *f) {
  char small[SMALL_VALUE], *buf = small;
  size_t n;
  const char *s;
  if (f->kind == UPPER && f->n > sizeof small) buf = (char *)lua_newuserdatauv(L, f->n, 0);
  s = field_value(f, buf, &n);
  lua_pushlstring(L, s, n);
  if (buf != small) lua_remove(L, -2);
}

/* push the table of a transaction read into fields (reader at idx) */
static void push_record (lua_State *L, int reader, const Reader *r, const Field *fields) {
  int k;
  lua_getiuservalue(L, reader, R_KEYS);
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
static ofx_Tree *reader_node (lua_State *L, uint32_t *id) {
  ofx_Tree *t = sift_checkofxnode(L, 2, id);
  lua_getiuservalue(L, 1, R_TREE);
  luaL_argcheck(L, lua_rawequal(L, 3, 4), 2, "a node of another tree");
  lua_pop(L, 1);
  return t;
}

/* core.ofx_record(reader, node) -> record, aggregates | nil
   aggregates: whether the node has any (left to the caller); nil when a
   date or amount is empty or does not read */
static int l_record (lua_State *L) {
  Reader *r = (Reader *)luaL_checkudata(L, 1, READER);
  Field fields[MAX_KEYS];
  uint32_t id;
  ofx_Tree *t;
  int status;
  lua_settop(L, 2);
  t = reader_node(L, &id);
  status = read_fields(L, 3, t, r, id, fields);
  if (status < 0) {
    lua_pushnil(L);
    return 1;
  }
  push_record(L, 1, r, fields);
  lua_pushboolean(L, status);
  return 2;
}

/* }====================================================== */


/* {======================================================
** The transactions of a list
** =======================================================
*/

static Txns *checktxns (lua_State *L, int arg) {
  return (Txns *)luaL_checkudata(L, arg, TXNS);
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
static const Reader *list_reader (lua_State *L, int idx, const ofx_Tree **t) {
  const Reader *r;
  lua_getiuservalue(L, idx, L_READER);
  r = (const Reader *)lua_touserdata(L, -1);
  lua_getiuservalue(L, -1, R_TREE);
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
  const Reader *r = (const Reader *)luaL_checkudata(L, 1, READER);
  const ofx_Tree *t;
  Field fields[MAX_KEYS];
  Txns *x;
  uint32_t list, c;
  int64_t stmttrn, invbanktran;
  lua_Integer n = 0, others = 0;
  lua_settop(L, 2);
  t = reader_node(L, &list);
  x = (Txns *)lua_newuserdatauv(L, sizeof *x, 2);  /* 4 */
  memset(x, 0, sizeof *x);
  luaL_setmetatable(L, TXNS);
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
    if (transaction && node->tag >> 2 == (uint32_t)stmttrn && read_fields(L, 3, t, r, c, fields) == 0) {
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
  const Reader *r;
  Field fields[MAX_KEYS];
  int top = lua_gettop(L);
  lua_getiuservalue(L, idx, L_MADE);
  if (lua_rawgeti(L, -1, (lua_Integer)i + 1) != LUA_TNIL || x->node[i] == 0) {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return;
  }
  lua_pop(L, 1);
  r = list_reader(L, idx, &t);  /* top + 2, top + 3 */
  read_fields(L, top + 3, t, r, x->node[i], fields);
  push_record(L, top + 2, r, fields);
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
  int c = memcmp(a, b, an < bn ? an : bn);
  return c != 0 ? c : (an > bn) - (an < bn);
}

/* core.ofx_range(transactions, key) -> the smallest and largest value of
   key (byte order, as Lua compares strings in the C locale), nil when
   none has it; nothing is made */
static int l_range (lua_State *L) {
  Txns *x = checktxns(L, 1);
  size_t kn, n, low_n = 0, high_n = 0;
  const char *key = luaL_checklstring(L, 2, &kn), *v;
  const ofx_Tree *t;
  const Reader *r;
  Field fields[MAX_KEYS];
  char low[SMALL_VALUE], high[SMALL_VALUE], buf[SMALL_VALUE];
  int k, found = 0, made;
  uint32_t i;
  lua_settop(L, 2);
  lua_getiuservalue(L, 1, L_MADE);  /* 3 */
  made = 3;
  r = list_reader(L, 1, &t);  /* 4 the reader, 5 its tree */
  lua_getiuservalue(L, 4, R_KEYS);  /* 6 */
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
      read_fields(L, 5, t, r, x->node[i], fields);
      if (!fields[k].set) continue;
      if (fields[k].kind == UPPER && fields[k].n > sizeof buf)
        return luaL_error(L, "%s values too long to compare", key);
      v = field_value(&fields[k], buf, &n);
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
  const Reader *r;
  Field fields[MAX_KEYS];
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
    read_fields(L, tree, t, r, x->node[i], fields);
    sift_json_raw(L, j, "{", 1);
    for (k = 0; k < r->nkeys; k++) {
      char small[SMALL_VALUE], *buf = small;
      size_t n;
      const char *s;
      if (!fields[k].set) continue;
      if (!first) sift_json_raw(L, j, ",", 1);
      first = 0;
      sift_json_raw(L, j, r->json_key[k], r->json_key_len[k]);
      if (fields[k].kind == UPPER && fields[k].n > sizeof small)
        buf = (char *)lua_newuserdatauv(L, fields[k].n, 0);
      s = field_value(&fields[k], buf, &n);
      sift_json_string(L, j, s, n);
      if (buf != small) lua_pop(L, 1);
    }
    sift_json_raw(L, j, "}", 1);
  }
  sift_json_raw(L, j, "]", 1);
  lua_settop(L, idx);
}

static sift_JsonHook json_hook = { txns_json };  /* (not const: Lua keeps a void *) */

/* }====================================================== */


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
  {"ofx_reader", l_reader},
  {"ofx_range", l_range},
  {"ofx_record", l_record},
  {"ofx_totable", l_totable},
  {"ofx_transactions", l_transactions},
  {NULL, NULL}
};

void sift_open_ofxtxns (lua_State *L) {
  luaL_newmetatable(L, READER);
  lua_pop(L, 1);
  luaL_newmetatable(L, TXNS);
  luaL_setfuncs(L, txns_meta, 0);
  lua_pushlightuserdata(L, &json_hook);
  lua_setfield(L, -2, "__json");
  lua_pop(L, 1);
  luaL_setfuncs(L, txns_functions, 0);
}
