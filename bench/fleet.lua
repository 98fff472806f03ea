-- Fleet mode, for `make bench` (bench/run.lua), two parts.
--
-- The leak groups of a big fleet: BENCH_FLEET_UPLOADS uploads (1,000,000;
-- 100,000 with QUICK=1) in 10,000 groups, generated
-- (spec/fleet_groups_oracle.lua: duplicates, damaged files, second leaks)
-- and put in each backend in one transaction; then the time of
-- `groups` (sift fleet groups, /fleet) for the first page and a later one,
-- in the library and as a whole `sift fleet groups` process, beside the
-- Lua aggregation sift did before (every leak row of every upload read
-- into Lua: the oracle) on the same rows.
--
-- Dumps analysed per second by 1 and 2 `sift worker` processes, on the
-- embedded default (SQLite) and on Redis Streams + PostgreSQL (started
-- here by spec/engines.lua). The dumps are made now: a JVM running
-- spec/java/FleetLeaks.java with its three planted leaks, dumped by jcmd
-- (as the fleet spec does), then BENCH_FLEET_DUMPS copies of it (default
-- 1,000; 200 with QUICK=1), each with its own HPROF timestamp: distinct
-- files, each analysed once.
local common = dofile("bench/common.lua")
local QUICK = common.QUICK
local helper = require "spec.helper"
local fleet = require "sift.fleet"
local engines_mod = require "spec.engines"

