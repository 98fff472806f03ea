--- Heap growth across a series of dumps of one process, taken after the
-- same scenario ran again (Shark's heap-growth detection): the classes
-- whose instance count grows at every step, how much per step, and the
-- path from a GC root to what holds the new instances in the last dump.
-- Churn (objects made and dropped each time) does not grow: only counts
-- that rise at every step are reported.
--
--     local growth = require "sift.heap.growth"
--     local report = growth.analyze({"1.hprof", "2.hprof", "3.hprof"})
--     for _, g in ipairs(report.classes) do print(g.class, table.concat(g.deltas, " ")) end
-- @module sift.heap.growth

local json = require "sift.json"
local views = require "sift.heap.views"

local M = {}

--- The least growth per step reported by default: Shark runs the scenario
-- 5 times between dumps, so an object leaked per run grows by 5 per dump,
-- and the few objects the JVM itself adds between dumps stay below it.
M.MIN_STEP = 5

-- the object most of the paths go through at each depth, for as long as
-- more than half of them agree: the holder of a growing group
local function common_holder(paths)
  local prefix = {}
  for depth = 1, math.huge do
    local votes, best, best_n = {}, nil, 0
    for _, p in ipairs(paths) do
      local st = p[depth]
      if st and depth < #p then  -- (the grown objects themselves do not hold the group)
        local id = st.object:id()
        votes[id] = (votes[id] or 0) + 1
        if votes[id] > best_n then best, best_n = st, votes[id] end
      end
    end
    if not best or best_n * 2 <= #paths then break end
    prefix[depth] = best
    for k = #paths, 1, -1 do  -- the paths that left the majority no longer vote
      if not (paths[k][depth] and paths[k][depth].object:id() == best.object:id()) then table.remove(paths, k) end
    end
  end
  return prefix
end

-- a path's steps as text: "static GrowthSample.LEAKS → java.util.ArrayList → elementData → java.lang.Object[]"
local function path_text(steps)
  local parts = {}
  for k, st in ipairs(steps) do
    if k == 1 then parts[1] = views.short(st.object)
    else
      parts[#parts + 1] = views.ref_text(st)
      parts[#parts + 1] = views.short(st.object)
    end
  end
  return table.concat(parts, " → ")
end

--- Analyse a series of dumps (paths, oldest first; at least 2). Each is
-- opened in turn with `open(path)` (default sift.open), its histogram read
-- and closed, except the last, kept for the paths. opts: `top` (classes,
-- 20), `sample` (instances whose paths are followed, 200), `min_step`
-- (the least growth per step, M.MIN_STEP), `open`, `model`.
-- @return `{dumps, classes ({class, counts, bytes, deltas, growth (last -
--   first bytes), holder ({path (steps as sift path --json gives them),
--   text, share (of the sampled instances held through it)})}),
--   holders (the classes grouped by their holder's path text)}`, or nil
--   and a message
function M.analyze(paths, opts)
  opts = opts or {}
  if #paths < 2 then return nil, "growth needs at least two dumps of the same process" end
  local open = opts.open or function(p) return require("sift").open(p) end
  local counts, bytes, last = {}, {}, nil
  for i, path in ipairs(paths) do
    local heap, err = open(path)
    if not heap then return nil, ("%s: %s"):format(path, err) end
    for _, r in ipairs(heap:histogram(opts.model)) do
      counts[r.class] = counts[r.class] or {}
      bytes[r.class] = bytes[r.class] or {}
      counts[r.class][i], bytes[r.class][i] = (counts[r.class][i] or 0) + r.count, (bytes[r.class][i] or 0) + r.shallow
    end
    if i < #paths then heap:close() else last = heap end
  end
  local n, grown = #paths, {}
  for class, c in pairs(counts) do
    local ok = true
    for i = 2, n do
      if not (c[i] and c[i - 1] and c[i] - c[i - 1] >= (opts.min_step or M.MIN_STEP)) then ok = false break end
    end
    if ok then
      local deltas, b = json.array {}, bytes[class]
      for i = 2, n do deltas[i - 1] = c[i] - c[i - 1] end
      grown[#grown + 1] = { class = class, counts = json.array(c), bytes = json.array(b), deltas = deltas,
        growth = b[n] - b[1] }
    end
  end
  table.sort(grown, function(a, b)
    if a.growth ~= b.growth then return a.growth > b.growth end
    return a.class < b.class
  end)
  while #grown > (opts.top or 20) do table.remove(grown) end
  -- in the last dump: the path to what holds each growing class's instances
  local holders, by_text = json.array {}, {}
  for _, g in ipairs(grown) do
    local cls = last:class(g.class)
    local sample = {}
    if cls then
      for obj in cls:instances() do
        sample[#sample + 1] = obj
        if #sample >= (opts.sample or 200) then break end
      end
    end
    local found = {}
    for _, p in ipairs(#sample > 0 and last:path_to_root(sample) or {}) do
      if p then found[#found + 1] = p end
    end
    local total = #found
    local prefix = common_holder(found)
    if #prefix > 0 then
      local text = path_text(prefix)
      g.holder = { path = views.path_json(prefix), text = text, share = total > 0 and #found / total or 0 }
      local h = by_text[text]
      if not h then
        h = { text = text, path = g.holder.path, classes = json.array {} }
        by_text[text] = h
        holders[#holders + 1] = h
      end
      h.classes[#h.classes + 1] = g.class
    end
  end
  last:close()
  return { dumps = json.array(paths), classes = json.array(grown), holders = holders }
end

return M
