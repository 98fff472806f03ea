/*
** lreader.c
** sift.Reader: the bounds-checked reader as a Lua object, over a string or
** a sift.Map (kept alive as the reader's user value). Offsets are 0-based
** byte positions, as in every message. A read past the end returns
** nil, message, code and leaves the position unchanged.
*/

#include "lsift.h"
#include "reader.h"

typedef struct LReader {
  sift_Reader r;
  const sift_Map *map;  /* NULL when reading a string */
} LReader;


static sift_Reader *checkreader (lua_State *L) {
  LReader *lr = (LReader *)luaL_checkudata(L, 1, SIFT_READER_T);
  if (lr->map != NULL && !lr->map->open)
    luaL_error(L, "attempt to use a reader of a closed " SIFT_MAP_T);
  return &lr->r;
}

/* the failure the reader recorded, as nil, message, code */
static int readfail (lua_State *L, const sift_Reader *r) {
  sift_Error e;
  return sift_pushfail(L, sift_rd_error(r, &e, ""), "%s", e.msg);
}


/* core.reader(source [, offset]) */
static int reader_new (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  lua_Integer off = luaL_optinteger(L, 2, 0);
  LReader *lr;
  luaL_argcheck(L, off >= 0 && (lua_Unsigned)off <= n, 2,
                "offset out of range");
  lr = (LReader *)lua_newuserdatauv(L, sizeof(LReader), 1);
  sift_reader_init(&lr->r, p, n);
  lr->r.pos = (size_t)off;
  lr->map = map;
  lua_pushvalue(L, 1);  /* anchor the bytes for the reader's lifetime */
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, SIFT_READER_T);
  return 1;
}


/*
** {======================================================
** Reads
** =======================================================
*/

static int reader_u1 (lua_State *L) {
  sift_Reader *r = checkreader(L);
  uint8_t v;
  if (!sift_rd_u1(r, &v)) return readfail(L, r);
  lua_pushinteger(L, v);
  return 1;
}

/* u2/u4/u8 in both byte orders share one body */
static int read_fixed (lua_State *L, int width, int big) {
  sift_Reader *r = checkreader(L);
  static const char *const names[] = {"", "", "u2", "", "u4", "", "", "",
                                      "u8"};
  uint64_t v;
  if (!sift_rd_uint(r, width, big, names[width], &v)) return readfail(L, r);
  lua_pushinteger(L, (lua_Integer)v);  /* u8 above 2^63 wraps (math.ult) */
  return 1;
}

static int reader_u2be (lua_State *L) { return read_fixed(L, 2, 1); }
static int reader_u2le (lua_State *L) { return read_fixed(L, 2, 0); }
static int reader_u4be (lua_State *L) { return read_fixed(L, 4, 1); }
static int reader_u4le (lua_State *L) { return read_fixed(L, 4, 0); }
static int reader_u8be (lua_State *L) { return read_fixed(L, 8, 1); }
static int reader_u8le (lua_State *L) { return read_fixed(L, 8, 0); }

