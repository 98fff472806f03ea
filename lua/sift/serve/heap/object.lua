--- An object's page: fields or elements, path, dominator, referrers.
-- @module sift.serve.heap.object

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local PAGE, href, object_link, nav, dominators, value_view, value_html =
  common.PAGE, common.href, common.object_link, common.nav, common.dominators, common.value_view, common.value_html

local M = {}

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

return M
