--- The pages of an Android method trace: overview (threads, clocks), the
-- hot-method table (sortable), and the interactive flame graph or icicle
-- for a thread and a clock. Views use `sift profile --json`'s schema.
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
    local out = {}
    for i, r in ipairs(rows) do
      if i > 500 then break end
      out[i] = { num(r.exclusive), total > 0 and ("%.2f%%"):format(100 * r.exclusive / total) or "-",
        num(r.inclusive), num(r.calls) .. "+" .. num(r.recursive_calls), ('<span class="mono">%s</span>'):format(esc(r.name)) }
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
  if not ok then return nil, (tostring(tree):gsub("^.-:%d+: ", "")) end
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

local MAX_STEPS = 20000

-- the player: replays the steps embedded in the page (script type
-- application/json, id "steps") as a call graph growing node by node
local PLAYER = [==[
<p><button id="play">play</button> <button id="step">step</button>
speed <select id="speed"><option value="2">2/s</option><option value="10" selected>10/s</option>
<option value="50">50/s</option><option value="500">500/s</option></select>
<input type="range" id="slider" min="0" value="0" style="width:40%"> <span id="count"></span></p>
<p id="current" class="mono"></p>
<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="100%" height="200"></svg>
<script>
(function () {
  var data = JSON.parse(document.getElementById("steps").textContent);
  var steps = data.steps, svg = document.getElementById("graph"), NS = "http://www.w3.org/2000/svg";
  var slider = document.getElementById("slider"), count = document.getElementById("count");
  var current = document.getElementById("current"), playing = null, at = 0;
  var nodes, edges, stack, lastNode;
  slider.max = steps.length;
  function reset() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    nodes = {}; edges = {}; stack = []; lastNode = null; at = 0;
    svg.setAttribute("height", 200);
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  function node(name, depth) {
    var n = nodes[name];
    if (n) return n;
    // each method a row when first called, indented by its depth
    var count = Object.keys(nodes).length;
    n = { x: 10 + Math.min(depth - 1, 60) * 14, y: 12 + count * 20, calls: 0 };
    n.dot = el("circle", { cx: n.x, cy: n.y, r: 5, fill: "#90caf9" });
    n.label = el("text", { x: n.x + 9, y: n.y + 4, "font-size": 12 }, name);
    n.label.appendChild(el("title", {}, name));
    svg.appendChild(n.dot); svg.appendChild(n.label);
    var h = n.y + 20;
    if (h > svg.getAttribute("height")) svg.setAttribute("height", h);
    nodes[name] = n;
    return n;
  }
  function apply(i) {
    var s = steps[i];
    if (s.call === undefined) return s.loop ? "loop ×" + s.loop : "end of loop";
    var n = node(s.call, s.depth), parent = stack[s.depth - 2];
    stack[s.depth - 1] = n; stack.length = s.depth;
    n.calls += s.times;
    if (parent) {
      var key = parent.x + "," + parent.y + ">" + n.x + "," + n.y;
      if (!edges[key]) {
        edges[key] = el("path", { d: "M" + parent.x + "," + parent.y + " V" + n.y + " H" + n.x,
          stroke: "#bbb", fill: "none" });
        svg.insertBefore(edges[key], svg.firstChild);
      }
    }
    if (lastNode) lastNode.dot.setAttribute("fill", "#90caf9");
    n.dot.setAttribute("fill", "#e53935");
    lastNode = n;
    return s.call + (s.times > 1 ? " ×" + s.times : "") + (s.in_loop ? " (in a loop)" : "");
  }
  function show(text) {
    current.textContent = text || "";
    count.textContent = at + " / " + steps.length;
    slider.value = at;
  }
  function step() {
    if (at >= steps.length) { stop(); return; }
    show(apply(at++));
  }
  function seek(to) {
    reset();
    var text = "";
    while (at < to) text = apply(at++);
    show(text);
  }
  function stop() {
    if (playing) clearInterval(playing);
    playing = null;
    document.getElementById("play").textContent = "play";
  }
  function play() {
    if (playing) { stop(); return; }
    document.getElementById("play").textContent = "pause";
    playing = setInterval(step, 1000 / Number(document.getElementById("speed").value));
  }
  document.getElementById("play").onclick = play;
  document.getElementById("step").onclick = function () { stop(); step(); };
  document.getElementById("speed").onchange = function () { if (playing) { stop(); play(); } };
  slider.oninput = function () { stop(); seek(Number(slider.value)); };
  window.siftPlayer = { step: step, seek: seek, at: function () { return at; },
    nodes: function () { return Object.keys(nodes).length; } };
  reset(); show();
  var m = location.hash.match(/at=(\d+)/);  // (#at=N: start N steps in)
  if (m) seek(Math.min(Number(m[1]), steps.length));
})();
</script>]==]

-- a filter's text (comma-separated substrings, not Lua patterns) as the
-- patterns sift.trace takes
local function literals(text)
  local out = {}
  for part in (text or ""):gmatch("[^,%s]+") do out[#out + 1] = (part:gsub("%p", "%%%0")) end
  return #out > 0 and out or nil
end

--- Play mode (the Control Flow Tracer's): a thread's calls replayed in
-- order, loops collapsed as in `sift calls`, filtered by package.
function M.play(ctx)
  local trace, q = ctx.doc, ctx.query
  local thread = q.thread and (math.tointeger(tonumber(q.thread)) or q.thread) or nil
  local ok, steps, th = pcall(trace.call_steps, trace, { thread = thread,
    include = literals(q.include), exclude = literals(q.exclude) })
  if not ok then return nil, 404, (tostring(steps):gsub("^.-:%d+: ", "")) end
  local truncated = #steps > MAX_STEPS
  for i = #steps, MAX_STEPS + 1, -1 do steps[i] = nil end
  local view = { thread = th, include = q.include, exclude = q.exclude, truncated = truncated,
    steps = json.array(steps) }
  return view, function()
    local choices = {}
    for _, t in ipairs(trace:threads()) do
      if t.records > 0 then
        choices[#choices + 1] = ('<option value="%s"%s>%s</option>'):format(esc(t.tid),
          t.tid == th.tid and " selected" or "", esc(t.name or t.tid))
      end
    end
    local data = json.encode({ steps = view.steps }):gsub("</", "<\\/")
    return html.page("Play: " .. (th.name or th.tid), nav(ctx), table.concat {
      ('<form method="get">thread <select name="thread">%s</select> include <input type="text" name="include" '
        .. 'value="%s" placeholder="com.example"> exclude <input type="text" name="exclude" value="%s" '
        .. 'placeholder="android."> <button>apply</button></form>'):format(table.concat(choices), esc(q.include),
        esc(q.exclude)),
      ("<p>%s calls in %s steps%s</p>"):format(num(th.calls), num(#steps),
        truncated and (" (the first " .. num(MAX_STEPS) .. ")") or ""),
      '<script type="application/json" id="steps">', data, "</script>", PLAYER,
    })
  end
end

M.pages = { [""] = M.overview, profile = M.profile, flame = M.flame, ["flame.svg"] = M.flame_svg, play = M.play,
  calltree = M.calltree }

return M
