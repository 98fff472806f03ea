--- The threads page: `sift threads` in the site.
-- @module sift.serve.heap.threads

local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num = html.escape, html.num
local id_link, nav, dominators = common.id_link, common.nav, common.dominators

local M = {}

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
          held[j] = id_link(ctx, l.id, l.class .. " " .. l.id) .. " (" .. num(l.retained) .. ")"
        end
        rows[#rows + 1] = { esc(("%s.%s"):format(f.class or "?", f.method or "?")),
          esc(f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line) or (f.source or "")), table.concat(held, "<br>") }
      end
      parts[#parts + 1] = ("<h2>%s</h2><p>the thread retains %s bytes; its stack holds %s</p>"):format(
        esc(t.name or ("thread " .. t.serial)), num(t.retained or 0), num(t.held))
      parts[#parts + 1] = html.table({ "frame", "source", "locals (retained)" }, rows, "thread-" .. t.serial,
        "No stack frames: the dump has no stack trace for this thread.")
    end
    if #parts == 0 then parts[1] = "<p>no threads in this dump</p>" end
    return html.page("Threads", nav(ctx), table.concat(parts))
  end
end

return M
