--- Leak suspects beyond Shark: where the memory accumulates (MAT's leak
-- suspects) — the objects and the groups of one class's instances that
-- retain the most, with what lies inside them and the path that holds
-- them.
-- @module sift.heap.suspects

local M = {}

local grouped = require("sift.size").grouped
local shared = require "sift.heap.index"
local unseen = require("sift.progress").unseen
local format, concat = string.format, table.concat

--- {======================================================
-- Leak suspects (beyond Shark): where the memory accumulates
-- =======================================================

-- from obj, follow the dominator tree while one child holds most of the
-- memory: where that stops is where the memory accumulates. Down a
-- linked list that is every node, and the biggest objects are its first
-- nodes: so the walk goes by object numbers, with no Object made on the
-- way, and `ends` keeps where the walk from each node passed ended.
local function accumulation_point(heap, obj, ends)
  local index, num = heap.index, select(2, shared.check_object(obj, "suspects"))
  local passed = {}
  while not ends[num] do
    passed[#passed + 1] = num
    local biggest = index:dominated(num, 1)[1]
    if not biggest or index:retained(biggest) < 0.8 * index:retained(num) then break end
    num = biggest
  end
  local point = ends[num] or num
  for _, v in ipairs(passed) do ends[v] = point end
  return shared.object_at(heap, point)
end

--- MAT-style leak suspects: single objects that retain more than
-- `threshold` (default 0.1) of the reachable heap (none nested in another),
-- and classes whose instances pile up under one holder and together retain
-- that much; each with its share, the point where the memory accumulates
-- and the shortest path to it. opts: `threshold`, `model`,
-- `with_progress(label, work)` (called around the dominator tree and the
-- retained sizes by class, as `sift.heap.leaks.analyze` takes it).
-- @return list of `{ kind = "object" | "class", object, class, retained,
--   share, count, holder, accumulation = { object, retained }, path }`,
--   largest first, and the reachable bytes
function M.suspects(heap, opts)
  local threshold = opts and opts.threshold or 0.1
  local with_progress = opts and opts.with_progress or unseen
  with_progress("dominators", function(progress)
    return heap:dominators { model = opts and opts.model, progress = progress }
  end)
  local total = heap:reachable_bytes()
  local out = {}
  if total == 0 then return out, total end
  -- candidates: big single objects, and many instances of a class under
  -- one holder; largest first, a candidate inside an earlier one (its
  -- object, or its holder, dominated by that one's) is nested under it, as
  -- MAT lists accumulation points under their suspect: shares never add
  -- up to more than the heap
  local candidates, ends = {}, {}
  for _, row in ipairs(heap:top(20)) do
    if row.retained >= threshold * total and row.object:kind() ~= "class" then
      local point = accumulation_point(heap, row.object, ends)
      candidates[#candidates + 1] = { kind = "object", object = row.object, class = row.class,
        retained = row.retained, share = row.retained / total,
        accumulation = { object = point, retained = heap:retained(point) } }
    end
  end
  local by_class = assert(with_progress("retained sizes by class", function(progress)
    return heap:retained_by_class(nil, { progress = progress })
  end))
  for _, row in ipairs(by_class) do
    local cls = row.retained >= threshold * total and heap:class(row.class)
    if cls and row.class ~= "java.lang.Class" then
      local holder_num, count, sum = heap.index:holders(cls.number)
      local holder = holder_num and holder_num > 0 and heap:object((heap.index:object(holder_num))) or nil
      if holder and count > 1 and sum >= threshold * total then  -- many instances under one holder
        candidates[#candidates + 1] = { kind = "class", class = row.class, retained = sum, share = sum / total,
          count = count, object = holder, holder = holder,
          accumulation = { object = holder, retained = heap:retained(holder) } }
      end
    end
  end
  table.sort(candidates, function(x, y) return x.retained > y.retained end)
  -- (up the dominator tree by object numbers: a chain can be a list's
  -- every node)
  local index = heap.index
  local function number(obj) return select(2, shared.check_object(obj, "suspects")) end
  local by_num = {}  -- accepted suspects by the number of their object
  local function enclosing(obj)
    local d = number(obj)
    while d and d > 0 do
      if by_num[d] then return by_num[d] end
      d = index:idom(d)
    end
  end
  local function within(obj, holder)  -- holder dominates obj (or is it)
    local d, h = number(obj), number(holder)
    while d and d > 0 do
      if d == h then return true end
      d = index:idom(d)
    end
    return false
  end
  for _, c in ipairs(candidates) do
    local outer = enclosing(c.object)
    if outer then  -- a point inside a suspect; one per dominator chain
      local deeper = false
      for _, n in ipairs(outer.nested) do deeper = deeper or within(c.object, n.object) end
      if not deeper then outer.nested[#outer.nested + 1] = c end
    else
      c.nested = {}
      by_num[number(c.object)] = c
      out[#out + 1] = c
    end
  end
  table.sort(out, function(x, y) return x.retained > y.retained end)
  local targets = {}
  for i, sus in ipairs(out) do targets[i] = sus.object end
  for i, path in ipairs(heap:path_to_root(targets)) do out[i].path = path or nil end
  return out, total
end

local function suspect_text(sus, total)
  local lines = {}
  if sus.kind == "object" then
    lines[1] = format("One %s (%s) retains %s bytes (%.1f%% of %s reachable bytes).", sus.class,
      tostring(sus.object), grouped(sus.retained), 100 * sus.share, grouped(total))
  else
    lines[1] = format("%s instances of %s, all held by %s, retain %s bytes (%.1f%% of %s reachable bytes).",
      grouped(sus.count), sus.class, tostring(sus.holder), grouped(sus.retained), 100 * sus.share, grouped(total))
  end
  for _, inner in ipairs(sus.nested or {}) do
    if inner.kind == "object" then
      lines[#lines + 1] = format("  inside it: %s retains %s bytes (%.1f%%).", tostring(inner.object),
        grouped(inner.retained), 100 * inner.share)
    else
      lines[#lines + 1] = format("  inside it: %s instances of %s held by %s retain %s bytes (%.1f%%).",
        grouped(inner.count), inner.class, tostring(inner.holder), grouped(inner.retained), 100 * inner.share)
    end
  end
  if sus.accumulation.object ~= sus.object then
    lines[#lines + 1] = format("The memory accumulates in %s (%s bytes).", tostring(sus.accumulation.object),
      grouped(sus.accumulation.retained))
  end
  if sus.path then
    local parts = {}
    for k, st in ipairs(sus.path) do parts[k] = k == 1 and ("root " .. tostring(st.root)) or st.label end
    lines[#lines + 1] = "Path: " .. concat(parts, " → ")
  end
  return concat(lines, "\n")
end

-- }======================================================
M.text = suspect_text

return M
