-- The full leak analysis (finders, paths, inspection, grouping, retained
-- sizes, MAT-style suspects) in one process, for bench/hprof.lua.
local sift = require "sift"
local leaks = require "sift.heap.leaks"

-- (the clock on the wall: the index and graph run on two threads, whose CPU seconds os.clock adds up)
require("sift.paths").older_lua()
local clock = require("cqueues").monotime
local t0 = clock()
local heap = assert(sift.open(arg[1]))
local report = leaks.analyze(heap, { finder = "all", suspects = true })
local t1 = clock()
local peak = 0
for line in io.lines("/proc/self/status") do peak = tonumber(line:match("^VmHWM:%s*(%d+)")) or peak end
print(("leaks_ms=%d application_leaks=%d suspects=%d top_suspect_retained=%d peak_kb=%d"):format(
  (t1 - t0) * 1000 // 1, #report.application_leaks, #report.suspects,
  report.suspects[1] and report.suspects[1].retained or 0, peak))
