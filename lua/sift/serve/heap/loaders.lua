--- The class loaders page: `sift loaders` in the site (MAT's "Class
-- Loader Explorer" and "Duplicate Classes"): each loader named as the CLI
-- names it and linked to its object, its parent likewise, and the classes
-- more than one loader defined, each class and loader linked.
-- @module sift.serve.heap.loaders

local views = require "sift.heap.views"
local census = require "sift.heap.census"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local href, class_link, nav, dominators = common.href, common.class_link, common.nav, common.dominators

local M = {}

-- a loader (its id as `sift loaders` gives it, nil for the bootstrap
-- loader) as a link to its object page, named as `sift loaders` names it
local function loader_html(ctx, id, name)
  if not id then return esc(name or census.loader_name(nil)) end
  local obj = ctx.doc:object(tonumber(id:sub(3), 16))
  return a(href(ctx, "object/" .. id), name or (obj and census.loader_name(obj)) or id)
end

--- Class loaders: classes, instances, retained, parent, duplicate classes
-- (`sift loaders`; its JSON is this page's twin).
function M.loaders(ctx)
  local heap = ctx.doc
  local both = ctx.compute("loaders", function()
    dominators(ctx)
    local loaders, duplicates = census.loaders(heap)
    return { loaders, duplicates }
  end)
  local loaders, duplicates = both[1], both[2]
  return { loaders = loaders, duplicates = duplicates }, function()
    local rows, dups = {}, {}
    for i, l in ipairs(loaders) do
      rows[i] = { loader_html(ctx, l.id, l.name), num(l.classes), num(l.instances),
        l.retained and num(l.retained) or "-",
        l.parent and loader_html(ctx, l.parent) or '<span class="muted">none</span>',
        esc(table.concat(l.dex or {}, ", ")) }
    end
    for i, d in ipairs(duplicates) do
      local by_loader = {}  -- each loader's class of that name, for a link to its own page
      for _, cls in ipairs(heap:classes_named(d.name)) do
        by_loader[cls.loader and hex(cls.loader:id()) or ""] = cls
      end
      local lines = {}
      for j, l in ipairs(d.loaders) do
        local cls = by_loader[l.id or ""]
        lines[j] = loader_html(ctx, l.id, l.name)
          .. (cls and (": " .. a(href(ctx, "class", { id = hex(cls.id) }), "its class " .. hex(cls.id))) or "")
      end
      dups[i] = { class_link(ctx, d.name), table.concat(lines, "<br>") }
    end
    return html.page("Class loaders", nav(ctx), table.concat {
      html.table({ "loader", "#classes", "#instances", "#retained", "parent", "dex" }, rows, "loaders"),
      "<h2>Classes more than one loader defined</h2>",
      html.table({ "class", "loaders" }, dups, "duplicates", "No class is defined by more than one loader."),
    })
  end
end

return M
