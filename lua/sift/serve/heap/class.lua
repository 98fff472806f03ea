--- A class's page, as ahat's class view and MAT's class inspector show
-- one: where it sits (its superclasses up to java.lang.Object, its direct
-- subclasses, its loader, its class object), its statics with their types
-- and values, its sizes, and its instances a page at a time, sorted by
-- retained or shallow size or in dump order.
-- @module sift.serve.heap.class

local json = require "sift.json"
local views = require "sift.heap.views"
local census = require "sift.heap.census"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local PAGE, href, nav, dominators, object_link, value_view, value_html = common.PAGE, common.href, common.nav,
  common.dominators, common.object_link, common.value_view, common.value_html

local M = {}

-- the orders of the instance table: query value -> words
local SORTS = { retained = "retained size", shallow = "shallow size", id = "dump order" }
local SORT_ORDER = { "retained", "shallow", "id" }

-- the class a query names: `id` (its class object's id, which tells apart
-- classes that share a name) or `name`; else nil, 404, why
local function chosen_class(heap, q)
  if q.id then
    local id = tonumber((q.id:match("^0[xX](%x+)$")) or "", 16)
    local obj = id and heap:object(id)
    local cls = obj and obj:as_class()
    if not cls then return nil, 404, ("no class object %s in this dump"):format(q.id) end
    return cls
  end
  if not q.name then return nil, 404, "no class named: give name= (or id=, its class object's id)" end
  local cls, why = heap:class(q.name)
  if not cls then return nil, 404, why end
  return cls
end

-- the query that names cls: its name, or its class object's id when
-- another class of that name comes first
local function class_query(heap, cls)
  if heap:class(cls.name) == cls then return { name = cls.name } end
  return { id = hex(cls.id) }
end

-- a class as a link to its page
local function class_link(ctx, cls)
  return a(href(ctx, "class", class_query(ctx.doc, cls)), cls.name)
end

-- a loader as its view: `sift loaders`' name, and its id (none for the
-- bootstrap loader)
local function loader_view(loader)
  return { name = census.loader_name(loader), id = loader and hex(loader:id()) or nil }
end

-- a loader as a link to its object page (the bootstrap loader: its name)
local function loader_html(ctx, loader)
  if not loader then return esc(census.loader_name(nil)) end
  return a(href(ctx, "object/" .. hex(loader:id())), census.loader_name(loader))
end

-- the JSON rows of a list: without the Objects and Classes the HTML uses
local function strip(list)
  local out = json.array {}
  for i, x in ipairs(list) do
    local c = {}
    for k, v in pairs(x) do if k ~= "obj" and k ~= "cls" and k ~= "raw" then c[k] = v end end
    out[i] = c
  end
  return out
end

