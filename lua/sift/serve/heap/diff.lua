--- The diff with a baseline (`--baseline`), as ahat's.
-- @module sift.serve.heap.diff

local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local num = html.num
local PAGE, class_link, id_link, nav = common.PAGE, common.class_link, common.id_link, common.nav

local M = {}

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
      new[i] = { id_link(ctx, o.id, o.class .. " " .. o.id), num(o.shallow) }
    end
    return html.page("Diff with the baseline", nav(ctx), table.concat {
      html.facts { { "baseline", ctx.server.opts.baseline }, { "instances then", view.base_instances },
        { "instances now", view.instances }, { "objects new since", view.new_objects.count },
        { "bytes new since", view.new_objects.bytes } },
      "<h2>Classes that changed</h2>",
      html.table({ "class", "#Δ instances", "#Δ bytes", "#instances", "#bytes" }, rows, "diff",
        "No class changed its instance count or bytes."),
      "<h2>New since the baseline (first 100)</h2>", html.table({ "object", "#shallow" }, new, "new",
        "No object is new since the baseline."),
    })
  end
end

return M
