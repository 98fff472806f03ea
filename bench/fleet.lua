-- Fleet mode, for `make bench` (bench/run.lua): dumps analysed per second
-- by 1 and 2 `sift worker` processes on the embedded default (SQLite).
-- The dumps are copies of a LeakCanary fixture, each with its own HPROF
-- timestamp (so each is a distinct file, analysed once); BENCH_FLEET_DUMPS
-- of them (default 300, the issue asks for 1,000).
local N = tonumber(os.getenv("BENCH_FLEET_DUMPS")) or 300
local common = dofile("bench/common.lua")
local fixtures = os.getenv("SIFT_FIXTURES") or "../shared/fixtures"
local source = fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder.hprof"

print("\n== fleet: dumps analysed per second by sift worker (embedded SQLite queue) ==")
local f = io.open(source, "rb")
if not f then
  print("(no fixture: " .. source .. ")")
  return
end
local bytes = f:read("a")
f:close()
local fleet = require "sift.fleet"
local store_mod = require "sift.serve.store"

-- a data directory with N distinct dumps queued
local function queue(dir)
  os.execute("rm -rf " .. dir)
  local store, fl = store_mod.new(dir), assert(fleet.open(dir))
  local header = bytes:find("\0", 1, true)  -- "JAVA PROFILE 1.0.3\0", u4 id size, u8 timestamp
  for i = 1, N do
    local stamped = bytes:sub(1, header + 4) .. string.pack(">i8", 1451501419649 + i) .. bytes:sub(header + 13)
    local done = false
    local entry = assert(store:upload(function()
      if done then return nil end
      done = true
      return stamped
    end, ("dump-%d.hprof"):format(i)))
    fl:ingest(entry.sha256, entry.path, entry.format, { app = "bench", version = "1" })
  end
  fl:close()
end

print(("%-10s %8s %10s %12s %8s"):format("workers", "dumps", "time", "dumps/s", "groups"))
local rates = {}
for _, workers in ipairs { 1, 2 } do
  local dir = "build/bench/fleet-" .. workers
  queue(dir)
  local cmd = {}
  for k = 1, workers do cmd[k] = ("lua5.4 bin/sift worker -q --once --data %s &"):format(dir) end
  local t = assert(common.best(table.concat(cmd, " ") .. " wait", 1, true))
  local fl = assert(fleet.open(dir))
  local st, groups = fl:status(), #fl:groups()
  fl:close()
  assert(st.done == N, ("only %d of %d done"):format(st.done, N))
  rates[workers] = N / t
  print(("%-10d %8d %9.2fs %12.1f %8d"):format(workers, N, t, N / t, groups))
end
print(("2 workers / 1 worker: %.2fx (linear would be 2x; this machine has 2 cores)"):format(rates[2] / rates[1]))
