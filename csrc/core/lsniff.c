/*
** lsniff.c
** core.sniff(source [, progress]) -> table | nil, message, code
** The table has `format`, `variant`, `compressed` and one field per header
** fact; a recognised file with a damaged or unsupported header also gets
** `problem` (a message) and `problem_code`.
*/

#include "inflate.h"
#include "lsift.h"
#include "sniff.h"

static void setstring (lua_State *L, const char *key, const char *value) {
  if (value == NULL) return;
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
}

static int sniff (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  unsigned char *scratch = NULL;
  sift_Progress progress;
  sift_LuaProgress lp;
  sift_Sniff out;
  sift_Status s;
  int i;
  sift_progress_lua(L, 2, &lp, &progress, n);
  if (sift_compression(p, n) != SIFT_PLAIN)  /* GC-owned scratch space */
    scratch = (unsigned char *)lua_newuserdatauv(L, SIFT_SNIFF_HEAD, 0);
  s = sift_sniff(p, n, &out, &progress, scratch);
  sift_progress_rethrow(&lp);
  if (s != SIFT_OK) {
    if (s == SIFT_ECANCEL)
      return sift_pushfail(L, s, "cancelled");
    return sift_pushfail(L, s, "%s", out.error.msg);
  }
  lua_createtable(L, 0, out.nfacts + 5);
  setstring(L, "format", out.format);
  setstring(L, "variant", out.variant);
  setstring(L, "compressed", out.compression);
  for (i = 0; i < out.nfacts; i++) {
    if (out.facts[i].isint) lua_pushinteger(L, (lua_Integer)out.facts[i].i);
    else lua_pushstring(L, out.facts[i].s);
    lua_setfield(L, -2, out.facts[i].key);
  }
  if (out.status != SIFT_OK) {
    setstring(L, "problem", out.error.msg);
    setstring(L, "problem_code", sift_status_code(out.status));
  }
  return 1;
}

static const luaL_Reg sniff_functions[] = {
  {"sniff", sniff},
  {NULL, NULL}
};

void sift_open_sniff (lua_State *L) {
  luaL_setfuncs(L, sniff_functions, 0);
}
