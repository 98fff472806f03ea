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

local PADDING = 128  -- -XX:ContendedPaddingWidth's default

-- a class's @Contended facts from `data` (sift.heap.contended[jdk]):
-- whether the class is annotated, and its contention groups as lists of
-- the fields it has, in declaration order
local function contention(data, d)
  local entry = d.boot and data[d.name]
  if not entry then return false, {} end
  local by_name, groups = {}, {}
  for _, f in ipairs(d.fields) do by_name[f.name] = f end
  local names = {}
  for key in pairs(entry) do if key ~= "class" then names[#names + 1] = key end end
  table.sort(names)
  for _, key in ipairs(names) do
    local g = {}
    for _, field in ipairs(entry[key]) do g[#g + 1] = by_name[field] end
    if #g > 0 then groups[#groups + 1] = g end
  end
  return entry.class == true, groups
end

--- A layout computer for one candidate JVM: `header` (bytes before the
-- first field), `oop` (reference size), `algorithm` ("jdk15" or
-- "legacy"), `jdk` (the version whose @Contended classes to pad, see
-- sift.heap.contended; 17 when absent). `describe(c)` gives a class's
-- `name`, `boot` (loaded by the bootstrap loader), `fields` (its own
-- instance fields, { name, type }) and `super` (nil at the top).
-- `injected` (default: every class of M.injected) names the classes whose
-- injected fields to count.
--
-- @Contended (the JDK's classes only) pads with 128 bytes. JDK 15+
-- (fieldLayoutBuilder.cpp): an annotated class puts a padding after its
-- superclass's fields and appends its own after it, filling no hole; each
-- contention group is appended after the other fields behind a padding of
-- its own; one padding closes the object; the subclasses of a class with
-- any of these (transitively) start after its last field plus a padding,
-- filling no hole. JDK 6-14 (classFileParser.cpp): an annotated class's
-- fields start a padding later; the groups follow the other fields behind
-- one padding, each group in declaration order and followed by a padding;
-- an annotated class ends with one more; subclasses start after all that.
-- @return function(c) -> instance size in bytes, memoised
function M.instance_sizer(params, describe, injected)
  local header, oop, legacy = params.header, params.oop, params.algorithm == "legacy"
  local data = require("sift.heap.contended")[params.jdk or 17] or {}
  local memo = {}
  -- a class's layout: `end_` (the object's bytes before rounding),
  -- `fields_end` (after its last field; jdk15), `holes` a subclass may fill
  -- (jdk15), `padded` (it or a superclass has @Contended)
  local function layout(c)
    local l = memo[c]
    if l then return l end
    local d = describe(c)
    local base = d.super and layout(d.super) or { end_ = header, fields_end = header, holes = {} }
    local annotated, groups = contention(data, d)
    local in_group = {}
    for _, g in ipairs(groups) do for _, f in ipairs(g) do in_group[f] = true end end
    local regular = {}
    for _, f in ipairs(d.fields) do if not in_group[f] then regular[#regular + 1] = f end end
    local extra = d.boot and (not injected or injected[d.name]) and M.injected[d.name]
    for _, t in ipairs(extra or {}) do regular[#regular + 1] = { type = t } end
    local padded = annotated or #groups > 0
    local end_, fields_end, holes
    if legacy then
      local counts = { [8] = 0, [4] = 0, [2] = 0, [1] = 0, oop = 0 }
      for _, f in ipairs(regular) do
        if f.type == "object" then counts.oop = counts.oop + 1
        else counts[PRIMITIVE[f.type]] = counts[PRIMITIVE[f.type]] + 1 end
      end
      local start = d.super and align(base.end_, oop) or header
      if annotated then start = start + PADDING end
      end_ = #regular > 0 and place_legacy(start, counts, oop) or math.max(start, base.end_)
      if #groups > 0 then
        end_ = end_ + PADDING
        for _, g in ipairs(groups) do
          for _, f in ipairs(g) do
            local size = f.type == "object" and oop or PRIMITIVE[f.type]
            end_ = align(end_, size) + size
          end
          end_ = end_ + PADDING
        end
      end
      if annotated then end_ = end_ + PADDING end
      holes = {}
    else
      local prims, oops = field_sizes(regular, oop)
      holes = {}
      local appending = base.padded and base.fields_end > header  -- after a padded superclass's fields
      end_ = base.padded and base.fields_end + PADDING or base.fields_end
      if annotated then end_, appending = end_ + PADDING, true end
      if not base.padded and not annotated then
        for i, h in ipairs(base.holes) do holes[i] = { h[1], h[2] } end
      end
      if appending then
        end_ = append(append(end_, prims), oops)
        holes = {}
      else
        end_ = place_new(holes, place_new(holes, end_, prims), oops)
      end
      for _, g in ipairs(groups) do
        local gprims, goops = field_sizes(g, oop)
        end_ = append(append(end_ + PADDING, gprims), goops)
      end
      fields_end = end_
      if padded then end_ = end_ + PADDING end
    end
    l = { end_ = end_, fields_end = fields_end, holes = holes, padded = padded or base.padded }
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

--- Which JDK's @Contended list (sift.heap.contended) fits a dump, from the
-- field layout algorithm and the classes the dump holds: `fields_of(name)`
-- gives the set of a class's own instance field names, or nil when the
-- dump has no such class. JDK 6-14 layouts: 11 when java.lang.Module
-- exists (JDK 9+), else 8. JDK 15+ layouts: 21 when java.lang.Thread has
-- the `holder` field of JDK 19+ (virtual threads), else 17.
function M.jdk_version(algorithm, fields_of)
  if algorithm == "legacy" then return fields_of("java.lang.Module") and 11 or 8 end
  local thread = fields_of("java.lang.Thread")
  return thread and thread.holder and 21 or 17
end

--- The candidate layouts for a dump with `id_size`-byte ids, each with
-- the JDK version that `fields_of` (see M.jdk_version) suggests for it.
function M.candidates(id_size, fields_of)
  local out = {}
  local shapes = id_size == 4 and { { 8, 4 } } or { { 12, 4 }, { 12, 8 }, { 16, 4 }, { 16, 8 } }
  for _, algorithm in ipairs { "jdk15", "legacy" } do
    local jdk = M.jdk_version(algorithm, fields_of)
    for _, s in ipairs(shapes) do
      out[#out + 1] = { header = s[1], oop = s[2], algorithm = algorithm, jdk = jdk }
    end
  end
  return out
end

M.DEFAULT = { header = 12, oop = 4, algorithm = "jdk15", jdk = 17 }  -- JDK 17, heap under 32 GB

return M
