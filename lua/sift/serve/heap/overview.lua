--- The overview and the histogram of a heap dump.
-- @module sift.serve.heap.overview

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local href, class_link, nav, dominators = common.href, common.class_link, common.nav, common.dominators

local M = {}

--- Overview: the dump's facts, roots by kind, the largest retainers.
function M.overview(ctx)
  local heap = ctx.doc
  local info = heap:info()
  local summary = dominators(ctx)
  local top = views.top_json(views.top_rows(heap, 10, false))
  local view = { file = ctx.entry.name, format = info.format, version = info.version, id_size = info.id_size,
    instances = info.instances, classes = info.classes, object_arrays = info.object_arrays,
    primitive_arrays = info.primitive_arrays, roots = info.roots, warnings = json.array(info.warnings or {}),
    reachable = summary.reachable, unreachable = summary.unreachable,
    unreachable_bytes = summary.unreachable_bytes, top = top }
  return view, function()
    local roots = {}
    for kind, n in pairs(info.roots or {}) do roots[#roots + 1] = { esc(kind), num(n) } end
    table.sort(roots, function(x, y) return x[1] < y[1] end)
    local rows = {}
    for _, r in ipairs(top) do
      rows[#rows + 1] = { num(r.retained), num(r.shallow),
        a(href(ctx, "object/" .. r.id), r.class .. " " .. r.id) }
    end
    local warn = {}
    for _, w in ipairs(info.warnings or {}) do warn[#warn + 1] = '<p class="err">' .. esc(w) .. "</p>" end
    return html.page(ctx.entry.name, nav(ctx), table.concat {
      table.concat(warn),
      html.facts { { "format", ("%s %s"):format(info.format, info.version or "") }, { "file", ctx.entry.description },
        { "instances", info.instances }, { "classes", info.classes }, { "object arrays", info.object_arrays },
        { "primitive arrays", info.primitive_arrays }, { "reachable objects", summary.reachable },
        { "unreachable objects", summary.unreachable }, { "unreachable bytes", summary.unreachable_bytes } },
      common.unreachable_note(ctx, "", summary.unreachable),
      "<h2>GC roots by kind</h2>", html.table({ "kind", "#roots" }, roots),
      "<h2>Largest retainers</h2>", html.table({ "#retained", "#shallow", "object" }, rows, "top"),
    })
  end
end

local SORTS = { count = true, shallow = true, retained = true }

--- Histogram: per class, count, shallow and retained bytes; sortable,
-- filtered by a class or package name (a substring).
function M.histogram(ctx)
  local heap, q = ctx.doc, ctx.query
  local sort = SORTS[q.sort] and q.sort or "retained"
  local filter = q.filter and q.filter ~= "" and q.filter or nil
  local all = ctx.compute("histogram:" .. (ctx.model or "shark"), function()
    dominators(ctx)
    local kept = views.histogram_json(heap, ctx.model)
    local retained = {}
    for _, r in ipairs(heap:retained_by_class()) do retained[r.class] = r.retained end
    for _, r in ipairs(kept.rows) do r.retained = retained[r.class] or 0 end
    return kept
  end)
  local view = {}  -- (the kept result stays as it is: this request's rows are a new list)
  for k, v in pairs(all) do view[k] = v end
  local rows = json.array {}
  for _, r in ipairs(all.rows) do
    if not filter or r.class:find(filter, 1, true) then rows[#rows + 1] = r end
  end
  table.sort(rows, function(x, y)
    if x[sort] ~= y[sort] then return x[sort] > y[sort] end
    return x.class < y.class
  end)
  view.rows, view.sort, view.filter = rows, sort, filter
  return view, function()
    local out = {}
    for i, r in ipairs(rows) do
      if i > 2000 then break end
      out[i] = { class_link(ctx, r.class), num(r.count), num(r.shallow), num(r.retained) }
    end
    local heads = {}
    for _, s in ipairs { "count", "shallow", "retained" } do
      heads[#heads + 1] = a(href(ctx, "histogram", { sort = s, filter = filter }), s)
    end
    return html.page("Histogram", nav(ctx), table.concat {
      ('<form class="inline" method="get"><input type="text" name="filter" value="%s" '
        .. 'placeholder="class or package"><input type="hidden" name="sort" value="%s"> '
        .. '<button>filter</button></form>'):format(esc(filter), esc(sort)),
      ("<p>%s classes%s; sort by %s</p>"):format(num(#rows), filter and (" matching " .. esc(filter)) or "",
        table.concat(heads, ", ")),
      html.table({ "class", "#instances", "#shallow", "#retained" }, out, "histogram"),
    })
  end
end

return M
