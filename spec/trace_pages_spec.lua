-- sift serve's trace graphs in headless Chromium: every view (flame graph,
-- icicle, left heavy, time order, diff, sandwich) of a fixture trace, read
-- back from the DOM after the graphs' scripts ran (--dump-dom) and from
-- screenshots. What a person would check: every frame drawn with a
-- positive width and the root across the graph; a search's count of
-- matches equal to the frames sift's own folded stacks (or Chrome
-- export) say are there; the thread picker naming each thread with its
-- id; the current view, clock and thread marked; the sandwich's roots
-- the method's inclusive time; and a screenshot whose graph area is
-- mostly frames (the page drawn empty before had 0.2 % of it). Then,
-- without a browser, the trees behind the sandwich and left heavy views.
local helper = require "spec.helper"
local cjson = require "cjson"

local TRACE = "trace/amp-legacy.trace"
local BASELINE = "trace/firefox-art-trace-regular.trace"
-- the app's own frames (a prefix of class.method: the same in the graph's
-- frame names and in the exports' full names with their signatures)
local APP = "^com\\.github\\.grishberg\\.cad3d\\."
local APP_LUA = "^com%.github%.grishberg%.cad3d%."
local RECURSIVE = "com.github.grishberg.cad3d.util.SceneBuilderKeyboard.createAndAdd"
local WIDTH, PAD, MIN_PX = 1200, 10, 0.1  -- sift.trace.flame's defaults
local BACKGROUND = "248,248,248"          -- the graph's background

