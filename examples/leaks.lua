-- Find leaks the way LeakCanary does, and add a rule of your own.
--
--   sift run examples/leaks.lua app.hprof            (KeyedWeakReference and Android lifecycles)
--   sift run examples/leaks.lua app.hprof Session    (also: Session objects whose 'closed' is true)
local sift = require "sift"
local leaks = require "sift.heap.leaks"

local path, extra = arg[1], arg[2]
assert(path, "usage: sift run examples/leaks.lua DUMP [CLASS]")
local heap <close> = assert(sift.open(path))

-- an inspector is a few lines: label what you know, say whether it leaks
local inspectors = { table.unpack(leaks.inspectors) }
inspectors[#inspectors + 1] = { name = "closed flag", fn = function(obj, report)
  local ok, closed = pcall(obj.field, obj, "closed")
  if ok and closed == true then report.leaking[#report.leaking + 1] = "closed is true" end
end }

local finder = "all"
if extra then  -- a finder is any function returning the objects that should be dead
  finder = leaks.where(function(obj)
    local ok, closed = pcall(obj.field, obj, "closed")
    return ok and closed == true
  end, extra)
end

-- Android's known library leaks for this dump's SDK and manufacturer
-- apply by default; your own go in `library`
local known = require "sift.heap.known_leaks"
local meta = leaks.metadata(heap)
if meta.android then
  print(("%d known library-leak patterns apply to SDK %s (%s)"):format(
    #known.rules(meta), tostring(meta.sdk_int), tostring(meta.manufacturer)))
end

local report = leaks.analyze(heap, { finder = finder, inspectors = inspectors })
print(leaks.render(report))
