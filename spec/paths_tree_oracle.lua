-- The tree of holder paths that sift.heap.growth matches across dumps
-- (heap:path_tree, csrc/heap/paths_tree.c), made again in Lua from the
-- rules docs/heap.md states, one object at a time: a BFS from the GC roots
-- over the references path finding may follow (never and skipped ones
-- left out; low-priority roots and references after the rest, an object
-- reached again at normal priority promoted), each object held by the
-- first such reference from its parent, and a node per parent node,
-- reference and class, runs of one class by one reference folded. It
-- loops over every object and reference in Lua: for specs only.
local sift_heap = require "sift.heap"

local M = {}

local NEVER, SKIP, LOW = 1, 2, 4

-- the root kinds the default rules visit last
local function low_roots()
  local low = {}
  for _, r in ipairs(sift_heap.default_rules) do
    if r.root and r.rule == "low" then low[r.root] = true end
  end
  return low
end

-- a ring-less queue: a table and two cursors
local function queue() return { head = 1, tail = 0 } end
local function push(q, v) q.tail = q.tail + 1; q[q.tail] = v end
local function pop(q)
  local v = q[q.head]
  q[q.head] = nil
  q.head = q.head + 1
  return v
end
local function empty(q) return q.head > q.tail end

--- Each object's parent on its shortest strong path (0 for a root; nil
-- unreached), and the root records of objects of the dump, in file order.
local function search(heap)
  local index = heap.index
  local low_kind = low_roots()
  local parent, low, done = {}, {}, {}
  local q, lq = queue(), queue()
  local records = {}
  for _, r in ipairs(index:roots()) do
    local num = index:find(r.id)
    if num then records[#records + 1] = { num = num, kind = r.kind, low = low_kind[r.kind] or false } end
  end
  for _, r in ipairs(records) do
    local v = r.num
    if r.low then
      if parent[v] == nil then
        low[v] = true
        push(lq, v)
        parent[v] = 0
      end
    elseif parent[v] == nil or low[v] then
      low[v] = nil
      push(q, v)
      parent[v] = 0
    end
  end
  while not (empty(q) and empty(lq)) do
    local u = not empty(q) and pop(q) or pop(lq)
    if not done[u] then
      done[u] = true
      for _, ref in ipairs(index:refs(u)) do
        local c, clow = ref.target, low[u] or (ref.flags & LOW) ~= 0
        if ref.flags & (NEVER | SKIP) == 0 then
          if parent[c] == nil then
            parent[c] = u
            low[c] = clow or nil
            push(clow and lq or q, c)
          elseif not clow and low[c] and not done[c] then
            parent[c] = u
            low[c] = nil
            push(q, c)
          end
        end
      end
    end
  end
  return parent, records
end

-- the label path_tree gives the objects of an object: kind and class
local function object_label(heap, v)
  local _, kind, cls, _, _, elem = heap.index:object(v)
  if kind == "primitive_array" or kind == "primitive_array_nodata" then return "primitive array", elem end
  local names = { instance = "instance", class = "class", object_array = "array" }
  return names[kind], cls or false
end

--- The tree as heap:path_tree(model) gives it: arrays by node number
-- (parent, ref, index, kind, class, first, count, bytes) and unreached.
function M.path_tree(heap, model)
  local index = heap.index
  local n = index:count()
  local parent, records = search(heap)
  local t = { parent = {}, ref = {}, index = {}, kind = {}, class = {}, first = {}, count = {}, bytes = {},
              unreached = 0 }
  local by_key, node = {}, {}
  local function node_for(p, ref, idx, kind, cls, obj)
    local key = table.concat({ p, ref, idx, kind, tostring(cls) }, "\0")
    local m = by_key[key]
    if not m then
      m = #t.parent + 1
      by_key[key] = m
      t.parent[m], t.ref[m], t.index[m], t.kind[m], t.class[m] = p, ref, idx, kind, cls
      t.first[m], t.count[m], t.bytes[m] = obj, 0, 0
    end
    return m
  end
  -- how each object is held: the first followable reference from its parent
  local function holding(v)
    for _, ref in ipairs(index:refs(parent[v])) do
      if ref.target == v and ref.flags & (NEVER | SKIP) == 0 then
        local idx = (ref.kind == "field" or ref.kind == "static") and ref.index or 0
        return ref.kind, idx
      end
    end
  end
  -- a seeded object's node takes the kind of its first root record that
  -- is not low priority, else of its first record
  for pass = 1, 2 do
    for _, r in ipairs(records) do
      local v = r.num
      if parent[v] == 0 and not node[v] and (pass == 2 or not r.low) then
        local kind, cls = object_label(heap, v)
        node[v] = node_for(0, "root " .. r.kind, 0, kind, cls, v)
      end
    end
  end
  for v = 1, n do  -- then each object from the first known node above it
    if parent[v] ~= nil then
      local stack, u = {}, v
      while not node[u] do
        stack[#stack + 1] = u
        u = parent[u]
      end
      for k = #stack, 1, -1 do
        local w = stack[k]
        local pn = node[parent[w]]
        local ref, idx = holding(w)
        local kind, cls = object_label(heap, w)
        if t.parent[pn] ~= 0 and t.ref[pn] == ref and t.index[pn] == idx and t.kind[pn] == kind
           and t.class[pn] == cls then
          node[w] = pn  -- a run: the next cell of a list joins its head's node
        else
          node[w] = node_for(pn, ref, idx, kind, cls, w)
        end
      end
    end
  end
  for v = 1, n do
    local m = node[v]
    if m then
      t.count[m] = t.count[m] + 1
      t.bytes[m] = t.bytes[m] + index:shallow(v, model)
    else
      t.unreached = t.unreached + 1
    end
  end
  return t
end

return M