local function unescape(s)
  return (s:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&#39;", "'"):gsub("&amp;", "&"))
end

-- the graphs of a DOM: each svg's width, its count of matches as shown,
-- and its frames (name, data-x, data-w, the rect's x and width, hidden)
local function graphs(dom)
  local out = {}
  for svg in dom:gmatch('<svg[^>]-class="sift%-flame".-</svg>') do
    local g = { width = tonumber(svg:match('data%-width="(%d+)"')), frames = {},
      matched = svg:match('<text class="matched"[^>]*>([^<]*)</text>') }
    for attrs, rect in svg:gmatch('<g class="f"([^>]*)><title>[^<]*</title><rect([^>]*)>') do
      g.frames[#g.frames + 1] = { name = unescape(attrs:match('data%-name="([^"]*)"')),
        x = tonumber(attrs:match('data%-x="([%d.]+)"')), w = tonumber(attrs:match('data%-w="([%d.]+)"')),
        rx = tonumber(rect:match(' x="([-%d.e]+)"')), rw = tonumber(rect:match(' width="([-%d.e]+)"')),
        ry = tonumber(rect:match(' y="(%d+)"')),
        hidden = attrs:find("display: none", 1, true) ~= nil }
    end
    out[#out + 1] = g
  end
  return out
end

-- what a person sees of a graph: frames, each with a positive width, the
-- root across the whole graph, and the count of matches the search shows
local function check_graph(g, what)
  assert.is_true(#g.frames > 10, what .. ": " .. #g.frames .. " frames")
  for _, f in ipairs(g.frames) do
    assert.is_true(f.rw > 0, ("%s: %s drawn %s wide"):format(what, f.name, f.rw))
  end
  local root = g.frames[1]
  assert.are.same({ 0, PAD, g.width - 2 * PAD }, { root.x, root.rx, root.rw }, what .. ": the root spans the graph")
  return tonumber(g.matched:match("^(%d+) match"))
end

-- the frames a flame graph of the trace draws whose name matches: every
-- prefix of sift fold's stacks (a node of the tree) that holds at least
-- 0.1 px of the graph's width
local function expected_matches(path, total)
  local inclusive = {}
  for stack, n in helper.sift({ "fold", "--clock", "cpu", path }):gmatch("([^\n]*) (%d+)\n") do
    local prefix = ""
    for frame in stack:gmatch("[^;]+") do
      prefix = prefix .. ";" .. frame
      inclusive[prefix] = (inclusive[prefix] or 0) + tonumber(n)
    end
  end
  local min, count = MIN_PX * total / (WIDTH - 2 * PAD), 0
  for prefix, v in pairs(inclusive) do
    if prefix:match("[^;]*$"):find(APP_LUA) and v >= min then count = count + 1 end
  end
  return count
end

-- the calls a time-order graph of one thread draws whose name matches:
-- the B/E pairs of sift export --format chrome at least 0.1 px long
local function expected_calls(path, tid)
  local doc = cjson.decode((helper.sift { "export", "--format", "chrome", "--clock", "cpu", "--thread", tostring(tid), path }))
  local first, last, open, calls = math.huge, -math.huge, {}, {}
  for _, e in ipairs(doc.traceEvents) do
    if e.ph == "B" then
      open[#open + 1] = e
    elseif e.ph == "E" then
      local b = table.remove(open)
      calls[#calls + 1] = { name = b.name, dur = e.ts - b.ts }
    end
    if e.ts then first, last = math.min(first, e.ts), math.max(last, e.ts) end
  end
  local min, count = MIN_PX * (last - first) / (WIDTH - 2 * PAD), 0
  for _, c in ipairs(calls) do
    if c.name:find(APP_LUA) and c.dur > 0 and c.dur >= min then count = count + 1 end
  end
  return count
end

-- a JSON page of the server (curl, as docs/serve.md shows)
local function get_json(url)
  local p = io.popen("curl -s " .. helper.quote(url))
  local text = p:read("a")
  p:close()
  return cjson.decode(text)
end

-- the share of non-background pixels inside the graph's area of a screenshot
local function share(png)
  local p = io.popen("python3 spec/png_share.py " .. helper.quote(png) .. " " .. BACKGROUND)
  local out = p:read("a")
  p:close()
  local x0, y0, x1, y1, s = out:match("^(%d+) (%d+) (%d+) (%d+) ([%d.]+)")
  assert.truthy(s, "no graph area in the screenshot: " .. out)
  return tonumber(s), { tonumber(x0), tonumber(y0), tonumber(x1), tonumber(y1) }
end

describe("sift serve's trace graphs in headless Chromium #heavy", function()
  it("draws every view with its frames, the root across, the search's count and the pickers", function()
    local trace, baseline = helper.fixture(TRACE), helper.fixture(BASELINE)
    if not trace then return end
    if not helper.have_chromium() then
      pending("chromium is not installed (apt-get install chromium)")
      return
    end
    local url, pid, dir = helper.serve { trace, baseline }
    local ok, err = pcall(function()
      assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
      local index = get_json(url .. "index.json")
      local page, base_id
      for _, f in ipairs(index.files) do
        if f.name == "amp-legacy.trace" then page = url .. f.url:sub(2) else base_id = f.id end
      end
      local search = "#search=" .. APP:gsub("[^%w]", function(c) return ("%%%02X"):format(c:byte()) end)
      local function view(query) return helper.dom(page .. "flame?" .. query .. search) end
      local function facts(query) return get_json(page .. "flame.json?" .. query) end

      -- flame graph, icicle and left heavy: one tree, three layouts
      local flame_facts = facts("view=flame")
      local expected = expected_matches(trace, flame_facts.total)
      assert.is_true(expected > 20, expected)
      for _, v in ipairs { "flame", "icicle", "left" } do
        local dom = view("view=" .. v)
        local g = graphs(dom)
        assert.are.equal(1, #g, v)
        assert.are.equal(expected, check_graph(g[1], v), v .. ": the count of matches")
        assert.truthy(dom:find('aria-current="page">' .. ({ flame = "flame graph", icicle = "icicle",
          left = "left heavy" })[v] .. "</a>", 1, true), v .. ": the current view marked")
        assert.truthy(dom:find('aria-current="page">cpu clock</a>', 1, true), v .. ": the current clock marked")
        if v == "left" then  -- heaviest first: each frame's children, left to right, by weight
          local frames, last = g[1].frames, {}  -- (in preorder; a frame's depth from its row)
          for _, f in ipairs(frames) do
            local depth = (f.ry - frames[1].ry) // 16
            local parent, before = last[depth - 1], last[depth]
            if depth > 0 and before and before.parent == parent then
              assert.is_true(before.w >= f.w and f.x == before.x + before.w, before.name .. " before " .. f.name)
            end
            f.parent, last[depth] = parent, f
          end
        end
        -- the thread picker: each thread with records by name and id
        if v == "flame" then
          local threads = get_json(page .. "index.json").threads
          local listed = 0
          for _, th in ipairs(threads) do
            if th.records > 0 then
              listed = listed + 1
              assert.truthy(dom:find(('<option value="%d">%s (tid %d) · '):format(th.tid, th.name, th.tid), 1, true),
                th.name .. " " .. th.tid)
            end
          end
          assert.is_true(listed >= 6, listed)
          assert.truthy(dom:find('<option value="" selected="">all threads</option>', 1, true), "all threads marked")
        end
      end

      -- time order: the thread with most records, its calls at their time
      local time_facts = facts("view=time")
      local dom = view("view=time")
      local g = graphs(dom)
      assert.are.equal(1, #g)
      local calls = expected_calls(trace, time_facts.thread)
      assert.is_true(calls > 20, calls)
      assert.are.equal(calls, check_graph(g[1], "time order"), "time order: the count of matches")
      assert.truthy(dom:find(('<option value="%d" selected="">main (tid %d) · '):format(time_facts.thread,
        time_facts.thread), 1, true), "the current thread marked")

      -- diff against the other served trace: this trace's shape, so its
      -- frames and matches are the flame graph's
      dom = view("view=diff&base=" .. base_id)
      assert.truthy(dom:find(('<option value="%s" selected="">firefox-art-trace-regular.trace</option>'):format(base_id),
        1, true), "the baseline picked among the served traces")
      g = graphs(dom)
      assert.are.equal(1, #g)
      assert.are.equal(expected, check_graph(g[1], "diff"), "diff: the count of matches")
      assert.truthy(dom:find('fill="rgb%(255,%d+,%d+%)"'), "diff: frames that grew are red")

      -- sandwich of a recursive method (one overload of createAndAdd calls
      -- the other): both roots are its inclusive time, counted once
      local inclusive = 0
      for _, m in ipairs(get_json(page .. "profile.json?clock=cpu").methods) do
        if m.name:sub(1, #RECURSIVE + 1) == RECURSIVE .. " " then inclusive = math.max(inclusive, m.inclusive) end
      end
      assert.is_true(inclusive > 0)
      dom = view("view=sandwich&method=" .. RECURSIVE)
      g = graphs(dom)
      assert.are.equal(2, #g, "callers and callees")
      for i, what in ipairs { "callers", "callees" } do
        local shown = check_graph(g[i], what)
        assert.are.same({ RECURSIVE, inclusive }, { g[i].frames[1].name, g[i].frames[1].w }, what)
        local drawn = 0
        for _, f in ipairs(g[i].frames) do if f.name:find(APP_LUA) then drawn = drawn + 1 end end
        assert.are.equal(drawn, shown, what .. ": the count of matches")
      end
      -- the hot methods page links each method to its sandwich
      local hot = helper.dom(page .. "profile")
      assert.truthy(hot:find('href="/f/%x+/flame%?clock=cpu&amp;method=com%.github%.grishberg%.cad3d%.util%.'
        .. 'SceneBuilderKeyboard%.createAndAdd&amp;view=sandwich"'), "createAndAdd links to its sandwich")

      -- screenshots: the graph's area is mostly frames
      for _, v in ipairs { "flame", "icicle", "left", "time", "diff&base=" .. base_id, "sandwich&method=" .. RECURSIVE } do
        local shot = ("%s/%s.png"):format(dir, v:match("^%a+"))
        helper.screenshot(page .. "flame?view=" .. v, shot, 1280, 900)
        local s, box = share(shot)
        assert.is_true(box[3] - box[1] + 1 >= WIDTH - 2, v .. ": the graph's area " .. table.concat(box, ","))
        assert.is_true(s > 0.3, ("%s: %.1f %% of the graph's area holds frames"):format(v, 100 * s))
      end
    end)
    os.execute("kill " .. pid)
    os.execute("rm -rf " .. helper.quote(dir))
    assert(ok, err)
  end)
end)

describe("the trace views' trees", function()
  local flame = require "sift.trace.flame"
  -- (sift fold's stacks of trace/synthetic/simple-v2.trace: C.leaf calls
  -- itself, and is called from A.run and from B.work)
  local FOLDED = "main;A.run 45\nmain;A.run;C.leaf 20\nmain;A.run;C.leaf;C.leaf 5\nmain;A.run;B.work 20\n"
    .. "main;A.run;B.work;C.leaf 10\nfoo;X.loop 45\n"

  -- a tree as nested { name, value, children... }, children by name
  local function shape(node)
    local kids = {}
    for _, c in ipairs(node.children) do kids[#kids + 1] = shape(c) end
    table.sort(kids, function(a, b) return a[1] < b[1] end)
    return { node.name, node.value, table.unpack(kids) }
  end

  it("makes a method's sandwich: its callers up to the thread, its callees merged, recursion counted once", function()
    local callers, callees = flame.sandwich(flame.from_folded(FOLDED), "C.leaf")
    assert.are.same({ "C.leaf", 35, { "A.run", 25, { "main", 25 } }, { "B.work", 10, { "A.run", 10, { "main", 10 } } } },
      shape(callers))
    assert.are.same({ "C.leaf", 35, { "C.leaf", 5 } }, shape(callees))
    local none = flame.sandwich(flame.from_folded(FOLDED), "Z.none")
    assert.are.equal(0, none.value)
  end)

  it("lays out left heavy with the heaviest frame first, the flame graph by name", function()
    local tree = flame.from_folded("t;b 10\nt;a 5\nt;c 20\n")
    local function order(svg)
      local out = {}
      for x, name in svg:gmatch('data%-x="(%d+)" data%-w="%d+" data%-name="([abc])"') do out[#out + 1] = name .. x end
      return table.concat(out, " ")
    end
    assert.are.equal("a0 b5 c15", order(flame.svg(tree, { hash = true })))
    assert.are.equal("c0 b20 a30", order(flame.svg(tree, { hash = true, order = "weight" })))
  end)
end)
