/*
** ljson.c
** core.json_encode(value, arrays, array_mt) -> JSON text: the encoder
** behind sift.json, in C because the JSON of a big statement or heap costs
** more than reading it when written from Lua. The rules are sift.json's:
** integers exactly (64-bit), floats as %.17g (NaN and infinities as null),
** object keys sorted bytewise, a table is an array when its metatable is
** array_mt or when its keys are exactly 1..#t (an empty table is `{}`,
** unless marked, or the value of a key in the set `arrays`), and a string
** that is not UTF-8 (Lua's strict utf8.len rules) has its bytes taken as
** Latin-1, so the output is always valid JSON. A userdata whose metatable
** has a __json hook (sift_JsonHook, lsift.h) writes itself.
*/

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lsift.h"

#define MAX_DEPTH 100

/* the output, in a userdata so that an error frees it */
struct sift_Json {
  char *p;
  size_t n, cap;
};
typedef struct sift_Json Out;

static int out_gc (lua_State *L) {
  Out *o = (Out *)lua_touserdata(L, 1);
  free(o->p);
  o->p = NULL;
  return 0;
}

/* make room for n more bytes */
static void grow (lua_State *L, Out *o, size_t n) {
  size_t cap = o->cap ? o->cap : 4096;
  char *p;
  while (cap - o->n < n) {
    if (cap > ((size_t)-1) / 2) luaL_error(L, "not enough memory");
    cap *= 2;
  }
  if ((p = (char *)realloc(o->p, cap)) == NULL) luaL_error(L, "not enough memory");
  o->p = p;
  o->cap = cap;
}

static inline void put (lua_State *L, Out *o, const char *s, size_t n) {
  if (o->cap - o->n < n) grow(L, o, n);
  memcpy(o->p + o->n, s, n);
  o->n += n;
}

#define PUTS(L, o, lit) put(L, o, lit, sizeof(lit) - 1)

/* Lua's strict UTF-8: no overlong forms, no surrogates, at most U+10FFFF */
static int is_utf8 (const unsigned char *s, size_t n) {
  static const unsigned long least[] = {0, 0x80, 0x800, 0x10000};
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    int more = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
             : (c & 0xF8) == 0xF0 ? 3 : -1;
    unsigned long cp;
    int k;
    if (more < 0 || n - i <= (size_t)more) return more == 0;
    cp = more == 0 ? c : c & (0x3Fu >> more);
    for (k = 1; k <= more; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return 0;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < least[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += (size_t)more + 1;
  }
  return 1;
}

static void put_escaped (lua_State *L, Out *o, unsigned c) {
  char u[8];
  switch (c) {
    case '"': PUTS(L, o, "\\\""); break;
    case '\\': PUTS(L, o, "\\\\"); break;
    case '\b': PUTS(L, o, "\\b"); break;
    case '\f': PUTS(L, o, "\\f"); break;
    case '\n': PUTS(L, o, "\\n"); break;
    case '\r': PUTS(L, o, "\\r"); break;
    case '\t': PUTS(L, o, "\\t"); break;
    default:
      snprintf(u, sizeof u, "\\u%04x", c);
      put(L, o, u, 6);
  }
}

static void put_string (lua_State *L, Out *o, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  int latin1;
  size_t i, run = 0;  /* bytes from s + run on are not written yet */
  for (i = 0; i < n && s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' && s[i] != '\\'; i++) {}
  if (i == n) {  /* the common case: printable ASCII, written as it is */
    if (o->cap - o->n < n + 2) grow(L, o, n + 2);
    o->p[o->n] = '"';
    memcpy(o->p + o->n + 1, str, n);
    o->p[o->n + n + 1] = '"';
    o->n += n + 2;
    return;
  }
  latin1 = !is_utf8(s, n);
  PUTS(L, o, "\"");
  for (i = 0; i < n; i++) {
    unsigned c = s[i];
    if (c < 0x20 || c == 0x7F || c == '"' || c == '\\') {
      put(L, o, str + run, i - run);
      put_escaped(L, o, c);
      run = i + 1;
    }
    else if (c >= 0x80 && latin1) {  /* the byte as its Latin-1 code point */
      char two[2];
      two[0] = (char)(0xC0 | c >> 6);
      two[1] = (char)(0x80 | (c & 0x3F));
      put(L, o, str + run, i - run);
      put(L, o, two, 2);
      run = i + 1;
    }
  }
  put(L, o, str + run, n - run);
  PUTS(L, o, "\"");
}

#define SMALL 32  /* an object with more keys sorts them in a userdata */

typedef sift_Key Key;

int sift_keycmp (const void *a, const void *b) {
  const Key *x = (const Key *)a, *y = (const Key *)b;
  int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
  return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

/* arguments: 2 the arrays set (or nil), 3 the array metatable */
static void encode (lua_State *L, Out *o, int depth, const char *key, size_t keylen);

/* is the table at idx an array: marked, or keys exactly 1..#t */
static int is_array (lua_State *L, int idx, lua_Unsigned len) {
  lua_Unsigned count = 0;
  if (lua_getmetatable(L, idx)) {
    int marked = lua_rawequal(L, -1, 3);
    lua_pop(L, 1);
    if (marked) return 1;
  }
  if (len == 0) return 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    count++;
  }
  return count == len;
}

static int empty_under_array_key (lua_State *L, int idx, const char *key, size_t keylen) {
  int yes = 0;
  if (key == NULL || lua_isnil(L, 2)) return 0;
  lua_pushlstring(L, key, keylen);
  if (lua_gettable(L, 2) != LUA_TNIL && lua_toboolean(L, -1)) {
    lua_pushnil(L);
    yes = lua_next(L, idx) == 0;
    if (!yes) lua_pop(L, 2);
  }
  lua_pop(L, 1);
  return yes;
}

static void encode_table (lua_State *L, Out *o, int depth, const char *key, size_t keylen) {
  int t = lua_gettop(L);
  lua_Unsigned len = lua_rawlen(L, t), i;
  size_t nkeys = 0, k, cap = SMALL;
  Key small[SMALL], *keys;
  int boxed = 0;
  if (depth > MAX_DEPTH) {
    lua_pushliteral(L, "sift.json: nesting too deep (a cycle?)");
    lua_error(L);
  }
  luaL_checkstack(L, 8, "sift.json: nesting too deep");
  if (is_array(L, t, len) || empty_under_array_key(L, t, key, keylen)) {
    PUTS(L, o, "[");
    for (i = 1; i <= len; i++) {
      if (i > 1) PUTS(L, o, ",");
      lua_geti(L, t, (lua_Integer)i);
      encode(L, o, depth + 1, NULL, 0);
      lua_pop(L, 1);
    }
    PUTS(L, o, "]");
    return;
  }
  /* the keys, in one pass: in a C array while they are few, else in a
     userdata kept below the traversal's key (and dropped at the end) */
  keys = small;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pushfstring(L, "sift.json: object keys must be strings, got %s", luaL_typename(L, -1));
      lua_error(L);
    }
    if (nkeys == cap) {
      Key *more = (Key *)lua_newuserdatauv(L, 2 * cap * sizeof *more, 0);
      memcpy(more, keys, nkeys * sizeof *keys);
      lua_insert(L, -2);  /* below the key */
      if (boxed) lua_remove(L, -3);  /* the smaller box */
      boxed = 1;
      keys = more;
      cap *= 2;
    }
    keys[nkeys].s = lua_tolstring(L, -1, &keys[nkeys].n);  /* the table keeps it alive */
    nkeys++;
  }
  qsort(keys, nkeys, sizeof *keys, sift_keycmp);
  PUTS(L, o, "{");
  for (k = 0; k < nkeys; k++) {
    if (k > 0) PUTS(L, o, ",");
    put_string(L, o, keys[k].s, keys[k].n);
    PUTS(L, o, ":");
    lua_pushlstring(L, keys[k].s, keys[k].n);
    lua_gettable(L, t);
    encode(L, o, depth + 1, keys[k].s, keys[k].n);
    lua_pop(L, 1);
  }
  PUTS(L, o, "}");
  if (boxed) lua_pop(L, 1);
}

