-- sift serve in a real browser: `sift serve` started as its own process
-- on a free loopback port, headless Chromium (Debian's chromium) over its
-- pages. The DOM Chromium builds (after the pages' scripts ran) is read
-- back with --dump-dom: one path is clicked through (histogram → class →
-- object → its path from a GC root, following the links the pages carry),
-- the play mode replays steps, and screenshots of the main pages must not
-- be blank. The trace graphs: trace_pages_spec.lua.
local helper = require "spec.helper"

local HEAP = "hprof/generated-jdk17/leaky_jdk17_all.hprof"
local TRACE = "trace/amp-legacy.trace"

local have_chromium, chromium, dom = helper.have_chromium, helper.chromium, helper.dom

-- the href of the first link matching pattern (HTML-unescaped)
local function link(html, pattern)
  for href in html:gmatch('href="([^"]*)"') do
    href = href:gsub("&amp;", "&")
    if href:find(pattern) then return href end
  end
end

describe("sift serve in headless Chromium #heavy", function()
  it("clicks from the histogram to an object's path, plays a trace, and draws pages", function()
    local heap, trace = helper.fixture(HEAP), helper.fixture(TRACE)
    if not heap then return end
    if not have_chromium() then
      pending("chromium is not installed (apt-get install chromium)")
      return
    end
    local url, pid, dir = helper.serve { heap, trace }
    local ok, err = pcall(function()
      assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
      local index = dom(url)
      local heap_page = assert(link(index, "^/f/%x+/$"), index)
      local trace_page
      for href in index:gmatch('href="(/f/%x+/)"') do if href ~= heap_page then trace_page = href end end
      -- histogram → the planted leak's class → an instance → its path
      local histogram = dom(url .. heap_page:sub(2) .. "histogram?filter=LeakyApp")
      assert.truthy(histogram:find('<table id="histogram">', 1, true))
      local class_href = assert(link(histogram, "/class%?name=LeakyApp"), histogram)
      local class = dom(url .. class_href:sub(2))
      assert.truthy(class:find("<h1>class LeakyApp", 1, true), class)
      local object_href = assert(link(class, "/object/0x%x+$"), class)
      local object = dom(url .. object_href:sub(2))
      local path = assert(object:match('<ol id="path">(.-)</ol>'), object)
      local steps = 0
      for _ in path:gmatch("<li>") do steps = steps + 1 end
      assert.is_true(steps >= 2, path)
      assert.truthy(path:find("GC Root", 1, true), path)
      -- play mode, 25 steps in: the count and the graph's nodes
      local play = dom(url .. trace_page:sub(2) .. "play#at=25")
      local at, total = play:match('<span id="count">(%d+) / (%d+)</span>')
      assert.are.same({ 25, true }, { tonumber(at), tonumber(total) > 25 })
      local circles = 0
      for _ in play:gmatch("<circle") do circles = circles + 1 end
      assert.is_true(circles >= 5, play:sub(1, 400))
      assert.truthy(play:match('<p id="current" class="mono">[^<]+</p>'))
      -- screenshots: each page drawn, its ink (what is not the page's
      -- white) a real share of the window, and the two heap pages unlike
      -- (the trace graphs' screenshots are judged by their frames: trace_pages_spec.lua)
      local inks = {}
      for i, page in ipairs { heap_page, heap_page .. "histogram", trace_page .. "play#at=200" } do
        local shot = ("%s/shot%d.png"):format(dir, i)
        helper.screenshot(url .. page:sub(2), shot, 1200, 900)
        local p = io.popen("python3 spec/png_share.py " .. helper.quote(shot) .. " 255,255,255")
        local out = p:read("a")
        p:close()
        local x0, y0, x1, y1, ink = out:match("^(%d+) (%d+) (%d+) (%d+) ([%d.]+)")
        assert.truthy(ink, page .. ": " .. out)
        assert.are.same({ 0, 1199, 899 }, { tonumber(x0), tonumber(x1), tonumber(y1) }, page .. " (the page's white "
          .. "spans the window below its header, top " .. y0 .. ")")
        inks[i] = tonumber(ink)
        assert.is_true(inks[i] > 0.03, ("%s: %.1f %% of the window drawn: it looks blank"):format(page, 100 * inks[i]))
      end
      assert.is_true(inks[1] ~= inks[2])
    end)
    os.execute("kill " .. pid)
    os.execute("rm -rf " .. helper.quote(dir))
    assert(ok, err)
  end)

  it("refuses what another site's page in the browser sends, and a DNS-rebound name", function()
    if not have_chromium() then
      pending("chromium is not installed (apt-get install chromium)")
      return
    end
    local url, pid, dir = helper.serve {}
    local port = url:match(":(%d+)/$")
    -- the other site: a page served from another port (another origin),
    -- reached as attacker.test (another site), that posts a dump to sift
    -- three ways as soon as it loads
    local site = helper.tmpdir()
    local f = assert(io.open(site .. "/attack.html", "w"))
    f:write(([[<!DOCTYPE html><html><body><p id="out">pending</p>
<iframe name="sink"></iframe>
<form id="form" method="post" action="http://127.0.0.1:PORT/upload" enctype="multipart/form-data" target="sink">
<input type="hidden" name="note" value="x"></form>
<script>
var dump = "JAVA PROFILE 1.0.2\0\0\0\0\4\0\0\0\0\0\0\0\0";
var fd = new FormData();
fd.append("file", new Blob([dump]), "evil.hprof");
var done = 0, out = document.getElementById("out");
function one(what) { return function () { done++; out.textContent = "sent " + done; }; }
fetch("http://127.0.0.1:PORT/upload?name=evil.hprof", { method: "POST", mode: "no-cors", body: dump }).then(one(), one());
fetch("http://127.0.0.1:PORT/upload", { method: "POST", mode: "no-cors", body: fd }).then(one(), one());
document.getElementById("form").submit();
</script></body></html>]]):gsub("PORT", port))
    f:close()
    -- (without the sanitizer runtime make spec-asan preloads; its pid
    -- first, to stop it: pkill hangs under that runtime)
    local web = io.popen(("cd %s && echo $$ && exec env -u LD_PRELOAD python3 -u -m http.server 0 --bind 127.0.0.1 2>&1")
      :format(helper.quote(site)))
    local web_pid = web:read("l")
    local site_port = web:read("l"):match("port (%d+)")
    local ok, err = pcall(function()
      local rules = "--host-resolver-rules=" .. helper.quote("MAP attacker.test 127.0.0.1, MAP rebound.test 127.0.0.1")
      local page = chromium("--virtual-time-budget=5000 --dump-dom " .. rules,
        ("http://attacker.test:%s/attack.html"):format(site_port))
      assert.truthy(page:find('<p id="out">sent 2</p>', 1, true), page)
      local log = helper.wait_for("the server to log three refusals", function()
        local text = helper.read(dir .. "/out")
        local n = select(2, text:gsub("403 POST /upload from 127%.0%.0%.1:%d+: a cross%-site request", ""))
        return n >= 3 and text or nil, text
      end, 120)
      assert.are.same({}, helper.names(dir .. "/data"))
      -- a page of the rebound name may not read sift's pages
      local rebound = chromium("--virtual-time-budget=3000 --dump-dom " .. rules,
        ("http://rebound.test:%s/index.json"):format(port))
      assert.truthy(rebound:find('Host \\"rebound.test:' .. port .. '\\" is not this server', 1, true)
        or rebound:find('Host "rebound.test:' .. port .. '" is not this server', 1, true), rebound)
      assert.falsy(rebound:find('"files"', 1, true), rebound)
      assert.truthy(helper.read(dir .. "/out"):find('403 GET /index.json from 127.0.0.1:%d+: Host "rebound.test:'), log)
    end)
    os.execute("kill " .. web_pid)
    web:close()
    os.execute("kill " .. pid)
    assert(ok, err)
  end)
end)
