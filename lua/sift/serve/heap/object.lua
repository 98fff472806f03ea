--- An object's page, as ahat's object view and MAT's inspector show one:
-- its fields grouped by the class that declares them, or its elements
-- (object arrays with each element's sizes; primitive arrays previewed:
-- byte[] as a hex dump and text, char[] as text), its referrers with the
-- field or index they refer through, the path from a GC root, its
-- dominator and what it dominates.
-- @module sift.serve.heap.object

local json = require "sift.json"
local bitmaps = require "sift.heap.bitmaps"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local PAGE, href, object_link, class_link, nav, dominators, value_view, value_html = common.PAGE, common.href,
  common.object_link, common.class_link, common.nav, common.dominators, common.value_view, common.value_html

local M = {}

local TEXT_PAGE = 4096  -- bytes of a byte[], chars of a char[] per page (a byte[]'s: 256 rows of 16)
local VIA = 3       -- references shown per referrer (an array may hold an object many times)

-- xxd -g1's line for up to 16 bytes at offset: "00000000: 76 69 70 00 01 ...  vip.."
local function hex_line(offset, bytes)
  local hexes, text = {}, {}
  for i, b in ipairs(bytes) do
    hexes[i] = ("%02x "):format(b)
    text[i] = (b >= 0x20 and b < 0x7f) and string.char(b) or "."
  end
  return ("%08x: %-48s %s"):format(offset, table.concat(hexes), table.concat(text))
end

-- the bytes' text: UTF-8 when they are valid UTF-8, else Latin-1
local function bytes_text(s)
  if utf8.len(s) then return s end
  return (s:gsub("[\128-\255]", function(c) return utf8.char(c:byte()) end))
end

-- elements first..last of an array as the page and its JSON show them:
-- object arrays with each element's sizes; byte[] as a hex dump and text;
-- char[] as text; other primitive arrays as values
local function array_part(ctx, heap, obj, elem, first, last)
  if obj:kind() == "object_array" then
    local elements = json.array {}
    for i = first, last do
      local v = obj:get(i)
      local e = { index = i - 1, value = value_view(v), raw = v }
      if v then e.shallow, e.retained = heap:shallow(v, ctx.model), heap:retained(v) end
      elements[#elements + 1] = e
    end
    return { elements = elements }
  elseif elem == "byte" then
    local bytes, lines, row = {}, {}, {}
    for i = first, last do
      local b = obj:get(i) & 0xff
      bytes[#bytes + 1], row[#row + 1] = string.char(b), b
      if #row == 16 or i == last then
        lines[#lines + 1] = hex_line(i - #row, row)
        row = {}
      end
    end
    local raw = table.concat(bytes)
    return { bytes = { offset = first - 1, hex = (raw:gsub(".", function(c) return ("%02x"):format(c:byte()) end)),
      text = bytes_text(raw) }, dump = table.concat(lines, "\n") }
  elseif elem == "char" then  -- (decoded from the start: a surrogate pair is one character)
    local text = obj:string(last) or ""
    local from = utf8.offset(text, first)
    return { text = from and text:sub(from) or "" }
  end
  local elements = json.array {}
  for i = first, last do elements[#elements + 1] = { index = i - 1, value = obj:get(i) } end
  return { elements = elements }
end

-- the fields of an instance, in groups by declaring class (the object's
-- class first, then its superclass and up: ahat's order; each class's in
-- declaration order, see sift.heap's Object.fields)
local function field_groups(obj)
  local groups, fields = {}, json.array {}
  for name, v, decl, ftype in obj:fields() do
    local f = { name = name, declared_by = decl and decl.name, type = ftype, value = value_view(v), raw = v }
    fields[#fields + 1] = f
    local g = groups[#groups]
    if not g or g.class ~= f.declared_by then
      g = { class = f.declared_by, fields = {} }
      groups[#groups + 1] = g
    end
    g.fields[#g.fields + 1] = f
  end
  return fields, groups
end

-- the fields as one table, a row group per declaring class
local function fields_html(ctx, groups)
  local out = { '<table id="fields"><tr><th>type</th><th>field</th><th>value</th></tr>' }
  for _, g in ipairs(groups) do
    out[#out + 1] = ('<tbody class="declared" data-class="%s"><tr><th colspan="3">%s</th></tr>'):format(esc(g.class),
      g.class and class_link(ctx, g.class) or "?")
    for _, f in ipairs(g.fields) do
      out[#out + 1] = ('<tr><td class="mono">%s</td><td>%s</td><td>%s</td></tr>'):format(esc(f.type), esc(f.name),
        value_html(ctx, f.raw))
    end
    out[#out + 1] = "</tbody>"
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

-- the (JSON) rows of a list without their Objects
local function strip(list)
  local out = json.array {}
  for i, x in ipairs(list or {}) do
    local c = {}
    for k, v in pairs(x) do if k ~= "obj" and k ~= "raw" then c[k] = v end end
    out[i] = c
  end
  return out
end

--- Object: fields or elements (paged; past the last page: 404), its
-- string, referrers, the path from a GC root, retained size, dominator and
-- what it dominates.
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
  local fields, groups, part, bitmap
  if view.kind == "instance" then
    fields, groups = field_groups(obj)
    local s = obj:class_name() == "java.lang.String" and obj:string(4096)
    if s then view.string = s end
    bitmap = bitmaps.of(heap, obj, { model = ctx.model })
    if bitmap then view.bitmap = bitmaps.view(bitmap) end
  elseif view.kind ~= "class" then
    local len = obj:length() or 0
    local elem = view.kind == "primitive_array" and obj:class_name():match("^(%l+)%[%]$")
    local per = (elem == "byte" or elem == "char") and TEXT_PAGE or PAGE
    view.length, view.page, view.pages, view.per_page = len, page, math.max(1, (len + per - 1) // per), per
    if page > view.pages then
      return nil, 404, ("no page %d of %s: its last is %d (%d elements a page)"):format(page, views.object_text(obj),
        view.pages, per)
    end
    view.first, view.last = math.min(len, (page - 1) * per + 1) - 1, math.min(len, page * per) - 1
    part = array_part(ctx, heap, obj, elem, (page - 1) * per + 1, math.min(len, page * per))
  end
  local referrers = json.array {}
  for i, r in ipairs(heap:referrers(obj)) do
    if i > PAGE then break end
    local via, n = views.refs_to(heap, r, obj, VIA)
    referrers[i] = { id = hex(r:id()), class = r:class_name(), via = via, refs = n, obj = r }
  end
  local idom = heap:idom(obj)
  local dominated = json.array {}
  for i, d in ipairs(heap:dominated(obj, PAGE)) do
    dominated[i] = { id = hex(d:id()), class = d:class_name(), retained = heap:retained(d), obj = d }
  end
  view.fields = fields and strip(fields)
  view.elements = part and part.elements and strip(part.elements)
  view.bytes, view.text = part and part.bytes, part and part.text
  view.referrers, view.dominated = strip(referrers), strip(dominated)
  view.dominator = idom and { id = hex(idom:id()), class = idom:class_name() } or nil
  return view, function()
    local facts = { { "class", heap:class(view.class) and class_link(ctx, view.class) or esc(view.class) },
      { "kind", esc(view.kind) }, { "shallow", num(view.shallow) }, { "retained", num(view.retained) } }
    if view.length then facts[#facts + 1] = { "length", num(view.length) } end
    local parts = { html.table({ "", "" }, facts) }
    if view.string then parts[#parts + 1] = "<h2>String value</h2><pre>" .. esc(view.string) .. "</pre>" end
    if bitmap then  -- (a Bitmap: its picture, as its row on the bitmaps page)
      local picture = common.picture_href(ctx, bitmap)
      parts[#parts + 1] = ('<h2>Bitmap</h2><p id="picture">%s</p>'):format(picture
        and ('<img src="%s" alt="%s" width="%d" height="%d">'):format(esc(picture), esc(bitmap.id), bitmap.width,
          bitmap.height)
        or ('%s × %s: <span class="muted">%s</span>'):format(num(bitmap.width), num(bitmap.height), esc(bitmap.note)))
    end
    if groups then parts[#parts + 1] = "<h2>Fields</h2>" .. fields_html(ctx, groups) end
    if part and view.length == 0 then
      parts[#parts + 1] = '<h2>Elements</h2><p class="muted">none: the array is empty</p>'
    elseif part then
      local pager = {}
      if page > 1 then pager[#pager + 1] = a(href(ctx, "object/" .. view.id, { page = page - 1 }), "← previous") end
      if page < view.pages then pager[#pager + 1] = a(href(ctx, "object/" .. view.id, { page = page + 1 }), "next →") end
      local what = view.bytes and "Bytes" or view.text and "Characters" or "Elements"
      parts[#parts + 1] = ("<h2>%s %s to %s of %s (page %s of %s)</h2>%s"):format(what, num(view.first),
        num(view.last), num(view.length), num(page), num(view.pages),
        #pager > 0 and ('<p class="pager">' .. table.concat(pager, " ") .. "</p>") or "")
      if view.bytes then
        parts[#parts + 1] = '<pre id="hexdump">' .. esc(part.dump) .. '</pre><h3>As text</h3><pre id="text">'
          .. esc(common.literal(view.bytes.text)) .. "</pre>"
      elseif view.text then
        parts[#parts + 1] = '<pre id="text">' .. esc(common.literal(view.text)) .. "</pre>"
      elseif view.kind == "object_array" then
        local rows = {}
        for i, e in ipairs(part.elements) do
          rows[i] = { num(e.index), value_html(ctx, e.raw), e.raw and num(e.shallow) or "", e.raw and num(e.retained) or "" }
        end
        parts[#parts + 1] = html.table({ "#index", "value", "#shallow", "#retained" }, rows, "elements")
      else
        local rows = {}
        for i, e in ipairs(part.elements) do rows[i] = { num(e.index), esc(e.value) } end
        parts[#parts + 1] = html.table({ "#index", "value" }, rows, "elements")
      end
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
    for i, r in ipairs(referrers) do
      local more = r.refs > #r.via and (" … %s in all"):format(num(r.refs)) or ""
      rows[i] = { object_link(ctx, r.obj), '<span class="mono">' .. esc(table.concat(r.via, " ")) .. "</span>" .. more }
    end
    parts[#parts + 1] = "<h2>Referrers</h2>" .. html.table({ "object", "via" }, rows, "referrers")
    return html.page(views.object_text(obj), nav(ctx), table.concat(parts))
  end
end

return M
