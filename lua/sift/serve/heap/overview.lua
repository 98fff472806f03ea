--- The overview and the histogram of a heap dump.
-- @module sift.serve.heap.overview

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local href, class_link, nav, dominators = common.href, common.class_link, common.nav, common.dominators

local M = {}

-- a change as ahat's baseline columns write it: "+12", "-3", "0"
local function delta(n)
  if n == nil then return "" end
  return (n > 0 and "+" or "") .. num(n)
end

-- a share of a whole: "12.3%" ("" when the whole is 0 or the part unknown)
local function pct(part, whole)
  if not part or not whole or whole == 0 then return "" end
  return ("%.1f%%"):format(100 * part / whole)
end

-- the heap named by the query's `heap`, checked: name (nil for all), or
-- nil, 404 and why when the dump has no such heap
local function chosen_heap(ctx)
  local which = ctx.query.heap
  if which == nil or which == "" then return nil end
  if views.has_heap(ctx.doc, which) then return which end
  local names = views.heap_names(ctx.doc)
  return nil, 404, #names == 0 and "this dump has no Android heaps (a JVM's dump)"
    or ("no heap '%s' in this dump: its heaps are %s"):format(which, table.concat(names, ", "))
end

-- the links that pick a heap (all, then each of the dump's), `which` in bold
local function heap_picker(ctx, page, which, query)
  local names = views.heap_names(ctx.doc)
  if #names == 0 then return "" end
  local links = {}
  for i, name in ipairs { "all", table.unpack(names) } do
    local q = {}
    for k, v in pairs(query or {}) do q[k] = v end
    q.heap = i > 1 and name or nil
    local here = (which or "all") == name
    links[i] = here and ("<b>%s</b>"):format(esc(name)) or a(href(ctx, page, q), name)
  end
  return ('<p id="heaps">heap: %s</p>'):format(table.concat(links, " · "))
end

-- what the overview shows that takes a pass over the heap, once per heap
-- (cached on it): the totals as the histogram counts them, the Android
-- heaps' sizes, and the largest retainers with sift top's "via" and "holds"
local function facts(ctx)
  local heap = ctx.doc
  if heap._served_overview then return heap._served_overview end
  dominators(ctx)
  local rows = views.top_rows(heap, 10, false)
  local objs = {}
  for i, r in ipairs(rows) do objs[i] = r.object end
  local paths = heap:path_to_root(objs)
  local lines = json.array {}
  for i, r in ipairs(rows) do
    lines[i] = { id = views.hex(r.object:id()), name = views.object_text(r.object), via = views.top_via(paths[i]),
      holds = views.top_holds(r) }
  end
  local total = views.histogram_total(heap, ctx.model)
  total.class_objects = 0  -- (not rows of the histogram; the reachable heap counts them)
  for cls in heap:classes() do
    local obj = cls.object
    if obj then total.class_objects = total.class_objects + heap:shallow(obj, ctx.model) end
  end
  total.all = total.shallow + total.class_objects
  heap._served_overview = { total = total, reachable_bytes = heap:reachable_bytes(),
    heaps = views.heap_sizes(heap, ctx.model), top = views.top_json(rows), top_lines = lines }
  return heap._served_overview
end

-- the baseline's totals (whole, and per heap this dump has), once
local function baseline_facts(ctx, base)
  if base._served_totals then return base._served_totals end
  local heaps = {}
  for _, name in ipairs(views.heap_names(ctx.doc)) do
    heaps[name] = views.has_heap(base, name) and views.histogram_total(base, ctx.model, name) or { count = 0, shallow = 0 }
  end
  base._served_totals = { info = base:info(), total = views.histogram_total(base, ctx.model), heaps = heaps }
  return base._served_totals
end

--- Overview: the dump's facts, its total and reachable heap, the Android
-- heaps (ahat's "Heap Sizes"), roots by kind, the largest retainers named
-- and described as `sift top` does; with `--baseline`, then and now.
function M.overview(ctx)
  local heap = ctx.doc
  local which, status, why = chosen_heap(ctx)
  if status then return nil, status, why end
  local info = heap:info()
  local summary = dominators(ctx)
  local f = facts(ctx)
  local view = { file = ctx.entry.name, format = info.format, version = info.version, id_size = info.id_size,
    instances = info.instances, classes = info.classes, object_arrays = info.object_arrays,
    primitive_arrays = info.primitive_arrays, roots = info.roots, warnings = json.array(info.warnings or {}),
    reachable = summary.reachable, unreachable = summary.unreachable,
    unreachable_bytes = summary.unreachable_bytes, top = f.top, top_lines = f.top_lines,
    total = { count = f.total.count, shallow = f.total.shallow, class_objects = f.total.class_objects,
      all = f.total.all, reachable_bytes = f.reachable_bytes },
    heaps = f.heaps, heap = which }
  for _, h in ipairs(f.heaps) do
    if h.name == which then view.selected = h end
  end
  local base, msg = ctx.server:baseline()
  if ctx.server.opts.baseline and not base then return nil, 422, msg end
  if base then
    local b = baseline_facts(ctx, base)
    view.baseline = { file = ctx.server.opts.baseline, instances = b.info.instances, count = b.total.count,
      shallow = b.total.shallow, heaps = json.array {} }
    for _, h in ipairs(f.heaps) do
      local was = b.heaps[h.name]
      view.baseline.heaps[#view.baseline.heaps + 1] = { name = h.name, count = was.count, shallow = was.shallow,
        count_delta = h.count - was.count, shallow_delta = h.shallow - was.shallow }
    end
  end
  return view, function()
    local roots = {}
    for kind, n in pairs(info.roots or {}) do roots[#roots + 1] = { esc(kind), num(n) } end
    table.sort(roots, function(x, y) return x[1] < y[1] end)
    local rows = {}
    for i, r in ipairs(f.top) do
      local line = f.top_lines[i]
      local said = {}
      if line.via then said[#said + 1] = '<div class="muted via">via ' .. esc(line.via) .. "</div>" end
      if line.holds then said[#said + 1] = '<div class="muted holds">holds ' .. esc(line.holds) .. "</div>" end
      rows[i] = { num(r.retained), num(r.shallow), a(href(ctx, "object/" .. r.id), line.name) .. table.concat(said) }
    end
    local warn = {}
    for _, w in ipairs(info.warnings or {}) do warn[#warn + 1] = '<p class="err">' .. esc(w) .. "</p>" end
    local heaps = ""
    if #f.heaps > 0 then
      local hrows, bh = {}, {}
      for _, h in ipairs(view.baseline and view.baseline.heaps or {}) do bh[h.name] = h end
      for _, h in ipairs(f.heaps) do
        local name = h.name == which and ("<b>%s</b>"):format(esc(h.name)) or a(href(ctx, "", { heap = h.name }), h.name)
        local row = { name, num(h.count), num(h.shallow), num(h.reachable),
          a(href(ctx, "histogram", { heap = h.name }), "histogram") }
        if bh[h.name] then table.insert(row, 3, delta(bh[h.name].count_delta)) end
        if bh[h.name] then table.insert(row, 5, delta(bh[h.name].shallow_delta)) end
        hrows[#hrows + 1] = row
      end
      local heads = { "heap", "#objects", "#shallow bytes", "#reachable bytes", "" }
      if view.baseline then
        table.insert(heads, 3, "#Δ objects")
        table.insert(heads, 5, "#Δ bytes")
      end
      heaps = table.concat {
        "<h2>Heaps</h2>",
        "<p>Android keeps objects in heaps: <i>app</i> (the app's own), <i>zygote</i> (shared from the zygote "
          .. "process), <i>image</i> (the boot image). Objects and shallow bytes as the histogram counts them "
          .. "(instances and arrays: <code>sift histogram --heap NAME</code>'s total); reachable bytes: those of "
          .. "the heap's objects a GC root reaches, class objects included (ahat's size of a heap).</p>",
        html.table(heads, hrows, "heaps"),
      }
    end
    local facts_list = { { "format", ("%s %s"):format(info.format, info.version or "") },
      { "file", ctx.entry.description },
      { "total heap (shallow bytes of every object: instances, arrays and class objects)", f.total.all },
      { "instances and arrays: shallow bytes (sift histogram's total)", f.total.shallow },
      { "instances and arrays", f.total.count },
      { "class objects: shallow bytes", f.total.class_objects },
      { "reachable heap (bytes of the objects the GC roots reach)", f.reachable_bytes },
      { "instances", info.instances }, { "classes", info.classes }, { "object arrays", info.object_arrays },
      { "primitive arrays", info.primitive_arrays }, { "reachable objects", summary.reachable },
      { "unreachable objects", summary.unreachable }, { "unreachable bytes", summary.unreachable_bytes } }
    if view.selected then
      local s = view.selected
      table.insert(facts_list, 3, { ("heap %s: objects"):format(which), s.count })
      table.insert(facts_list, 4, { ("heap %s: shallow bytes"):format(which), s.shallow })
      table.insert(facts_list, 5, { ("heap %s: reachable bytes"):format(which), s.reachable })
    end
    local baseline = ""
    if view.baseline then
      local b = view.baseline
      baseline = table.concat { '<h2>Since the baseline</h2><p>baseline: <code>', esc(b.file), "</code></p>",
        html.table({ "", "#then", "#now", "#Δ" }, {
          { "instances", num(b.instances), num(info.instances), delta(info.instances - b.instances) },
          { "objects (instances and arrays)", num(b.count), num(f.total.count), delta(f.total.count - b.count) },
          { "shallow bytes", num(b.shallow), num(f.total.shallow), delta(f.total.shallow - b.shallow) },
        }, "baseline"), "<p>", a(href(ctx, "diff"), "what changed, per class"), "</p>" }
    end
    return html.page(ctx.entry.name, nav(ctx), table.concat {
      table.concat(warn),
      heap_picker(ctx, "", which),
      html.facts(facts_list),
      common.unreachable_note(ctx, "", summary.unreachable),
      heaps, baseline,
      "<h2>GC roots by kind</h2>", html.table({ "kind", "#roots" }, roots),
      "<h2>Largest retainers", which and " (of every heap)" or "", "</h2>",
      "<p>As <code>sift top</code> lists them: objects only the GC roots dominate, with the path from a root "
        .. "(via) and the chain of large objects each holds.</p>",
      html.table({ "#retained", "#shallow", "object" }, rows, "top"),
    })
  end
end

local SORTS = { count = true, shallow = true, retained = true, count_delta = true, shallow_delta = true }
local GROUPS = { class = true, package = true, loader = true }

--- Histogram: per class (or package, or class loader: MAT's "group by"),
-- count, shallow and retained bytes with their shares of the totals;
-- sortable, filtered by a name (a substring), of one Android heap; with
-- `--baseline`, the change in count and shallow bytes per row.
function M.histogram(ctx)
  local heap, q = ctx.doc, ctx.query
  local group = GROUPS[q.group] and q.group or "class"
  local which, status, why = chosen_heap(ctx)
  if status then return nil, status, why end
  local base, msg = ctx.server:baseline()
  if ctx.server.opts.baseline and not base then return nil, 422, msg end
  local sort = SORTS[q.sort] and (base or not q.sort:match("_delta$")) and q.sort
    or group == "class" and "retained" or "shallow"
  local filter = q.filter and q.filter ~= "" and q.filter or nil
  local key = "histogram:" .. (ctx.model or "shark") .. (group ~= "class" and (":" .. group) or "")
    .. (which and (":heap=" .. which) or "")
  local all = ctx.compute(key, function()
    dominators(ctx)
    local kept = views.histogram_json(heap, ctx.model, nil, which)
    local rows = views.histogram_groups(heap, ctx.model, group, which, true)
    if group == "class" then
      for _, r in ipairs(rows) do r.class = r.name end
    end
    kept.rows, kept.group = rows, group
    local total = views.histogram_total(heap, ctx.model, which)
    kept.total = { count = total.count, shallow = total.shallow, retained = heap:reachable_bytes(which) }
    return kept
  end)
  local view = {}  -- (the kept result stays as it is: this request's rows are a new list)
  for k, v in pairs(all) do view[k] = v end
  local list = all.rows
  if base then  -- (the baseline's grouping is quick: no retained sizes)
    local copy = {}
    for i, r in ipairs(all.rows) do
      copy[i] = {}
      for k, v in pairs(r) do copy[i][k] = v end
    end
    local base_rows = which and not views.has_heap(base, which) and {}
      or views.histogram_groups(base, ctx.model, group, which)
    list = views.with_baseline(copy, base_rows)
    local bt = which and not views.has_heap(base, which) and { count = 0, shallow = 0 }
      or views.histogram_total(base, ctx.model, which)
    view.baseline = { file = ctx.server.opts.baseline, count = bt.count, shallow = bt.shallow }
  end
  local rows = json.array {}
  for _, r in ipairs(list) do
    if group == "class" and base and not r.class then r.class = r.name end
    if not filter or r.name:find(filter, 1, true) then rows[#rows + 1] = r end
  end
  table.sort(rows, function(x, y)
    local vx, vy = x[sort] or 0, y[sort] or 0
    if sort:match("_delta$") then vx, vy = math.abs(vx), math.abs(vy) end
    if vx ~= vy then return vx > vy end
    if x.shallow ~= y.shallow then return x.shallow > y.shallow end  -- (ties as sift histogram orders them)
    if x.count ~= y.count then return x.count > y.count end
    return x.name < y.name
  end)
  view.rows, view.sort, view.filter, view.heap = rows, sort, filter, which
  view.heaps = json.array(views.heap_names(heap))
  return view, function()
    local total = all.total
    local out = {}
    for i, r in ipairs(rows) do
      if i > 2000 then break end
      local name = group == "class" and class_link(ctx, r.name)
        or group == "loader" and (r.loader and a(href(ctx, "object/" .. r.loader), r.name) or esc(r.name))
        or r.name:match("^%(") and esc(r.name) or a(href(ctx, "histogram", { filter = r.name .. ".", heap = which }), r.name)
      local row = { name, num(r.count), num(r.shallow), pct(r.shallow, total.shallow),
        r.retained and num(r.retained) or "", pct(r.retained, total.retained) }
      if base then
        table.insert(row, 3, delta(r.count_delta))
        table.insert(row, 5, delta(r.shallow_delta))
      end
      out[i] = row
    end
    local totals = { "<b>total</b>", num(total.count), num(total.shallow), "100%", num(total.retained), "100%" }
    if base then
      table.insert(totals, 3, delta(total.count - view.baseline.count))
      table.insert(totals, 5, delta(total.shallow - view.baseline.shallow))
    end
    table.insert(out, 1, totals)
    local function link(query)
      local q2 = { sort = sort, filter = filter, group = group ~= "class" and group or nil, heap = which }
      for k, v in pairs(query) do q2[k] = v or nil end
      return href(ctx, "histogram", q2)
    end
    local heads_sort = {}
    for _, s in ipairs { "count", "shallow", "retained", base and "count_delta" or nil, base and "shallow_delta" or nil } do
      heads_sort[#heads_sort + 1] = s == sort and ("<b>%s</b>"):format(s) or a(link { sort = s }, s)
    end
    local groups = {}
    for _, g in ipairs { "class", "package", "loader" } do
      groups[#groups + 1] = g == group and ("<b>%s</b>"):format(g)
        or a(link { group = g ~= "class" and g or false, sort = false }, g)
    end
    local first = { class = "class", package = "package", loader = "class loader" }
    local heads = { first[group], "#instances", "#shallow", "#% shallow", "#retained", "#% retained" }
    if base then
      table.insert(heads, 3, "#Δ instances")
      table.insert(heads, 5, "#Δ shallow")
    end
    return html.page("Histogram", nav(ctx), table.concat {
      heap_picker(ctx, "histogram", which, { group = group ~= "class" and group or nil, filter = filter }),
      ('<p id="groups">group by: %s</p>'):format(table.concat(groups, " · ")),
      ('<form class="inline" method="get"><input type="text" name="filter" value="%s" '
        .. 'placeholder="%s"><input type="hidden" name="sort" value="%s">%s%s '
        .. '<button>filter</button></form>'):format(esc(filter), group == "loader" and "loader" or "class or package",
        esc(sort), group ~= "class" and ('<input type="hidden" name="group" value="%s">'):format(esc(group)) or "",
        which and ('<input type="hidden" name="heap" value="%s">'):format(esc(which)) or ""),
      ("<p>%s %s%s%s; sort by %s</p>"):format(num(#rows), group == "class" and "classes"
        or group == "package" and "packages" or "class loaders", filter and (" matching " .. esc(filter)) or "",
        which and (" in heap " .. esc(which)) or "", table.concat(heads_sort, ", ")),
      "<p class=\"muted\">Percentages of the total row: shallow of every instance and array"
        .. (which and " of the heap" or "") .. ", retained of the reachable heap"
        .. (which and (" (the bytes of heap " .. esc(which) .. "'s objects the GC roots reach)") or "")
        .. ". " .. (group == "class" and "A class's retained bytes: what its instances retain, each object once."
        or "A group's retained bytes are not shown: its classes hold each other, so their sizes would count "
        .. "bytes twice.")
        .. (base and (" Δ: the change since the baseline " .. esc(ctx.server.opts.baseline) .. ".") or "") .. "</p>",
      html.table(heads, out, "histogram"),
    })
  end
end

return M
