-- The BMD loop a mobile team runs: crunch a heap dump to ship it from a
-- device, read what the BMD holds, analyse it directly, and decrunch it
-- for another analyser, with names recovered from the app's jar or apk.
--
--   sift run examples/bmd.lua app.hprof [app.apk|app.jar ...]
local sift = require "sift"
local bmd = require "sift.heap.bmd"

local hprof = arg[1]
assert(hprof, "usage: sift run examples/bmd.lua HEAP.hprof [APP.apk|APP.jar ...]")
local archives = { table.unpack(arg, 2) }
local crunched, back = os.tmpname() .. ".bmd", os.tmpname() .. ".hprof"

-- 1. crunch: ids from 1, strings hashed, primitive data dropped
local counts = assert(bmd.crunch(hprof, crunched))
print(("%s: %d -> %d bytes (%.1f%%): %d strings as text, %d hashed, %d instances, %d roots"):format(
  hprof, counts.bytes_in, counts.bytes_out, 100 * counts.bytes_out / counts.bytes_in,
  counts.strings, counts.hashed_strings, counts.instances, counts.roots))

-- 2. what the BMD holds (every record is read and checked)
local info = assert(bmd.info(crunched, { source = hprof }))
print(("BMD of %s: %d classes, %d object arrays, %d primitive arrays, %d legacy records"):format(
  info.header, info.classes, info.object_arrays, info.primitive_arrays, info.legacy))

-- 3. analyse it as any heap: the classes that hold the most, and what
--    keeps the largest object alive
local heap <close> = assert(sift.open(crunched, { strings = archives }))
print("\nlargest classes (names the dictionary did not know are Hash$<hash>):")
for i, row in ipairs(heap:histogram()) do
  if i > 5 then break end
  print(("%10d bytes %7d objects  %s"):format(row.shallow, row.count, row.class))
end
heap:dominators()
local top = heap:top(1)[1]
if top then
  print(("\nretains the most: %s (%d bytes); its path from a GC root:"):format(tostring(top.object), top.retained))
  for _, step in ipairs(heap:path_to_root(top.object) or {}) do
    print(("  %-24s %s"):format(step.root and ("root (" .. step.root .. ")") or ("." .. (step.label or step.name)),
      tostring(step.object)))
  end
end

-- 4. decrunch for VisualVM, MAT or Android Studio
local stats = assert(bmd.decrunch(crunched, back, { strings = archives }))
print(("\n%s: %d bytes of HPROF, %d names recovered, %d left as Hash$<hash>"):format(
  back, stats.bytes_out, stats.recovered, stats.placeholders))
os.remove(crunched)
os.remove(back)
