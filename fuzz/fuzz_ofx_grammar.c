/*
** fuzz_ofx_grammar.c
** libFuzzer harness for the whole OFX reader: the input goes through
** sift.ofx (the LPeg grammar, the C that builds its runs and reads its
** transactions, the typed statements) on an embedded Lua, leniently and
** strictly. Either may refuse the input, with nil and a message; neither
** may raise an error, and a lenient tree must be well formed. Run from
** the project root (the Lua modules come from lua/).
*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int luaopen_sift_core (lua_State *L);

/* the check, a Lua function of the input's bytes */
static const char check[] =
  "package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path\n"
  "package.preload['sift.core'] = ...\n"
  "local grammar, ofx = require 'sift.ofx.grammar', require 'sift.ofx'\n"
  "local function well_formed(node)\n"
  "  local i = 1\n"
  "  while node[i] ~= nil do\n"
  "    local x = node[i]\n"
  "    if type(x) == 'string' then\n"
  "      assert(type(node[i + 1]) == 'string', 'an element without a value')\n"
  "      i = i + 2\n"
  "    else\n"
  "      assert(getmetatable(x) == grammar.Node and type(x.tag) == 'string', 'a child that is no node')\n"
  "      well_formed(x)\n"
  "      i = i + 1\n"
  "    end\n"
  "  end\n"
  "end\n"
  "return function(text)\n"
  "  local doc, msg = ofx.parse(text)\n"
  "  assert(doc or type(msg) == 'string', 'a refusal without a message')\n"
  "  if doc then well_formed(doc.tree) end\n"
  "  doc, msg = ofx.parse(text, { strict = true })\n"
  "  assert(doc or type(msg) == 'string', 'a strict refusal without a message')\n"
  "end\n";

static lua_State *L;

static lua_State *setup (void) {
  lua_State *l = luaL_newstate();
  luaL_openlibs(l);
  if (luaL_loadbuffer(l, check, sizeof check - 1, "=check") != LUA_OK) goto fail;
  lua_pushcfunction(l, luaopen_sift_core);
  if (lua_pcall(l, 1, 1, 0) != LUA_OK) goto fail;
  return l;  /* the check function stays on the stack */
fail:
  fprintf(stderr, "fuzz_ofx_grammar: %s\n", lua_tostring(l, -1));
  abort();
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  if (L == NULL) L = setup();
  lua_pushvalue(L, 1);
  lua_pushlstring(L, (const char *)data, size);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fprintf(stderr, "fuzz_ofx_grammar: %s\n", lua_tostring(L, -1));
    abort();
  }
  return 0;
}
