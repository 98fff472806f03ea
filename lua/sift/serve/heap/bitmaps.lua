--- The bitmaps page: every android.graphics.Bitmap with its facts and its
-- picture (`sift bitmaps`), beside ahat's bitmap view; and each picture
-- at `bitmap/0x….png` (or .jpg, .webp: the dump's own image as it is).
-- @module sift.serve.heap.bitmaps

local bitmaps = require "sift.heap.bitmaps"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local href, nav = common.href, common.nav

local M = {}

local THUMB = 'style="max-width:128px;max-height:128px;background:#cfd8dc"'

local function yes(v)
  if v == nil then return '<span class="muted">-</span>' end
  return v and "yes" or "no"
end

--- Bitmaps: a table of every Bitmap (largest buffer first) with its
-- picture or why there is none, and the bitmaps held more than once.
function M.bitmaps(ctx)
  local heap = ctx.doc
  common.dominators(ctx)
  local r, list = bitmaps.report(heap, { model = ctx.model })
  return r, function()
    local rows, dups, drawn = {}, {}, 0
    for i, b in ipairs(list) do
      local picture = common.picture_href(ctx, b)
      if picture then drawn = drawn + 1 end
      rows[i] = {
        picture and ('<a href="%s"><img src="%s" alt="%s" %s></a>'):format(esc(picture), esc(picture),
          esc(("%s×%s %s"):format(b.width, b.height, b.id)), THUMB) or ('<span class="muted">%s</span>'):format(esc(b.note)),
        a(href(ctx, "object/" .. b.id), b.id) .. (b.class ~= bitmaps.CLASS and " " .. esc(b.class) or ""),
        esc(("%s×%s"):format(b.width, b.height)), esc(b.config or b.format or b.dump_format or "?"),
        num(b.bytes or "-"), num(b.shallow), num(b.retained or "-"), num(b.density or "-"), yes(b.recycled),
        yes(b.mutable), esc(b.heap),
      }
    end
    for i, d in ipairs(r.duplicates) do
      local links = {}
      for j, id in ipairs(d.bitmaps) do links[j] = a(href(ctx, "object/" .. id), id) end
      dups[i] = { num(d.count), num(d.wasted), esc(("%d×%d"):format(d.width, d.height)), esc(d.config or d.format),
        num(d.bytes), num(d.buffers), table.concat(links, " ") }
    end
    local body
    if #list == 0 then
      body = '<p id="summary">No bitmaps: this dump holds no android.graphics.Bitmap (it is not an Android app\'s, '
        .. "or its bitmaps were all collected).</p>"
    else
      body = table.concat {
        ('<p id="summary">%s bitmaps (instances of android.graphics.Bitmap and its subclasses), largest pixel '
          .. "buffer first; %s drawn from the pixels the dump holds. Sizes --model %s. ahat lists the same "
          .. "bitmaps (its Bitmaps view) and groups the same duplicates.</p>"):format(num(#list), num(drawn),
          esc(r.model)),
        html.table({ "picture", "bitmap", "size", "config", "#bytes", "#shallow", "#retained", "#density",
          "recycled", "mutable", "heap" }, rows, "bitmaps"),
        "<h2>Duplicate bitmaps</h2>", "<p class=rule>wasted: ", esc(r.rule), "</p>",
        #dups == 0 and '<p id="no-duplicates">No bitmap is held twice: no two have the same size, config and '
          .. "pixels.</p>"
          or html.table({ "#copies", "#wasted", "size", "config", "#bytes", "#buffers", "bitmaps" }, dups, "duplicates"),
      }
    end
    return html.page("Bitmaps", nav(ctx), body)
  end
end

--- One Bitmap's picture: `bitmap/0x….png` (drawn) or the dump's own
-- image with its type; 404 when the object is no Bitmap or has none.
function M.bitmap(ctx, arg)
  local heap = ctx.doc
  local id_text = (arg or ""):match("^0x(%x+)%.%a+$")
  local obj = id_text and heap:object(tonumber(id_text, 16))
  if not obj then return nil, 404, ("no object %s in this dump"):format(tostring(arg)) end
  common.dominators(ctx)
  local b = bitmaps.of(heap, obj, { model = ctx.model })
  if not b then return nil, 404, ("%s is no android.graphics.Bitmap"):format(tostring(obj)) end
  local bytes, mime = b:image()
  if not bytes then return nil, 404, ("no picture of %s: %s"):format(b.id, tostring(mime)) end
  return nil, nil, nil, { type = mime, body = bytes }
end

return M
