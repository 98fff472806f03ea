-- sift waste's work beside the index it needs, as bench/hprof.lua
-- measures it: the index (sift.open), the C pass over every object
-- (heap:waste: strings, primitive arrays, zeros, boxes) and the whole
-- report (the pass again, plus the collections, holders and values).
local sift = require "sift"
local waste = require "sift.heap.waste"

local clock = os.clock
local t0 = clock()
local heap = assert(sift.open(arg[1]))
local info = heap:info()
local t1 = clock()
local string_class = heap:class("java.lang.String")
local pass = heap.index:waste("shark", string_class and string_class.number, {}, 20)
local t2 = clock()
local report = waste.report(heap)
local t3 = clock()
print(("objects=%d index_ms=%d pass_ms=%d report_ms=%d string_groups=%d array_groups=%d wasted=%d")
  :format(info.objects, (t1 - t0) * 1000 // 1, (t2 - t1) * 1000 // 1, (t3 - t2) * 1000 // 1,
    pass.strings.groups, pass.arrays.groups, report.totals.duplicate_strings.wasted))
