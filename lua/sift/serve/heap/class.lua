--- A class's page: its facts, statics and instances.
-- @module sift.serve.heap.class

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local PAGE, href, nav, dominators = common.PAGE, common.href, common.nav, common.dominators

local M = {}

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

return M
