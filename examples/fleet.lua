-- Fleet mode from Lua: ingest dumps into a data directory the way
-- `sift serve --ingest` does, run a worker until the queue is empty, and
-- print the first page of leak groups, most dumps first. With SIFT_REDIS and
-- SIFT_POSTGRES set (URLs; the schema made by `sift fleet migrate`), the
-- jobs go on that Redis Stream and the results in that PostgreSQL.
-- Usage: sift run examples/fleet.lua DATA_DIR [DUMP[@VERSION]...]
local fleet = require "sift.fleet"
local store = require "sift.serve.store"

local dir = assert(arg[1], "usage: sift run examples/fleet.lua DATA_DIR [DUMP[@VERSION]...]")
assert(require("sift.private").directory(dir))  -- (made 0700 when it is not there)
local files = assert(store.new(dir))
local f <close> = assert(fleet.open(dir, { redis = os.getenv("SIFT_REDIS"), postgres = os.getenv("SIFT_POSTGRES") }))
for i = 2, #arg do
  local path, version = arg[i]:match("^(.-)@([^@/]+)$")
  path = path or arg[i]
  local input = assert(io.open(path, "rb"))
  local entry, status, why = files:upload(function() return input:read(1 << 20) end, path)
  input:close()
  assert(entry, why or status)
  f:ingest(entry.sha256, entry.path, entry.format, { app = "example", version = version })
end
local jobs = f:work { once = true }
local st = f:status()
print(("%d uploads, %d analysed now; %d done, %d failed"):format(st.uploads, jobs, st.done, st.failed))
-- the groups come a page at a time, aggregated by the backend (SQL on its indexes)
local page, total = f:groups { limit = 10, offset = 0 }
for _, g in ipairs(page) do
  print(("%4d dumps  %s  %s  (versions %s, retained %d bytes in all)"):format(g.dumps, g.signature:sub(1, 12),
    g.description, table.concat(g.versions, ", "), g.retained_total))
  print(((g.trace or ""):gsub("^", "      "):gsub("\n", "\n      ")))
end
print(("groups 1-%d of %d"):format(#page, total))
