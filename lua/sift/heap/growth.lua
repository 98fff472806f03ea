--- Heap growth across a series of dumps of one process, taken after the
-- same scenario ran again (Shark's heap-growth detection): the classes
-- whose instance count grows at every step, how much per step, and the
-- path that holds what they add.
--
-- Objects move and their ids change from one dump to the next, but the
-- paths that hold them do not. So, as Shark's `ObjectGrowthDetector` does,
-- each dump's objects are grouped by their holder path (the tree of
-- shortest strong paths from the GC roots, a node per parent node,
-- reference and class: the C index's `path_tree`), the trees of the dumps
-- are matched node by node by their labels, and a growing class is held
-- where a path node of that class grows at every step: its holder is the
-- node above the highest of its growing ancestors (the array of a map, not
-- each entry). A class no path explains gets the reason instead. Churn
-- (objects made and dropped each time) does not grow: only counts that
-- rise at every step are reported.
--
--     local growth = require "sift.heap.growth"
--     local report = growth.analyze({"1.hprof", "2.hprof", "3.hprof"})
--     for _, g in ipairs(report.classes) do print(g.class, table.concat(g.deltas, " ")) end
-- @module sift.heap.growth

local json = require "sift.json"
local views = require "sift.heap.views"
local shared = require "sift.heap.index"
local unseen = require("sift.progress").unseen

local M = {}

--- The least growth per step reported by default: Shark runs the scenario
-- 5 times between dumps, so an object leaked per run grows by 5 per dump,
-- and the few objects the JVM itself adds between dumps stay below it.
M.MIN_STEP = 5

-- whether counts (per dump, nil for 0) rise by `least` at every step
local function grows(counts, n, least)
  for i = 2, n do
    if (counts[i] or 0) - (counts[i - 1] or 0) < least then return false end
  end
  return true
end

--- Read one dump's tree of holder paths into the nodes of the series:
-- `ids` maps (parent node, label) to a node of the series, so that the
-- same path in two dumps is one node; each node keeps its objects per
-- dump (`counts[i]`), its class as the histogram names it, and, for the
-- last dump, one of its objects. Returns the objects each class has on
-- strong paths; nil and a message when the tree's progress stopped it.
local function read_tree(heap, model, i, last, series, progress)
  local t, why = shared.graph(heap):path_tree(model, progress)
  if not t then return nil, why end
  local names, reached, here = {}, {}, {}
  for v = 1, #t.parent do
    local cls, kind = t.class[v], t.kind[v]
    local name
    if kind == "primitive array" then name = cls .. "[]"
    elseif cls then
      name = names[cls]
      if not name then
        name = heap:class_at(cls).name
        names[cls] = name
      end
    else name = "(class not in the dump)" end
    local p = t.parent[v] > 0 and here[t.parent[v]] or 0
    local key = ("%d %s %d %s %s"):format(p, t.ref[v], t.index[v], kind, name)
    local id = series.ids[key]
    if not id then
      id = #series.nodes + 1
      series.ids[key] = id
      series.nodes[id] = { parent = p, class = kind == "class" and "java.lang.Class" or name, counts = {} }
    end
    here[v] = id
    local node = series.nodes[id]
    node.counts[i] = (node.counts[i] or 0) + t.count[v]  -- (classes of one name share a node)
    if last then node.first = t.first[v] end
    reached[node.class] = (reached[node.class] or 0) + t.count[v]
  end
  return reached
end

-- the path of a node of the last dump as sift path shows it: the shortest
-- path to one of its objects, runs folded (from the search its tree of
-- paths made, the heap's last)
local function node_path(heap, node)
  local obj = shared.object_at(heap, node.first)
  local steps = heap:path_segments(obj, true)
  local parts = {}
  for k, st in ipairs(steps) do
    if k > 1 then parts[#parts + 1] = views.ref_text(st) end
    parts[#parts + 1] = views.short(st.object)
  end
  return views.path_json(steps), table.concat(parts, " → ")
end

-- whether node `a` is `b` or below it
local function below(nodes, a, b)
  while a ~= 0 do
    if a == b then return true end
    a = nodes[a].parent
  end
  return false
end

--- The holder of growing class g, or the reason it has none: the path
-- nodes of its class that grow by min_step at every step, each raised
-- to its highest ancestor that grows at every step too; the node above
-- it holds them. Of several holders, the one whose objects of the class
-- grew most. Without one, the reason, and where the paths that rise
-- meet (their deepest common node), if they do.
local function find_holder(g, series, of_class, n, min_step, total)
  local nodes, by_holder, order = series.nodes, {}, {}
  for _, id in ipairs(of_class) do
    if grows(nodes[id].counts, n, min_step) then
      local top = id
      while nodes[top].parent ~= 0 and grows(nodes[nodes[top].parent].counts, n, 1) do top = nodes[top].parent end
      local h = nodes[top].parent
      if h == 0 then h = -top end  -- GC roots themselves: the root's node says which
      if not by_holder[h] then
        by_holder[h] = true
        order[#order + 1] = h
      end
    end
  end
  local best, best_counts, best_growth
  for _, h in ipairs(order) do
    local counts = {}
    for i = 1, n do counts[i] = 0 end
    for _, id in ipairs(of_class) do
      if below(nodes, id, math.abs(h)) then
        for i = 1, n do counts[i] = counts[i] + (nodes[id].counts[i] or 0) end
      end
    end
    local growth = counts[n] - counts[1]
    if not best or growth > best_growth then best, best_counts, best_growth = h, counts, growth end
  end
  if best then return best, best_counts end
  -- no path grows with the class: off the strong paths, or over many
  local unreached, rising, meet = {}, 0, nil
  for i = 1, n do unreached[i] = g.counts[i] - (total[i][g.class] or 0) end
  for _, id in ipairs(of_class) do
    local c = nodes[id].counts
    if (c[n] or 0) > (c[1] or 0) then
      rising = rising + 1
      meet = rising == 1 and nodes[id].parent or meet
      while meet ~= 0 and not below(nodes, id, meet) do meet = nodes[meet].parent end
    end
  end
  if unreached[n] - unreached[1] >= (g.counts[n] - g.counts[1]) / 2 then
    return nil, nil, ("held only by objects without a strong path (unreachable, or only through weak, soft or "
      .. "finalizer references): %d of %d in the last dump, %d of %d in the first"):format(unreached[n], g.counts[n],
      unreached[1], g.counts[1])
  end
  return nil, nil, ("no single path: %d paths each grow by less than %d at some step"):format(rising, min_step),
    meet ~= 0 and meet or nil
end

--- Analyse a series of dumps (paths, oldest first; at least 2). Each is
-- opened in turn with `open(path)` (default sift.open), its histogram and
-- tree of holder paths read and closed, except the last, kept for the
-- holders' paths. opts: `top` (classes, 20), `min_step` (the least growth
-- per step, M.MIN_STEP), `open`, `model`, `with_progress(label, fn)` (runs
-- fn(progress) for each dump's tree of paths, progress being a function
-- `(done, total)` or nil, as the CLI's progress bars do).
-- @return `{dumps, classes ({class, counts, bytes, deltas, growth (last -
--   first bytes), holder ({path (steps as sift path --json gives them),
--   text, counts (objects of the class below it in each dump), share (of
--   the class's growth)}) or reason}), holders (the classes grouped by
--   their holder's path text)}`, or nil and a message
function M.analyze(paths, opts)
  opts = opts or {}
  if #paths < 2 then return nil, "growth needs at least two dumps of the same process" end
  local open = opts.open or function(p) return require("sift").open(p) end
  local min_step = opts.min_step or M.MIN_STEP
  local with_progress = opts.with_progress or unseen
  local counts, bytes, reached, last = {}, {}, {}, nil
  local series = { ids = {}, nodes = {} }
  for i, path in ipairs(paths) do
    local heap, err = open(path)
    if not heap then return nil, ("%s: %s"):format(path, err) end
    for _, r in ipairs(heap:histogram(opts.model)) do
      counts[r.class] = counts[r.class] or {}
      bytes[r.class] = bytes[r.class] or {}
      counts[r.class][i], bytes[r.class][i] = (counts[r.class][i] or 0) + r.count, (bytes[r.class][i] or 0) + r.shallow
    end
    local why
    reached[i], why = with_progress(path .. ": paths from the roots",
      function(update) return read_tree(heap, opts.model, i, i == #paths, series, update) end)
    if not reached[i] then
      heap:close()
      return nil, ("%s: %s"):format(path, why)
    end
    if i < #paths then heap:close() else last = heap end
  end
  local n, grown = #paths, {}
  for class, c in pairs(counts) do
    local b = bytes[class]
    for i = 1, n do c[i], b[i] = c[i] or 0, b[i] or 0 end  -- (absent from a dump: none there)
    if grows(c, n, min_step) then
      local deltas = json.array {}
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
  local of_class = {}  -- the series' nodes of each growing class
  for _, g in ipairs(grown) do of_class[g.class] = {} end
  for id, node in ipairs(series.nodes) do
    if of_class[node.class] then table.insert(of_class[node.class], id) end
  end
  local holders, by_text = json.array {}, {}
  for _, g in ipairs(grown) do
    local h, through, reason, meet = find_holder(g, series, of_class[g.class], n, min_step, reached)
    if h then
      local path, text = node_path(last, series.nodes[math.abs(h)])
      local growth = g.counts[n] - g.counts[1]
      g.holder = { path = path, text = h < 0 and ("GC roots: " .. text) or text, counts = json.array(through),
                   share = math.max(0, math.min(1, (through[n] - through[1]) / growth)) }
      local group = by_text[g.holder.text]
      if not group then
        group = { text = g.holder.text, path = path, classes = json.array {} }
        by_text[g.holder.text] = group
        holders[#holders + 1] = group
      end
      group.classes[#group.classes + 1] = g.class
    else
      g.reason = meet and ("%s; they meet at %s"):format(reason, select(2, node_path(last, series.nodes[meet])))
        or reason
    end
  end
  last:close()
  return { dumps = json.array(paths), classes = json.array(grown), holders = holders }
end

return M
