-- The whole heap analysis (index, dominator tree, top retainers) with the
-- big arrays past BUDGET bytes spilled to files in DIR, as bench/hprof.lua
-- runs it inside a memory cgroup: prints objects, the time of each phase,
-- the most bytes on disk and the peak memory.
local core = require "sift.core"
local sift = require "sift"
local path, budget, dir = arg[1], tonumber(arg[2]), arg[3]

local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("l"))
  p:close()
  return t
end

core.spill(dir, budget)
local t0 = now()
local heap = assert(sift.open(path))
local info = heap:info()
local t1 = now()
assert(heap:dominators())
local t2 = now()
local top = heap:top(20)
local t3 = now()
local peak_kb
for line in io.lines("/proc/self/status") do peak_kb = peak_kb or tonumber(line:match("^VmHWM:%s*(%d+)")) end
print(("objects=%d spilled_peak=%d top_retained=%d peak_kb=%d index_ms=%d dominators_ms=%d top_ms=%d"):format(
  info.objects, core.big_usage().spilled_peak, top[1].retained, peak_kb, (t1 - t0) * 1000 // 1,
  (t2 - t1) * 1000 // 1, (t3 - t2) * 1000 // 1))
