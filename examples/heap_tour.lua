-- A tour of a heap dump: what it holds, the biggest classes, one class's
-- instances with their fields, strings, arrays and GC roots.
--
--   sift run examples/heap_tour.lua app.hprof [ClassName] [--mapping proguard.map]
local sift = require "sift"

local path, class_name, mapping = nil, nil, nil
local i = 1
while arg[i] do
  if arg[i] == "--mapping" then mapping, i = arg[i + 1], i + 2
  elseif not path then path, i = arg[i], i + 1
  else class_name, i = arg[i], i + 1 end
end
assert(path, "usage: sift run examples/heap_tour.lua DUMP [CLASS] [--mapping FILE]")

local heap <close> = assert(sift.open(path, { mapping = mapping }))
local info = heap:info()
print(("%s: HPROF %s, %d-byte ids, %d objects (%d instances, %d object arrays, %d primitive arrays), %d classes")
  :format(path, info.version, info.id_size, info.objects, info.instances, info.object_arrays,
    info.primitive_arrays, info.classes))
for _, w in ipairs(info.warnings) do print("warning: " .. w) end

print("\nlargest classes by shallow size:")
for n, row in ipairs(heap:histogram()) do
  if n > 8 then break end
  print(("  %12d bytes %8d x %s"):format(row.shallow, row.count, row.class))
end

-- the class asked for, or the first application-looking class with instances
local cls = class_name and heap:class(class_name)
if not cls then
  for c in heap:classes() do
    if not c.name:match("^java") and not c.name:match("^sun%.") and not c.name:match("^jdk%.")
       and not c.name:match("%[%]$") and c:instance_count() > 0 then cls = c break end
  end
end
if cls then
  print(("\n%s: %d instances, %d-byte instances, superclass %s"):format(
    tostring(cls), cls:instance_count(), cls.instance_size, tostring(cls.super)))
  local shown = 0
  for obj in cls:instances() do
    print("  " .. tostring(obj))
    for name, value, owner in obj:fields() do
      local text = type(value) == "userdata" and (value:string() and ("%q"):format(value:string()) or tostring(value))
        or tostring(value)
      print(("    %-24s %s  (%s)"):format(name, text, owner.name))
    end
    shown = shown + 1
    if shown == 3 then break end
  end
end

local kinds = {}
for _, root in ipairs(heap:roots()) do kinds[root.kind] = (kinds[root.kind] or 0) + 1 end
print("\nGC roots:")
for kind, n in pairs(kinds) do print(("  %-18s %d"):format(kind, n)) end
