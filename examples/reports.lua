-- The reports a heap expert opens after the leak trace, from Lua: wasted
-- memory (MAT's duplicate strings, duplicate primitive arrays, collection
-- fill, arrays of zeros, boxes; each counted as its fix would free it), the threads holding the most through their locals, classes two
-- loaders defined, and, given a series of dumps of one process, what grows
-- at every step and what holds it.
-- Usage: sift run examples/reports.lua DUMP [LATER_DUMP...]
local sift = require "sift"
local waste = require "sift.heap.waste"
local census = require "sift.heap.census"
local growth = require "sift.heap.growth"

assert(arg[1], "usage: sift run examples/reports.lua DUMP [LATER_DUMP...]")
local heap <close> = assert(sift.open(arg[1]))

local dup = waste.duplicate_strings(heap, { top = 3 })
for _, d in ipairs(dup) do print(("duplicate string %q: %d copies, %d bytes wasted"):format(d.value, d.count, d.wasted)) end
for _, d in ipairs(waste.duplicate_arrays(heap, { top = 1 })) do
  print(("duplicate %s[%d]: %d copies, %d bytes wasted"):format(d.class:sub(1, -3), d.length, d.count, d.wasted))
end
print("(wasted: " .. waste.RULES.duplicate_strings .. ")")
local fullest = waste.collections(heap)[1]
local w = fullest and fullest.worst[1]
if w then print(("%s: %d instances, worst holds %d of %d"):format(fullest.class, fullest.count, w.size, w.capacity)) end

local top
for _, t in ipairs(census.threads(heap)) do
  if not top or t.held > top.held then top = t end
end
if top then print(("thread %q holds %d bytes through %d locals"):format(top.name or "?", top.held, #top.locals)) end
local _, duplicates = census.loaders(heap)
print(("%d class(es) defined by more than one loader"):format(#duplicates))

if #arg >= 2 then
  local report = assert(growth.analyze(arg))
  for _, g in ipairs(report.classes) do
    print(("grows at every step: %s, +%s instances per step"):format(g.class, table.concat(g.deltas, ", +")))
    if g.reason then print("  no holder: " .. g.reason) end  -- (else g.holder.text, grouped below)
  end
  for _, h in ipairs(report.holders) do print("  held through " .. h.text) end
  if #report.classes == 0 then print("nothing grows at every step") end
end
