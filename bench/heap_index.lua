-- Index a heap dump as `sift info` does and print what bench/hprof.lua
-- compares: counts, index size and this process's peak memory.
local sift = require "sift"
local heap = assert(sift.open(arg[1]))
local info = heap:info()
local roots = 0
for _, n in pairs(info.roots) do roots = roots + n end
local peak = 0
for line in io.lines("/proc/self/status") do
  peak = tonumber(line:match("^VmHWM:%s*(%d+)")) or peak
end
print(("instances=%d classes=%d roots=%d index_bytes=%d object_bytes=%d objects=%d peak_kb=%d"):format(
  info.objects - info.classes, info.classes, roots, info.index_bytes, info.object_bytes, info.objects, peak))
