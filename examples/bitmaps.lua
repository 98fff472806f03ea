-- The pictures an Android heap dump holds: every Bitmap with its size and
-- config, the largest drawn as a PNG (pixels in the Java heap up to Android
-- 7; on newer ones only a dump taken with `am dumpheap -b png` has them),
-- and the bitmaps held twice.
-- Usage: sift run examples/bitmaps.lua DUMP [OUT_DIR] [--mapping MAP]
--   OUT_DIR (made private: 0700, its file 0600) receives the largest picture as ID.png
local sift = require "sift"
local bitmaps = require "sift.heap.bitmaps"
local size = require "sift.size"

local path, out_dir, mapping
for i = 1, #arg do
  if arg[i - 1] == "--mapping" then mapping = arg[i]
  elseif arg[i] ~= "--mapping" then
    if not path then path = arg[i] else out_dir = arg[i] end
  end
end
assert(path, "usage: sift run examples/bitmaps.lua DUMP [OUT_DIR] [--mapping MAP]")
local heap <close> = assert(sift.open(path, { mapping = mapping }))

local list = heap:bitmaps()  -- largest pixel buffer first
print(("%d bitmaps"):format(#list))
for i, b in ipairs(list) do
  if i > 5 then print(("  … and %d more"):format(#list - 5)) break end
  print(("  %s %dx%d %s, %s bytes of pixels (%s), %s%s"):format(b.id, b.width or 0, b.height or 0,
    b.config or b.format or b.dump_format or "?", size.grouped(b.bytes or 0), b.pixels,
    b.retained and ("retains " .. size.grouped(b.retained) .. " bytes") or "no GC root reaches it",
    b.note and ("; " .. b.note) or ""))
end

-- the largest picture, written as a PNG a viewer opens
local first = list[1]
if first and out_dir then
  local png, why = first:png()
  if png then
    local core = require "sift.core"
    assert(core.private(out_dir, "dir"))  -- (0700, and the file 0600: other people's pictures)
    local file = ("%s/%s.png"):format(out_dir, first.id)
    assert(core.private(file))
    local f <close> = assert(io.open(file, "wb"))
    f:write(png)
    print(("wrote %s (%dx%d, %s bytes)"):format(file, first.width, first.height, size.grouped(#png)))
  else
    print("no picture of " .. first.id .. ": " .. why)
  end
end

-- bitmaps held more than once (the same pixels), as ahat groups them
for _, g in ipairs(bitmaps.duplicates(heap, list)) do
  print(("%d copies of a %dx%d picture (%s buffer%s): %s bytes wasted: %s"):format(g.count, g.width, g.height,
    g.buffers, g.buffers == 1 and "" or "s", size.grouped(g.wasted), table.concat(g.bitmaps, ", ")))
end
