/*
** lofx.c
** The OFX helpers in Lua: core.ofx_amount, core.ofx_date, core.ofx_utf8;
** and the tree (ltree.c), records (lrecord.c) and transactions (ltxns.c),
** opened from here.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lofx.h"
#include "ofx.h"
#include "fold.h"

/* core.ofx_amount(text) -> units, scale, decimal | nil, reason
   decimal: the exact value as text, "-1006.60" for "-1.006,60" */
static int l_amount (lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  int64_t units;
  int scale;
  char text[48];
  const char *err = ofx_amount(s, n, &units, &scale);
  if (err) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)units);
  lua_pushinteger(L, scale);
  lua_pushlstring(L, text, ofx_format_decimal(units, scale, text));
  return 3;
}

/*
** core.ofx_date(text) -> iso, utc, offset, zone, msec | nil, reason
** iso: see ofx_format_iso; utc: seconds since 1970; offset: minutes east of
** UTC as the file gave it (nil when it gave none); zone: its name or nil.
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
  ofx_format_iso(&d, iso);
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

#define FOLD_BOX "sift.fold_box"

/* the box that owns sift_fold's buffer until it is copied: a memory error
   in between leaves it to the collector */
static int fold_box_gc (lua_State *L) {
  char **box = (char **)luaL_checkudata(L, 1, FOLD_BOX);
  free(*box);
  *box = NULL;
  return 0;
}

/* core.fold(text) -> text NFC-normalised and case-folded (fold.h): what
   the finance rules compare; bytes that are not UTF-8 kept as they are */
static int l_fold (lua_State *L) {
  size_t n, len;
  const char *s = luaL_checklstring(L, 1, &n);
  char **box = (char **)lua_newuserdatauv(L, sizeof(char *), 0);
  *box = NULL;
  luaL_setmetatable(L, FOLD_BOX);
  *box = sift_fold(s, n, &len);
  if (!*box) return luaL_error(L, "not enough memory");
  lua_pushlstring(L, *box, len);
  free(*box);
  *box = NULL;
  return 1;
}

static const luaL_Reg ofx_functions[] = {
  {"fold", l_fold},
  {"ofx_amount", l_amount},
  {"ofx_date", l_date},
  {"ofx_utf8", l_utf8},
  {NULL, NULL}
};

void sift_open_ofx (lua_State *L) {
  luaL_newmetatable(L, FOLD_BOX);
  lua_pushcfunction(L, fold_box_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_setfuncs(L, ofx_functions, 0);
  sift_open_ofxtree(L);
  sift_open_ofxrecords(L);
  sift_open_ofxtxns(L);
}
