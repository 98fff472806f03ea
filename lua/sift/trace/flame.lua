--- Flame graphs as interactive SVG: click a frame to zoom, Ctrl-F or the
-- Search button to highlight frames by regular expression (with the share
-- they match), tooltips with times and percentages. Flame (root at the
-- bottom), icicle (`inverted`) and differential graphs.
--
--     local flame = require "sift.trace.flame"
--     local tree = flame.from_trace(trace, { clock = "cpu" })
--     io.open("out.svg", "w"):write(flame.svg(tree, { title = "Startup" }))
--
-- A tree is `{ name, value, children = { ... } }` (value: inclusive count),
-- with `delta` on nodes of a differential tree.
-- @module sift.trace.flame

local M = {}

local format, concat = string.format, table.concat

--- Stacks deeper than this many frames end in one frame (perf's default
-- max-stack is 127; a flame graph 1024 frames tall is already beyond reading).
M.MAX_DEPTH = 1024

--- {======================================================
-- Trees
-- =======================================================

--- A tree from a trace's call trees: one child of the root per thread
-- (or the threads merged); nodes with no time, or under `min_fraction` of
-- the total, are left out (in C, before Lua sees them), and a stack deeper
-- than `max_depth` frames ends in one frame `[… deeper calls]`.
-- @tparam table opts `clock` ("cpu" | "wall"), `thread` (names/tids),
--   `merge` (true: one tree for all threads), `min_fraction` (of the total,
--   default 0: keep everything), `max_depth` (default 1024; 0: no cap)
function M.from_trace(trace, opts)
  opts = opts or {}
  local clock = opts.clock or "cpu"
  local methods = trace:methods()
  local core = trace.core
  local threads = require("sift.trace").chosen_threads(trace, opts.thread)
  local fraction = opts.min_fraction or 0
  -- the threads' trees, pruned in C; a thread root's value is its own time
  -- plus its children's
  local total = 0
  for _, th in ipairs(threads) do  -- a minimum nothing reaches: the root alone
    total = total + select(3, core:pruned(th.root, clock, math.maxinteger))[1]
  end
  local min = math.max(1, math.floor(fraction * total))
  local root = { name = "all", value = total, children = {}, index = {} }
  for _, th in ipairs(threads) do
    local depths, ms, values = core:pruned(th.root, clock, min, opts.max_depth or M.MAX_DEPTH)
    local v = values[1]
    if v > 0 and v >= min then
      local into = root
      if not opts.merge then  -- threads of one name share a tower
        local name = th.name or ("thread " .. th.tid)
        into = root.index[name]
        if not into then
          into = { name = name, value = 0, children = {}, index = {}, thread = true }
          root.index[name] = into
          root.children[#root.children + 1] = into
        end
        into.value = into.value + v
      end
      local path = { [0] = into }
      for k = 2, #depths do
        local d, value = depths[k], values[k]
        local parent = path[d - 1]
        local name = ms[k] == 0 and "[… deeper calls]" or methods[ms[k]].frame
        local child = parent.index[name]
        if not child then  -- merged threads can meet the same frame twice
          child = { name = name, value = 0, children = {}, index = {} }
          parent.index[name] = child
          parent.children[#parent.children + 1] = child
        end
        child.value = child.value + value
        path[d] = child
      end
    end
  end
  return root
end

--- A tree from folded text (`a;b;c 12` lines; a second count makes a
-- differential line: the first count is before, the second after).
function M.from_folded(text)
  local root = { name = "all", value = 0, children = {}, index = {} }
  for line in text:gmatch("[^\n]+") do
    local stack, a, b = line:match("^(.-) (%d+) (%d+)%s*$")
    if not stack then stack, a = line:match("^(.-) (%d+)%s*$") end
    if stack then
      local before, after = tonumber(a), tonumber(b or a)
      local node = root
      node.value = node.value + after
      node.before = (node.before or 0) + before
      for frame in stack:gmatch("[^;]+") do
        local c = node.index[frame]
        if not c then
          c = { name = frame, value = 0, before = 0, children = {}, index = {} }
          node.index[frame] = c
          node.children[#node.children + 1] = c
        end
        c.value, c.before = c.value + after, c.before + before
        node = c
      end
    end
  end
  return root
end

--- A differential tree: `after`'s shape, each node with `delta` (after −
-- before) from the same stack in `before`.
function M.diff(before, after)
  local function walk(a, b)
    a.delta = a.value - (b and b.value or 0)
    a.before = b and b.value or 0
    for _, c in ipairs(a.children) do walk(c, b and b.index and b.index[c.name]) end
  end
  walk(after, before)
  after.differential = true
  return after
end

--- speedscope's sandwich of one frame name in a tree: its callers (a tree
-- rooted at the method whose children are its callers, theirs their
-- callers, up to the thread) and its callees (the trees below its calls,
-- merged). A call inside a call of the same method counts once, in the
-- outermost, so both roots hold the method's inclusive time.
-- @tparam table tree from `from_trace` or `from_folded`
-- @tparam string name a frame's name (class.method)
-- @return callers, callees (roots of value 0 when no frame has the name)
function M.sandwich(tree, name)
  local callers = { name = name, value = 0, children = {}, index = {} }
  local callees = { name = name, value = 0, children = {}, index = {} }
  local function child(parent, of)
    local c = parent.index[of.name]
    if not c then
      c = { name = of.name, value = 0, children = {}, index = {}, thread = of.thread }
      parent.index[of.name] = c
      parent.children[#parent.children + 1] = c
    end
    return c
  end
  -- (explicit stacks: call trees are deeper than Lua's)
  local function merge(into, from)
    local todo = { into, from }
    while #todo > 0 do
      local src, dst = table.remove(todo), table.remove(todo)
      for _, c in ipairs(src.children) do
        local d = child(dst, c)
        d.value = d.value + c.value
        todo[#todo + 1], todo[#todo + 2] = d, c
      end
    end
  end
  -- preorder; path[d] the node at depth d, seen[d] how many of path[1..d] are the method
  local path, seen = { [0] = tree }, { [0] = 0 }
  local todo, depths = {}, {}
  for i = #tree.children, 1, -1 do todo[#todo + 1], depths[#depths + 1] = tree.children[i], 1 end
  while #todo > 0 do
    local node, d = table.remove(todo), table.remove(depths)
    path[d] = node
    local mine = node.name == name and not node.thread
    seen[d] = seen[d - 1] + (mine and 1 or 0)
    if mine and seen[d - 1] == 0 then  -- an outermost call
      callees.value = callees.value + node.value
      merge(callees, node)
      callers.value = callers.value + node.value
      local into = callers
      for k = d - 1, 1, -1 do
        into = child(into, path[k])
        into.value = into.value + node.value
      end
    end
    for i = #node.children, 1, -1 do todo[#todo + 1], depths[#depths + 1] = node.children[i], d + 1 end
  end
  return callers, callees
end

-- }======================================================


--- {======================================================
-- Colours
-- =======================================================

local FRAMEWORK = { "^android%.", "^com%.android%.", "^dalvik%.", "^androidx%.", "^com%.google%.android%." }
local JDK = { "^java%.", "^javax%.", "^sun%.", "^jdk%.", "^kotlin%.", "^kotlinx%.", "^libcore%.", "^org%.apache%.harmony" }

-- what a frame is: "app", "framework", "jdk", "thread" or "unknown"
-- (cache: an optional table from name to kind)
local function kind_of(node, cache)
  if node.thread then return "thread" end
  local name = node.name
  local kind = cache and cache[name]
  if kind then return kind end
  kind = "app"
  if name:match("^unknown@") then kind = "unknown" end
  for _, p in ipairs(JDK) do if kind == "app" and name:match(p) then kind = "jdk" end end
  for _, p in ipairs(FRAMEWORK) do if kind == "app" and name:match(p) then kind = "framework" end end
  if cache then cache[name] = kind end
  return kind
end
M.kind_of = kind_of

-- a stable number in [0, 1) from a name (for --hash)
local function hash01(s)
  local h = 2166136261
  for i = 1, #s do h = ((h ~ s:byte(i)) * 16777619) & 0xffffffff end
  return h / 0x100000000
end

-- base hue ranges per kind: app green, framework blue, jdk orange
local PALETTES = {
  java = {
    app = { 50, 200, 50, 60, 55, 55 }, framework = { 50, 120, 200, 50, 50, 55 },
    jdk = { 220, 130, 30, 35, 50, 40 }, thread = { 160, 160, 160, 30, 30, 30 },
    unknown = { 200, 60, 60, 40, 30, 30 },
  },
  hot = { all = { 205, 0, 0, 50, 230, 55 } },
}

local function colour(node, opts)
  if node.delta then  -- red grew, blue shrank, white unchanged
    local scale = opts.max_delta > 0 and math.min(1, math.abs(node.delta) / opts.max_delta) or 0
    local c = math.floor(255 - 200 * scale)
    if node.delta > 0 then return format("rgb(255,%d,%d)", c, c) end
    if node.delta < 0 then return format("rgb(%d,%d,255)", c, c) end
    return "rgb(250,250,250)"
  end
  local palette = PALETTES[opts.colors] or PALETTES.java
  local base = palette.all or palette[kind_of(node, opts.kinds)] or palette.app
  local v = opts.hash and hash01(node.name) or math.random()
  local r = math.floor(base[1] + base[4] * v)
  local g = math.floor(base[2] + base[5] * v)
  local b = math.floor(base[3] + base[6] * (1 - v))
  return format("rgb(%d,%d,%d)", math.min(255, r), math.min(255, g), math.min(255, b))
end

-- }======================================================


--- {======================================================
-- SVG
-- =======================================================

local function esc(s)
  return (s:gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }))
end

-- the script: zoom, search, details. One script for the SVG standalone
-- and inline in an HTML page (where several graphs can share the page): it
-- works on its own <svg> (the script's parent) and finds its parts by
-- class. `#search=REGEX` in the location searches at load and whenever the
-- hash changes; the <svg> element carries `sift` (search, zoom, reset,
-- visible) for the console and tests.
local SCRIPT = [[
(function (script) {
  var svg = script ? script.parentNode : document.documentElement;
  var frames = [], total = 0;
  var W = +svg.getAttribute("data-width"), PAD = 10, FW = W - 2 * PAD;
  function part(name) { return svg.querySelector("." + name); }
  var details = part("details"), matched = part("matched"), unzoomButton = part("unzoom");
  Array.prototype.forEach.call(svg.querySelectorAll("g.f"), function (g) {
    var f = { g: g, x: +g.getAttribute("data-x"), w: +g.getAttribute("data-w"),
              name: g.getAttribute("data-name"), rect: g.querySelector("rect"), text: g.querySelector("text") };
    f.fill = f.rect.getAttribute("fill");
    frames.push(f);
    if (f.x === 0 && f.w > total) total = f.w;
    g.addEventListener("click", function () { zoom(f); });
    g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
    g.addEventListener("mouseout", function () { details.textContent = " "; });
  });
  function label(f, px) {
    var chars = Math.floor((px - 6) / 7);
    if (chars < 3) return "";
    return f.name.length <= chars ? f.name : f.name.slice(0, chars - 2) + "..";
  }
  function layout(x0, w0) {
    frames.forEach(function (f) {
      var inside = f.x >= x0 && f.x + f.w <= x0 + w0 + 1e-9;
      var around = !inside && f.x <= x0 && f.x + f.w >= x0 + w0;  /* an ancestor: full width */
      var px = inside ? (f.w / w0) * FW : around ? FW : 0;
      f.g.style.display = px >= 0.1 ? "" : "none";
      if (!inside && !around) return;
      var x = around ? PAD : PAD + ((f.x - x0) / w0) * FW;
      f.rect.setAttribute("x", x); f.rect.setAttribute("width", px);
      f.text.setAttribute("x", x + 3); f.text.textContent = label(f, px);
    });
  }
  function zoom(f) {
    frames.forEach(function (o) {  /* ancestors stay, faded */
      o.g.style.opacity = (o.x <= f.x && o.x + o.w >= f.x + f.w && o.w > f.w) ? 0.5 : 1;
    });
    layout(f.x, f.w);
    unzoomButton.style.display = "";
  }
  function unzoom() {
    frames.forEach(function (o) { o.g.style.opacity = 1; });
    layout(0, total);
    unzoomButton.style.display = "none";
  }
  /* highlight the frames whose name the expression matches; the count of
     frames and the share of the total they cover (each span once) */
  function search(text) {
    var re = null;
    if (text) {
      try { re = new RegExp(text); } catch (e) { matched.textContent = "not a regular expression"; return -1; }
    }
    var hits = [], sum = 0, end = -1;
    frames.forEach(function (f) {
      var hit = re !== null && re.test(f.name);
      f.rect.setAttribute("fill", hit ? "rgb(230,0,230)" : f.fill);
      if (hit) hits.push(f);
    });
    hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
    hits.forEach(function (f) { if (f.x >= end) { sum += f.w; end = f.x + f.w; } });
    matched.textContent = re === null ? " " : hits.length + (hits.length === 1 ? " match, " : " matches, ")
      + (total ? (100 * sum / total).toFixed(1) : "0") + "%";
    return hits.length;
  }
  function fromHash() {
    var m = /[#&]search=([^&]*)/.exec(location.hash);
    search(m ? decodeURIComponent(m[1]) : "");
  }
  svg.sift = {
    search: search, reset: unzoom,
    zoom: function (name) {
      for (var i = 0; i < frames.length; i++) if (frames[i].name === name) { zoom(frames[i]); return frames[i].w; }
      return 0;
    },
    visible: function () { return frames.filter(function (f) { return f.g.style.display !== "none"; }).length; }
  };
  unzoomButton.addEventListener("click", unzoom);
  part("search").addEventListener("click", function () {
    var text = prompt("Search for (regular expression):", "");
    if (text !== null) search(text);
  });
  if (script === null || document.documentElement === svg) {  /* the keys are the page's when inline */
    window.addEventListener("keydown", function (e) {
      if ((e.ctrlKey || e.metaKey) && e.key === "f") {
        e.preventDefault();
        part("search").dispatchEvent(new Event("click"));
      }
      if (e.key === "Escape") { unzoom(); search(""); }
    });
  }
  window.addEventListener("hashchange", fromHash);
  unzoom();
  fromHash();
})(document.currentScript);
]]

local function percent(v, total) return total > 0 and format("%.2f", 100 * v / total) or "0" end

--- The tree as an interactive SVG flame graph.
-- @tparam table tree from `from_trace`, `from_folded` or `diff`
-- @tparam[opt] table opts `title`, `subtitle`, `width` (1200), `height`
--   (frame height, 16), `minwidth` (pixels, 0.1), `countname` ("µs"),
--   `inverted` (icicle), `colors` ("java" or "hot"), `hash` (stable colours),
--   `flamechart` (the tree is a `trace:timeline()`: frames at their time),
--   `order` ("name", default: siblings by name as flamegraph.pl; "weight":
--   heaviest first, speedscope's left-heavy view)
-- @treturn string
function M.svg(tree, opts)
  opts = opts or {}
  local width, fh = opts.width or 1200, opts.height or 16
  local pad, top = 10, opts.subtitle and 60 or 40
  local countname = opts.countname or "µs"
  local total = tree.value
  local scale = total > 0 and (width - 2 * pad) / total or 0
  local min_value = (opts.minwidth or 0.1) / (scale > 0 and scale or 1)
  -- lay out: each node gets x (in counts) and depth, in preorder with an
  -- explicit stack (call trees can be deeper than Lua's)
  local nodes, xs, depths, max_depth, max_delta = {}, {}, {}, 0, 0
  local todo, tx, td = { tree }, { 0 }, { 0 }
  local by_name = function(a, b) return a.name < b.name end
  local by_weight = function(a, b)
    if a.value ~= b.value then return a.value > b.value end
    return a.name < b.name
  end
  local order = opts.order == "weight" and by_weight or by_name
  while #todo > 0 do
    local k = #todo
    local node, x, depth = todo[k], tx[k], td[k]
    todo[k], tx[k], td[k] = nil, nil, nil
    if node.value >= min_value then
      local n = #nodes + 1
      nodes[n], xs[n], depths[n] = node, x, depth
      if depth > max_depth then max_depth = depth end
      if node.delta and math.abs(node.delta) > max_delta then max_delta = math.abs(node.delta) end
      local children = node.children
      if #children > 1 and not opts.flamechart then
        children = table.move(children, 1, #children, 1, {})
        table.sort(children, order)
      end
      -- a flame chart places calls at their time; a flame graph packs them
      local cx = x
      for i = 1, #children do
        local c = children[i]
        c.x_, cx = opts.flamechart and c.start or cx, cx + c.value
      end
      for i = #children, 1, -1 do
        local c = children[i]
        k = #todo + 1
        todo[k], tx[k], td[k], c.x_ = c, c.x_, depth + 1, nil
      end
    end
  end
  local height = top + (max_depth + 1) * fh + 40
  local copts = { colors = opts.colors, hash = opts.hash, max_delta = max_delta, kinds = {} }
  if not opts.hash then math.randomseed(1) end
  local out = {
    '<?xml version="1.0" standalone="no"?>',
    format('<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" '
      .. 'class="sift-flame" data-width="%d" data-units="%s">', width, height, width, height, width, esc(countname)),
    -- (scoped to the graph: inline, the page's other elements keep their style)
    '<style>.sift-flame text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); } '
      .. '.sift-flame g.f { cursor: pointer; } .sift-flame g.f:hover rect { stroke: black; stroke-width: 0.5; } '
      .. '.sift-flame .title { font-size: 17px; text-anchor: middle; } '
      .. '.sift-flame .button { fill: rgb(60,60,160); cursor: pointer; }</style>',
    format('<rect x="0" y="0" width="%d" height="%d" fill="rgb(248,248,248)"/>', width, height),
    format('<text class="title" x="%d" y="24">%s</text>', width // 2, esc(opts.title or "Flame Graph")),
  }
  if opts.subtitle then
    out[#out + 1] = format('<text x="%d" y="44" text-anchor="middle" fill="rgb(100,100,100)">%s</text>',
      width // 2, esc(opts.subtitle))
  end
  out[#out + 1] = format('<text class="unzoom button" x="%d" y="24" style="display:none">Reset Zoom</text>', pad)
  out[#out + 1] = format('<text class="search button" x="%d" y="24" text-anchor="end">Search</text>', width - pad)
  -- (the count of matches beside the button, where the eye is)
  out[#out + 1] = format('<text class="matched" x="%d" y="24" text-anchor="end"> </text>', width - pad - 60)
  out[#out + 1] = format('<text class="details" x="%d" y="%d"> </text>', pad, height - 12)
  -- per name: its escaped form and, unless hashed, its colour's kind
  local escaped = setmetatable({}, { __index = function(t, name)
    local e = esc(name)
    t[name] = e
    return e
  end })
  local units = esc(countname)
  for i, node in ipairs(nodes) do
    local depth, x = depths[i], xs[i]
    local y = opts.inverted and (top + depth * fh) or (height - 40 - (depth + 1) * fh)
    local name, value = escaped[node.name], node.value
    local tip
    if node.delta then
      tip = format("%s (%s → %s %s, %+d)", name, node.before or 0, value, units, node.delta)
    else
      tip = format("%s (%s %s, %s%%)", name, value, units, percent(value, total))
    end
    out[#out + 1] = format('<g class="f" data-x="%s" data-w="%s" data-name="%s"><title>%s</title>'
      .. '<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" rx="2" ry="2"/>'
      .. '<text x="%.2f" y="%d"></text></g>',
      x, value, name, tip, pad + x * scale, y, value * scale, fh - 1, colour(node, copts),
      pad + x * scale + 3, y + fh - 4)
  end
  out[#out + 1] = "<script><![CDATA[" .. SCRIPT .. "]]></script>"
  out[#out + 1] = "</svg>"
  return concat(out, "\n") .. "\n"
end

-- }======================================================

return M