static int reader_varint (lua_State *L) {
  sift_Reader *r = checkreader(L);
  uint64_t v;
  if (!sift_rd_varint(r, &v)) return readfail(L, r);
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

static int reader_uleb128 (lua_State *L) {
  sift_Reader *r = checkreader(L);
  uint64_t v;
  if (!sift_rd_uleb128(r, &v)) return readfail(L, r);
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

static int reader_sleb128 (lua_State *L) {
  sift_Reader *r = checkreader(L);
  int64_t v;
  if (!sift_rd_sleb128(r, &v)) return readfail(L, r);
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

/* reader:bytes(n) -> string of the next n bytes */
static int reader_bytes (lua_State *L) {
  sift_Reader *r = checkreader(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  const unsigned char *p;
  luaL_argcheck(L, n >= 0, 2, "length must not be negative");
  if (!sift_rd_bytes(r, (uint64_t)n, &p)) return readfail(L, r);
  lua_pushlstring(L, (const char *)p, (size_t)n);
  return 1;
}

/* reader:cstring() -> the bytes up to a NUL (which is consumed) */
static int reader_cstring (lua_State *L) {
  sift_Reader *r = checkreader(L);
  const char *s;
  size_t len;
  if (!sift_rd_cstring(r, &s, &len)) return readfail(L, r);
  lua_pushlstring(L, s, len);
  return 1;
}

/*
** reader:lstring(prefix) -> string preceded by its length, the length
** read as `prefix`: "u1", "u2be", "u2le", "u4be", "u4le" or "varint".
** Reads both or neither.
*/
static int reader_lstring (lua_State *L) {
  static const char *const prefixes[] = {"u1", "u2be", "u2le", "u4be",
                                         "u4le", "varint", NULL};
  sift_Reader *r = checkreader(L);
  int which = luaL_checkoption(L, 2, NULL, prefixes);
  size_t start = r->pos;
  uint64_t len = 0;
  const unsigned char *p;
  int ok;
  if (which == 5)
    ok = sift_rd_varint(r, &len);
  else {
    static const int width[] = {1, 2, 2, 4, 4};
    ok = sift_rd_uint(r, width[which], which != 2 && which != 4,
                      prefixes[which], &len);
  }
  if (!ok) return readfail(L, r);
  if (!sift_rd_fits(r, len, 1, "string")) {
    r->pos = start;  /* neither the length nor the bytes */
    return readfail(L, r);
  }
  sift_rd_bytes(r, len, &p);
  lua_pushlstring(L, (const char *)p, (size_t)len);
  return 1;
}

static int reader_skip (lua_State *L) {
  sift_Reader *r = checkreader(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0, 2, "length must not be negative");
  if (!sift_rd_skip(r, (uint64_t)n)) return readfail(L, r);
  lua_settop(L, 1);
  return 1;  /* the reader, for chaining */
}

/* }====================================================== */


/*
** {======================================================
** Position
** =======================================================
*/

static int reader_tell (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkreader(L)->pos);
  return 1;
}

/* reader:seek(offset): any offset from 0 to the size is valid */
static int reader_seek (lua_State *L) {
  sift_Reader *r = checkreader(L);
  lua_Integer off = luaL_checkinteger(L, 2);
  luaL_argcheck(L, off >= 0 && (lua_Unsigned)off <= r->size, 2,
                "offset out of range");
  r->pos = (size_t)off;
  lua_settop(L, 1);
  return 1;
}

static int reader_size (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkreader(L)->size);
  return 1;
}

static int reader_remaining (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)sift_rd_left(checkreader(L)));
  return 1;
}

static int reader_tostring (lua_State *L) {
  LReader *lr = (LReader *)luaL_checkudata(L, 1, SIFT_READER_T);
  lua_pushfstring(L, SIFT_READER_T " (at %I of %I bytes)",
                  (lua_Integer)lr->r.pos, (lua_Integer)lr->r.size);
  return 1;
}

/* }====================================================== */


static const luaL_Reg reader_methods[] = {
  {"u1", reader_u1},
  {"u2be", reader_u2be}, {"u2le", reader_u2le},
  {"u4be", reader_u4be}, {"u4le", reader_u4le},
  {"u8be", reader_u8be}, {"u8le", reader_u8le},
  {"varint", reader_varint},
  {"uleb128", reader_uleb128},
  {"sleb128", reader_sleb128},
  {"bytes", reader_bytes},
  {"cstring", reader_cstring},
  {"lstring", reader_lstring},
  {"skip", reader_skip},
  {"tell", reader_tell},
  {"seek", reader_seek},
  {"size", reader_size},
  {"remaining", reader_remaining},
  {NULL, NULL}
};

static const luaL_Reg reader_metamethods[] = {
  {"__index", NULL},  /* set to the methods below */
  {"__tostring", reader_tostring},
  {NULL, NULL}
};

static const luaL_Reg reader_functions[] = {
  {"reader", reader_new},
  {NULL, NULL}
};


void sift_open_reader (lua_State *L) {
  sift_newclass(L, SIFT_READER_T, reader_metamethods, reader_methods);
  luaL_setfuncs(L, reader_functions, 0);
}
