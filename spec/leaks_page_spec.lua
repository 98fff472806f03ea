-- The leaks page of sift serve, a page of the site, and the one number
-- style of every page. `sift serve` runs as its own process on a free
-- loopback port over a JVM dump made at test time (spec/java/LeaksPage.java,
-- jcmd GC.heap_dump -all: a watched leak, a watched object no root reaches,
-- a stream left open, a cache that is a MAT suspect) and over LeakCanary
-- 1.x's leak_service_binder.hprof (its LeakyService leak, MANIFEST.md).
-- What the page shows is compared with what `sift leaks --suspects --json`
-- and `sift top` print for the same file. The browser part (headless
-- Chromium, as spec/browser_spec.lua drives it) reads the DOM, fetches
-- every link of every trace node and suspect, and measures the number
-- boxes in a 320-pixel-wide window with a probe, as browser_check.lua does.
require("sift.paths").older_lua()
local cjson = require "cjson"
local size = require "sift.size"
local helper = require "spec.helper"

local FIXTURE = "hprof/android/leakcanary-1.x/leak_service_binder.hprof"
local CHROMIUM = os.getenv("CHROMIUM") or "chromium"
local HEAP_PAGES = { "", "histogram", "dominators", "leaks", "waste", "threads", "loaders",
  "class?name=java.lang.String" }

local get = helper.http_get

-- a page once its file is open (the first visit shows its progress)
local function page(url)
  local got = helper.wait_for(url .. " past its progress page", function()
    local status, body = get(url)
    return not body:find('id="progress"', 1, true) and { status, body }, body:sub(1, 300)
  end)
  return got[1], got[2]
end

local cli_json = helper.sift_json

-- the two dumps: name, path, and what the CLI says of them; nil and why
-- when one cannot be had (no fixtures, no JDK)
local function dumps()
  local fixture = helper.fixture(FIXTURE)
  if not fixture then return nil end
  local jvm, why = helper.jvm_dump("leakcanary.LeaksPage", "-all")
  if not jvm then return nil, why end
  local out = {}
  for i, path in ipairs { jvm, fixture } do
    local top = helper.sift { "top", "-q", path }
    local reachable, unreachable, bytes = top:match("reachable objects: ([%d,]+); unreachable: ([%d,]+) objects, ([%d,]+) bytes")
    out[i] = { path = path, name = path:match("[^/]+$"), report = cli_json { "leaks", "--suspects", "--json", "-q", path },
      reachable = reachable, unreachable = unreachable, unreachable_bytes = bytes }
  end
  return out
end

