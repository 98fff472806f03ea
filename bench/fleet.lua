-- Fleet mode, for `make bench` (bench/run.lua): dumps analysed per second
-- by 1 and 2 `sift worker` processes, on the embedded default (SQLite) and
-- on Redis Streams + PostgreSQL (started here by spec/engines.lua). The
-- dumps are made now: a JVM running spec/java/FleetLeaks.java with its
-- three planted leaks, dumped by jcmd (as the fleet spec does), then
-- BENCH_FLEET_DUMPS copies of it (default 1,000), each with its own HPROF
-- timestamp: distinct files, each analysed once.
local N = tonumber(os.getenv("BENCH_FLEET_DUMPS")) or 1000
local common = dofile("bench/common.lua")
local helper = require "spec.helper"

print("\n== fleet: dumps analysed per second by sift worker ==")
local source, why = helper.jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=sessions,listeners,handlers")
if not source then
  print("(" .. why .. ")")
  return
end
local bytes = helper.read(source)
local fleet = require "sift.fleet"
local store_mod = require "sift.serve.store"

-- the files, stored once: N distinct dumps
local dir = "build/bench/fleet"
os.execute("rm -rf " .. dir)
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
      engines, failed = require("spec.engines").start()
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
