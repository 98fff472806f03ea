-- The waste reports as sift computed them in Lua before the C pass
-- (csrc/heap/waste.c), kept as an oracle for spec/waste_spec.lua where
-- their answers were right: which strings are equal and how many copies
-- each value has (not what they waste: every copy was charged a whole
-- array, shared or not), arrays of zeros, boxed primitives and
-- collections below capacity (csrc/heap/fill.c now; its rules are data,
-- sift.heap.waste's COLLECTIONS, while these are the functions they
-- replaced). It loops over every instance in Lua: for specs only.
local json = require "sift.json"

local M = {}

-- a field's value, nil when the object has no such field (fields are read
-- with `field`: `size` and the like are sift's methods, not the fields)
local function f(obj, name)
  if obj:has_field(name) then return obj:field(name) end
  return nil
end

local function sorted_by_wasted(list, top)
  table.sort(list, function(a, b)
    if a.wasted ~= b.wasted then return a.wasted > b.wasted end
    return (a.value or a.class or "") < (b.value or b.class or "")
  end)
  local out = json.array {}
  for i = 1, math.min(#list, top or #list) do out[i] = list[i] end
  return out
end

-- the classes of the objects that refer to a sample of objects, most first
local function holders(heap, objects, sample)
  local by = {}
  for i = 1, math.min(#objects, sample or 20) do
    for _, r in ipairs(heap:referrers(objects[i])) do
      local cls = r:as_class()
      local name = cls and ("class " .. cls.name) or r:class_name()
      by[name] = (by[name] or 0) + 1
    end
  end
  local out = json.array {}
  for name, n in pairs(by) do out[#out + 1] = { class = name, count = n } end
  table.sort(out, function(a, b) return a.count > b.count or (a.count == b.count and a.class < b.class) end)
  return out
end

--- Strings with the same value held more than once: `{value, count,
-- bytes (of one copy: the String and its array), wasted ((count - 1) ×
-- bytes), holders (classes referring to a sample of the copies)}`, most
-- wasted first. opts: `min_count` (2), `top` (20), `max_length` (of the
-- value shown, 200).
function M.duplicate_strings(heap, opts)
  opts = opts or {}
  local cls = heap:class("java.lang.String")
  if not cls then return json.array {} end
  local groups = {}
  for s in cls:instances() do
    local value = s:string()
    if value then
      local g = groups[value]
      if not g then
        g = { count = 0, copies = {} }
        groups[value] = g
      end
      g.count = g.count + 1
      if #g.copies < 20 then g.copies[#g.copies + 1] = s end
    end
  end
  local list = {}
  for value, g in pairs(groups) do
    if g.count >= (opts.min_count or 2) then
      local first = g.copies[1]
      local array = f(first, "value")
      local bytes = heap:shallow(first) + (type(array) == "userdata" and heap:shallow(array) or 0)
      list[#list + 1] = { value = value, count = g.count, bytes = bytes, wasted = (g.count - 1) * bytes,
        copies = g.copies }
    end
  end
  local out = sorted_by_wasted(list, opts.top or 20)
  for _, d in ipairs(out) do
    d.holders = holders(heap, d.copies)
    d.copies = nil
    local max = opts.max_length or 200
    if utf8.len(d.value) and utf8.len(d.value) > max then
      d.value = d.value:sub(1, utf8.offset(d.value, max + 1) - 1) .. "…"
    end
  end
  return out
end

-- the ten commonest of a tally {[x] = count} seen at least min times:
-- {[name] = x, count}, most first
local function commonest(tally, name, min)
  local out = json.array {}
  for x, k in pairs(tally) do
    if k >= min then out[#out + 1] = { [name] = x, count = k } end
  end
  table.sort(out, function(a, b) return a.count > b.count or (a.count == b.count and a[name] < b[name]) end)
  while #out > 10 do table.remove(out) end
  return out
end

local PRIMITIVE_ARRAYS = { "boolean[]", "byte[]", "char[]", "short[]", "int[]", "long[]", "float[]", "double[]" }

--- Primitive arrays that hold only zeros (allocated and never written,
-- or cleared): per array type `{class, count, wasted (their bytes),
-- lengths ({length, count}: the most common)}`, most wasted first.
-- Empty arrays are not counted.
function M.zero_arrays(heap)
  -- (not the old rule: a String's value array is left to the strings
  -- report now, so the oracle leaves it out too)
  local values, strings = {}, heap:class("java.lang.String")
  for s in strings and strings:instances() or function() end do
    local v = f(s, "value")
    if type(v) == "userdata" then values[v:id()] = true end
  end
  local list = {}
  for _, name in ipairs(PRIMITIVE_ARRAYS) do
    local cls = heap:class(name)
    if cls then
      local row, lengths = { class = name, count = 0, wasted = 0 }, {}
      for a in cls:instances() do
        local n, bytes = a:length(), a:bytes()
        if n > 0 and bytes and not values[a:id()] and not bytes:find("[^\0]") then  -- (a BMD keeps no array contents: none known)
          row.count = row.count + 1
          row.wasted = row.wasted + heap:shallow(a)
          lengths[n] = (lengths[n] or 0) + 1
        end
      end
      if row.count > 0 then
        row.lengths = commonest(lengths, "length", 1)
        list[#list + 1] = row
      end
    end
  end
  return sorted_by_wasted(list)
end

local BOXES = { "java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte", "java.lang.Character",
  "java.lang.Boolean", "java.lang.Float", "java.lang.Double" }

--- Boxed primitives: per box class `{class, count, bytes, distinct
-- (values), wasted (bytes of the boxes beyond one per value), values (the
-- most repeated: {value, count})}`, most wasted first. Where the values
-- are not in the dump (a BMD), `distinct` is absent and nothing is counted
-- as wasted.
function M.boxed(heap)
  local list = {}
  for _, name in ipairs(BOXES) do
    local cls = heap:class(name)
    if cls then
      local row, by_value, known = { class = name, count = 0, bytes = 0, distinct = 0 }, {}, true
      for b in cls:instances() do
        local v = f(b, "value")
        row.count = row.count + 1
        row.bytes = row.bytes + heap:shallow(b)
        if v == nil then known = false  -- (a BMD drops primitive fields: the values are not known)
        else
          local key = tostring(v)
          if not by_value[key] then row.distinct = row.distinct + 1 end
          by_value[key] = (by_value[key] or 0) + 1
        end
      end
      if not known then row.distinct = nil end
      if row.count > 0 then
        row.wasted = known and (row.count - row.distinct) * (row.bytes // row.count) or 0
        row.values = commonest(by_value, "value", 2)
        list[#list + 1] = row
      end
    end
  end
  return sorted_by_wasted(list)
end

local function length(obj) return type(obj) == "userdata" and obj:length() or nil end

-- how each collection class keeps its array (capacity) and its size

local COLLECTIONS = {
  { "java.util.ArrayList", function(c) return f(c, "elementData") end, function(c) return f(c, "size") end },
  { "java.util.Vector", function(c) return f(c, "elementData") end, function(c) return f(c, "elementCount") end },
  { "java.util.HashMap", function(c) return f(c, "table") end, function(c) return f(c, "size") end },
  { "java.util.HashSet", function(c) local m = f(c, "map") return m and f(m, "table") end,
    function(c) local m = f(c, "map") return m and f(m, "size") end },
  { "java.util.Hashtable", function(c) return f(c, "table") end, function(c) return f(c, "count") end },
  { "java.util.IdentityHashMap", function(c) return f(c, "table") end, function(c) return f(c, "size") and 2 * f(c, "size") end },
  { "java.util.concurrent.ConcurrentHashMap", function(c) return f(c, "table") end, function(c) return f(c, "baseCount") end },
  { "java.util.ArrayDeque", function(c) return f(c, "elements") end, function(c)
      local n, head, tail = length(f(c, "elements")), f(c, "head"), f(c, "tail")
      if not (n and head and tail) then return nil end
      return (tail - head) % n
    end },
  { "android.util.ArrayMap", function(c) return f(c, "mHashes") end, function(c) return f(c, "mSize") end },
  { "androidx.collection.ArrayMap", function(c) return f(c, "mHashes") or f(c, "hashes") end,
    function(c) return f(c, "mSize") or f(c, "size") end },
  { "androidx.collection.SimpleArrayMap", function(c) return f(c, "mHashes") or f(c, "hashes") end,
    function(c) return f(c, "mSize") or f(c, "size") end },
  { "android.util.SparseArray", function(c) return f(c, "mKeys") end, function(c) return f(c, "mSize") end },
  { "androidx.collection.SparseArrayCompat", function(c) return f(c, "mKeys") or f(c, "keys") end,
    function(c) return f(c, "mSize") or f(c, "size") end },
}

--- Collections filled far below their capacity: per collection class
-- `{class, count, capacity, size, fill (size / capacity over all), wasted
-- (the unused share of their arrays' bytes), worst ({id, capacity, size,
-- wasted}: the most wasteful instances)}`, most wasted first. A HashSet
-- (and LinkedHashSet) row is its map's table and size: the HashMap row
-- counts those maps too; a collection with no
-- array yet (capacity 0) wastes nothing. opts: `worst` (instances listed per
-- class, 5).
function M.collections(heap, opts)
  opts = opts or {}
  local list = {}
  for _, spec in ipairs(COLLECTIONS) do
    local cls = heap:class(spec[1])
    if cls then
      local row = { class = spec[1], count = 0, capacity = 0, size = 0, wasted = 0, instances = {} }
      for c in cls:instances { subclasses = true } do
        local array, size = spec[2](c), spec[3](c)
        local capacity = length(array)
        row.count = row.count + 1
        if capacity and capacity > 0 and size then
          local unused = math.max(capacity - size, 0)
          local wasted = heap:shallow(array, opts.model) * unused // capacity
          row.capacity, row.size, row.wasted = row.capacity + capacity, row.size + size, row.wasted + wasted
          if wasted > 0 then
            row.instances[#row.instances + 1] = { object = c, id = ("0x%x"):format(c:id()), capacity = capacity,
              size = size, wasted = wasted }
          end
        end
      end
      if row.count > 0 then
        row.fill = row.capacity > 0 and row.size / row.capacity or nil
        table.sort(row.instances, function(a, b)
          if a.wasted ~= b.wasted then return a.wasted > b.wasted end
          return a.id < b.id
        end)
        row.worst = json.array {}
        for i = 1, math.min(#row.instances, opts.worst or 5) do row.worst[i] = row.instances[i] end
        row.instances = nil
        list[#list + 1] = row
      end
    end
  end
  local out = sorted_by_wasted(list)
  for _, row in ipairs(out) do
    for _, w in ipairs(row.worst) do w.object = nil end
  end
  return out
end

return M