-- sizes of every class, made once per file in the page thread (two C
-- passes; the dominator tree they need is made there too, so a class page
-- answers while a long computation holds the compute thread): class
-- object id (or "byte[]"... for primitive arrays) -> { count, shallow (of
-- its instances), retained (of its instances together: the retained sizes
-- of those no other instance of the class dominates, the histogram's) }
local function class_sizes(ctx)
  local heap = ctx.doc
  if not heap._served_class_sizes then
    dominators(ctx)
    local out = {}
    local function key(cls, elem) return cls and hex(cls.id) or (elem .. "[]") end
    for _, r in ipairs(heap:class_histogram(ctx.model)) do
      if r.class or r.elem then out[key(r.class, r.elem)] = { count = r.count, shallow = r.shallow, retained = 0 } end
    end
    for _, r in ipairs(heap:retained_by_class()) do
      local k = r.of and hex(r.of.id) or r.class
      if out[k] then out[k].retained = r.retained end
    end
    heap._served_class_sizes = out
  end
  return heap._served_class_sizes
end

--- Class: where it sits, its statics, its sizes, and its instances a page
-- at a time (`sort=retained|shallow|id`, `page=N`: 100 a page; a page past
-- the last is 404; a page that is not a number 1 or more is page 1).
function M.class(ctx)
  local heap, q = ctx.doc, ctx.query
  local cls, status, why = chosen_class(heap, q)
  if not cls then return nil, status, why end
  dominators(ctx)
  local sizes = class_sizes(ctx)[cls.name:match("^%l+%[%]$") and cls.name or hex(cls.id)]
    or { count = 0, shallow = 0, retained = 0 }
  local sort = SORTS[q.sort] and q.sort or "retained"
  local n = cls:instance_count()
  local pages = math.max(1, (n + PAGE - 1) // PAGE)
  local page = math.tointeger(tonumber(q.page))
  page = page and page >= 1 and page or 1
  if page > pages then
    return nil, 404, ("no page %d of class %s: its last is %d (%s instances, %d a page)"):format(page, cls.name, pages,
      n, PAGE)
  end
  local rows = json.array {}
  for i, obj in ipairs(heap:ranked_instances(cls, { by = sort, skip = (page - 1) * PAGE, count = PAGE })) do
    local v = value_view(obj)
    rows[i] = { rank = (page - 1) * PAGE + i, id = v.id, string = v.string, shallow = heap:shallow(obj, ctx.model),
      retained = heap:retained(obj), obj = obj }
  end
  local supers = json.array {}
  local c = cls.super
  while c do
    supers[#supers + 1] = { name = c.name, id = hex(c.id), cls = c }
    c = c.super
  end
  local subclasses = json.array {}
  for _, s in ipairs(cls:subclasses()) do
    subclasses[#subclasses + 1] = { name = s.name, id = hex(s.id), instances = s:instance_count(), cls = s }
  end
  table.sort(subclasses, function(x, y) return x.name < y.name or (x.name == y.name and x.id < y.id) end)
  local statics = json.array {}
  for i, s in ipairs(cls:static_fields()) do
    statics[i] = { name = s.name, type = s.type, value = value_view(s.value), raw = s.value }
  end
  local same_name = json.array {}
  for _, other in ipairs(heap:classes_named(cls.name)) do
    if other ~= cls then
      same_name[#same_name + 1] = { id = hex(other.id), loader = loader_view(other.loader), cls = other }
    end
  end
  local view = {
    name = cls.name, id = hex(cls.id), loader = loader_view(cls.loader),
    super = cls.super and cls.super.name or nil, supers = strip(supers), subclasses = strip(subclasses),
    same_name = strip(same_name), statics = strip(statics), instances = n, shallow = sizes.shallow,
    instances_retained = sizes.retained, class_shallow = cls.object and heap:shallow(cls.object, ctx.model) or nil,
    retained = cls.object and heap:retained(cls.object) or nil,
    sort = sort, page = page, pages = pages, per_page = PAGE, rows = strip(rows),
  }
  local base, no_base = ctx.server:baseline()
  if ctx.server.opts.baseline and not base then return nil, 422, no_base end
  if base then view.baseline = views.class_delta(base, heap, cls.name, ctx.model) end
  return view, function()
    local chain = {}
    for i, s in ipairs(supers) do chain[i] = class_link(ctx, s.cls) end
    local subs = {}
    for i, s in ipairs(subclasses) do subs[i] = class_link(ctx, s.cls) .. (" (%s instance%s)"):format(num(s.instances),
      s.instances == 1 and "" or "s") end
    local others = {}
    for i, o in ipairs(same_name) do
      others[i] = a(href(ctx, "class", { id = o.id }), o.id) .. " of " .. loader_html(ctx, o.cls.loader)
    end
    local retained_text = view.retained and num(view.retained) or '<span class="muted">none: no GC root reaches it</span>'
    local facts = {
      { "superclass", #chain > 0 and table.concat(chain, " → ") or '<span class="muted">none</span>' },
      { "subclasses", #subs > 0 and table.concat(subs, ", ") or '<span class="muted">none</span>' },
      { "class loader", loader_html(ctx, cls.loader) },
      { "class object", cls.object and object_link(ctx, cls.object) or '<span class="muted">not in the dump</span>' },
      { "instances", num(n) },
      { "shallow size of the instances", num(view.shallow) },
      { "retained by the instances together", num(view.instances_retained) },
      { "retained by the class object", retained_text },
    }
    if #others > 0 then facts[#facts + 1] = { "other classes of this name", table.concat(others, "<br>") } end
    local d = view.baseline
    if d then  -- (ahat's baseline: the class's row in each dump, and the change)
      local function signed(x) return (x > 0 and "+" or "") .. num(x) end
      facts[#facts + 1] = { "since the baseline", ("%s instances, %s bytes (then %s instances, %s bytes)"):format(
        signed(d.count_delta), signed(d.shallow_delta), num(d.base_count), num(d.base_shallow)) }
    end
    local fact_rows = {}
    for i, f in ipairs(facts) do fact_rows[i] = { esc(f[1]), f[2] } end
    local st = {}
    for i, s in ipairs(statics) do st[i] = { ('<span class="mono">%s</span>'):format(esc(s.type)), esc(s.name),
      value_html(ctx, s.raw) } end
    local function page_link(by, p, text)
      local qq = class_query(heap, cls)
      qq.sort, qq.page = by, p
      return a(href(ctx, "class", qq), text)
    end
    local sorts = {}
    for i, key in ipairs(SORT_ORDER) do
      sorts[i] = key == sort and ("<b>%s</b>"):format(esc(SORTS[key])) or page_link(key, nil, SORTS[key])
    end
    local pager = {}
    if page > 1 then pager[#pager + 1] = page_link(sort, page - 1, "← previous") end
    if page < pages then pager[#pager + 1] = page_link(sort, page + 1, "next →") end
    local inst = {}
    for i, r in ipairs(rows) do
      inst[i] = { num(r.rank), object_link(ctx, r.obj), num(r.shallow),
        r.retained and num(r.retained) or "-" }
    end
    local first, last = (page - 1) * PAGE + 1, math.min(n, page * PAGE)
    return html.page("class " .. cls.name, nav(ctx), table.concat {
      html.table({ "", "" }, fact_rows, "facts"),
      '<p class="muted">The class object retains its statics and what only they hold (MAT\'s "retained heap" of a '
        .. "class); the instances together retain what only they hold, each byte once (the histogram's retained "
        .. "column, MAT's retained size of a histogram row). Sizes under the " .. esc(ctx.model or "shark")
        .. " model; a retained size of - is an object no GC root reaches.</p>",
      "<h2>Static fields</h2>",
      html.table({ "type", "field", "value" }, st, "statics", "No static field."),
      n == 0 and '<h2>Instances</h2><p class="muted empty" id="instances">No instances.</p>' or table.concat {
        ("<h2>Instances %s to %s of %s (page %s of %s)</h2>"):format(num(first), num(last), num(n), num(page),
          num(pages)),
        '<p class="sort">sorted by ', table.concat(sorts, " · "), " (sizes largest first)</p>",
        #pager > 0 and ('<p class="pager">' .. table.concat(pager, " ") .. "</p>") or "",
        html.table({ "#rank", "object", "#shallow", "#retained" }, inst, "instances"),
      },
    })
  end
end

return M
