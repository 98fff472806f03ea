/*
** fuzz_ofx_grammar.c
** libFuzzer harness for the whole OFX reader: the input goes through
** sift.ofx (the LPeg grammar, the C that builds its runs and reads its
** transactions, the typed statements) on an embedded Lua, leniently and
** strictly. Either may refuse the input, with nil and a message; neither
** may raise an error, and a lenient tree must be well formed; its JSON view
** goes through sift.json's C encoder (hostile text in every string) and
** must read back with Lua's own rules: valid UTF-8; and the lazy
** transactions (what sift ofx reads) must write the same JSON. Run from the project
** root (the Lua modules come from lua/).
*/

#include <stdint.h>

#include "lua_check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* the check, a Lua function of the input's bytes */
static const char check[] = LUA_CHECK_PRELUDE
  "local grammar, ofx, json = require 'sift.ofx.grammar', require 'sift.ofx', require 'sift.json'\n"
  "local function well_formed(node)\n"
  "  for tag, x in node:items() do\n"
  "    assert(type(tag) == 'string', 'a child without a tag')\n"
  "    if type(x) ~= 'string' then\n"
  "      assert(x.tag == tag and x.value == nil and math.type(x.pos) == 'integer', 'a child that is no node')\n"
  "      well_formed(x)\n"
  "    end\n"
  "  end\n"
  "end\n"
  "return function(text)\n"
  "  local doc, msg = ofx.parse(text)\n"
  "  assert(doc or type(msg) == 'string', 'a refusal without a message')\n"
  "  if doc then\n"
  "    well_formed(doc.tree)\n"
  "    local text = json.encode(ofx.view(doc), { arrays = ofx.view_arrays })\n"
  "    assert(utf8.len(text), 'JSON that is not UTF-8')\n"
  "    local lazy = assert(ofx.parse(text, { lazy = true }) or true)\n"
  "  end\n"
  "  local plain, lazy = ofx.parse(text), ofx.parse(text, { lazy = true })\n"
  "  if plain then\n"
  "    assert(json.encode(ofx.view(plain), { arrays = ofx.view_arrays })\n"
  "      == json.encode(ofx.view(lazy), { arrays = ofx.view_arrays }), 'lazy transactions write other JSON')\n"
  "  end\n"
  "  doc, msg = ofx.parse(text, { strict = true })\n"
  "  assert(doc or type(msg) == 'string', 'a strict refusal without a message')\n"
  "end\n";

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  lua_check("fuzz_ofx_grammar", check, sizeof check - 1, (const char *)data, size);
  return 0;
}
