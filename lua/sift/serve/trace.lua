--- The pages of an Android method trace: overview (threads, clocks), the
-- hot-method table (sortable, each method linked to its callers and
-- callees), and the graphs (speedscope's views: flame graph, icicle, left
-- heavy, time order, diff against another served trace, sandwich) for a
-- thread and a clock, each sift's interactive SVG (sift.trace.flame)
-- inline. Views use `sift profile --json`'s schema.
-- @module sift.serve.trace

local json = require "sift.json"
local flame = require "sift.trace.flame"
local html = require "sift.serve.html"

local esc, num, a = html.escape, html.num, html.a

local M = {}

-- the link of a page of this file
local function href(ctx, page, query) return html.file_href(ctx.entry.id, page, query) end

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
    { href(ctx, "flame"), "flame graph" }, { href(ctx, "calltree"), "call tree" }, { href(ctx, "play"), "play" } }
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
    local out, frames = {}, {}
    for _, m in ipairs(trace:methods()) do frames[m.full_name] = m.frame end
    for i, r in ipairs(rows) do
      if i > 500 then break end
      -- each method links to its sandwich: its callers and callees
      out[i] = { num(r.exclusive), total > 0 and ("%.2f%%"):format(100 * r.exclusive / total) or "-",
        num(r.inclusive), num(r.calls) .. "+" .. num(r.recursive_calls),
        ('<a class="mono" href="%s" title="its callers and callees">%s</a>'):format(
          esc(href(ctx, "flame", { view = "sandwich", method = frames[r.name], clock = clock })), esc(r.name)) }
    end
    local heads = {}
    for _, s in ipairs { "exclusive", "inclusive", "calls", "name" } do
      heads[#heads + 1] = a(href(ctx, "profile", { sort = s, clock = clock }), s)
    end
    local clock_links = {}
    for _, c in ipairs(clocks(trace)) do clock_links[#clock_links + 1] = a(href(ctx, "profile", { sort = sort, clock = c }), c) end
    return html.page("Hot methods (" .. clock .. " clock)", nav(ctx), table.concat {
      "<p>sort by ", table.concat(heads, ", "), "; clock: ", table.concat(clock_links, ", "),
      "; each method links to its callers and callees (its sandwich)</p>",
      html.table({ "#excl µs", "#excl %", "#incl µs", "#calls+rec", "method" }, out, "profile"),
    })
  end
end

--- {======================================================
-- The graphs: speedscope's views of one trace
-- =======================================================

-- the views, in the order the page lists them: flame graph (roots at the
-- foot, siblings by name), icicle, left heavy (stacks merged, heaviest
-- first: speedscope's), time order (a flame chart of one thread), diff
-- (against a baseline among the served traces) and sandwich (a method's
-- callers and callees)
local VIEWS = { "flame", "icicle", "left", "time", "diff", "sandwich" }
local VIEW_NAMES = { flame = "flame graph", icicle = "icicle", left = "left heavy", time = "time order",
  diff = "diff", sandwich = "sandwich" }

local function view_of(q)
  if VIEW_NAMES[q.view] then return q.view end
  return q.icicle == "1" and "icicle" or "flame"
end

-- a number as text, without num's markup (inside an <option>)
local function plain_num(n) return (num(n):gsub("<[^>]*>", "")) end

-- a thread as the pickers show it: 14 threads of a real trace can share a name
local function thread_label(th)
  return ("%s (tid %d)"):format(th.name or "thread", th.tid)
end

-- the query's thread: a tid or a name (nil: all threads); its threads
local function thread_of(ctx)
  local want = ctx.query.thread
  if not want or want == "" then return nil, ctx.doc:threads() end
  want = math.tointeger(tonumber(want)) or want
  local chosen = require("sift.trace").chosen_threads(ctx.doc, want)
  if #chosen == 0 then return nil, nil, "no thread " .. tostring(want) .. " in this trace" end
  return want, chosen
end

-- the other traces the server shows (a diff's baselines): ctx.files
local function baselines(ctx)
  local out = {}
  for _, f in ipairs(ctx.files or {}) do
    if f.format == "trace" and f.id ~= ctx.entry.id then out[#out + 1] = f end
  end
  return out
end

-- the baseline trace, opened once per worker (the last one asked for)
local function open_baseline(ctx, id)
  for _, f in ipairs(baselines(ctx)) do
    if f.id == id then
      local kept = ctx.server.trace_baseline
      if kept and kept.id == id then return kept.doc, f end
      if kept then kept.doc:close() end
      local doc, why = require("sift.trace").open(f.path)
      if not doc then return nil, (tostring(why):gsub(f.path, f.name, 1, true)) end
      ctx.server.trace_baseline = { id = id, doc = doc }
      return doc, f
    end
  end
  return nil, "no trace " .. tostring(id) .. " is served here to compare with"
end

-- the method a sandwich shows: the query's, or the one with most
-- exclusive time (its frame name: class.method)
local function sandwich_method(ctx, clock)
  if ctx.query.method and ctx.query.method ~= "" then return ctx.query.method end
  local top = ctx.doc:profile { clock = clock }[1]
  if not top then return nil end
  for _, m in ipairs(ctx.doc:methods()) do
    if m.full_name == top.name then return m.frame end
  end
end

-- the graphs of the query's view: a list of { id, svg, foot (its root
-- at its foot), heading }, and the facts of its JSON twin; or nil,
-- status, message
local function graphs(ctx)
  local q, trace = ctx.query, ctx.doc
  local view, clock = view_of(q), clock_of(ctx)
  local thread, chosen, why = thread_of(ctx)
  if not chosen then return nil, 404, why end
  local facts = { view = view, clock = clock, thread = thread }
  local where = thread and (#chosen == 1 and thread_label(chosen[1]) or ("threads named " .. thread))
    or "all threads"
  local function draw(tree, opts)
    opts.title = opts.title or ctx.entry.name
    opts.subtitle = opts.subtitle or ("%s, %s clock, %s"):format(VIEW_NAMES[view], clock, where)
    opts.hash = true  -- a method keeps its colour from view to view
    return flame.svg(tree, opts)
  end
  local ok, out = pcall(function()
    if view == "time" then
      -- one thread: the one asked for, or the one with most records
      local th = chosen[1]
      for _, t in ipairs(chosen) do if t.records > th.records then th = t end end
      facts.thread = th.tid
      local tree = trace:timeline { clock = clock, thread = th.tid }
      facts.total = tree.value
      return { { id = "flame", svg = draw(tree, { flamechart = true, inverted = true,
        subtitle = ("time order, %s clock, %s"):format(clock, thread_label(th)) }) } }
    end
    local names = thread
    if view == "diff" and thread then names = chosen[1].name or thread end  -- (tids differ between traces)
    local tree = flame.from_trace(trace, { clock = clock, thread = view == "diff" and names or thread })
    facts.total = tree.value
    if view == "diff" then
      facts.base = q.base
      if not q.base or q.base == "" then return {} end  -- the page asks for one
      local base, f = open_baseline(ctx, q.base)
      if not base then error({ status = 404, message = f }) end
      local before = flame.from_trace(base, { clock = clock, thread = names })
      facts.base_total = before.value
      return { { id = "flame", svg = draw(flame.diff(before, tree), {
        subtitle = ("%s → %s, %s clock, %s: red grew, blue shrank"):format(f.name, ctx.entry.name, clock, where) }),
        foot = true } }
    end
    if view == "sandwich" then
      local method = sandwich_method(ctx, clock)
      facts.method = method
      local callers, callees = flame.sandwich(tree, method or "")
      if callers.value == 0 then
        error({ status = 404, message = ("no calls of %s on %s"):format(tostring(method), where) })
      end
      facts.total = callers.value
      return {
        { id = "flame", heading = "Callers of " .. method, foot = true,
          svg = draw(callers, { title = "callers of " .. method }) },
        { id = "callees", heading = "Callees of " .. method,
          svg = draw(callees, { title = "callees of " .. method, inverted = true }) },
      }
    end
    return { { id = "flame", foot = view == "flame",
      svg = draw(tree, { inverted = view ~= "flame", order = view == "left" and "weight" or nil }) } }
  end)
  if not ok then
    if type(out) == "table" then return nil, out.status, out.message end
    return nil, 400, (tostring(out):gsub("^.-:%d+: ", ""))
  end
  return out, facts
end

-- the pickers above a graph: views and clocks as links (the current one
-- marked aria-current), the thread as a list of names with their ids, the
-- diff's baseline among the served traces, and a search box
local function pickers(ctx, facts)
  local q, view = ctx.query, facts.view
  local keep = { thread = q.thread, clock = facts.clock, base = q.base, method = q.method }
  local function link(page_query, text, current)
    return ('<a href="%s"%s>%s</a>'):format(esc(href(ctx, "flame", page_query)), current and ' aria-current="page"' or "",
      esc(text))
  end
  local views, clock_links = {}, {}
  for _, v in ipairs(VIEWS) do
    views[#views + 1] = link({ view = v, thread = keep.thread, clock = keep.clock, base = keep.base,
      method = v == "sandwich" and keep.method or nil }, VIEW_NAMES[v], v == view)
  end
  for _, c in ipairs(clocks(ctx.doc)) do
    clock_links[#clock_links + 1] = link({ view = view, thread = keep.thread, clock = c, base = keep.base,
      method = keep.method }, c .. " clock", c == facts.clock)
  end
  local current = facts.thread and tostring(facts.thread) or ""
  local options = {}
  if view ~= "time" then
    options[1] = ('<option value=""%s>all threads</option>'):format(current == "" and " selected" or "")
  end
  local listed = {}
  for _, th in ipairs(ctx.doc:threads()) do
    if th.records > 0 then
      listed[tostring(th.tid)] = true
      options[#options + 1] = ('<option value="%d"%s>%s · %s records</option>'):format(th.tid,
        tostring(th.tid) == current and " selected" or "", esc(thread_label(th)), plain_num(th.records))
    end
  end
  if current ~= "" and not listed[current] then  -- a name: its threads together
    options[#options + 1] = ('<option value="%s" selected>threads named %s</option>'):format(esc(current), esc(current))
  end
  local hidden = {}
  for _, k in ipairs { "view", "clock", "base", "method" } do
    local v = k == "view" and view or k == "clock" and facts.clock or q[k]
    if v and v ~= "" then hidden[#hidden + 1] = ('<input type="hidden" name="%s" value="%s">'):format(k, esc(v)) end
  end
  local base = ""
  if view == "diff" then
    local choices = { ('<option value=""%s>choose…</option>'):format((q.base or "") == "" and " selected" or "") }
    for _, f in ipairs(baselines(ctx)) do
      choices[#choices + 1] = ('<option value="%s"%s>%s</option>'):format(esc(f.id), f.id == q.base and " selected" or "",
        esc(f.name))
    end
    hidden = {}
    for _, k in ipairs { "view", "clock" } do
      hidden[#hidden + 1] = ('<input type="hidden" name="%s" value="%s">'):format(k, esc(facts[k]))
    end
    base = (' <label>baseline <select name="base" id="base" onchange="this.form.submit()">%s</select></label>')
      :format(table.concat(choices))
  end
  return table.concat {
    '<p id="views">view: ', table.concat(views, " · "), ' &nbsp; clock: ', table.concat(clock_links, " · "), "</p>",
    '<form method="get" id="pickers">', table.concat(hidden),
    '<label>thread <select name="thread" id="thread" onchange="this.form.submit()">', table.concat(options),
    "</select></label>", base, ' <noscript><button>show</button></noscript>',
    ' &nbsp; <label>search <input type="search" id="find" placeholder="regular expression, then Enter"></label>',
    "</form>",
  }
end

-- the page's own script: the search box drives every graph's search
-- through the location's #search= (each graph's script follows it), and a
-- graph whose root is at its foot opens scrolled to its foot
local PAGE_SCRIPT = [[
<script>
(function () {
  var find = document.getElementById("find");
  var m = /[#&]search=([^&]*)/.exec(location.hash);
  if (m) find.value = decodeURIComponent(m[1]);
  find.addEventListener("change", function () {
    location.hash = find.value ? "search=" + encodeURIComponent(find.value) : "";
  });
  var graphs = document.getElementById("graphs");
  (graphs.getAttribute("data-foot") || "").split(" ").forEach(function (id) {
    var box = id && document.getElementById(id);
    if (box) box.scrollTop = box.scrollHeight;
  });
})();
</script>]]

local GRAPH_STYLE = '<style>#views a[aria-current],#pickers option[selected]{font-weight:bold;color:#000;'
  .. 'text-decoration:none}#views a[aria-current]::before{content:"▸ "}'
  .. '#graphs>div{max-height:calc(100vh - 190px);overflow:auto;margin:6px 0}#graphs.two>div{max-height:calc(50vh - 80px)}'
  .. '#pickers{margin:6px 0}</style>'

-- an SVG as it goes inside a page (no XML declaration)
local function inline(svg_text)
  return (svg_text:gsub("^<%?xml[^>]*>%s*", ""))
end

--- The graphs' page: a view (flame graph, icicle, left heavy, time order,
-- diff, sandwich) of a thread or all, on either clock, each graph sift's
-- interactive SVG inline. Its JSON twin: the view's facts and the SVG's
-- link.
function M.flame(ctx)
  local list, facts, why = graphs(ctx)
  if not list then return nil, facts or 400, why end
  local q = {}
  for k, v in pairs(ctx.query) do q[k] = v end
  q.icicle, q.view = nil, facts.view
  facts.svg = href(ctx, "flame.svg", q)
  return facts, function()
    local body = { GRAPH_STYLE, pickers(ctx, facts) }
    if facts.view == "diff" and #list == 0 then
      body[#body + 1] = #baselines(ctx) > 0 and '<p id="no-graph">Choose the baseline trace to compare this one with.</p>'
        or '<p id="no-graph">Only this trace is served: serve or upload another to compare with.</p>'
    end
    -- (the graphs whose root is at their foot open scrolled to it)
    local foot = {}
    for _, g in ipairs(list) do foot[#foot + 1] = g.foot and g.id or nil end
    body[#body + 1] = ('<div id="graphs"%s data-foot="%s">'):format(#list > 1 and ' class="two"' or "",
      table.concat(foot, " "))
    for _, g in ipairs(list) do
      if g.heading then body[#body + 1] = "<h2>" .. esc(g.heading) .. "</h2>" end
      body[#body + 1] = ('<div id="%s">'):format(g.id) .. inline(g.svg) .. "</div>"
    end
    body[#body + 1] = "</div>"
    body[#body + 1] = PAGE_SCRIPT
    return html.page(VIEW_NAMES[facts.view]:gsub("^%l", string.upper) .. " (" .. facts.clock .. " clock)", nav(ctx),
      table.concat(body))
  end
end

--- The SVG alone (image/svg+xml); a sandwich's `part` is `callers` or
-- `callees` (the default).
function M.flame_svg(ctx)
  local list, status, why = graphs(ctx)
  if not list then return nil, status or 400, why end
  if #list == 0 then return nil, 400, "a diff needs its baseline: base=ID of another served trace" end
  local g = list[ctx.query.part == "callers" and 1 or #list]
  return nil, nil, nil, { type = "image/svg+xml", body = g.svg }
end

-- }======================================================

--- The call tree, expandable: each call path's inclusive time (calls
-- under 0.1 % of the total folded into their caller), largest first;
-- threads of one name share a root. JSON: the nodes in preorder with their
-- depth.
function M.calltree(ctx)
  local q = ctx.query
  local thread = q.thread and (math.tointeger(tonumber(q.thread)) or q.thread) or nil
  if thread and #require("sift.trace").chosen_threads(ctx.doc, thread) == 0 then
    return nil, 404, "no thread " .. tostring(thread) .. " in this trace"
  end
  local clock = clock_of(ctx)
  local tree = flame.from_trace(ctx.doc, { clock = clock, thread = thread, min_fraction = 0.001 })
  -- (as a flat list in preorder, each node with its depth: call trees are
  -- deeper than JSON readers like to nest)
  local nodes = json.array {}
  local function flatten(node, depth)
    table.sort(node.children, function(x, y)
      if x.value ~= y.value then return x.value > y.value end
      return x.name < y.name
    end)
    nodes[#nodes + 1] = { name = node.name, value = node.value, depth = depth }
    for _, c in ipairs(node.children) do flatten(c, depth + 1) end
  end
  flatten(tree, 0)
  local view = { clock = clock, thread = thread, total = tree.value, nodes = nodes }
  return view, function()
    local total, out = tree.value, {}
    local function walk(node, depth)
      local pct = total > 0 and ("%.1f%%"):format(100 * node.value / total) or "-"
      local label = ('<span class="mono">%s</span> <span class="muted">%s µs, %s</span>'):format(esc(node.name),
        num(node.value), pct)
      if #node.children == 0 then
        out[#out + 1] = '<div class="leaf">' .. label .. "</div>"
        return
      end
      out[#out + 1] = ("<details%s><summary>%s</summary><div style=\"margin-left:18px\">"):format(
        depth < 2 and " open" or "", label)
      for _, c in ipairs(node.children) do walk(c, depth + 1) end
      out[#out + 1] = "</div></details>"
    end
    walk(tree, 0)
    return html.page("Call tree (" .. clock .. " clock)", nav(ctx), '<div id="calltree">' .. table.concat(out) .. "</div>")
  end
end

-- play mode is a module of its own (sift.serve.play)
local function play(ctx) return require("sift.serve.play").page(ctx, nav(ctx)) end

M.pages = { [""] = M.overview, profile = M.profile, flame = M.flame, ["flame.svg"] = M.flame_svg, play = play,
  calltree = M.calltree }

return M