-- the trace nodes of a report (the CLI's JSON): their ids, in order
local function node_ids(report)
  local ids = {}
  for _, kind in ipairs { "application_leaks", "library_leaks", "unclosed_resources" } do
    for _, leak in ipairs(report[kind]) do
      for _, trace in ipairs(leak.traces) do
        for _, e in ipairs(trace.elements) do ids[#ids + 1] = e.id end
      end
    end
  end
  return ids
end

-- the class names of the suspects and of what lies inside them, in order
local function suspect_classes(report)
  local names = {}
  for _, s in ipairs(report.suspects) do
    names[#names + 1] = s.class
    for _, inner in ipairs(s.nested) do names[#names + 1] = inner.class end
  end
  return names
end

-- every number of a page: written with commas, no digit groups split by
-- spaces (but in the values a dump holds: the waste page's strings), every
-- size with a unit carries its exact bytes, and table cells are exact
local function check_numbers(where, html, values)
  for n in html:gmatch('<span class="n">([^<]*)</span>') do
    assert.truthy(n:match("^%-?%d%d?%d?$") or n:match("^%-?%d%d?%d?,[%d,]*%d%d%d$") or n:match("^%-?[%d,]+%.%d+$"),
      where .. ": " .. n)
    assert.falsy(n:find("%d%d%d%d") and n:find(","), where .. ": " .. n)
  end
  if not values then
    local text = html:gsub("<style>.-</style>", ""):gsub("<script>.-</script>", ""):gsub("<[^>]*>", "")
    assert.falsy(text:find("%d %d%d%d%f[%D]"), where .. ": a number with its digits split by a space")
  end
  for exact, shown in html:gmatch('<span class="n" title="([%d,]+) bytes">([^<]*)</span>') do
    assert.are.equal(size.si(tonumber((exact:gsub(",", "")))), shown, where)
  end
  for cell in html:gmatch('<td class="n">(.-)</td>') do
    assert.truthy(cell == "" or cell == "-" or cell == "?" or cell:match('^<span class="n">%-?[%d,]+%.?%d*</span>$')
      or cell:match("^%-?[%d.]+%%$"), where .. ": a number cell " .. cell)
  end
end

describe("the leaks page of sift serve", function()
  local files, why = dumps()
  if not files then
    it("needs the fixtures and a JDK", function() pending(why or "shared fixtures not found") end)
    return
  end
  local url, pid, dir
  setup(function()
    url, pid, dir = helper.serve { files[1].path, files[2].path }
    assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
    local _, index = get(url .. "index.json", "application/json")
    for _, f in ipairs(cjson.decode(index).files) do
      for _, d in ipairs(files) do if d.name == f.name then d.url = url .. f.url:sub(2) end end
    end
  end)
  teardown(function()
    if pid then os.execute("kill " .. pid) end
    if dir then os.execute("rm -rf " .. helper.quote(dir)) end
  end)

  it("is a page of the site: traces with each node linked, suspects, the unreachable said in words; JSON the CLI's",
    function()
    for _, d in ipairs(files) do
      local status, html = page(d.url .. "leaks")
      assert.are.equal(200, status)
      local _, json = get(d.url .. "leaks.json", "application/json")
      assert.are.same(d.report, cjson.decode(json))
      -- the site's navigation
      local header = assert(html:match("<header>(.-)</header>"), d.name)
      for _, page_name in ipairs { "histogram", "dominators", "leaks", "waste" } do
        assert.truthy(header:find(('href="/f/%%x+/%s"'):format(page_name)), d.name .. ": nav " .. page_name)
      end
      -- each node of each trace, a link to its object, in the CLI's order
      local links = {}
      for id in html:gmatch('<a class="node" href="/f/%x+/object/(0x%x+)">') do links[#links + 1] = id end
      assert.are.same(node_ids(d.report), links)
      -- the suspects with the CLI's class names, each with its subtree
      local shown = {}
      for name in html:gmatch('<span class="suspect%-class">([^<]+)</span>') do shown[#shown + 1] = name end
      assert.are.same(suspect_classes(d.report), shown)
      assert.is_true(#shown >= 1, d.name)
      for _, s in ipairs(d.report.suspects) do
        assert.truthy(html:find(('href="/f/%%x+/dominators%%?of=%s">dominator subtree</a>'):format(s.id)), s.id)
        assert.truthy(html:find(('<span class="n">%s</span> bytes, %.1f%%'):format(size.grouped(s.retained), 100 * s.share),
          1, true), d.name .. ": " .. s.class)
      end
      -- "unreachable" here and on the overview, each with what it counts
      local note = assert(html:match('<p id="unreachable%-note">(.-)</p>'), d.name)
      assert.truthy(note:find(('the <span class="n">%s</span> object'):format(size.grouped(#d.report.unreachable)), 1, true),
        note)
      assert.truthy(note:find(('its <span class="n">%s</span> objects of the dump'):format(d.unreachable), 1, true), note)
      local _, overview = page(d.url)
      local there = assert(overview:match('<p id="unreachable%-note">(.-)</p>'), d.name)
      assert.truthy(there:find(('the <span class="n">%s</span> objects of the dump'):format(d.unreachable), 1, true), there)
      assert.truthy(there:find("leaks page</a> lists only the objects that a leak finder says should be dead", 1, true))
      for _, obj in ipairs(d.report.unreachable) do
        assert.truthy(html:find(('<li><a href="/f/%%x+/object/%s">'):format(obj.id)), obj.id)
      end
    end
    -- what the JVM program planted
    local jvm = files[1].report
    assert.are.same({ "leakcanary.LeaksPage$Screen", "java.io.FileInputStream", "leakcanary.LeaksPage$Screen" },
      { jvm.application_leaks[1].traces[1].leaking_class, jvm.unclosed_resources[1].traces[1].leaking_class,
        jvm.unreachable[1].class })
    assert.are.equal("leakcanary.LeaksPage$Cache", jvm.suspects[1].class)
    assert.are.same({ "com.example.leakcanary.LeakyService" }, { files[2].report.application_leaks[1].traces[1].leaking_class })
  end)

  it("writes numbers as the CLI does, 3,356,758, on every heap page", function()
    for _, d in ipairs(files) do
      local _, overview = page(d.url)
      for _, n in ipairs { d.reachable, d.unreachable, d.unreachable_bytes } do
        assert.truthy(n:find(",", 1, true) or #n < 4)
        assert.truthy(overview:find('<td><span class="n">' .. n .. "</span></td>", 1, true), d.name .. ": " .. n)
      end
      -- the histogram's first rows, as sift histogram prints them
      local cli = helper.lines(helper.sift { "histogram", "-q", "--top", "3", d.path })
      local _, histogram = page(d.url .. "histogram?sort=shallow")
      for _, line in ipairs(cli) do
        local shallow, count, class = line:match("^%s*([%d,]+)%s+([%d,]+)%s+(%S+)$")
        if class and class ~= "total" then
          local row = ('>%s</a></td><td class="n"><span class="n">%s</span></td><td class="n"><span class="n">%s</span></td>')
            :format(class:gsub("[<>&]", { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;" }), count, shallow)
          assert.truthy(histogram:find(row, 1, true), d.name .. ": " .. line)
        end
      end
      for _, p in ipairs(HEAP_PAGES) do
        local status, html = page(d.url .. p)
        assert.are.equal(200, status, p)
        check_numbers(d.name .. " " .. p, html, p == "waste")
      end
    end
  end)

  it("in headless Chromium: its nav and suspects, every link answers, no number box wraps #heavy", function()
    if os.execute(("command -v %s >/dev/null 2>&1"):format(CHROMIUM)) ~= true then
      pending("chromium is not installed (apt-get install chromium)")
      return
    end
    local function chromium(args, target)
      local p = io.popen(("env -u LD_PRELOAD %s --headless --no-sandbox --disable-gpu --hide-scrollbars %s %s 2>/dev/null")
        :format(CHROMIUM, args, helper.quote(target)))
      local out = p:read("a")
      p:close()
      return out
    end
    for _, d in ipairs(files) do
      page(d.url .. "leaks")  -- (open)
      local dom = chromium("--virtual-time-budget=3000 --dump-dom", d.url .. "leaks")
      assert.truthy(dom:find("<h1>Leaks</h1>", 1, true), dom:sub(1, 500))
      local function nav(of)
        local texts = {}
        for text in assert(of:match("<header>(.-)</header>")):gmatch(">([^<]+)</a>") do texts[#texts + 1] = text end
        return texts
      end
      page(d.url .. "histogram")
      local site = nav(chromium("--virtual-time-budget=3000 --dump-dom", d.url .. "histogram"))
      assert.are.same(site, nav(dom))
      assert.are.same({ "sift", d.name, "histogram", "dominator tree", "leaks" }, { table.unpack(site, 1, 5) })
      local shown = {}
      for name in dom:gmatch('<span class="suspect%-class">([^<]+)</span>') do shown[#shown + 1] = name end
      assert.are.same(suspect_classes(d.report), shown)
      -- every link of the page's body answers 200: each trace node's
      -- object page (with its id), each suspect's dominator subtree (with
      -- children), the unreachable objects
      local hrefs, seen = {}, {}
      for href in assert(dom:match("<main>(.*)</main>")):gmatch('href="(/f/[^"]*)"') do
        href = href:gsub("&amp;", "&")
        if not seen[href] then seen[href], hrefs[#hrefs + 1] = true, href end
      end
      local nodes = 0
      for _, href in ipairs(hrefs) do
        local status, body = get(url .. href:sub(2))
        assert.are.equal(200, status, href)
        local id = href:match("/object/(0x%x+)$")
        if id then
          nodes = nodes + 1
          assert.truthy(body:find("<h1>[^<]*" .. id .. "</h1>") or body:find("<h1>class "), href)
        elseif href:find("dominators?of=", 1, true) then
          assert.truthy(body:find('<table id="dominators"><tr>.-</tr><tr>'), href)
        end
      end
      local distinct = {}
      for _, id in ipairs(node_ids(d.report)) do distinct[id] = true end
      for _, id in pairs(d.report.unreachable) do distinct[id.id] = true end
      for id in pairs(distinct) do assert.truthy(seen[d.url:match("(/f/%x+/)$") .. "object/" .. id], id) end
      assert.is_true(nodes > 0)
      -- the page in a window 320 pixels wide, with a probe (as
      -- browser_check.lua adds one): each number box has white-space
      -- nowrap and one line box; a control without the class wraps
      local _, html = get(d.url .. "leaks")
      local probe = [[<div id="probe-box" style="width:1em"><span id="with-n" class="n">4.1 kB 3 356 758</span>
<span id="without-n">4.1 kB 3 356 758</span></div><pre id="probe"></pre><script>
var boxes = document.querySelectorAll("main .n"), bad = [];
for (var i = 0; i < boxes.length; i++) {
  var b = boxes[i];
  if (b.closest("#probe-box")) continue;
  if (getComputedStyle(b).whiteSpace !== "nowrap" || b.getClientRects().length !== 1) bad.push(b.textContent);
}
document.getElementById("probe").textContent = "boxes=" + (boxes.length - 1) + " bad=" + bad.length + " [" + bad.join("|") +
  "] control=" + document.getElementById("with-n").getClientRects().length + "/" +
  document.getElementById("without-n").getClientRects().length;
</script>]]
      local copy = dir .. "/leaks-" .. d.name .. ".html"
      local f = assert(io.open(copy, "w"))
      f:write((html:gsub("<head>", '<head><base href="' .. url .. '">', 1):gsub("</main>", function() return probe .. "</main>" end)))
      f:close()
      local probed = chromium("--window-size=320,2000 --virtual-time-budget=2000 --dump-dom", "file://" .. copy)
      local line = assert(probed:match('<pre id="probe">([^<]*)</pre>'), "the probe did not run")
      local boxes, bad, with_n, without_n = line:match("^boxes=(%d+) bad=(%d+) %[.-%] control=(%d+)/(%d+)$")
      assert.are.same({ true, 0, 1, true }, { tonumber(boxes) >= 5, tonumber(bad), tonumber(with_n), tonumber(without_n) > 1 },
        line)
    end
  end)
end)
