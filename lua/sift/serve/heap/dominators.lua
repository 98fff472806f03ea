--- The dominator tree, a level at a time.
-- @module sift.serve.heap.dominators

local json = require "sift.json"
local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local PAGE, href, object_link, nav, dominators =
  common.PAGE, common.href, common.object_link, common.nav, common.dominators

local M = {}

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
      html.table({ "#%", "#retained", "object", "" }, rows, "dominators", "It dominates no object."),
    })
  end
end

return M
