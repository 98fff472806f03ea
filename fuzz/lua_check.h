/*
** lua_check.h
** What the fuzzers that run sift's Lua modules share: an embedded Lua
** with sift.core preloaded, the modules from lua/ (run from the project
** root), and a check function, made once, called with each input's bytes.
** A check that raises an error is a finding: abort, with its message.
*/

#if !defined(sift_lua_check_h)
#define sift_lua_check_h

#include <stdio.h>
#include <stdlib.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

int luaopen_sift_core (lua_State *L);

/* the Lua text of a check starts with this: sift's paths, sift.core */
#define LUA_CHECK_PRELUDE \
  "package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path\n" \
  "package.preload['sift.core'] = ...\n"

/* run the check on bytes, making the state on first use */
static void lua_check (const char *name, const char *check, size_t len,
                       const char *bytes, size_t n) {
  static lua_State *L;
  if (L == NULL) {
    L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_loadbuffer(L, check, len, "=check") != LUA_OK) goto fail;
    lua_pushcfunction(L, luaopen_sift_core);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) goto fail;  /* the check function stays */
  }
  lua_pushvalue(L, 1);
  lua_pushlstring(L, bytes, n);
  if (lua_pcall(L, 1, 0, 0) == LUA_OK) return;
fail:
  fprintf(stderr, "%s: %s\n", name, lua_tostring(L, -1));
  abort();
}

#endif
