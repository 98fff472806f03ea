/*
** lofx.c
** The OFX helpers in Lua: core.ofx_amount, core.ofx_date, core.ofx_utf8.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lsift.h"
#include "ofx.h"

/* core.ofx_amount(text) -> units, scale, decimal | nil, reason
   decimal: the exact value as text, "-1006.60" for "-1.006,60" */
static int l_amount (lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  int64_t units;
  int scale, k = 0, i;
  char digits[32], text[48];
  uint64_t v;
  const char *err = ofx_amount(s, n, &units, &scale);
  if (err) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)units);
  lua_pushinteger(L, scale);
  v = units < 0 ? (uint64_t)0 - (uint64_t)units : (uint64_t)units;
  do {  /* the digits, least significant first, at least scale + 1 */
    digits[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0 || k <= scale);
  n = 0;
  if (units < 0) text[n++] = '-';
  for (i = k - 1; i >= 0; i--) {
    text[n++] = digits[i];
    if (i == scale && scale > 0) text[n++] = '.';
  }
  lua_pushlstring(L, text, n);
  return 3;
}

/*
** core.ofx_date(text) -> iso, utc, offset, zone, msec | nil, reason
** iso: "YYYY-MM-DD" for a date alone, else the UTC time
** "YYYY-MM-DDTHH:MM:SSZ"; utc: seconds since 1970; offset: minutes east
** of UTC as the file gave it (nil when it gave none); zone: its name or nil.
*/
static int l_date (lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  ofx_Date d;
  char iso[40];
  const char *err = ofx_date(s, n, &d);
  if (err) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  if (!d.has_time) snprintf(iso, sizeof iso, "%04d-%02d-%02d", d.year, d.month, d.day);
  else {
    int64_t t = d.utc, days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    int64_t secs = t - days * 86400, z = days + 719468, era, doe, yoe, y, doy, mp;
    int dd, mm;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    dd = (int)(doy - (153 * mp + 2) / 5 + 1);
    mm = (int)(mp < 10 ? mp + 3 : mp - 9);
    y += mm <= 2;
    snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, mm, dd,
             (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
  }
  lua_pushstring(L, iso);
  lua_pushinteger(L, (lua_Integer)d.utc);
  if (d.has_offset) lua_pushinteger(L, d.offset);
  else lua_pushnil(L);
  if (d.tz[0]) lua_pushstring(L, d.tz);
  else lua_pushnil(L);
  lua_pushinteger(L, d.msec);
  return 5;
}

/* core.ofx_utf8(bytes, charset) -> text, bytes read as CP1252
   charset: "cp1252", "latin1" or "utf8" (valid UTF-8 kept, other bytes CP1252) */
static int l_utf8 (lua_State *L) {
  static const char *const names[] = { "cp1252", "latin1", "utf8", NULL };
  static const int codes[] = { OFX_CP1252, OFX_LATIN1, OFX_UTF8 };
  size_t n, fixed, len;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  int cs = codes[luaL_checkoption(L, 2, "utf8", names)];
  luaL_Buffer b;
  unsigned char *out;
  if (ofx_is_utf8(s, n, cs)) {  /* the common case: no copy */
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 2;
  }
  if (n > (~(size_t)0) / 3) return luaL_error(L, "text too long");
  out = (unsigned char *)luaL_buffinitsize(L, &b, 3 * n + 1);
  len = ofx_to_utf8(s, n, cs, out, &fixed);
  luaL_pushresultsize(&b, len);
  lua_pushinteger(L, (lua_Integer)fixed);
  return 2;
}

/* core.ofx_node(n) -> a table with room for n children and a node's
   two fields (tag, pos), so that filling it never rehashes */
static int l_node (lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_argcheck(L, n >= 0 && n <= (1 << 24), 1, "out of range");
  lua_createtable(L, (int)n, 2);
  return 1;
}

/*
** The grammar's runs of elements come to C as positions, not strings: a
** tag captured as a string is looked up in Lua's string table, and in a
** file of millions of tags those lookups (cache misses, mostly) cost
** more than all the rest. A run's tags are few and repeat, so they come
** from a small cache of strings kept in the function's upvalue instead.
*/
#define TAG_SLOTS 256

static int is_name_char (unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-' || c == ':';
}

/* pushes the tag s[0..n) from the cache (upvalue 1), adding it on a miss */
static void push_tag (lua_State *L, const char *s, size_t n) {
  uint32_t h = 2166136261u;
  size_t i, len;
  const char *t;
  int slot;
  for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  slot = (int)(h % TAG_SLOTS) + 1;
  if (lua_rawgeti(L, lua_upvalueindex(1), slot) == LUA_TSTRING) {
    t = lua_tolstring(L, -1, &len);
    if (len == n && memcmp(t, s, n) == 0) return;
  }
  lua_pop(L, 1);
  lua_pushlstring(L, s, n);
  lua_pushvalue(L, -1);
  lua_rawseti(L, lua_upvalueindex(1), slot);
}

/* the 1-based position at arg as an offset into text, checked */
static size_t text_offset (lua_State *L, int arg, size_t len) {
  lua_Integer p = luaL_checkinteger(L, arg);
  luaL_argcheck(L, p >= 1 && (size_t)p <= len + 1, arg, "position out of the text");
  return (size_t)p - 1;
}

/*
** core.ofx_append(text, node, at, tag_end, value, value_end, close, ...)
**   -> count, last[, close_tag, close_at]
** A run of elements as the grammar captured them, five positions each:
** the '<' of the start tag, the '>' after its name, the value's start and
** end (exclusive), and the '<' of the end tag after it (false when none).
** Each is appended to node's array as its tag and its value. It goes on
** while each element's end tag is absent or its own, and stops after
** one closed by another's (in SGML, the parent's), returning that tag and
** where it is for the builder to act on. count: the elements taken;
** last: the index of the last value, nil when its own end tag closed it.
*/
static int l_append (lua_State *L) {
  size_t len, n_tag, n_close;
  const char *text = luaL_checklstring(L, 1, &len);
  int top = lua_gettop(L), i, taken = 0;
  lua_Integer n, last = 0;
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_argcheck(L, (top - 2) % 5 == 0, top, "elements come as five positions");
  n = (lua_Integer)lua_rawlen(L, 2);
  for (i = 3; i < top; i += 5) {
    size_t at = text_offset(L, i, len), tag_end = text_offset(L, i + 1, len);
    size_t value = text_offset(L, i + 2, len), value_end = text_offset(L, i + 3, len);
    const char *tag = text + at + 1, *close;
    luaL_argcheck(L, at < tag_end && value <= value_end, i, "positions out of order");
    n_tag = tag_end - at - 1;
    push_tag(L, tag, n_tag);
    lua_rawseti(L, 2, n + 1);
    lua_pushlstring(L, text + value, value_end - value);
    lua_rawseti(L, 2, n + 2);
    n += 2;
    taken++;
    if (!lua_toboolean(L, i + 4)) {
      last = n;
      continue;
    }
    close = text + text_offset(L, i + 4, len);
    luaL_argcheck(L, close + 2 <= text + len && close[0] == '<' && close[1] == '/', i + 4, "not an end tag");
    close += 2;
    for (n_close = 0; close + n_close < text + len && is_name_char((unsigned char)close[n_close]); n_close++) {}
    if (n_close == n_tag && memcmp(close, tag, n_tag) == 0) {
      last = 0;
      continue;
    }
    lua_pushinteger(L, taken);
    lua_pushinteger(L, n);
    push_tag(L, close, n_close);
    lua_pushvalue(L, i + 4);
    return 4;
  }
  lua_pushinteger(L, taken);
  if (last) lua_pushinteger(L, last);
  else lua_pushnil(L);
  return 2;
}

static const luaL_Reg ofx_functions[] = {
  {"ofx_node", l_node},
  {"ofx_amount", l_amount},
  {"ofx_date", l_date},
  {"ofx_utf8", l_utf8},
  {NULL, NULL}
};

void sift_open_ofx (lua_State *L) {
  luaL_setfuncs(L, ofx_functions, 0);
  lua_createtable(L, TAG_SLOTS, 0);  /* ofx_append's tag cache */
  lua_pushcclosure(L, l_append, 1);
  lua_setfield(L, -2, "ofx_append");
}
