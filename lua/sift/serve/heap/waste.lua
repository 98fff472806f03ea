--- The waste page: `sift waste` in the site.
-- @module sift.serve.heap.waste

local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local href, class_link, nav = common.href, common.class_link, common.nav

local M = {}

--- Waste: duplicate strings, arrays and bitmaps, collections below capacity,
-- arrays of zeros, boxed primitives (`sift waste`), each under its rule.
function M.waste(ctx)
  local heap = ctx.doc
  local model = ctx.model or "shark"
  local r = ctx.compute("waste:" .. model, function() return require("sift.heap.waste").report(heap, { model = model }) end)
  return r, function()
    local dup, arr, bmp, coll, zero, box = {}, {}, {}, {}, {}, {}
    for i, d in ipairs(r.duplicate_strings) do
      dup[i] = { num(d.count), num(d.arrays), num(d.wasted), esc(d.value), esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, d in ipairs(r.duplicate_arrays) do
      arr[i] = { num(d.count), num(d.wasted), esc(d.class:gsub("%[%]$", "[" .. d.length .. "]")), esc(d.preview),
        esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, d in ipairs(r.duplicate_bitmaps) do
      local links = {}
      for j, id in ipairs(d.bitmaps) do links[j] = a(href(ctx, "object/" .. id), id) end
      bmp[i] = { num(d.count), num(d.wasted), esc(("%d×%d"):format(d.width, d.height)), esc(d.config or d.format),
        num(d.bytes), table.concat(links, " ") }
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
        .. "duplicate arrays: %s, %s bytes; duplicate bitmaps: %s, %s bytes</p>"):format(esc(r.model),
        num(r.totals.duplicate_strings.groups), num(r.totals.duplicate_strings.wasted),
        num(r.totals.duplicate_arrays.groups), num(r.totals.duplicate_arrays.wasted),
        num(r.totals.duplicate_bitmaps.groups), num(r.totals.duplicate_bitmaps.wasted)),
      "<h2>Duplicate strings</h2>", rule("duplicate_strings"),
      html.table({ "#copies", "#arrays", "#wasted", "value", "held by" }, dup, "strings"),
      "<h2>Duplicate arrays</h2>", rule("duplicate_arrays"),
      html.table({ "#copies", "#wasted", "type", "first elements", "held by" }, arr, "arrays"),
      "<h2>Duplicate bitmaps</h2>", rule("duplicate_bitmaps"),
      ('<p>Each Bitmap with its picture: the %s.</p>'):format(a(href(ctx, "bitmaps"), "bitmaps page")),
      html.table({ "#copies", "#wasted", "size", "config", "#bytes", "bitmaps" }, bmp, "bitmaps"),
      "<h2>Collections below capacity</h2>", rule("collections"),
      html.table({ "class", "#instances", "fill", "#wasted", "worst (size of capacity)" }, coll, "collections"),
      "<h2>Arrays of zeros</h2>", rule("zero_arrays"), html.table({ "type", "#arrays", "#bytes" }, zero, "zeros"),
      "<h2>Boxed primitives</h2>", rule("boxed"), html.table({ "class", "#boxes", "#values", "#wasted" }, box, "boxes"),
    })
  end
end

return M
