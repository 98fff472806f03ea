-- Fleet symbols from Lua: ingest a release build's dump (a BMD, or an
-- obfuscated HPROF) as a version of an app, analyse it without symbols
-- (its group is marked "no symbols for example VERSION"), then add the
-- version's symbols (its apk, jar or dex; its R8/ProGuard mapping): the
-- dump is queued again, analysed with its names, and its leaks join the
-- group of their real signature.
-- Usage: sift run examples/fleet_symbols.lua DATA_DIR DUMP VERSION [SYMBOL_FILE...]
local fleet = require "sift.fleet"
local store = require "sift.serve.store"

local usage = "usage: sift run examples/fleet_symbols.lua DATA_DIR DUMP VERSION [SYMBOL_FILE...]"
local dir, dump, version = assert(arg[1], usage), assert(arg[2], usage), assert(arg[3], usage)
assert(require("sift.private").directory(dir))  -- (made 0700 when it is not there)
local files = assert(store.new(dir))
local f <close> = assert(fleet.open(dir))
local input = assert(io.open(dump, "rb"))
local entry, status, why = files:upload(function() return input:read(1 << 20) end, dump)
input:close()
assert(entry, why or status)
f:ingest(entry.sha256, entry.path, entry.format, { app = "example", version = version })

local function show(when)
  f:work { once = true }
  print(when .. ":")
  for _, g in ipairs(f:groups()) do
    print(("  %4d dumps  %s  %s%s"):format(g.dumps, g.signature:sub(1, 12), g.description,
      g.no_symbols and ("  [" .. table.concat(g.no_symbols, "; ") .. "]") or ""))
  end
end
show("without symbols")
if #arg > 3 then
  local added = assert(f:add_symbols({ app = "example", version = version }, table.move(arg, 4, #arg, 1, {})))
  for _, s in ipairs(added) do
    print(("%s %s (%s): %d dump(s) queued again"):format(s.new and "added" or "known", s.name, s.what, s.requeued))
  end
  show("with them")
end
