--- The heap's pages (HPROF and BMD): overview, histogram, class, object,
-- dominator tree, leaks. Each page is a view, a table in the CLI's JSON
-- schemas (`sift.heap.views`), and the HTML made from it.
-- @module sift.serve.heap

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex

local M = {}

local PAGE = 100  -- instances, elements, referrers per page

-- the link of a page of this file
local function href(ctx, page, query) return html.file_href(ctx.entry.id, page, query) end

local function object_link(ctx, obj)
  return a(href(ctx, "object/" .. hex(obj:id())), views.object_text(obj))
end

local function class_link(ctx, name)
  return a(href(ctx, "class", { name = name }), name)
end

local function nav(ctx)
  local links = { { href(ctx, ""), ctx.entry.name }, { href(ctx, "histogram"), "histogram" },
    { href(ctx, "dominators"), "dominator tree" }, { href(ctx, "leaks"), "leaks" }, { href(ctx, "waste"), "waste" },
    { href(ctx, "threads"), "threads" }, { href(ctx, "loaders"), "class loaders" } }
  if ctx.server.opts.baseline then links[#links + 1] = { href(ctx, "diff"), "diff with the baseline" } end
  return links
end

-- the dominator tree, built once per heap (the first page that needs it)
local function dominators(ctx)
  local heap = ctx.doc
  if not heap._served_tree then
    heap._served_tree = heap:dominators { model = ctx.model }
  end
  return heap._served_tree
end

-- what "unreachable" counts on the overview and on the leaks page, in
-- words (they count different things): the paragraph of `page` ("" or
-- "leaks"), with the counts each page knows
local function unreachable_note(ctx, page, all, flagged)
  local graph = ("in the graph of the dominator tree (%s; sizes --model %s)"):format(
    ctx.model == "visualvm" and "weak, soft, phantom and finalizer referents followed, as VisualVM follows them"
      or "weak, soft, phantom and finalizer referents not followed", esc(ctx.model or "shark"))
  local overview = ("%s objects of the dump (instances, arrays and classes) that no GC root reaches %s: garbage the "
    .. "dump kept (a jcmd dump with -all, an Android dump) and what only weak references hold"):format(num(all), graph)
  local should_be_dead = "that a leak finder says should be dead (watched by a KeyedWeakReference, a destroyed "
    .. "Activity, …) and that no strong path from a GC root reaches: the collector will free them, so they are no leak"
  if page == "leaks" then
    return ('<p id="unreachable-note">Unreachable here: the %s object%s %s. The %s counts another thing: its %s.</p>')
      :format(num(flagged), flagged == 1 and "" or "s", should_be_dead, a(href(ctx, ""), "overview"), overview)
  end
  return ('<p id="unreachable-note">Unreachable objects here: the %s. The %s lists only the objects %s.</p>')
    :format(overview, a(href(ctx, "leaks"), "leaks page"), should_be_dead)
end

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
      unreachable_note(ctx, "", summary.unreachable),
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

--- Class: its facts, statics, and its instances a page at a time.
function M.class(ctx)
  local heap, q = ctx.doc, ctx.query
  local cls = q.name and heap:class(q.name)
  if not cls then return nil, 404, ("no class named %q"):format(tostring(q.name)) end
  local tree = dominators(ctx)
  local page = math.max(1, math.tointeger(tonumber(q.page)) or 1)
  local instances, n = json.array {}, 0
  for obj in cls:instances() do
    n = n + 1
    if n > (page - 1) * PAGE and n <= page * PAGE then
      instances[#instances + 1] = { id = hex(obj:id()), shallow = heap:shallow(obj, ctx.model),
        retained = tree and heap:retained(obj) or nil }
    end
  end
  local statics = {}
  for name, v in pairs(cls:statics()) do
    statics[#statics + 1] = { name = name, value = type(v) == "userdata" and hex(v:id()) or v }
  end
  table.sort(statics, function(x, y) return x.name < y.name end)
  local super = cls.super
  local view = { name = cls.name, id = hex(cls.id), instances = n, page = page, pages = math.max(1, (n + PAGE - 1) // PAGE),
    super = super and super.name or nil, statics = json.array(statics), rows = instances }
  return view, function()
    local rows = {}
    for i, r in ipairs(instances) do
      rows[i] = { a(href(ctx, "object/" .. r.id), r.id), num(r.shallow), num(r.retained) }
    end
    local st = {}
    for i, s in ipairs(statics) do
      local v = type(s.value) == "string" and s.value:match("^0x%x+$") and a(href(ctx, "object/" .. s.value), s.value)
        or esc(s.value)
      st[i] = { esc(s.name), v }
    end
    local pager = {}
    if page > 1 then pager[#pager + 1] = a(href(ctx, "class", { name = cls.name, page = page - 1 }), "← previous") end
    if page < view.pages then pager[#pager + 1] = a(href(ctx, "class", { name = cls.name, page = page + 1 }), "next →") end
    return html.page("class " .. cls.name, nav(ctx), table.concat {
      html.facts { { "instances", n }, { "superclass", view.super }, { "class object", view.id } },
      #st > 0 and ("<h2>Static fields</h2>" .. html.table({ "name", "value" }, st)) or "",
      ("<h2>Instances (page %s of %s)</h2>"):format(num(page), num(view.pages)), table.concat(pager, " "),
      html.table({ "object", "#shallow", "#retained" }, rows, "instances"),
    })
  end
end

-- a value as a view (objects, which are userdata, as their id and class)
-- and as HTML
local function value_view(v)
  if type(v) == "userdata" then return { id = hex(v:id()), class = v:class_name() } end
  return v
end

local function value_html(ctx, v)
  if type(v) == "userdata" then return object_link(ctx, v) end
  if v == nil then return '<span class="muted">null</span>' end
  return esc(v)
end

--- Object: fields or elements (paged), its string, referrers, the path
-- from a GC root, retained size, dominator and what it dominates.
function M.object(ctx, id_text)
  local heap, q = ctx.doc, ctx.query
  local id = tonumber(id_text, 16) or tonumber((id_text or ""):match("^0x(%x+)$") or "", 16)
  local obj = id and heap:object(id)
  if not obj then return nil, 404, ("no object %s in this dump"):format(tostring(id_text)) end
  dominators(ctx)
  local page = math.max(1, math.tointeger(tonumber(q.page)) or 1)
  heap:path_search({ obj })
  local view, path = views.object_path(heap, obj, { model = ctx.model, retained = true })
  view.kind = obj:kind()
  local fields, elements = json.array {}, nil
  if view.kind == "instance" then
    for name, v, decl in obj:fields() do
      fields[#fields + 1] = { name = name, declared_by = decl and decl.name, value = value_view(v), raw = v }
    end
    local s = obj:class_name() == "java.lang.String" and obj:string(4096)
    if s then view.string = s end
  elseif view.kind ~= "class" then
    local len = obj:length() or 0
    view.length = len
    elements = json.array {}
    for i = (page - 1) * PAGE + 1, math.min(len, page * PAGE) do
      local v = obj:get(i)
      elements[#elements + 1] = { index = i - 1, value = value_view(v), raw = v }
    end
    view.page, view.pages = page, math.max(1, (len + PAGE - 1) // PAGE)
  end
  local referrers = json.array {}
  for i, r in ipairs(heap:referrers(obj)) do
    if i > PAGE then break end
    referrers[i] = { id = hex(r:id()), class = r:class_name(), obj = r }
  end
  local idom = heap:idom(obj)
  local dominated = json.array {}
  for i, d in ipairs(heap:dominated(obj, PAGE)) do
    dominated[i] = { id = hex(d:id()), class = d:class_name(), retained = heap:retained(d), obj = d }
  end
  view.fields = view.kind == "instance" and fields or nil
  view.elements = elements
  view.referrers = referrers
  view.dominator = idom and { id = hex(idom:id()), class = idom:class_name() } or nil
  view.dominated = dominated
  local function strip(list)  -- (the Objects stay out of the JSON)
    local out = json.array {}
    for i, x in ipairs(list or {}) do
      local c = {}
      for k, v in pairs(x) do if k ~= "obj" and k ~= "raw" then c[k] = v end end
      out[i] = c
    end
    return out
  end
  local render = function()
    local parts = { html.facts { { "class", view.class }, { "kind", view.kind }, { "shallow", view.shallow },
      { "retained", view.retained }, { "length", view.length } } }
    if view.string then parts[#parts + 1] = "<h2>String value</h2><pre>" .. esc(view.string) .. "</pre>" end
    if view.kind == "instance" then
      local rows = {}
      for i, f in ipairs(fields) do rows[i] = { esc(f.name), esc(f.declared_by), value_html(ctx, f.raw) } end
      parts[#parts + 1] = "<h2>Fields</h2>" .. html.table({ "field", "declared by", "value" }, rows, "fields")
    elseif elements then
      local rows = {}
      for i, e in ipairs(elements) do rows[i] = { num(e.index), value_html(ctx, e.raw) } end
      parts[#parts + 1] = ("<h2>Elements (page %s of %s)</h2>"):format(num(view.page), num(view.pages))
        .. (view.page < view.pages and a(href(ctx, "object/" .. view.id, { page = view.page + 1 }), "next →") or "")
        .. html.table({ "#index", "value" }, rows, "elements")
    end
    if path then
      local steps = {}
      steps[1] = "<li>" .. esc(views.root_text(path[1])) .. "</li>"
      for k, st in ipairs(path) do
        local shown = (st.count or 1) > 1 and st.last or st.object
        local via = path[k + 1] and (" ↓ " .. esc(views.ref_label(shown, path[k + 1]))) or ""
        local run = (st.count or 1) > 1 and (" … %s the same way"):format(num(st.count - 1)) or ""
        steps[#steps + 1] = "<li>" .. object_link(ctx, st.object) .. run .. via .. "</li>"
      end
      parts[#parts + 1] = '<h2>Shortest path from a GC root</h2><ol id="path">' .. table.concat(steps) .. "</ol>"
    else
      parts[#parts + 1] = '<h2>Shortest path from a GC root</h2><p class="muted">no strong path</p>'
    end
    if idom then parts[#parts + 1] = "<h2>Immediate dominator</h2><p>" .. object_link(ctx, idom) .. "</p>" end
    local rows = {}
    for i, d in ipairs(dominated) do rows[i] = { object_link(ctx, d.obj), num(d.retained) } end
    parts[#parts + 1] = "<h2>Dominates</h2>" .. html.table({ "object", "#retained" }, rows, "dominated")
    rows = {}
    for i, r in ipairs(referrers) do rows[i] = { object_link(ctx, r.obj) } end
    parts[#parts + 1] = "<h2>Referrers</h2>" .. html.table({ "object" }, rows, "referrers")
    return html.page(views.object_text(obj), nav(ctx), table.concat(parts))
  end
  view.fields, view.elements = view.fields and strip(view.fields), elements and strip(elements)
  view.referrers, view.dominated = strip(referrers), strip(dominated)
  return view, render
end

--- Dominator tree: the children of a node (the roots' when none), largest
-- first, each a link to expand it.
function M.dominators(ctx)
  local heap, q = ctx.doc, ctx.query
  dominators(ctx)
  local parent = q.of and heap:object(tonumber((q.of:match("^0x(%x+)$") or q.of), 16) or -1)
  if q.of and not parent then return nil, 404, "no such object: " .. q.of end
  local total = heap:reachable_bytes()
  local children = json.array {}
  for i, o in ipairs(heap:dominated(parent, PAGE)) do
    children[i] = { id = hex(o:id()), class = o:class_name(), retained = heap:retained(o), shallow = heap:shallow(o),
      children = heap:dominated_count(o), obj = o }
  end
  local view = { of = parent and hex(parent:id()) or nil, total = total, children = json.array {} }
  for i, c in ipairs(children) do
    view.children[i] = { id = c.id, class = c.class, retained = c.retained, shallow = c.shallow, children = c.children }
  end
  return view, function()
    local rows = {}
    for i, c in ipairs(children) do
      local pct = total > 0 and ("%.2f%%"):format(100 * c.retained / total) or "-"
      rows[i] = { esc(pct), num(c.retained), object_link(ctx, c.obj),
        c.children > 0 and ('<a href="%s">expand (%s)</a>'):format(esc(href(ctx, "dominators", { of = c.id })),
          num(c.children)) or "" }
    end
    local up = parent and heap:idom(parent)
    local title = parent and ("dominated by " .. views.object_text(parent)) or "Dominator tree"
    return html.page(title, nav(ctx), table.concat {
      parent and ("<p>" .. (up and a(href(ctx, "dominators", { of = hex(up:id()) }), "↑ up")
        or a(href(ctx, "dominators"), "↑ the roots")) .. "</p>") or "",
      html.table({ "#%", "#retained", "object", "" }, rows, "dominators"),
    })
  end
end

-- the LeakCanary-style leaks (a group: description, retained, traces) as
-- HTML: each trace's root and nodes, every node a link to its object page
local function leaks_html(ctx, groups, kind)
  local fields = require "sift.heap.fields"
  local leak_report = require "sift.heap.leak_report"
  local out = {}
  for g, leak in ipairs(groups) do
    out[#out + 1] = ('<section class="leak" id="%s-%d"><h3>%s</h3><p>%s retained by the leaking objects of %s trace%s%s; '
      .. "signature <code>%s</code></p>"):format(kind, g, esc(leak.description), html.bytes(leak.retained),
      num(#leak.traces), #leak.traces == 1 and "" or "s", leak.pattern and (", pattern " .. esc(leak.pattern)) or "",
      esc(leak.signature))
    for i, trace in ipairs(leak.traces) do
      local root = views.root_text { root = trace.root, root_inferred = trace.root_inferred, thread = trace.thread,
        frame_info = trace.frame }
      local nodes = { '<li class="root">' .. esc(root) .. "</li>" }
      for _, e in ipairs(trace.elements) do
        local status = e.status == "UNKNOWN" and "Leaking: UNKNOWN"
          or ("Leaking: %s (%s)"):format(e.status == "LEAKING" and "YES" or "NO", e.reason)
        local lines = { ('<a class="node" href="%s">%s %s <span class="mono">%s</span></a>'):format(
          esc(href(ctx, "object/" .. hex(e.object:id()))), esc(e.class), esc(e.type), hex(e.object:id())),
          ('<span class="%s">%s</span>'):format(e.status, esc(status)) }
        if e.retained and e.retained_count then
          lines[#lines + 1] = ("Retaining %s in %s objects"):format(html.bytes(e.retained), num(e.retained_count))
        end
        for _, label in ipairs(e.labels) do lines[#lines + 1] = esc(label) end
        if e.ref_name then
          lines[#lines + 1] = ("↓ %s<span%s>%s</span>"):format(e.ref_type == "static" and "static " or "",
            e.suspect and ' class="suspect" title="likely cause"' or "", esc(fields.simple(e.owner) .. "." .. e.ref_name))
        end
        nodes[#nodes + 1] = "<li>" .. table.concat(lines, "<br>") .. "</li>"
      end
      out[#out + 1] = ('<details%s><summary>Trace %s: %s</summary><ol class="trace">%s</ol>'
        .. "<details><summary>as LeakCanary's text</summary><pre>%s</pre></details></details>"):format(
        i == 1 and " open" or "", num(i), esc(root), table.concat(nodes), esc(leak_report.render_trace(trace)))
    end
    out[#out + 1] = "</section>"
  end
  if #groups == 0 then out[1] = '<p class="muted">none</p>' end
  return table.concat(out)
end

-- the suspects as HTML: what, its share, its object and where the memory
-- accumulates (links to the dominator tree expanded there), the path to it
local function suspects_html(ctx, list, reachable)
  local function subtree(obj)
    return a(href(ctx, "dominators", { of = hex(obj:id()) }), "dominator subtree")
  end
  local function what(sus)
    if sus.kind == "object" then
      return ('one <span class="suspect-class">%s</span> (%s)'):format(esc(sus.class), object_link(ctx, sus.object))
    end
    return ('%s instances of <span class="suspect-class">%s</span>, all held by %s'):format(num(sus.count),
      esc(sus.class), object_link(ctx, sus.holder))
  end
  local out = {}
  for i, sus in ipairs(list) do
    local lines = { ("%s %s %s bytes, %.1f%% of the %s reachable bytes; its %s"):format(what(sus),
      sus.kind == "class" and "retain" or "retains", num(sus.retained), 100 * sus.share, num(reachable),
      subtree(sus.object)) }
    for _, inner in ipairs(sus.nested or {}) do
      lines[#lines + 1] = ("inside it: %s %s %s bytes (%.1f%%); its %s"):format(what(inner),
        inner.kind == "class" and "retain" or "retains", num(inner.retained), 100 * inner.share, subtree(inner.object))
    end
    local acc = sus.accumulation
    if acc.object ~= sus.object then
      lines[#lines + 1] = ("the memory accumulates in %s (%s bytes); its %s"):format(object_link(ctx, acc.object),
        num(acc.retained), subtree(acc.object))
    end
    if sus.path then
      local steps = {}
      for k, st in ipairs(sus.path) do
        steps[k] = k == 1 and ("root " .. esc(st.root) .. " " .. object_link(ctx, st.object))
          or (esc(st.label) .. " " .. object_link(ctx, st.object))
      end
      lines[#lines + 1] = "path: " .. table.concat(steps, " → ")
    end
    out[i] = ('<li id="suspect-%d">%s</li>'):format(i, table.concat(lines, "<br>"))
  end
  if #out == 0 then return '<p class="muted">nothing holds a tenth of the reachable heap</p>' end
  return '<ol id="suspects">' .. table.concat(out) .. "</ol>"
end

-- the leaks page's HTML, from `sift.heap.leaks`' report
local function leaks_page(ctx, report)
  local summary = dominators(ctx)
  local unreachable = {}
  for i, obj in ipairs(report.unreachable) do unreachable[i] = "<li>" .. object_link(ctx, obj) .. "</li>" end
  local meta, keys = {}, {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do meta[i] = { k, report.metadata[k] } end
  local function count(n, what) return num(n) .. " " .. what .. (n == 1 and "" or "s") end
  return html.page("Leaks", nav(ctx), table.concat {
    ('<p id="counts"><a href="#application">%s</a>, <a href="#library">%s</a>, <a href="#unclosed">%s</a>, '
      .. '<a href="#suspects-h">%s</a>, <a href="#unreachable">%s</a></p>'):format(
      count(#report.application_leaks, "application leak"), count(#report.library_leaks, "library leak"),
      count(#report.unclosed_resources, "unclosed resource"), count(#report.suspects, "leak suspect"),
      count(#report.unreachable, "unreachable object")),
    '<h2 id="application">Application leaks</h2>', leaks_html(ctx, report.application_leaks, "application"),
    '<h2 id="library">Library leaks</h2>', leaks_html(ctx, report.library_leaks, "library"),
    '<h2 id="unclosed">Unclosed resources</h2>', leaks_html(ctx, report.unclosed_resources, "unclosed"),
    '<h2 id="suspects-h">Leak suspects</h2><p>What holds more than a tenth of the reachable heap, as Eclipse MAT '
      .. "reports it (sizes: --model shark, as sift leaks --suspects gives them).</p>",
    suspects_html(ctx, report.suspects, report.reachable_bytes),
    '<h2 id="unreachable">Unreachable: should be dead, and are</h2>',
    unreachable_note(ctx, "leaks", summary.unreachable, #report.unreachable),
    #unreachable > 0 and ('<ul id="unreachable-list">' .. table.concat(unreachable) .. "</ul>") or "",
    "<h2>Metadata</h2>", html.facts(meta),
  })
end

--- Leaks: `sift leaks --suspects` as a page of the site: LeakCanary's
-- traces (each node a link to its object), library leaks, unclosed
-- resources, MAT-style suspects (each linked to its dominator subtree),
-- the objects that should be dead and are; the JSON twin is `sift leaks
-- --suspects --json`'s.
function M.leaks(ctx)
  local leaks = require "sift.heap.leaks"
  local heap = ctx.doc
  -- computed once, with its page (the report holds objects, which stay in
  -- the thread that computed it; its JSON and HTML are plain text)
  local kept = ctx.compute("leaks:" .. (ctx.model or "shark"), function()
    local report = leaks.analyze(heap, { suspects = true })  -- (its sizes: --model shark, as the CLI's)
    if ctx.model ~= "shark" then heap:dominators { model = ctx.model } end  -- (the other pages' tree back)
    return { view = leaks.to_json(report), page = leaks_page(ctx, report) }
  end)
  return kept.view, function() return kept.page end
end

--- Diff with the baseline (`--baseline`): `sift diff-heap`'s view.
function M.diff(ctx)
  local base, msg = ctx.server:baseline()
  if not base then return nil, msg and 422 or 404, msg or "no baseline: start the server with --baseline FILE" end
  local view = views.diff_json(base, ctx.doc, ctx.model, PAGE)
  return view, function()
    local rows = {}
    for i, r in ipairs(view.classes) do
      if i > 1000 then break end
      rows[i] = { class_link(ctx, r.class), num(r.count_delta), num(r.shallow_delta), num(r.count), num(r.shallow) }
    end
    local new = {}
    for i, o in ipairs(view.new_objects.first) do
      new[i] = { a(href(ctx, "object/" .. o.id), o.class .. " " .. o.id), num(o.shallow) }
    end
    return html.page("Diff with the baseline", nav(ctx), table.concat {
      html.facts { { "baseline", ctx.server.opts.baseline }, { "instances then", view.base_instances },
        { "instances now", view.instances }, { "objects new since", view.new_objects.count },
        { "bytes new since", view.new_objects.bytes } },
      "<h2>Classes that changed</h2>",
      html.table({ "class", "#Δ instances", "#Δ bytes", "#instances", "#bytes" }, rows, "diff"),
      "<h2>New since the baseline (first 100)</h2>", html.table({ "object", "#shallow" }, new, "new"),
    })
  end
end

--- Waste: duplicate strings and arrays, collections below capacity,
-- arrays of zeros, boxed primitives (`sift waste`), each under its rule.
function M.waste(ctx)
  local heap = ctx.doc
  local model = ctx.model or "shark"
  local r = ctx.compute("waste:" .. model, function() return require("sift.heap.waste").report(heap, { model = model }) end)
  return r, function()
    local dup, arr, coll, zero, box = {}, {}, {}, {}, {}
    for i, d in ipairs(r.duplicate_strings) do
      dup[i] = { num(d.count), num(d.arrays), num(d.wasted), esc(d.value), esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, d in ipairs(r.duplicate_arrays) do
      arr[i] = { num(d.count), num(d.wasted), esc(d.class:gsub("%[%]$", "[" .. d.length .. "]")), esc(d.preview),
        esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, c in ipairs(r.collections) do
      local worst = {}
      for j, w in ipairs(c.worst) do
        worst[j] = ('<a href="%s">%s of %s</a>'):format(esc(href(ctx, "object/" .. w.id)), num(w.size), num(w.capacity))
      end
      coll[i] = { class_link(ctx, c.class), num(c.count), esc(c.fill and ("%.0f%%"):format(100 * c.fill) or "-"),
        num(c.wasted), table.concat(worst, ", ") }
    end
    for i, z in ipairs(r.zero_arrays) do zero[i] = { esc(z.class), num(z.count), num(z.wasted) } end
    for i, b in ipairs(r.boxed) do box[i] = { esc(b.class), num(b.count), b.distinct and num(b.distinct) or "?", num(b.wasted) } end
    local function rule(name) return "<p class=rule>wasted: " .. esc(r.rules[name]) .. "</p>" end
    return html.page("Wasted memory", nav(ctx), table.concat {
      ("<p>sizes: --model %s; duplicate strings: %s values held more than once, %s bytes wasted in all; "
        .. "duplicate arrays: %s, %s bytes</p>"):format(esc(r.model), num(r.totals.duplicate_strings.groups),
        num(r.totals.duplicate_strings.wasted), num(r.totals.duplicate_arrays.groups),
        num(r.totals.duplicate_arrays.wasted)),
      "<h2>Duplicate strings</h2>", rule("duplicate_strings"),
      html.table({ "#copies", "#arrays", "#wasted", "value", "held by" }, dup, "strings"),
      "<h2>Duplicate arrays</h2>", rule("duplicate_arrays"),
      html.table({ "#copies", "#wasted", "type", "first elements", "held by" }, arr, "arrays"),
      "<h2>Collections below capacity</h2>", rule("collections"),
      html.table({ "class", "#instances", "fill", "#wasted", "worst (size of capacity)" }, coll, "collections"),
      "<h2>Arrays of zeros</h2>", rule("zero_arrays"), html.table({ "type", "#arrays", "#bytes" }, zero, "zeros"),
      "<h2>Boxed primitives</h2>", rule("boxed"), html.table({ "class", "#boxes", "#values", "#wasted" }, box, "boxes"),
    })
  end
end

--- Threads: stacks, the locals each frame holds, what they retain (`sift threads`).
function M.threads(ctx)
  local heap = ctx.doc
  local threads = ctx.compute("threads", function()
    dominators(ctx)
    return require("sift.heap.census").threads(heap)
  end)
  return threads, function()
    local parts = {}
    for _, t in ipairs(threads) do
      local rows, by_frame = {}, {}
      for _, l in ipairs(t.locals) do
        by_frame[l.frame or 0] = by_frame[l.frame or 0] or {}
        table.insert(by_frame[l.frame or 0], l)
      end
      for i, f in ipairs(t.frames) do
        local held = {}
        for j, l in ipairs(by_frame[i] or {}) do
          held[j] = a(href(ctx, "object/" .. l.id), l.class .. " " .. l.id) .. " (" .. num(l.retained) .. ")"
        end
        rows[#rows + 1] = { esc(("%s.%s"):format(f.class or "?", f.method or "?")),
          esc(f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line) or (f.source or "")), table.concat(held, "<br>") }
      end
      parts[#parts + 1] = ("<h2>%s</h2><p>the thread retains %s bytes; its stack holds %s</p>"):format(
        esc(t.name or ("thread " .. t.serial)), num(t.retained or 0), num(t.held))
      parts[#parts + 1] = html.table({ "frame", "source", "locals (retained)" }, rows, "thread-" .. t.serial)
    end
    if #parts == 0 then parts[1] = "<p>no threads in this dump</p>" end
    return html.page("Threads", nav(ctx), table.concat(parts))
  end
end

--- Class loaders: classes, instances, retained, duplicate classes (`sift loaders`).
function M.loaders(ctx)
  local heap = ctx.doc
  local both = ctx.compute("loaders", function()
    dominators(ctx)
    local loaders, duplicates = require("sift.heap.census").loaders(heap)
    return { loaders, duplicates }
  end)
  local loaders, duplicates = both[1], both[2]
  return { loaders = loaders, duplicates = duplicates }, function()
    local rows, dups = {}, {}
    for i, l in ipairs(loaders) do
      rows[i] = { l.id and a(href(ctx, "object/" .. l.id), l.name) or esc(l.name), num(l.classes), num(l.instances),
        l.retained and num(l.retained) or "-", esc(l.parent or ""), esc(table.concat(l.dex or {}, ", ")) }
    end
    for i, d in ipairs(duplicates) do
      local names = {}
      for j, l in ipairs(d.loaders) do names[j] = esc(l.name) end
      dups[i] = { class_link(ctx, d.name), table.concat(names, "<br>") }
    end
    return html.page("Class loaders", nav(ctx), table.concat {
      html.table({ "loader", "#classes", "#instances", "#retained", "parent", "dex" }, rows, "loaders"),
      "<h2>Classes more than one loader defined</h2>", html.table({ "class", "loaders" }, dups, "duplicates"),
    })
  end
end

M.pages = { [""] = M.overview, diff = M.diff, histogram = M.histogram, class = M.class, object = M.object,
  dominators = M.dominators, leaks = M.leaks, waste = M.waste, threads = M.threads, loaders = M.loaders }

return M
