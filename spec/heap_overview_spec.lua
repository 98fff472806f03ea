-- The overview and the histogram of sift serve (issue 33, items 3 and 4):
-- the total and reachable heap, the Android heaps as ahat's overview lists
-- them, selectable (?heap=), the top retainers as `sift top` writes them,
-- the histogram's totals, percentages and MAT's "group by" (package, class
-- loader), and the baseline's Δ columns. One server over the HeapPages
-- jcmd dump (spec/java/HeapPages.java) and two Dalvik fixtures with app
-- and zygote heaps (perflib's dialer, LeakCanary 1.x's leak_service_binder);
-- a second with --baseline (leak_service_binder_ignored, the same app a
-- moment before). Every number is the CLI's, run here: `sift histogram
-- --heap`, `sift info`, `sift top`, `sift loaders`, `sift diff-heap`. The
-- JSON part runs under ASan too; the browser part (#heavy) reads the DOM
-- headless Chromium renders.
require("sift.paths").older_lua()
local cjson = require "cjson"
local helper = require "spec.helper"

local DIALER = "hprof/android/perflib/dialer.android-hprof"
local BINDER = "hprof/android/leakcanary-1.x/leak_service_binder.hprof"
local BINDER_BASE = "hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof"

local function get(url)  -- (a JSON twin: status and view)
  local status, body = helper.http_get(url, "application/json")
  return status, cjson.decode(body)
end

local cli = helper.sift_ok

local function digits(s) return tonumber((s:gsub(",", ""))) end

-- `sift histogram`'s text: rows { class, count, shallow } and the total line's count and shallow
local function cli_histogram(path, heap)
  local args = { "histogram", "-q", "--top", "0", path }
  if heap then table.insert(args, 2, "--heap") table.insert(args, 3, heap) end
  local rows, total = {}, nil
  for _, line in ipairs(helper.lines(cli(args))) do
    local shallow, count, rest = line:match("^%s*([%d,]+)%s+([%d,]+)  (.+)$")
    if shallow and rest:match("^total: ") then total = { count = digits(count), shallow = digits(shallow) }
    elseif shallow then rows[#rows + 1] = { class = rest, count = digits(count), shallow = digits(shallow) } end
  end
  return rows, assert(total, "no total line")
end

-- `sift top`'s text: per row its object's name and its via and holds lines
local function cli_top(path)
  local list = {}
  for _, line in ipairs(helper.lines(cli { "top", "-q", "-n", "10", path })) do
    local name = line:match("^%s*[%d,]+%s+[%d,]+  (.+)$")
    local via, holds = line:match("^%s+via (.+)$"), line:match("^%s+holds (.+)$")
    if name then list[#list + 1] = { name = name }
    elseif via then list[#list].via = via
    elseif holds then list[#list].holds = holds end
  end
  return list
end

-- the java.util package as MAT groups it: classes of java.util itself,
-- arrays of them too (not java.util.concurrent's)
local function in_java_util(class)
  return class:gsub("%[%]", ""):match("^java%.util%.[^.]+$") ~= nil
end

describe("the overview and the histogram of sift serve", function()
  local dialer, binder, binder_base = helper.fixture(DIALER), helper.fixture(BINDER), helper.fixture(BINDER_BASE)
  if not dialer then
    it("needs the fixtures", function() pending("shared fixtures not found") end)
    return
  end
  local jvm, why = helper.jvm_dump("HeapPages")
  if not jvm then
    it("needs a JDK", function() pending(why) end)
    return
  end
  local servers, urls = {}, {}
  local function start(args)
    local url, pid, dir = helper.serve(args)
    servers[#servers + 1] = { pid = pid, dir = dir }
    assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
    local _, index = get(url .. "index.json")
    for _, f in ipairs(index.files) do urls[(args.tag or "") .. f.name] = url .. f.url:sub(2) end
  end
  setup(function()
    start { jvm, dialer, binder }
    start { "--baseline", binder_base, binder, tag = "base:" }
  end)
  teardown(function()
    for _, s in ipairs(servers) do
      os.execute("kill " .. s.pid)
      os.execute("rm -rf " .. helper.quote(s.dir))
    end
  end)
  local DIALER_URL, JVM_URL = function() return urls["dialer.android-hprof"] end, function()
    return urls[jvm:match("[^/]+$")]
  end

  it("lists the Android heaps with sift histogram --heap's totals and sift info's counts; one heap's histogram", function()
    for _, path in ipairs { dialer, binder } do
      local url = urls[path:match("[^/]+$")]
      local info = cjson.decode(cli { "info", "--json", path })
      local status, view = get(url .. "index.json")
      assert.are.equal(200, status)
      local names = {}
      for i, h in ipairs(view.heaps) do names[i] = h.name end
      assert.are.same({ "app", "zygote" }, names)
      local reachable = 0
      for _, h in ipairs(view.heaps) do
        local rows, total = cli_histogram(path, h.name)
        assert.are.same({ total.count, total.shallow }, { h.count, h.shallow })
        local i = info.heaps[h.name]
        assert.are.equal(i.instances + i.object_arrays + i.primitive_arrays, h.count)
        reachable = reachable + h.reachable
        -- the heap's histogram: the CLI's rows and total line, nothing of another heap
        local _, hist = get(url .. "histogram.json?heap=" .. h.name .. "&sort=shallow")
        assert.are.same({ h.name, total.count, total.shallow }, { hist.heap, hist.total.count, hist.total.shallow })
        assert.are.equal(#rows, #hist.rows)
        for k = 1, #rows do
          assert.are.same(rows[k], { class = hist.rows[k].class, count = hist.rows[k].count, shallow = hist.rows[k].shallow })
        end
      end
      -- the heaps' reachable bytes make up the reachable heap
      assert.are.equal(view.total.reachable_bytes, reachable)
      local _, all = cli_histogram(path)
      assert.are.same({ all.count, all.shallow }, { view.total.count, view.total.shallow })
      -- the total heap holds the class objects too, so it is no smaller than the reachable heap
      assert.are.equal(view.total.shallow + view.total.class_objects, view.total.all)
      assert.is_true(view.total.class_objects > 0 and view.total.reachable_bytes <= view.total.all,
        ("reachable %d of %d"):format(view.total.reachable_bytes, view.total.all))
      -- a heap the dump lacks: 404 on the pages, a usage error naming its heaps in the CLI
      assert.are.equal(404, (get(url .. "histogram.json?heap=image")))
      local s, err = get(url .. "index.json?heap=image")
      assert.are.same({ 404, "no heap 'image' in this dump: its heaps are app, zygote" }, { s, err.error })
      local _, msg, code = helper.sift { "histogram", "-q", "--heap", "image", path }
      assert.are.equal(2, code)
      assert.truthy(msg:find("has no heap 'image': its heaps are app, zygote", 1, true), msg)
    end
    -- a JVM's dump has no heaps
    local _, view = get(JVM_URL() .. "index.json")
    assert.are.same({}, view.heaps)
    assert.are.equal(404, (get(JVM_URL() .. "histogram.json?heap=app")))
    local _, msg, code = helper.sift { "histogram", "-q", "--heap", "app", jvm }
    assert.are.equal(2, code)
    assert.truthy(msg:find("has no Android heaps", 1, true), msg)
  end)

  it("names and describes the top retainers as sift top does; groups the histogram by package and loader", function()
    for _, path in ipairs { jvm, dialer } do
      local _, view = get(urls[path:match("[^/]+$")] .. "index.json")
      local lines = {}
      for i, l in ipairs(view.top_lines) do lines[i] = { name = l.name, via = l.via, holds = l.holds } end
      assert.are.same(cli_top(path), lines)
    end
    local _, view = get(JVM_URL() .. "index.json")
    assert.are.equal("class HeapPages", view.top_lines[1].name)  -- (as sift top names a class object)
    -- by package: java.util is the CLI's java.util.* rows, arrays of them included
    local rows, total = cli_histogram(jvm)
    local count, shallow = 0, 0
    for _, r in ipairs(rows) do
      if in_java_util(r.class) then count, shallow = count + r.count, shallow + r.shallow end
    end
    local _, packages = get(JVM_URL() .. "histogram.json?group=package&filter=java.util")
    local row
    for _, r in ipairs(packages.rows) do if r.name == "java.util" then row = r end end
    assert.are.same({ count, shallow, nil }, { row.count, row.shallow, row.retained })
    assert.is_true(count > 100)
    assert.are.same({ total.count, total.shallow }, { packages.total.count, packages.total.shallow })
    -- by loader: each named as sift loaders names it; together, every object
    local loaders = cjson.decode(cli { "loaders", "--json", "-q", jvm }).loaders
    local named = {}
    for _, l in ipairs(loaders) do named[l.name .. (l.id and (" " .. l.id) or "")] = true end
    local _, by_loader = get(JVM_URL() .. "histogram.json?group=loader")
    local sum, child_first = 0, nil
    for _, r in ipairs(by_loader.rows) do
      assert.is_true(named[r.name] or false, r.name)
      sum = sum + r.count
      if r.name:match('^HeapPages%$ChildFirst "child%-first" 0x') then child_first = r end
    end
    assert.are.equal(total.count, sum)
    -- the child-first loader's one planted HeapPages$Order (its own copy of the class)
    local order = 0
    for _, r in ipairs(rows) do if r.class == "HeapPages$Order" then order = r.count end end
    assert.is_true(child_first.count >= 1 and child_first.count < order, cjson.encode(child_first))
  end)

  it("shows the baseline's changes: overview then and now, the histogram's Δ columns as sift diff-heap's", function()
    local url = urls["base:leak_service_binder.hprof"]
    local diff = cjson.decode(cli { "diff-heap", "--json", "-q", "--top", "0", binder_base, binder })
    local _, hist = get(url .. "histogram.json")
    local by = {}
    for _, r in ipairs(hist.rows) do by[r.class] = r end
    for _, c in ipairs(diff.classes) do
      local r = assert(by[c.class], c.class)
      assert.are.same({ c.count_delta, c.shallow_delta, c.base_count }, { r.count_delta, r.shallow_delta, r.base_count })
    end
    local changed = 0
    for _, r in ipairs(hist.rows) do
      if r.count_delta ~= 0 or r.shallow_delta ~= 0 then changed = changed + 1 end
    end
    assert.are.equal(#diff.classes, changed)
    assert.is_true(changed > 10)
    -- a class page: its row of sift diff-heap (the class that changed most in bytes)
    local c = diff.classes[1]
    local _, page = get(url .. "class.json?name=" .. c.class:gsub("[^%w._$]", function(ch)
      return ("%%%02X"):format(ch:byte()) end))
    assert.are.same({ c.count_delta, c.shallow_delta, c.base_count, c.count },
      { page.baseline.count_delta, page.baseline.shallow_delta, page.baseline.base_count, page.baseline.count })
    -- the overview: then and now, per heap as sift histogram --heap counts each dump
    local _, view = get(url .. "index.json")
    assert.are.equal(diff.base_instances, view.baseline.instances)
    for _, h in ipairs(view.baseline.heaps) do
      local _, was = cli_histogram(binder_base, h.name)
      local _, now = cli_histogram(binder, h.name)
      assert.are.same({ was.count, now.count - was.count, now.shallow - was.shallow },
        { h.count, h.count_delta, h.shallow_delta })
    end
  end)

  it("renders the heaps, one heap's histogram, sift top's lines and the Δ columns in Chromium #heavy", function()
    if not helper.have_chromium() then pending("chromium is not installed (apt-get install chromium)") return end
    local function unescape(s) return (s:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&amp;", "&")) end
    -- the Android overview's heap table: sift histogram --heap's total lines
    local dom = helper.dom(DIALER_URL())
    local heaps = assert(dom:match('<table id="heaps">(.-)</table>'), dom)
    local seen = {}
    for name, count, shallow in heaps:gmatch('<tr><td><a [^>]*>(%a+)</a></td><td class="n"><span class="n">([%d,]+)</span></td>'
      .. '<td class="n"><span class="n">([%d,]+)</span></td>') do
      local _, total = cli_histogram(dialer, name)
      assert.are.same({ total.count, total.shallow }, { digits(count), digits(shallow) })
      seen[#seen + 1] = name
    end
    assert.are.same({ "app", "zygote" }, seen)
    -- histogram?heap=app: the app's rows only, its total first
    local rows, total = cli_histogram(dialer, "app")
    local cli_rows = {}
    for _, r in ipairs(rows) do cli_rows[r.class] = r end
    dom = helper.dom(DIALER_URL() .. "histogram?heap=app")
    local table_html = assert(dom:match('<table id="histogram">(.-)</table>'), dom)
    local c, s = table_html:match('<tr><td><b>total</b></td><td class="n"><span class="n">([%d,]+)</span></td>'
      .. '<td class="n"><span class="n">([%d,]+)</span></td>')
    assert.are.same({ total.count, total.shallow }, { digits(c), digits(s) })
    local n = 0
    for name, count, shallow in table_html:gmatch('<tr><td><a [^>]*>([^<]+)</a></td><td class="n"><span class="n">([%d,]+)'
      .. '</span></td><td class="n"><span class="n">([%d,]+)</span></td>') do
      local r = assert(cli_rows[unescape(name)], name)
      assert.are.same({ r.count, r.shallow }, { digits(count), digits(shallow) })
      n = n + 1
    end
    assert.are.equal(#rows, n)
    -- the JVM overview's largest retainers read as sift top's lines
    dom = helper.dom(JVM_URL())
    local top = {}
    for cell in assert(dom:match('<table id="top">(.-)</table>')):gmatch("<tr><td.-</td><td.-</td><td>(.-)</td></tr>") do
      local entry = { name = unescape(cell:match("<a [^>]*>([^<]+)</a>")) }
      entry.via = cell:match('<div class="muted via">via ([^<]+)</div>')
      entry.holds = cell:match('<div class="muted holds">holds ([^<]+)</div>')
      entry.via, entry.holds = entry.via and unescape(entry.via), entry.holds and unescape(entry.holds)
      top[#top + 1] = entry
    end
    assert.are.same(cli_top(jvm), top)
    -- the baseline's Δ columns, as sift diff-heap's JSON
    local diff = cjson.decode(cli { "diff-heap", "--json", "-q", "--top", "0", binder_base, binder })
    dom = helper.dom(urls["base:leak_service_binder.hprof"] .. "histogram")
    local shown = {}
    for name, dc, ds in assert(dom:match('<table id="histogram">(.-)</table>')):gmatch(
      '<tr><td><a [^>]*>([^<]+)</a></td><td class="n"><span class="n">[%d,]+</span></td><td class="n">%+?<span class="n">'
      .. '(%-?[%d,]+)</span></td><td class="n"><span class="n">[%d,]+</span></td><td class="n">%+?<span class="n">'
      .. '(%-?[%d,]+)</span></td>') do
      shown[unescape(name)] = { digits(dc), digits(ds) }
    end
    for _, cl in ipairs(diff.classes) do
      assert.are.same({ cl.count_delta, cl.shallow_delta }, shown[cl.class], cl.class)
    end
  end)
end)
