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