/* the value on top of the stack */
static void encode (lua_State *L, Out *o, int depth, const char *key, size_t keylen) {
  char num[64];
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, -1, &n);
      put_string(L, o, s, n);
      break;
    }
    case LUA_TNUMBER:
      if (lua_isinteger(L, -1))
        put(L, o, num, (size_t)snprintf(num, sizeof num, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, -1)));
      else {
        lua_Number x = lua_tonumber(L, -1);
        if (x != x || x == (lua_Number)HUGE_VAL || x == -(lua_Number)HUGE_VAL) PUTS(L, o, "null");
        else put(L, o, num, (size_t)snprintf(num, sizeof num, "%.17g", (double)x));
      }
      break;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, -1)) PUTS(L, o, "true");
      else PUTS(L, o, "false");
      break;
    case LUA_TNIL:
      PUTS(L, o, "null");
      break;
    case LUA_TTABLE:
      encode_table(L, o, depth, key, keylen);
      break;
    case LUA_TUSERDATA:
      if (luaL_getmetafield(L, -1, "__json") == LUA_TLIGHTUSERDATA) {
        const sift_JsonHook *hook = (const sift_JsonHook *)lua_touserdata(L, -1);
        lua_pop(L, 1);
        if (depth > MAX_DEPTH) luaL_error(L, "sift.json: nesting too deep (a cycle?)");
        hook->write(L, o, depth + 1);
        break;
      }
      /* FALLTHROUGH */
    default:
      lua_pushfstring(L, "sift.json: cannot encode a %s", luaL_typename(L, -1));
      lua_error(L);
  }
}

static int core_json_encode (lua_State *L) {
  Out *o;
  luaL_checkany(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  o = (Out *)lua_newuserdatauv(L, sizeof *o, 0);  /* 4 */
  memset(o, 0, sizeof *o);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, out_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, 1);
  encode(L, o, 0, NULL, 0);
  lua_pushlstring(L, o->p ? o->p : "", o->n);
  free(o->p);
  o->p = NULL;
  return 1;
}

void sift_json_raw (lua_State *L, sift_Json *j, const char *s, size_t n) {
  put(L, j, s, n);
}

void sift_json_string (lua_State *L, sift_Json *j, const char *s, size_t n) {
  put_string(L, j, s, n);
}

void sift_json_value (lua_State *L, sift_Json *j, int depth) {
  encode(L, j, depth, NULL, 0);
}

static const luaL_Reg json_functions[] = {
  {"json_encode", core_json_encode},
  {NULL, NULL}
};

void sift_open_json (lua_State *L) {
  luaL_setfuncs(L, json_functions, 0);
}
