--- Object sizes as the JVM lays objects out, for `--model jvm`.
--
-- An HPROF dump states an instance's field bytes (references as ids) but
-- not what the JVM allocated: the object header (12 bytes with compressed
-- class pointers, 16 without, 8 on a 32-bit JVM), references of 4 bytes
-- under compressed oops, the holes field alignment leaves, the array
-- header, and a class mirror's java.lang.Class part and static fields.
-- HotSpot's `GC.class_histogram` counts those bytes; this module computes
-- them from the dump so that `sift histogram --model jvm` gives the same.
--
-- Which JVM wrote the dump is not recorded, so the layout is inferred: a
-- dump taken after a full GC holds objects packed in address order, and the
-- distance from one object's id (its address) to the next is its size. Each
-- candidate layout (header, reference size, field layout algorithm of JDK
-- 15+ or of JDK 6-14) predicts sizes for a sample of objects; the one whose
-- predictions match the most distances wins. The size of java.lang.Class
-- (with the fields the JVM injects) is read the same way from the class
-- mirrors that have no static fields.
-- @module sift.heap.jvm_layout

local M = {}

local PRIMITIVE = { boolean = 1, byte = 1, char = 2, short = 2, int = 4, float = 4, long = 8, double = 8 }

local function align(n, a) return (n + a - 1) // a * a end

