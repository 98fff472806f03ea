-- Decode + call trees of a trace in one process, for bench/trace.lua:
-- prints the time, the counts and this process's peak memory.
local t0 = os.clock()
local trace = assert(require("sift.trace").open(arg[1]))
local t1 = os.clock()
local info = trace:info()
local peak = 0
for line in io.lines("/proc/self/status") do peak = tonumber(line:match("^VmHWM:%s*(%d+)")) or peak end
print(("decode_ms=%d records=%d nodes=%d peak_kb=%d"):format((t1 - t0) * 1000 // 1, info.records, info.nodes, peak))
