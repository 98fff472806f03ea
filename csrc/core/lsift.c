/*
** lsift.c
** Helpers every Lua-facing file of sift.core shares: the `nil, message,
** code` return and the registration of a userdata class.
*/

#include <stdarg.h>

#include "lsift.h"


int sift_pushfail (lua_State *L, sift_Status s, const char *fmt, ...) {
  va_list ap;
  luaL_pushfail(L);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_pushstring(L, sift_status_code(s));
  return 3;
}


void sift_newclass (lua_State *L, const char *tname,
                    const luaL_Reg *metamethods, const luaL_Reg *methods) {
  luaL_newmetatable(L, tname);
  luaL_setfuncs(L, metamethods, 0);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}


void sift_addmethods (lua_State *L, const char *tname, const luaL_Reg *methods) {
  luaL_getmetatable(L, tname);
  lua_getfield(L, -1, "__index");
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 2);
}


#define PROGRESS_ERROR "sift.progress_error"

static int call_progress (void *ud, uint64_t done, uint64_t total) {
  sift_LuaProgress *lp = (sift_LuaProgress *)ud;
  lua_State *L = lp->L;
  int go;
  lua_pushvalue(L, lp->fn);
  lua_pushinteger(L, (lua_Integer)done);
  lua_pushinteger(L, (lua_Integer)total);
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
    lua_setfield(L, LUA_REGISTRYINDEX, PROGRESS_ERROR);
    lp->failed = 1;
    return 0;
  }
  go = !(lua_isboolean(L, -1) && !lua_toboolean(L, -1));  /* false stops */
  lua_pop(L, 1);
  return go;
}

void sift_progress_lua (lua_State *L, int fn, sift_LuaProgress *lp,
                        sift_Progress *pr, uint64_t total) {
  if (!lua_isnoneornil(L, fn)) luaL_checktype(L, fn, LUA_TFUNCTION);
  lp->L = L;
  lp->fn = lua_isfunction(L, fn) ? lua_absindex(L, fn) : 0;
  lp->failed = 0;
  sift_progress_init(pr, lp->fn ? call_progress : NULL, lp, total);
}

void sift_progress_rethrow (sift_LuaProgress *lp) {
  if (!lp->failed) return;
  lua_getfield(lp->L, LUA_REGISTRYINDEX, PROGRESS_ERROR);
  lua_pushnil(lp->L);
  lua_setfield(lp->L, LUA_REGISTRYINDEX, PROGRESS_ERROR);
  lua_error(lp->L);
}
