-- Why are the instances of a class still alive, and what would freeing
-- them give back? Shortest strong paths from the GC roots (merged where
-- they share a prefix), retained sizes, and who else points at them.
--
--   sift run examples/why_alive.lua app.hprof com.example.MainActivity [--model jvm]
local sift = require "sift"

local path, class_name = arg[1], arg[2]
local model = arg[3] == "--model" and arg[4] or "shark"
assert(path and class_name, "usage: sift run examples/why_alive.lua DUMP CLASS [--model shark|jvm]")

local heap <close> = assert(sift.open(path))
local cls = assert(heap:class(class_name), "no class named " .. class_name)
local objs = {}
for obj in cls:instances() do objs[#objs + 1] = obj end
print(("%d instances of %s"):format(#objs, cls.name))

heap:dominators { model = model }
-- what freeing them all gives back: instances that another of them
-- dominates are already inside that one's retained size
local member, total = {}, 0
for _, obj in ipairs(objs) do member[obj:id()] = true end
for _, obj in ipairs(objs) do
  local d, inside = heap:idom(obj), false
  while d and not inside do
    inside = member[d:id()] or false
    d = heap:idom(d)
  end
  if not inside then total = total + (heap:retained(obj) or 0) end
end
print(("together they retain %d bytes (model %s)\n"):format(total, model))

-- the merged paths, as an indented tree
local function show(nodes, depth)
  for _, node in ipairs(nodes) do
    local st = node.step
    print(("%s%s %s%s"):format(("  "):rep(depth), st.label or "", tostring(st.object),
      node.count > 1 and ("  (%d below)"):format(node.count) or ""))
    show(node.children, depth + 1)
  end
end
show(heap:paths(objs), 0)

local first = objs[1]
if first then
  print(("\n%s is referred to by:"):format(tostring(first)))
  for _, r in ipairs(heap:referrers(first)) do print("  " .. tostring(r)) end
  local idom, why = heap:idom(first)
  print(("its immediate dominator: %s"):format(idom and tostring(idom) or why))
end
