--- Progress bars for long passes, drawn on a terminal's stderr.
-- C passes call a progress function `fn(done, total)` about once per
-- percent; `bar` returns such a function, or nil when nothing should be
-- drawn (stderr is not a terminal, or the user asked for quiet).
-- @module sift.progress

local core = require "sift.core"

local M = {}

local function human(n)
  if n >= 1 << 30 then return ("%.1f GB"):format(n / (1 << 30)) end
  if n >= 1 << 20 then return ("%.1f MB"):format(n / (1 << 20)) end
  if n >= 1 << 10 then return ("%.1f kB"):format(n / (1 << 10)) end
  return ("%d B"):format(n)
end
M.human = human

--- A progress bar.
-- @tparam table opts `label` (text before the bar), `quiet` (never draw),
--   `bytes` (false: the work is not counted in bytes, and only its share
--   done is shown),
--   `stream` (default io.stderr; a stream other than stderr is always drawn
--   on, which tests use), `width` (columns; default the terminal's or 80)
-- @return bar object with `update(done, total)` and `finish()`, or nil
function M.bar(opts)
  opts = opts or {}
  local stream = opts.stream or io.stderr
  local width = opts.width
  if opts.quiet then return nil end
  if stream == io.stderr then
    local tty, cols = core.isatty(2)
    if not tty then return nil end
    width = width or cols
  end
  width = width or 80
  local label = opts.label or ""
  local drawn = false
  local bar = {}

  function bar.update(done, total)
    local frac = total > 0 and done / total or 1
    -- a fixed-width tail keeps the bar from jumping as the numbers grow
    local tail = ("%-26s"):format(opts.bytes == false and (" %3d%%"):format(frac * 100 // 1)
      or (" %3d%% %s/%s"):format(frac * 100 // 1, human(done), human(total)))
    local room = width - #tail - 4
    local name = label
    if #name > room // 2 then name = "…" .. name:sub(-(room // 2 - 1)) end
    local cells = math.max(room - #name, 10)
    local full = (frac * cells + 0.5) // 1
    stream:write("\r", name, " [", ("#"):rep(full), ("."):rep(cells - full), "]", tail)
    stream:flush()
    drawn = true
  end

  --- Erase the bar, leaving the line empty for what comes next.
  function bar.finish()
    if drawn then stream:write("\r\27[K") stream:flush() end
  end

  return bar
end

--- Run `work(nil)`: what an analysis's `with_progress(label, work)` option
-- does when none is given (the work reports to no one).
function M.unseen(_, work)
  return work(nil)
end

return M
