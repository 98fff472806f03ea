-- The whole heap analysis in one process, as bench/hprof.lua measures it:
-- index, references (CSR), shortest paths (one BFS), dominator tree and
-- retained sizes; prints each phase's time and the peak memory.
local sift = require "sift"

local function peak_kb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) end
  end
end

-- (the clock on the wall: the passes run on two threads, whose CPU seconds os.clock adds up)
require("sift.paths").older_lua()
local clock = require("cqueues").monotime
local t0 = clock()
local heap = assert(sift.open(arg[1]))
local info = heap:info()
local t1 = clock()
-- a BFS towards 100 objects spread over the heap (most of the graph is visited)
local targets, step = {}, math.max(1, info.objects // 100)
for num = step, info.objects, step do
  if #targets == 100 then break end
  targets[#targets + 1] = heap:object((heap.index:object(num)))
end
local t2 = clock()
local paths = heap:path_to_root(targets)
local t3 = clock()
heap:reference_rules {}
heap.index:build_graph()
local t3b = clock()
local summary = heap:dominators { model = "visualvm" }  -- VisualVM's size model, to compare with it
local t4 = clock()
local top = heap:top(10)
local top_instance = 0  -- VisualVM ranks instances only, not classes
for _, r in ipairs(top) do
  if r.object:kind() ~= "class" then top_instance = r.retained break end
end
local found = 0
for _, p in ipairs(paths) do if p then found = found + 1 end end
print(("objects=%d edges=%d index_ms=%d bfs_ms=%d graph_ms=%d dominators_ms=%d reachable=%d paths=%d "
  .. "top_retained=%d top_instance=%d peak_kb=%d")
  :format(info.objects, heap.index:graph_info().edges, (t1 - t0) * 1000 // 1, (t3 - t2) * 1000 // 1,
    (t3b - t3) * 1000 // 1, (t4 - t3b) * 1000 // 1,
    summary.reachable, found, top[1].retained, top_instance, peak_kb()))