do
  local oracle = require "spec.fleet_groups_oracle"
  local json = require "sift.json"
  local monotime = require("cqueues").monotime
  local UPLOADS = tonumber(os.getenv("BENCH_FLEET_UPLOADS")) or (QUICK and 100000 or 1000000)
  local GROUPS, PER_PAGE = 10000, 50
  local LATER = 100  -- (the later page: groups 4,951 to 5,000)
  print(("\n== fleet: leak groups of %s uploads in %s groups, %d a page ==")
    :format(UPLOADS, GROUPS, PER_PAGE))
  local t0 = monotime()
  local data = oracle.generate(UPLOADS, GROUPS, 36)
  print(("generated %d uploads of %d files with %d leaks in %.1f s"):format(#data.uploads, #data.files, #data.leaks,
    monotime() - t0))
  local dir = "build/bench/fleet-groups"
  os.execute("rm -rf " .. dir .. "; mkdir -p " .. dir)
  local function best(fn, runs)
    local t, a, b = math.huge, nil, nil
    for _ = 1, runs or 3 do
      local s = monotime()
      a, b = fn()
      t = math.min(t, monotime() - s)
    end
    return t, a, b
  end
  local backends = { { name = "sqlite", data = dir .. "/sqlite" } }
  local engines, why_not = engines_mod.start()
  if engines then
    local redis, postgres = engines.fresh()
    backends[2] = { name = "postgresql", redis = redis, postgres = postgres }
  else
    print("(postgresql: " .. why_not .. ")")
  end
  for _, b in ipairs(backends) do  -- (the same rows in each, each in one transaction)
    b.fleet = assert(fleet.open(b.data, { redis = b.redis, postgres = b.postgres, migrating = true }))
    b.fleet:migrate()
    t0 = monotime()
    if b.redis then oracle.load_postgres(engines, b.postgres, data, dir) else oracle.load_sqlite(b.fleet.queue, data) end
    local t1 = monotime()
    b.fleet.queue:recount()
    local t2 = monotime()
    -- (PostgreSQL: the rows recount rewrote vacuumed and the statistics
    -- made again, as autovacuum would soon, so the page reads are index-only)
    if b.redis then engines.psql(b.postgres, "VACUUM ANALYZE") end
    print(("%-11s loaded in %.1f s; recount (what the migrations to schemas 3 and 4 do) %.1f s%s"):format(b.name,
      t1 - t0, t2 - t1, b.redis and ("; VACUUM ANALYZE %.1f s"):format(monotime() - t2) or ""))
  end
  local sig = data.signatures[1]
  data = nil  -- luacheck: ignore 311
  collectgarbage()
  print(("%-11s %10s %10s %10s %12s %12s %10s"):format("backend", "page 1", ("page %d"):format(LATER), "CLI page 1",
    "Lua, before", "Lua / SQL", "groups"))
  for _, b in ipairs(backends) do
    local f = b.fleet
    f:mark_fixed(sig, "9.0")  -- (a fixed group: the pages leave it out)
    local first_t, first, total = best(function() return f:groups { limit = PER_PAGE } end)
    local later_t, later = best(function() return f:groups { limit = PER_PAGE, offset = (LATER - 1) * PER_PAGE } end)
    local args = b.redis and ("--data %s/cli --redis %s --postgres %s"):format(dir, b.redis, b.postgres)
      or ("--data " .. b.data)
    local cli_t = assert(common.best("lua5.4 bin/sift fleet groups --limit " .. PER_PAGE .. " " .. args, 3, true))
    -- before: every leak row of every upload into Lua, aggregated there
    local lua_t, want = best(function() return oracle.groups(f.queue:leak_rows(), f.queue:fixes(), {}) end, 1)
    local function check(page, from)
      for i, g in ipairs(page) do
        assert(json.encode(g) == json.encode(want[from + i]), ("%s: group %d differs"):format(b.name, from + i))
      end
    end
    check(first, 0)
    check(later, (LATER - 1) * PER_PAGE)
    assert(total == #want)
    print(("%-11s %9.3fs %9.3fs %9.3fs %11.2fs %11.0fx %10d"):format(b.name, first_t, later_t, cli_t, lua_t,
      lua_t / first_t, total))
    -- what the write side pays for it: an upload of a file analysed already,
    -- in the biggest group shown (its summary moved on, its median made again)
    local ingest_t = best(function()
      return f:ingest(first[1].files[1], "/gen/again.hprof", "hprof", { version = "1.0", device = "bench" })
    end)
    print(("%-11s an upload of an analysed file of the biggest group (%d dumps): %.4f s"):format(b.name,
      first[1].dumps, ingest_t))
    f:close()
  end
  if engines then engines.stop() end
  os.execute("rm -rf " .. dir)
end

print("\n== fleet: dumps analysed per second by sift worker ==")
local N = tonumber(os.getenv("BENCH_FLEET_DUMPS")) or (QUICK and 200 or 1000)
local source, why = helper.jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=sessions,listeners,handlers")
if not source then
  print("(" .. why .. ")")
  return
end
local bytes = helper.read(source)
local store_mod = require "sift.serve.store"

-- the files, stored once: N distinct dumps
local dir = "build/bench/fleet"
os.execute("rm -rf " .. dir .. "; mkdir -p " .. dir .. "/data")  -- (the store's directory is made by its caller)
local store, entries = store_mod.new(dir .. "/data"), {}
local header = bytes:find("\0", 1, true)  -- "JAVA PROFILE 1.0.2\0", u4 id size, u8 timestamp
for i = 1, N do
  local stamped = bytes:sub(1, header + 4) .. string.pack(">i8", 1700000000000 + i) .. bytes:sub(header + 13)
  local done = false
  entries[i] = assert(store:upload(function()
    if done then return nil end
    done = true
    return stamped
  end, ("dump-%d.hprof"):format(i)))
end
print(("%d dumps of %.1f MB (%s)"):format(N, #bytes / 1e6, source))

-- a backend with the N dumps queued: fleet.open's options, or nil and why
local engines
local function queue(backend, run)
  local opts = {}
  if backend == "redis+postgres" then
    if not engines then
      local failed
      engines, failed = engines_mod.start()
      if not engines then return nil, failed end
    end
    opts.redis, opts.postgres = engines.fresh()
    assert(fleet.open(nil, { redis = opts.redis, postgres = opts.postgres, migrating = true })):migrate()
  else
    opts.data = ("%s/sqlite-%d"):format(dir, run)
  end
  local fl = assert(fleet.open(opts.data, opts))
  for _, e in ipairs(entries) do fl:ingest(e.sha256, e.path, e.format, { app = "bench", version = "1" }) end
  fl:close()
  return opts
end

print(("%-16s %8s %8s %10s %10s %8s"):format("backend", "workers", "dumps", "time", "dumps/s", "groups"))
local run = 0
for _, backend in ipairs { "sqlite", "redis+postgres" } do
  local rates = {}
  for _, workers in ipairs { 1, 2 } do
    run = run + 1
    local opts, failed = queue(backend, run)
    if not opts then
      print(("%-16s (%s)"):format(backend, failed))
      break
    end
    local args = opts.redis and ("--redis %s --postgres %s"):format(opts.redis, opts.postgres)
      or ("--data " .. opts.data)
    local cmd = {}
    for k = 1, workers do cmd[k] = ("lua5.4 bin/sift worker -q --once %s &"):format(args) end
    local t = assert(common.best(table.concat(cmd, " ") .. " wait", 1, true))
    local fl = assert(fleet.open(opts.data, opts))
    local st, groups = fl:status(), #fl:groups()
    fl:close()
    assert(st.done == N, ("only %d of %d done"):format(st.done, N))
    rates[workers] = N / t
    print(("%-16s %8d %8d %9.2fs %10.1f %8d"):format(backend, workers, N, t, N / t, groups))
  end
  if rates[2] then
    print(("%-16s 2 workers / 1 worker: %.2fx (linear would be 2x)"):format(backend, rates[2] / rates[1]))
  end
end
if engines then engines.stop() end
os.execute("rm -rf " .. dir)
