-- A heap analysis with the index on disk: the big arrays past a threshold
-- become files in a spill directory (unlinked at once, mapped back), as
-- `sift ... --max-memory SIZE --spill DIR` does past 3/4 of SIZE. The
-- answers are those of the in-memory run; only the memory and the time
-- differ.
--
--   sift run examples/spill.lua DUMP [THRESHOLD_BYTES]
local core = require "sift.core"
local sift = require "sift"

local path = assert(arg[1], "usage: sift run examples/spill.lua DUMP [THRESHOLD_BYTES]")
local threshold = tonumber(arg[2]) or 1 << 20

-- the biggest retainers and how long they took
local function top_retainers()
  local t = os.clock()
  local heap <close> = assert(sift.open(path))
  assert(heap:dominators())
  local rows = {}
  for i, r in ipairs(heap:top(3)) do rows[i] = ("%12d  %s"):format(r.retained, tostring(r.object)) end
  return table.concat(rows, "\n"), os.clock() - t, heap:info().objects
end

local in_memory, t1, objects = top_retainers()
local dir = os.tmpname()
os.remove(dir)
assert(core.mkdir(dir))
core.spill(dir, threshold)
local spilled, t2 = top_retainers()
local usage = core.big_usage()
core.spill(nil)
local left_nothing = os.remove(dir)  -- (a directory: fails if a file were left there)

print(in_memory)
print(("in memory: %.2f s; with arrays past %d bytes spilled: %.2f s, %.1f MB on disk at most "
  .. "(%.1f bytes per object), %s"):format(t1, threshold, t2,
  usage.spilled_peak / 2^20, usage.spilled_peak / objects,
  left_nothing and "nothing left in the spill directory" or "FILES LEFT IN " .. dir))
print(spilled == in_memory and "the same top retainers" or "DIFFERENT ANSWERS")
os.exit(spilled == in_memory and left_nothing and 0 or 1)
