-- sift growth's and the census's work beside the index they need, as
-- bench/hprof.lua measures it: the index (sift.open), the tree of holder
-- paths growth makes of each dump (heap:path_tree: one C pass over every
-- object), growth of the dump against itself (two dumps opened, their
-- histograms and trees read and matched), and, once the dominator tree is
-- built, the census of threads and of class loaders, and the retained
-- sizes by class (the leak suspects, the histogram and class pages of
-- sift serve).
local sift = require "sift"
local census = require "sift.heap.census"
local growth = require "sift.heap.growth"
local shared = require "sift.heap.index"

-- (the clock on the wall: the passes run on two threads, whose CPU seconds os.clock adds up)
require("sift.paths").older_lua()
local clock = require("cqueues").monotime
local t0 = clock()
local heap = assert(sift.open(arg[1]))
local info = heap:info()
local t1 = clock()
local tree = shared.graph(heap):path_tree("shark")
local t2 = clock()
local report = assert(growth.analyze({ arg[1], arg[1] }))
local t3 = clock()
heap:dominators()
local t4 = clock()
local threads = census.threads(heap)
local t5 = clock()
local loaders = census.loaders(heap)
local t6 = clock()
local by_class = heap:retained_by_class()
local t7 = clock()
local ms = function(a, b) return (b - a) * 1000 // 1 end
print(("objects=%d index_ms=%d tree_ms=%d growth_ms=%d dominators_ms=%d threads_ms=%d loaders_ms=%d by_class_ms=%d "
  .. "nodes=%d grown=%d threads=%d loaders=%d classes=%d")
  :format(info.objects, ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4), ms(t4, t5), ms(t5, t6), ms(t6, t7),
    #tree.parent, #report.classes, #threads, #loaders, #by_class))
