-- sift waste's work beside the index it needs, as bench/hprof.lua
-- measures it: the index (sift.open), the C pass over every object
-- (heap:waste: strings, primitive arrays, zeros, boxes, and the walk that
-- finds the shown copies' referrers), the collections alone (their own C
-- walk, waste.collections) and the whole report (one walk doing both, the
-- holders, values and bitmaps).
local sift = require "sift"
local waste = require "sift.heap.waste"

-- (the clock on the wall: the passes run on two threads, whose CPU seconds os.clock adds up)
require("sift.paths").older_lua()
local clock = require("cqueues").monotime
local t0 = clock()
local heap = assert(sift.open(arg[1]))
local info = heap:info()
local t1 = clock()
local string_class = heap:class("java.lang.String")
local pass = heap.index:waste("shark", string_class and string_class.number, {}, 20)
local t2 = clock()
local collections = waste.collections(heap)
local t3 = clock()
local report = waste.report(heap)
local t4 = clock()
print(("objects=%d index_ms=%d pass_ms=%d collections_ms=%d report_ms=%d string_groups=%d array_groups=%d "
  .. "collection_classes=%d wasted=%d")
  :format(info.objects, (t1 - t0) * 1000 // 1, (t2 - t1) * 1000 // 1, (t3 - t2) * 1000 // 1, (t4 - t3) * 1000 // 1,
    pass.strings.groups, pass.arrays.groups, #collections, report.totals.duplicate_strings.wasted))
