--- The class loaders page: `sift loaders` in the site.
-- @module sift.serve.heap.loaders

local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local href, class_link, nav, dominators = common.href, common.class_link, common.nav, common.dominators

local M = {}

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

return M
