/*
** lofx.c
** The OFX helpers in Lua: core.ofx_amount, core.ofx_date, core.ofx_utf8.
*/

#include <stdio.h>
#include <stdlib.h>

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

static const luaL_Reg ofx_functions[] = {
  {"ofx_node", l_node},
  {"ofx_amount", l_amount},
  {"ofx_date", l_date},
  {"ofx_utf8", l_utf8},
  {NULL, NULL}
};

void sift_open_ofx (lua_State *L) {
  luaL_setfuncs(L, ofx_functions, 0);
}
