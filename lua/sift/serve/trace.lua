--- The pages of an Android method trace: overview (threads, clocks), the
-- hot-method table (sortable), and the interactive flame graph or icicle
-- for a thread and a clock. Views use `sift profile --json`'s schema.
-- @module sift.serve.trace

local json = require "sift.json"
local flame = require "sift.trace.flame"
local html = require "sift.serve.html"

local esc, num, a = html.escape, html.num, html.a

local M = {}

local function href(ctx, page, query)
  local q = {}
  for k, v in pairs(query or {}) do q[#q + 1] = k .. "=" .. html.encode(v) end
  table.sort(q)
  return ("/f/%s/%s%s"):format(ctx.entry.id, page, #q > 0 and ("?" .. table.concat(q, "&")) or "")
end

-- the clocks this trace has
local function clocks(trace)
  local has = trace:info().clock
  if has == "dual" then return { "cpu", "wall" } end
  return { has == "wall" and "wall" or "cpu" }
end

local function clock_of(ctx)
  local list = clocks(ctx.doc)
  for _, c in ipairs(list) do if c == ctx.query.clock then return c end end
  return list[1]
end

local function nav(ctx)
  return { { href(ctx, ""), ctx.entry.name }, { href(ctx, "profile"), "hot methods" },
    { href(ctx, "flame"), "flame graph" } }
end

--- Overview: the trace's facts and its threads.
function M.overview(ctx)
  local trace = ctx.doc
  local info = trace:info()
  local threads = json.array {}
  for i, th in ipairs(trace:threads()) do
    threads[i] = { tid = th.tid, name = th.name, records = th.records, cpu = th.cpu, wall = th.wall }
  end
  local view = { file = ctx.entry.name, format = "trace", version = info.version, clock = info.clock,
    records = info.records, methods = info.methods, threads = threads, streaming = info.streaming }
  return view, function()
    local rows = {}
    for i, th in ipairs(threads) do
      rows[i] = { num(th.tid), a(href(ctx, "flame", { thread = th.tid }), th.name or "?"), num(th.records),
        num(th.cpu), num(th.wall) }
    end
    return html.page(ctx.entry.name, nav(ctx), table.concat {
      html.facts { { "file", ctx.entry.description }, { "clock", info.clock }, { "records", info.records },
        { "methods", info.methods } },
      "<h2>Threads</h2>", html.table({ "#tid", "thread (its flame graph)", "#records", "#cpu µs", "#wall µs" }, rows, "threads"),
    })
  end
end

local SORTS = { exclusive = true, inclusive = true, calls = true, name = true }

--- The hot methods: exclusive and inclusive time and calls, sortable.
function M.profile(ctx)
  local trace, q = ctx.doc, ctx.query
  local clock = clock_of(ctx)
  local rows = trace:profile { clock = clock }
  local sort = SORTS[q.sort] and q.sort or "exclusive"
  table.sort(rows, function(x, y)
    if x[sort] ~= y[sort] then
      if sort == "name" then return x.name < y.name end
      return x[sort] > y[sort]
    end
    return x.name < y.name
  end)
  local info = trace:info()
  local view = { clock = clock, threads = info.threads, records = info.records, methods = json.array(rows), sort = sort }
  return view, function()
    local total = 0
    for _, r in ipairs(rows) do total = total + r.exclusive end
    local out = {}
    for i, r in ipairs(rows) do
      if i > 500 then break end
      out[i] = { num(r.exclusive), total > 0 and ("%.2f%%"):format(100 * r.exclusive / total) or "-",
        num(r.inclusive), ("%d+%d"):format(r.calls, r.recursive_calls), ('<span class="mono">%s</span>'):format(esc(r.name)) }
    end
    local heads = {}
    for _, s in ipairs { "exclusive", "inclusive", "calls", "name" } do
      heads[#heads + 1] = a(href(ctx, "profile", { sort = s, clock = clock }), s)
    end
    local clock_links = {}
    for _, c in ipairs(clocks(trace)) do clock_links[#clock_links + 1] = a(href(ctx, "profile", { sort = sort, clock = c }), c) end
    return html.page("Hot methods (" .. clock .. " clock)", nav(ctx), table.concat {
      "<p>sort by ", table.concat(heads, ", "), "; clock: ", table.concat(clock_links, ", "), "</p>",
      html.table({ "#excl µs", "#excl %", "#incl µs", "#calls+rec", "method" }, out, "profile"),
    })
  end
end

-- the flame graph's SVG for the query's thread and clock
local function svg(ctx)
  local q = ctx.query
  local thread = q.thread and (math.tointeger(tonumber(q.thread)) or q.thread) or nil
  if thread and #require("sift.trace").chosen_threads(ctx.doc, thread) == 0 then
    return nil, "no thread " .. tostring(thread) .. " in this trace", 404
  end
  local clock = clock_of(ctx)
  local ok, tree = pcall(flame.from_trace, ctx.doc, { clock = clock, thread = thread })
  if not ok then return nil, tostring(tree):gsub("^.-:%d+: ", "") end
  return flame.svg(tree, { title = ctx.entry.name, subtitle = ("%s clock%s"):format(clock,
    thread and (", thread " .. tostring(thread)) or ", all threads"), inverted = q.icicle == "1" })
end

--- The flame graph page: the SVG inline, with thread, clock and icicle
-- choices. Its JSON twin is the folded stacks' tree total.
function M.flame(ctx)
  local q = ctx.query
  local image, why, status = svg(ctx)
  if not image then return nil, status or 400, why end
  local clock = clock_of(ctx)
  local view = { clock = clock, thread = q.thread, icicle = q.icicle == "1", svg = href(ctx, "flame.svg", q) }
  return view, function()
    local choices = {}
    for _, c in ipairs(clocks(ctx.doc)) do
      choices[#choices + 1] = a(href(ctx, "flame", { thread = q.thread, clock = c, icicle = q.icicle }), c .. " clock")
    end
    choices[#choices + 1] = a(href(ctx, "flame", { thread = q.thread, clock = clock, icicle = q.icicle == "1" and "0" or "1" }),
      q.icicle == "1" and "flame" or "icicle")
    choices[#choices + 1] = a(href(ctx, "flame", { clock = clock }), "all threads")
    for _, th in ipairs(ctx.doc:threads()) do
      choices[#choices + 1] = a(href(ctx, "flame", { thread = th.tid, clock = clock, icicle = q.icicle }), th.name or th.tid)
    end
    return html.page("Flame graph", nav(ctx), "<p>" .. table.concat(choices, " · ") .. "</p>"
      .. '<div id="flame">' .. image:gsub("^<%?xml[^>]*>%s*", ""):gsub("<!DOCTYPE[^>]*>%s*", "") .. "</div>")
  end
end

--- The SVG alone (image/svg+xml).
function M.flame_svg(ctx)
  local image, why, status = svg(ctx)
  if not image then return nil, status or 400, why end
  return nil, nil, nil, { type = "image/svg+xml", body = image }
end

M.pages = { [""] = M.overview, profile = M.profile, flame = M.flame, ["flame.svg"] = M.flame_svg }

return M