--- {======================================================
-- Field layouts
-- =======================================================

-- JDK 15+ (HotSpot's FieldLayoutBuilder): the superclass's fields keep
-- their offsets and the holes between them stay free; the class's own
-- primitive fields, largest first, then its references, each go to the
-- smallest free hole that fits it aligned (the highest such on a tie), or
-- at the end. `blocks` is a sorted list of free holes { offset, size };
-- returns the end offset.
local function place_new(holes, end_, sizes)
  for _, size in ipairs(sizes) do
    local best
    for i = #holes, 1, -1 do
      local h = holes[i]
      local at = align(h[1], size)
      if at + size <= h[1] + h[2] and (not best or h[2] < holes[best][2]) then best = i end
    end
    if best then
      local h = holes[best]
      local at = align(h[1], size)
      table.remove(holes, best)
      if at > h[1] then table.insert(holes, best, { h[1], at - h[1] }) best = best + 1 end
      if at + size < h[1] + h[2] then table.insert(holes, best, { at + size, h[1] + h[2] - at - size }) end
    else
      local at = align(end_, size)
      if at > end_ then holes[#holes + 1] = { end_, at - end_ } end
      end_ = at + size
    end
  end
  return end_
end

-- fields one after the other, each aligned to its size (no hole filled:
-- how JDK 15+ places a contended group, or a contended class's subclass)
local function append(end_, sizes)
  for _, size in ipairs(sizes) do end_ = align(end_, size) + size end
  return end_
end

-- JDK 6-14 (classFileParser's layout_fields, FieldsAllocationStyle 1 with
-- compact fields): the class's fields start where the superclass's end,
-- rounded up to a reference; longs/doubles, ints/floats, shorts/chars,
-- bytes/booleans, then references; the gap before the first long is filled
-- with an int, shorts, bytes, or else one reference.
local function place_legacy(start, counts, oop)
  local offset = start
  local n8, n4, n2, n1, no = counts[8], counts[4], counts[2], counts[1], counts.oop
  if n8 > 0 and offset % 8 ~= 0 then
    local gap = align(offset, 8) - offset
    if n4 > 0 and gap >= 4 then n4, gap = n4 - 1, gap - 4 end
    while gap >= 2 and n2 > 0 do n2, gap = n2 - 1, gap - 2 end
    while gap >= 1 and n1 > 0 do n1, gap = n1 - 1, gap - 1 end
    if gap >= oop and no > 0 then no = no - 1 end
    offset = align(offset, 8)
  end
  offset = offset + 8 * n8 + 4 * n4 + 2 * n2 + n1
  if no > 0 then offset = align(offset, oop) + no * oop end
  return offset
end

-- the byte sizes of a list of fields: primitives by type, references `oop`
local function field_sizes(fields, oop)
  local prims, oops = {}, {}
  for _, f in ipairs(fields) do
    if f.type == "object" then oops[#oops + 1] = oop
    else prims[#prims + 1] = PRIMITIVE[f.type] end
  end
  table.sort(prims, function(a, b) return a > b end)
  return prims, oops
end

--- Fields HotSpot adds to some classes of the JDK (javaClasses.hpp's
-- injected fields), which no dump lists: `intptr` is a long on 64 bits.
-- Not every JDK has each (ClassLoader's came with JDK 8): the distances
-- decide, class by class.
M.injected = {
  ["java.lang.ClassLoader"] = { "long" },                        -- loader_data
  ["java.lang.Module"] = { "long" },                             -- module_entry
  ["java.lang.invoke.MemberName"] = { "long" },                  -- vmindex
  ["java.lang.invoke.ResolvedMethodName"] = { "long", "object" }, -- vmtarget, vmholder
  ["java.lang.invoke.MethodHandleNatives$CallSiteContext"] = { "long", "long" },
  ["java.lang.StackFrameInfo"] = { "short" },                     -- version
}

--- The JDK's @Contended classes and fields (the annotation is reserved to
-- the JDK): each group is padded with 128 bytes before and after.
M.contended = {
  ["java.lang.Thread"] = { threadLocalRandomSeed = true, threadLocalRandomProbe = true,
                           threadLocalRandomSecondarySeed = true },
  ["java.util.concurrent.atomic.Striped64$Cell"] = "class",
  ["java.util.concurrent.ConcurrentHashMap$CounterCell"] = "class",
  ["java.util.concurrent.Exchanger$Node"] = "class",
}
local PADDING = 128

--- A layout computer for one candidate JVM: `header` (bytes before the
-- first field), `oop` (reference size), `algorithm` ("jdk15" or
-- "legacy"). `describe(c)` gives a class's `name`, `boot` (loaded by the
-- bootstrap loader), `fields` (its own instance fields, { name, type }) and
-- `super` (nil at the top). `injected` (default: every class of
-- M.injected) names the classes whose injected fields to count.
-- @return function(c) -> instance size in bytes, memoised
function M.instance_sizer(params, describe, injected)
  local header, oop, legacy = params.header, params.oop, params.algorithm == "legacy"
  local memo = {}
  -- a class's layout: `fields_end` (after its last field), `end_` (with
  -- padding), `holes` that a subclass may fill (jdk15), `contended`
  local function layout(c)
    local l = memo[c]
    if l then return l end
    local d = describe(c)
    local base = d.super and layout(d.super) or { end_ = header, fields_end = header, holes = {} }
    local regular, grouped = {}, {}
    local contended = d.boot and M.contended[d.name]
    for _, f in ipairs(d.fields) do
      if contended == "class" or (contended and contended[f.name]) then grouped[#grouped + 1] = f
      else regular[#regular + 1] = f end
    end
    local extra = d.boot and (not injected or injected[d.name]) and M.injected[d.name]
    for _, t in ipairs(extra or {}) do regular[#regular + 1] = { type = t } end
    local end_, holes
    if legacy then
      local counts = { [8] = 0, [4] = 0, [2] = 0, [1] = 0, oop = 0 }
      for _, f in ipairs(regular) do
        if f.type == "object" then counts.oop = counts.oop + 1
        else counts[PRIMITIVE[f.type]] = counts[PRIMITIVE[f.type]] + 1 end
      end
      local start = d.super and align(base.fields_end, oop) or header
      if base.contended then start = start + PADDING end
      end_ = #regular > 0 and place_legacy(start, counts, oop) or math.max(start, base.fields_end)
      holes = {}
    else
      local prims, oops = field_sizes(regular, oop)
      holes = {}
      if base.contended then  -- after the superclass's padding, appended
        end_ = append(append(base.fields_end + PADDING, prims), oops)
      else
        for i, h in ipairs(base.holes) do holes[i] = { h[1], h[2] } end
        end_ = place_new(holes, place_new(holes, base.fields_end, prims), oops)
      end
    end
    local fields_end = end_
    if #grouped > 0 then  -- padding, the group appended, padding
      local prims, oops = field_sizes(grouped, oop)
      fields_end = append(append(end_ + PADDING, prims), oops)
      end_ = fields_end + PADDING
    end
    l = { end_ = end_, fields_end = fields_end, holes = holes, contended = #grouped > 0 }
    memo[c] = l
    return l
  end
  return function(c) return align(layout(c).end_, 8) end
end

--- The size of a class mirror: java.lang.Class's own `base` bytes, then
-- the static fields: references first, then longs/doubles, ints/floats,
-- shorts/chars, bytes/booleans, with no hole filled (HotSpot lays statics
-- out this way in JDK 8 and JDK 17 alike).
function M.mirror_size(params, base, statics)
  local prims, oops = field_sizes(statics, params.oop)
  local offset = base + #oops * params.oop
  for _, size in ipairs(prims) do offset = align(offset, size) + size end
  return align(offset, 8)
end

--- The byte offset of element 0 of an array: the header and a 4-byte
-- length, rounded up to 8 on a 64-bit JVM (and for longs and doubles on a
-- 32-bit one).
function M.array_base(params, wide)
  local at = params.header + 4
  if params.header >= 12 or wide then at = align(at, 8) end
  return at
end

--- The size of an array of `length` elements of type `elem` ("object",
-- "int", ...), or nil for an unknown type.
function M.array_size(params, elem, length)
  local size = elem == "object" and params.oop or PRIMITIVE[elem]
  if not size then return nil end
  return align(M.array_base(params, elem == "long" or elem == "double") + length * size, 8)
end

-- }======================================================


--- {======================================================
-- Inferring the layout from the dump
-- =======================================================

--- The candidate layouts for a dump with `id_size`-byte ids.
function M.candidates(id_size)
  local out = {}
  local shapes = id_size == 4 and { { 8, 4 } } or { { 12, 4 }, { 12, 8 }, { 16, 4 }, { 16, 8 } }
  for _, algorithm in ipairs { "jdk15", "legacy" } do
    for _, s in ipairs(shapes) do
      out[#out + 1] = { header = s[1], oop = s[2], algorithm = algorithm }
    end
  end
  return out
end

M.DEFAULT = { header = 12, oop = 4, algorithm = "jdk15" }  -- JDK 17, heap under 32 GB

return M
