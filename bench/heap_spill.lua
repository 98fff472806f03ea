-- The whole heap analysis (index, dominator tree, top retainers) with the
-- big arrays past BUDGET bytes spilled to files in DIR, as bench/hprof.lua
-- runs it inside a memory cgroup: prints objects, the most bytes on disk
-- and the peak memory.
local core = require "sift.core"
local sift = require "sift"
local path, budget, dir = arg[1], tonumber(arg[2]), arg[3]

core.spill(dir, budget)
local heap = assert(sift.open(path))
local info = heap:info()
assert(heap:dominators())
local top = heap:top(20)
local peak_kb
for line in io.lines("/proc/self/status") do peak_kb = peak_kb or tonumber(line:match("^VmHWM:%s*(%d+)")) end
print(("objects=%d spilled_peak=%d top_retained=%d peak_kb=%d"):format(info.objects,
  core.big_usage().spilled_peak, top[1].retained, peak_kb))
