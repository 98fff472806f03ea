--- Memory a heap wastes, the reports Eclipse MAT files under "Java Basics"
-- and "Java Collections": duplicate strings, duplicate primitive arrays,
-- collections filled far below their capacity, primitive arrays that hold
-- only zeros, and boxed primitives in bulk; and Android bitmaps held twice
-- (ahat's duplicate bitmaps, `sift.heap.bitmaps`). Each counts what its fix would
-- free (`M.RULES` says how, and every report carries its rule), with
-- shallow sizes under a size model (as `sift histogram --model` counts
-- them). The passes over every object are C (heap:waste, csrc/heap/waste.c);
-- this module picks, orders and names what a person reads.
--
--     local waste = require "sift.heap.waste"
--     for _, d in ipairs(waste.duplicate_strings(heap)) do print(d.count, d.wasted, d.value) end
-- @module sift.heap.waste

local json = require "sift.json"
local bitmaps = require "sift.heap.bitmaps"
local object_at = require("sift.heap.index").object_at

local M = {}

--- What each report counts as wasted, as its output states it.
M.RULES = {
  duplicate_strings = "freed if deduplicated: the String objects of every copy but one, and each distinct "
    .. "value array but the kept copy's (copies made with new String(s) share one array: it counts once)",
  duplicate_arrays = "freed if deduplicated: every copy but one of a primitive array with the same type and "
    .. "content (Strings' value arrays and arrays of zeros are counted in their own reports, not here)",
  duplicate_bitmaps = bitmaps.RULE,
  collections = "the unused share of each collection's array: its bytes x (capacity - size) / capacity",
  zero_arrays = "the whole of every non-empty primitive array that holds only zeros (a String's value array "
    .. "is left to the strings report)",
  boxed = "every box beyond the first of each distinct value (its shallow size)",
}

local function sorted_by_wasted(list, top, key)
  key = key or function(x) return x.value or x.class or "" end
  table.sort(list, function(a, b)
    if a.wasted ~= b.wasted then return a.wasted > b.wasted end
    return key(a) < key(b)
  end)
  local out = json.array {}
  for i = 1, math.min(#list, top or #list) do out[i] = list[i] end
  return out
end

-- the classes of the objects that refer to a sample of the copies, most
-- first: `referrers` lists the object numbers referring to each (the C
-- pass finds them in one walk, as heap:referrers would one by one)
local function holders(heap, referrers)
  local by = {}
  for _, list in ipairs(referrers) do
    for _, num in ipairs(list) do
      local r = object_at(heap, num)
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

local BOXES = { "java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte", "java.lang.Character",
  "java.lang.Boolean", "java.lang.Float", "java.lang.Double" }

--- How each collection class keeps its array (its capacity is the array's
-- length) and its size, as data the C pass reads (csrc/heap/fill.c): a
-- class and its subclasses; `array` and `size`, fields tried in turn (the
-- first whose reference is not null; the first integral field present);
-- `via`, a field whose object holds them (a HashSet's map); `times`, what
-- the size counts per entry (IdentityHashMap keeps key and value side by
-- side); `head` and `tail`: a ring buffer, its size (tail - head) modulo
-- the capacity.
M.COLLECTIONS = {
  { class = "java.util.ArrayList", array = { "elementData" }, size = { "size" } },
  { class = "java.util.Vector", array = { "elementData" }, size = { "elementCount" } },
  { class = "java.util.HashMap", array = { "table" }, size = { "size" } },
  { class = "java.util.HashSet", via = "map", array = { "table" }, size = { "size" } },
  { class = "java.util.Hashtable", array = { "table" }, size = { "count" } },
  { class = "java.util.IdentityHashMap", array = { "table" }, size = { "size" }, times = 2 },
  { class = "java.util.concurrent.ConcurrentHashMap", array = { "table" }, size = { "baseCount" } },
  { class = "java.util.ArrayDeque", array = { "elements" }, head = "head", tail = "tail" },
  { class = "android.util.ArrayMap", array = { "mHashes" }, size = { "mSize" } },
  { class = "androidx.collection.ArrayMap", array = { "mHashes", "hashes" }, size = { "mSize", "size" } },
  { class = "androidx.collection.SimpleArrayMap", array = { "mHashes", "hashes" }, size = { "mSize", "size" } },
  { class = "android.util.SparseArray", array = { "mKeys" }, size = { "mSize" } },
  { class = "androidx.collection.SparseArrayCompat", array = { "mKeys", "keys" }, size = { "mSize", "size" } },
}

-- the rules of the classes in this dump, with their class numbers
local function collection_rules(heap)
  local rules, names = {}, {}
  for _, spec in ipairs(M.COLLECTIONS) do
    local cls = heap:class(spec.class)
    if cls then
      local rule = { class = cls.number }
      for k, v in pairs(spec) do
        if k ~= "class" then rule[k] = v end
      end
      rules[#rules + 1], names[#names + 1] = rule, spec.class
    end
  end
  return rules, names
end

-- the C pass over every object (csrc/heap/waste.c), under opts.model (or
-- the heap's), with `top` rows per set and any that tie with the last, and
-- `worst` instances per collection class; collections_only: no other
-- report (one pass)
local function scan(heap, opts, collections_only)
  local model = opts.model or heap._model or "shark"
  if model == "jvm" then heap:jvm_layout() end
  local string_class = not collections_only and heap:class("java.lang.String") or nil
  local classes, names = {}, {}
  for _, name in ipairs(collections_only and {} or BOXES) do
    local c = heap:class(name)
    if c then classes[#classes + 1], names[#names + 1] = c.number, name end
  end
  local rules, rule_names = collection_rules(heap)
  local r = heap.index:waste(model, string_class and string_class.number, classes, opts.top or 20, rules,
    opts.worst or 5, not collections_only)
  r.box_names, r.collection_names, r.model = names, rule_names, model
  return r
end

local function cut(value, max)
  if utf8.len(value) and utf8.len(value) > max then
    return value:sub(1, utf8.offset(value, max + 1) - 1) .. "…"
  end
  return value
end

local function strings_of(heap, r, opts)
  local list = {}
  for _, g in ipairs(r.strings.rows) do
    if g.count >= (opts.min_count or 2) then
      list[#list + 1] = { value = object_at(heap, g.copies[1]):string() or "", count = g.count, arrays = g.arrays,
        bytes = g.bytes, wasted = g.wasted, referrers = g.referrers }
    end
  end
  local out = sorted_by_wasted(list, opts.top or 20)
  for _, d in ipairs(out) do
    d.holders = holders(heap, d.referrers)
    d.referrers = nil
    d.value = cut(d.value, opts.max_length or 200)
  end
  return out
end

--- Strings with the same value held more than once (the same bytes and
-- encoding): `{value, count (String objects), arrays (distinct value
-- arrays among them), bytes (of one copy: the String and its array),
-- wasted (M.RULES.duplicate_strings), holders (classes referring to a
-- sample of the copies)}`, most wasted first. opts: `min_count` (2), `top`
-- (20), `max_length` (of the value shown, 200), `model` (the heap's).
function M.duplicate_strings(heap, opts)
  opts = opts or {}
  return strings_of(heap, scan(heap, opts), opts)
end

--- The first elements of an array as text, `{1, 2, 3, …}`: what tells
-- two groups of the same type and length apart.
local PREVIEW = 8
local function preview(array)
  local shown = {}
  for i = 1, math.min(PREVIEW, array:length()) do
    local v = array:get(i)
    shown[i] = math.type(v) == "float" and ("%.17g"):format(v) or tostring(v)
  end
  return "{" .. table.concat(shown, ", ") .. (array:length() > PREVIEW and ", …}" or "}")
end

local function arrays_of(heap, r, opts)
  local list = {}
  for _, g in ipairs(r.arrays.rows) do
    list[#list + 1] = { class = g.type .. "[]", length = g.length, count = g.count, bytes = g.bytes,
      wasted = g.wasted, first = g.copies[1], referrers = g.referrers }
  end
  local out = sorted_by_wasted(list, opts.top or 20, function(x) return ("%s %020d"):format(x.class, x.length) end)
  for _, d in ipairs(out) do
    d.holders = holders(heap, d.referrers)
    d.preview = preview(object_at(heap, d.first))
    d.first, d.referrers = nil, nil
  end
  return out
end

--- Primitive arrays with the same type and content held more than once
-- (not Strings' values, not arrays of zeros): `{class, length, count,
-- bytes (one copy), wasted (M.RULES.duplicate_arrays), preview (the first
-- elements as text), holders}`, most
-- wasted first. opts: `top` (20), `model`.
function M.duplicate_arrays(heap, opts)
  opts = opts or {}
  return arrays_of(heap, scan(heap, opts), opts)
end

-- the rows of the collections the C pass measured
local function collections_of(r)
  local list = {}
  for i, c in ipairs(r.collections) do
    if c.count > 0 then
      local worst = json.array {}
      for k, w in ipairs(c.worst) do
        worst[k] = { id = ("0x%x"):format(w.id), capacity = w.capacity, size = w.size, wasted = w.wasted }
      end
      list[#list + 1] = { class = r.collection_names[i], count = c.count, capacity = c.capacity, size = c.size,
        wasted = c.wasted, fill = c.capacity > 0 and c.size / c.capacity or nil, worst = worst }
    end
  end
  return sorted_by_wasted(list)
end

--- Collections filled far below their capacity (M.COLLECTIONS says how
-- each keeps its array and size): per collection class `{class, count,
-- capacity, size, fill (size / capacity over all), wasted (the unused
-- share of their arrays' bytes), worst ({id, capacity, size, wasted}: the
-- most wasteful instances, then by id)}`, most wasted first. A HashSet
-- (and LinkedHashSet) row is its map's table and size: the HashMap row
-- counts those maps too; a collection with no array yet (capacity 0)
-- wastes nothing. opts: `worst` (instances listed per class, 5), `model`.
function M.collections(heap, opts)
  opts = opts or {}
  return collections_of(scan(heap, opts, true))
end


local function zeros_of(r)
  local list = {}
  for _, z in ipairs(r.zeros) do
    local lengths = json.array {}
    for i, l in ipairs(z.lengths) do lengths[i] = { length = l.length, count = l.count } end
    list[#list + 1] = { class = z.type .. "[]", count = z.count, wasted = z.wasted, lengths = lengths }
  end
  return sorted_by_wasted(list)
end

--- Primitive arrays that hold only zeros (allocated and never written,
-- or cleared), Strings' values apart: per array type `{class, count,
-- wasted (their bytes), lengths ({length, count}: the ten commonest)}`,
-- most wasted first. Empty arrays are not counted. opts: `model`.
function M.zero_arrays(heap, opts)
  return zeros_of(scan(heap, opts or {}))
end

local UNPACK = { int = ">i4", long = ">i8", short = ">i2", byte = ">i1", float = ">f", double = ">d" }

-- a box's value as its text (its field's raw bytes, big-endian)
local function box_text(type_name, raw)
  if type_name == "boolean" then return tostring(raw:byte() ~= 0) end
  if type_name == "char" then
    local c = string.unpack(">I2", raw)
    return utf8.char((c >= 0xD800 and c < 0xE000) and 0xFFFD or c)
  end
  return tostring((string.unpack(UNPACK[type_name], raw)))
end

local function boxes_of(r)
  local list = {}
  for i, b in ipairs(r.boxes) do
    if b.count > 0 then
      local values = json.array {}
      for k, v in ipairs(b.values) do values[k] = { value = box_text(b.type, v.raw), count = v.count } end
      table.sort(values, function(x, y) return x.count > y.count or (x.count == y.count and x.value < y.value) end)
      list[#list + 1] = { class = r.box_names[i], count = b.count, bytes = b.bytes, distinct = b.distinct,
        wasted = b.wasted or 0, values = values }
    end
  end
  return sorted_by_wasted(list)
end

--- Boxed primitives: per box class `{class, count, bytes, distinct
-- (values), wasted (M.RULES.boxed: the boxes beyond one per value), values
-- (the ten most repeated, twice or more: {value, count})}`, most wasted
-- first. Where the values are not in the dump (a BMD), `distinct` is
-- absent and nothing is counted as wasted. opts: `model`.
function M.boxed(heap, opts)
  return boxes_of(scan(heap, opts or {}))
end

--- Android bitmaps with the same size, config and pixels
-- (`sift.heap.bitmaps.duplicates`, M.RULES.duplicate_bitmaps): its groups
-- (all of them, most wasted first) and their total waste.
local function bitmaps_of(heap, opts)
  local groups, wasted = bitmaps.duplicates(heap, nil, { model = opts.model or heap._model or "shark" }), 0
  for _, g in ipairs(groups) do wasted = wasted + g.wasted end
  return groups, wasted
end

--- Every report from one pass: `{model, rules (M.RULES), totals
-- ({groups, wasted} of every duplicate set, shown or not),
-- duplicate_strings, duplicate_arrays, duplicate_bitmaps (the first `top`
-- of `sift.heap.bitmaps.duplicates`), collections, zero_arrays, boxed}`.
-- opts as the reports take them.
function M.report(heap, opts)
  opts = opts or {}
  local r = scan(heap, opts)
  local dup_bitmaps, bitmaps_wasted = bitmaps_of(heap, { model = r.model })
  local shown = json.array {}
  for i = 1, math.min(#dup_bitmaps, opts.top or 20) do shown[i] = dup_bitmaps[i] end
  return { model = r.model, rules = M.RULES,
    totals = { duplicate_strings = { groups = r.strings.groups, wasted = r.strings.wasted },
      duplicate_arrays = { groups = r.arrays.groups, wasted = r.arrays.wasted },
      duplicate_bitmaps = { groups = #dup_bitmaps, wasted = bitmaps_wasted } },
    duplicate_strings = strings_of(heap, r, opts), duplicate_arrays = arrays_of(heap, r, opts),
    duplicate_bitmaps = shown, collections = collections_of(r), zero_arrays = zeros_of(r), boxed = boxes_of(r) }
end

return M
