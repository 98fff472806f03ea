-- What did the JVM allocate? The layout sift infers from a dump (object
-- header, reference size, field placement, java.lang.Class's size, the
-- JDK and whether class data sharing hid mirrors), the largest classes
-- under the three size models (the dump's own, the JVM's, VisualVM's), and, given
-- the text of `jcmd <pid> GC.class_histogram` taken right after the dump,
-- how many classes agree with the JVM to the byte.
--
--   sift run examples/jvm_sizes.lua app.hprof [histogram.txt]
local sift = require "sift"
local hprof = require "sift.heap"

local path, histo_path = arg[1], arg[2]
assert(path, "usage: sift run examples/jvm_sizes.lua DUMP [GC.class_histogram output]")
local heap <close> = assert(sift.open(path))

local l = heap:jvm_layout()
print(("layout: %d-byte headers, %d-byte references, %s field placement, arrays from byte %d, "
  .. "java.lang.Class %d bytes (%s: %d of %d sampled objects sized exactly)"):format(l.header, l.oop,
  l.algorithm == "jdk15" and "JDK 15+" or "JDK 6-14", l.array_base, l.class_size,
  l.inferred and "inferred" or "assumed", l.matched, l.sampled))

print(("JDK %s's @Contended paddings; %d class mirrors followed by a gap%s"):format(l.jdk, l.mirror_gaps,
  l.mirror_gaps >= 8 and " (class data sharing: the JVM counts archived mirrors the dump leaves out)" or ""))

local function sizes(model)
  local by = {}
  for _, r in ipairs(heap:histogram(model)) do by[r.class] = r.shallow end
  return by
end
local dump_sizes, visualvm_sizes = sizes("shark"), sizes("visualvm")
print(("\n%14s %14s %14s %10s  %s"):format("JVM bytes", "dump bytes", "VisualVM", "instances", "class"))
for i, r in ipairs(heap:histogram("jvm")) do
  if i > 8 then break end
  print(("%14d %14s %14s %10d  %s"):format(r.shallow, dump_sizes[r.class] or "-", visualvm_sizes[r.class] or "-",
    r.count, r.class))
end

if histo_path then  -- "   1:   5306   466704  [B (java.base@17)"
  local jvm = {}
  for count, bytes, name in assert(io.open(histo_path)):read("a"):gmatch("\n%s*%d+:%s+(%d+)%s+(%d+)%s+(%S+)") do
    name = hprof.normalize((name:gsub("/0x", "+0x")))  -- hidden classes: Foo$$Lambda$1/0x... in jcmd
    local r = jvm[name] or { 0, 0 }
    jvm[name] = { r[1] + tonumber(count), r[2] + tonumber(bytes) }
  end
  local same, total = 0, 0
  for _, r in ipairs(heap:histogram("jvm")) do
    total = total + 1
    local j = jvm[r.class]
    if j and j[1] == r.count and j[2] == r.shallow then same = same + 1
    elseif j then print(("differs: %s: JVM %d objects %d bytes, sift %d, %d"):format(r.class, j[1], j[2], r.count, r.shallow)) end
  end
  print(("\n%d of %d classes have the JVM's own count and bytes"):format(same, total))
end
