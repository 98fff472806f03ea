-- sift serve: a real lua-http server on a free loopback port, driven by
-- lua-http's client in the same cqueues loop. Pages and their JSON twins
-- on real fixtures (Android and JVM HPROF, BMD, streaming trace, OFX)
-- against what the CLI prints; uploads (good, twice, truncated, wrong
-- type, oversized, a gzip bomb, a name with ../); 50 clients at once; a
-- token; a second server over the same data directory.
require("sift.paths").older_lua()
local cqueues = require "cqueues"
local cjson = require "cjson"
local serve = require "sift.serve"
local sift = require "sift"
local helper = require "spec.helper"

local ANDROID = "hprof/android/ahat/test-dump.hprof"
local JVM = "hprof/generated-jdk17/leaky_jdk17_all.hprof"
local BMD = "bmd/jdk17-sample.id4.bmd"
local TRACE = "trace/firefox-art-trace-streaming.trace"
local OFX = "ofx/ofxparse/bank_medium.ofx"

local tmpdir = helper.tmpdir

local with_server = helper.with_server

local cli_json = helper.sift_json

-- one server over five files, shared by the `it`s below
describe("sift serve over an Android, a JVM and a BMD heap, a trace and a statement", function()
  local server, by_name
  local HEAPS = { ANDROID, JVM, BMD }

  setup(function()
    local files = {}
    for _, rel in ipairs { ANDROID, JVM, BMD, TRACE, OFX } do
      files[#files + 1] = helper.fixture(rel)
    end
    if #files < 5 then return end
    server = helper.start_server { files = files, data = tmpdir() }
    local _, index = server.get("/index.json")
    by_name = {}
    for _, f in ipairs(index.files) do by_name[f.name] = f end
  end)

  teardown(function()
    if server then server.stop() end
  end)

  local function file(rel) return by_name[rel:match("[^/]+$")] end

  it("lists the five files in its index, each with its format", function()
    if not server then return pending("no fixtures") end
    local status, index = server.get("/index.json")
    local listed = {}
    for _, f in ipairs(index.files) do listed[#listed + 1] = f.name .. " " .. f.format end
    table.sort(listed)
    assert.are.same({ 200, { "bank_medium.ofx ofx", "firefox-art-trace-streaming.trace trace",
      "jdk17-sample.id4.bmd bmd", "leaky_jdk17_all.hprof hprof", "test-dump.hprof hprof" } }, { status, listed })
  end)

  it("answers a page a file does not have with 404 at once, not a waiting page while the file opens", function()
    if not server then return pending("no fixtures") end
    local status, page = server.get(file(TRACE).url .. "histogram", { accept = "text/html" })
    assert.are.equal(404, status)
    assert.truthy(page:find('no page &quot;histogram&quot; for a trace file', 1, true), page)
  end)

  for _, rel in ipairs(HEAPS) do
    local name = rel:match("[^/]+$")

    it(name .. ": the histogram is sift histogram's, with each class's retained bytes (heap:retained_by_class)",
      function()
      if not server then return pending("no fixtures") end
      local status, view = server.get(file(rel).url .. "histogram.json?sort=shallow")
      assert.are.equal(200, status)
      local cli = cli_json { "histogram", "--json", "-q", "--top", "0", helper.fixture(rel) }
      assert.are.same({ cli.instances, cli.classes, #cli.rows }, { view.instances, view.classes, #view.rows })
      local heap <close> = assert(sift.open(helper.fixture(rel)))
      local retained = {}  -- (classes that share a name: one row)
      for _, r in ipairs(heap:retained_by_class()) do retained[r.class] = (retained[r.class] or 0) + r.retained end
      for i = 1, 5 do
        assert.are.same({ cli.rows[i].class, cli.rows[i].count, cli.rows[i].shallow, retained[cli.rows[i].class] or 0 },
          { view.rows[i].class, view.rows[i].count, view.rows[i].shallow, view.rows[i].retained })
      end
    end)

    it(name .. ": the overview's largest retainers are sift top's; the largest instance's page has its retained "
      .. "size and sift path's path", function()
      if not server then return pending("no fixtures") end
      local _, overview = server.get(file(rel).url .. "index.json")
      local top = cli_json { "top", "--json", "-q", "-n", "10", helper.fixture(rel) }
      assert.are.same(top, overview.top)
      local largest  -- (the largest that is not a class object: sift path lists instances)
      for _, row in ipairs(top) do
        if row.class ~= "java.lang.Class" then largest = row break end
      end
      local _, obj = server.get(file(rel).url .. "object/" .. largest.id .. ".json")
      assert.are.same({ largest.id, largest.class, largest.retained }, { obj.id, obj.class, obj.retained })
      local paths = cli_json { "path", "--json", "-q", "--retained", "--limit", "0", "--class", obj.class,
        helper.fixture(rel) }
      local mine
      for _, p in ipairs(paths) do if p.id == largest.id then mine = p end end
      assert.are.same(assert(mine, "sift path lists " .. largest.id).path, obj.path)
    end)

    it(name .. ": the largest retainer retains its own bytes and its dominator-tree children's", function()
      if not server then return pending("no fixtures") end
      local _, overview = server.get(file(rel).url .. "index.json")
      local id = overview.top[1].id
      local _, obj = server.get(file(rel).url .. "object/" .. id .. ".json")
      local _, tree = server.get(file(rel).url .. "dominators.json?of=" .. id)
      local sum = obj.shallow
      for _, c in ipairs(tree.children) do sum = sum + c.retained end
      assert.are.same({ overview.top[1].retained, obj.retained }, { obj.retained, sum })
    end)

    it(name .. ": the class page of java.lang.String, page 2 of its instances", function()
      if not server then return pending("no fixtures") end
      local _, cls = server.get(file(rel).url .. "class.json?name=java.lang.String&page=2")
      local count
      for _, r in ipairs(cli_json { "histogram", "--json", "-q", "--top", "0", helper.fixture(rel) }.rows) do
        if r.class == "java.lang.String" then count = r.count end
      end
      assert.are.same({ "java.lang.String", 2, count, math.min(cls.per_page, count - cls.per_page) },
        { cls.name, cls.page, cls.instances, #cls.rows })
    end)

    it(name .. ": its leaks are sift leaks's", function()
      if not server then return pending("no fixtures") end
      local _, leaks = server.get(file(rel).url .. "leaks.json")
      assert.are.same(cli_json { "leaks", "--json", "-q", helper.fixture(rel) }.application_leaks, leaks.application_leaks)
    end)

    it(name .. ": waste, threads and loaders are the CLI's JSON, with a page each", function()
      if not server then return pending("no fixtures") end
      local f = file(rel)
      for _, report in ipairs { "waste", "threads", "loaders" } do
        local status, view = server.get(f.url .. report .. ".json")
        assert.are.equal(200, status, report .. ": " .. cjson.encode(view))
        assert.are.same(cli_json { report, "--json", "-q", helper.fixture(rel) }, view)
        local page_status, page = server.get(f.url .. report, { accept = "text/html" })
        assert.are.equal(200, page_status)
        assert.truthy(page:find("<header>", 1, true) and (page:find("<table", 1, true) or page:find("no threads", 1, true)
          or page:find('<p class="muted empty"', 1, true)),
          report)
        if report == "waste" then  -- each report under its rule, as the CLI prints it
          assert.truthy(page:find("<h2>Duplicate arrays</h2><p class=rule>wasted: freed if deduplicated: every copy "
            .. "but one of a primitive array", 1, true), page)
        end
      end
    end)
  end

  it("filters the JVM dump's histogram by name: the CLI's rows of the planted leak's classes", function()
    if not server then return pending("no fixtures") end
    local _, leaky = server.get(file(JVM).url .. "histogram.json?filter=LeakyApp&sort=shallow")
    local want, got = {}, {}
    for _, r in ipairs(cli_json { "histogram", "--json", "-q", "--top", "0", helper.fixture(JVM) }.rows) do
      if r.class:find("LeakyApp", 1, true) then want[#want + 1] = ("%s %d %d"):format(r.class, r.count, r.shallow) end
    end
    for _, r in ipairs(leaky.rows) do got[#got + 1] = ("%s %d %d"):format(r.class, r.count, r.shallow) end
    table.sort(want)
    table.sort(got)
    assert.are.same(want, got)
  end)

  it("gives the trace's methods as sift profile does", function()
    if not server then return pending("no fixtures") end
    local _, profile = server.get(file(TRACE).url .. "profile.json?clock=wall")
    local cli = cli_json { "profile", "--json", "--clock", "wall", helper.fixture(TRACE) }
    assert.are.same({ cli.records, #cli.methods, cli.methods[1] }, { profile.records, #profile.methods, profile.methods[1] })
  end)

  it("draws the trace's icicle as SVG, on its page too; an unknown thread is 404", function()
    if not server then return pending("no fixtures") end
    local t = file(TRACE)
    local _, trace_view = server.get(t.url .. "index.json")
    local status, svg, h = server.get(t.url .. "flame.svg?icicle=1&thread=" .. trace_view.threads[1].tid)
    assert.are.same({ 200, "image/svg+xml", "string" }, { status, h:get("content-type"), type(svg) })
    assert.truthy(svg:find("<svg", 1, true))
    assert.are.equal(404, (server.get(t.url .. "flame.json?thread=no-such-thread")))
    local _, page = server.get(t.url .. "flame")
    assert.truthy(page:find('<div id="flame"><svg', 1, true))
  end)

  it("plays the steps of sift calls, filtered by package as sift calls --include does", function()
    if not server then return pending("no fixtures") end
    local t = file(TRACE)
    local _, trace_view = server.get(t.url .. "index.json")
    local tid = trace_view.threads[1].tid
    local _, play = server.get(t.url .. "play.json?thread=" .. tid)
    local listing = helper.lines(helper.sift { "calls", "--thread", tostring(tid), helper.fixture(TRACE) })
    assert.are.equal(#listing, #play.steps)
    assert.are.same({ 1, "com.android.internal.os.ZygoteInit.main" }, { play.steps[1].depth, play.steps[1].call })
    local _, only = server.get(t.url .. "play.json?include=mozilla.gecko&thread=" .. tid)
    local only_listing = helper.lines(helper.sift { "calls", "--thread", tostring(tid), "--include", "mozilla%.gecko",
      helper.fixture(TRACE) })
    assert.are.equal(#only_listing, #only.steps)
    for _, st in ipairs(only.steps) do
      if st.call then assert.truthy(st.call:find("mozilla.gecko", 1, true), st.call) end
    end
    local _, page = server.get(t.url .. "play?thread=" .. tid)
    assert.truthy(page:find('<script type="application/json" id="steps">', 1, true))
  end)

  it("builds the wall-clock call tree of sift fold's stacks, nodes under 0.1 % left out", function()
    if not server then return pending("no fixtures") end
    local _, tree = server.get(file(TRACE).url .. "calltree.json?clock=wall")
    -- the stacks' prefixes, each with the time under it
    local sums, total = {}, 0
    for _, line in ipairs(helper.lines(helper.sift { "fold", "--clock", "wall", "-q", helper.fixture(TRACE) })) do
      local stack, value = line:match("^(.*) (%d+)$")
      total = total + tonumber(value)
      local prefix
      for frame in stack:gmatch("[^;]+") do
        prefix = prefix and (prefix .. ";" .. frame) or frame
        sums[prefix] = (sums[prefix] or 0) + tonumber(value)
      end
    end
    local kept = 1  -- (the root)
    for _, sum in pairs(sums) do if sum >= 0.001 * total then kept = kept + 1 end end
    assert.are.same({ total, kept, 0, total }, { tree.total, #tree.nodes, tree.nodes[1].depth, tree.nodes[1].value })
    -- each node's time covers its children's
    local child_sums, open = {}, {}
    for i, n in ipairs(tree.nodes) do
      open[n.depth] = i
      child_sums[i] = 0
      if n.depth > 0 then child_sums[open[n.depth - 1]] = child_sums[open[n.depth - 1]] + n.value end
    end
    for i, n in ipairs(tree.nodes) do assert.is_true(child_sums[i] <= n.value, n.name) end
  end)

  it("gives the statement as sift ofx does", function()
    if not server then return pending("no fixtures") end
    local _, ofx = server.get(file(OFX).url .. "index.json")
    assert.are.same(cli_json { "ofx", "--json", helper.fixture(OFX) }.statements, ofx.statements)
  end)

  it("answers what it has not cleanly, in the format asked for", function()
    if not server then return pending("no fixtures") end
    local s0, none = server.get("/f/0000000000000000/.json")
    assert.are.same({ 404, "no such file here" }, { s0, none.error })
    local s404, missing = server.get(file(ANDROID).url .. "object/0x1.json")
    assert.are.same({ 404, "no object 0x1 in this dump" }, { s404, missing.error })
    local s2, html = server.get(file(ANDROID).url .. "nosuchpage")
    assert.are.equal(404, s2)
    assert.truthy(html:find('id="error"', 1, true))
  end)
end)

describe("sift serve", function()
  it("takes uploads by SHA-256, once, and refuses what it should, deleting it", function()
    local jvm = helper.fixture(JVM)
    if not jvm then return end
    local data = tmpdir()
    local bytes = helper.read(jvm)
    local gz = tmpdir() .. "/bomb.gz"
    assert(os.execute(("head -c 64000000 /dev/zero | gzip -1 > %s"):format(gz)))
    local files_in = helper.names
    with_server({ data = data, max_upload = 16 << 20, max_decompressed = 24 << 20 }, function(get, post)
      local json_h = { accept = "application/json" }
      local s, up = post("/upload?name=../../etc/app.hprof", bytes, json_h)
      assert.are.equal(201, s)
      assert.are.same({ "app.hprof", "hprof", false }, { up.name, up.format, up.duplicate })
      assert.are.equal(64, #up.sha256)
      local s2, again = post("/upload", bytes, { accept = "application/json", ["x-filename"] = "copy.hprof" })
      assert.are.same({ 200, true, up.id }, { s2, again.duplicate, again.id })
      assert.are.same({ up.sha256 .. ".hprof", up.sha256 .. ".meta" }, files_in(data))
      local _, page = get(up.url .. "histogram.json")
      assert.are.equal(13521, page.instances)
      -- an HTML form's upload (multipart), a field before the file
      local b = "sift-boundary-7d3f"
      local form = table.concat { "--", b, '\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n',
        "--", b, '\r\nContent-Disposition: form-data; name="file"; filename="my dump.hprof"\r\n',
        "Content-Type: application/octet-stream\r\n\r\n", bytes, "\r\n--", b, "--\r\n" }
      local mp = { accept = "application/json", ["content-type"] = "multipart/form-data; boundary=" .. b }
      local sm, viaform = post("/upload", form, mp)
      assert.are.same({ 200, true, up.sha256 }, { sm, viaform.duplicate, viaform.sha256 })
      local s6, cutform = post("/upload", form:sub(1, #form // 2), mp)
      assert.are.same({ 400, true }, { s6, cutform.error:find("broke off", 1, true) ~= nil })
      assert.are.equal(400, (post("/upload", "--x\r\nno file here", { accept = "application/json",
        ["content-type"] = "multipart/form-data; boundary=x" })))
      -- a truncated dump is taken; its page says what was cut
      local s3, cut = post("/upload?name=cut.hprof", bytes:sub(1, #bytes // 2), json_h)
      assert.are.equal(201, s3)
      local _, overview = get(cut.url .. "index.json")
      local cut_file = helper.tmpfile(bytes:sub(1, #bytes // 2))  -- (the CLI's warnings on the same bytes)
      local _, cli_err = helper.sift { "histogram", "-q", cut_file }
      local warned = {}
      for w in cli_err:gmatch("sift: [^\n]-: warning: ([^\n]+)") do warned[#warned + 1] = w end
      os.remove(cut_file)
      assert.are.equal(2, #warned)
      assert.are.same(warned, overview.warnings)
      -- refused, and nothing left behind
      local before = #files_in(data)
      assert.are.equal(415, (post("/upload?name=notes.txt", "just some text\n", json_h)))
      assert.are.equal(400, (post("/upload", "", json_h)))
      local s4, big = post("/upload", ("\0"):rep(17 << 20), json_h)
      assert.are.same({ 413, true }, { s4, big.error:find("limit", 1, true) ~= nil })
      local s5, bomb = post("/upload?name=bomb.hprof.gz", helper.read(gz), json_h)
      -- zeros are not a dump: refused before inflating
      assert.are.same({ 415, "not a heap dump, a method trace or an OFX statement: gzip-compressed data, and inside: "
        .. "not a recognised dump (HPROF, BMD, Android trace or OFX): starts with bytes 00 00 00 00 00 00 00 00" },
        { s5, bomb.error })
      local hprof_gz = tmpdir() .. "/dump.hprof.gz"
      local f = assert(io.open(hprof_gz:gsub("%.gz$", ""), "wb"))
      f:write(bytes:sub(1, 31), ("\0"):rep(40 << 20))  -- an HPROF header, then 40 MB of zeros
      f:close()
      assert(os.execute("gzip -1 " .. helper.quote(hprof_gz:gsub("%.gz$", ""))))
      s5, bomb = post("/upload?name=dump.hprof.gz", helper.read(hprof_gz), json_h)
      assert.are.same({ 413, true }, { s5, bomb.error:find("decompresses to more than", 1, true) ~= nil })
      assert.are.equal(before, #files_in(data))
      -- fifty clients at once
      local cq, statuses = cqueues.running(), {}
      local done = require("cqueues.condition").new()
      local left = 50
      for i = 1, 50 do
        cq:wrap(function()
          local st = get(i % 2 == 0 and (up.url .. "histogram.json") or "/index.json")
          statuses[#statuses + 1] = st
          left = left - 1
          if left == 0 then done:signal() end
        end)
      end
      while left > 0 do done:wait() end
      for _, st in ipairs(statuses) do assert.are.equal(200, st) end
      assert.are.equal(50, #statuses)
    end)
    -- a second server over the same directory finds the uploads
    with_server({ data = data }, function(get)
      local _, index = get("/index.json")
      local names = {}
      for _, f in ipairs(index.files) do names[#names + 1] = f.name end
      table.sort(names)
      assert.are.same({ "app.hprof", "cut.hprof" }, names)
    end)
  end)

  it("answers a program's upload (curl's Accept: */*) with JSON, a browser's with a redirect; views an OFX upload; "
    .. "names no server path in its errors", function()
    local jvm, ofx_path = helper.fixture(JVM), helper.fixture(OFX)
    local bmd, trace = helper.fixture(BMD), helper.fixture(TRACE)
    if not (jvm and ofx_path and bmd and trace) then return end
    local data = tmpdir()
    local bytes = helper.read(jvm)
    local sha = require("openssl.digest").new("sha256"):final(bytes):gsub(".", function(c) return ("%02x"):format(c:byte()) end)
    with_server({ data = data }, function(get, post)
      local curl = { accept = "*/*" }
      local s, up, h = post("/upload?name=app.hprof", bytes, curl)
      assert.are.equal(201, s)
      assert.are.equal("application/json", h:get("content-type"))
      assert.are.same({ id = sha:sub(1, 16), url = "/f/" .. sha:sub(1, 16) .. "/", name = "app.hprof", format = "hprof",
        sha256 = sha, duplicate = false }, up)
      local s2, again = post("/upload?name=again.hprof", bytes, curl)
      assert.are.same({ 200, true, up.id, up.url }, { s2, again.duplicate, again.id, again.url })
      -- no Accept header at all is a program too
      local s3, bare = post("/upload", bytes, {})
      assert.are.same({ 200, true }, { s3, bare.duplicate })
      -- a browser's form post (it asks for HTML) is sent to the file's page
      local s4, body, h4 = post("/upload", bytes, { accept = "text/html,application/xhtml+xml,*/*;q=0.8" })
      assert.are.same({ 303, up.url, "" }, { s4, h4:get("location"), body })
      -- an OFX statement is taken and viewed like any file
      local so, st = post("/upload?name=bank_medium.ofx", helper.read(ofx_path), curl)
      assert.are.same({ 201, "ofx", "bank_medium.ofx" }, { so, st.format, st.name })
      local _, view = get(st.url .. "index.json")
      assert.are.same(cli_json { "ofx", "--json", ofx_path }.statements, view.statements)
      local sp, page = get(st.url, { accept = "text/html" })
      assert.are.equal(200, sp)
      local at = page:find('<table id="transactions-1">', 1, true)
      assert.truthy(at and page:find(view.statements[1].transactions[1].fitid, at, true), page)
      -- errors name the upload, never a path of the server's
      local cut_bmd = helper.read(bmd):sub(1, 300)
      local sb, cut = post("/upload?name=cut.bmd", cut_bmd, curl)
      assert.are.equal(201, sb)
      local se, err = get(cut.url .. "index.json")
      assert.are.same({ 422, "cut.bmd: bmd: truncated varint at byte 300: input ends after 0 bytes" }, { se, err.error })
      local st2, cut_trace = post("/upload?name=cut.trace", helper.read(trace):sub(1, 300), curl)
      assert.are.equal(201, st2)
      local se2, err2 = get(cut_trace.url .. "index.json")
      assert.are.same({ 422, "cut.trace: streaming trace: truncated bytes at byte 252: needs 106 bytes, 48 left" },
        { se2, err2.error })
      local sr, refused = post("/upload?name=notes.txt", "just some text\n", curl)
      assert.are.same({ 415, "not a heap dump, a method trace or an OFX statement: not a recognised dump (HPROF, BMD, "
        .. 'Android trace or OFX): starts with "just some text"' }, { sr, refused.error })
      for _, message in ipairs { err.error, err2.error, refused.error } do
        assert.is_nil(message:find(data, 1, true), message)
        assert.is_nil(message:find(".upload-", 1, true), message)
      end
    end)
  end)

  it("binds elsewhere only with a token, and asks every request for it", function()
    assert.are.same({ nil, "binding to 0.0.0.0 needs --token: anyone who reaches the port could read the dumps" },
      { serve.new { host = "0.0.0.0", data = tmpdir() } })
    with_server({ data = tmpdir(), token = "s3cret" }, function(get)
      assert.are.equal(401, (get("/index.json")))
      assert.are.equal(401, (get("/index.json", { authorization = "Bearer wrong" })))
      assert.are.equal(200, (get("/index.json", { authorization = "Bearer s3cret" })))
      local s, _, h = get("/?token=s3cret")
      assert.are.equal(303, s)
      assert.truthy(h:get("set-cookie"):find("sift_token=s3cret; HttpOnly", 1, true))
      assert.are.equal(200, (get("/index.json", { cookie = "sift_token=s3cret" })))
    end)
  end)
  it("diffs a dump with its baseline, on the page and as sift diff-heap", function()
    local base, now = helper.fixture("hprof/android/ahat/test-dump-base.hprof"), helper.fixture(ANDROID)
    if not base then return end
    local cli = cli_json { "diff-heap", "--json", "-q", "--top", "0", base, now }
    -- ahat's test program adds 10,000 instances of one (obfuscated) class
    -- and a 1 MB byte[] over its baseline
    local by_class = {}
    for _, r in ipairs(cli.classes) do by_class[r.class] = r end
    assert.are.same({ 10000, 120000 }, { by_class.o.count_delta, by_class.o.shallow_delta })
    assert.are.same({ 12096, 22094 }, { cli.base_instances, cli.instances })
    assert.is_true(cli.new_objects.count >= 10000 and #cli.new_objects.first == 100)
    for i = 2, #cli.classes do
      assert.is_true(math.abs(cli.classes[i - 1].shallow_delta) >= math.abs(cli.classes[i].shallow_delta))
    end
    with_server({ files = { now }, data = tmpdir(), baseline = base }, function(get)
      local _, index = get("/index.json")
      local s, page = get(index.files[1].url .. "diff.json")
      assert.are.equal(200, s)
      assert.are.same(cli.classes, page.classes)
      assert.are.same(cli.new_objects.count, page.new_objects.count)
    end)
    with_server({ files = { now }, data = tmpdir() }, function(get)
      local _, index = get("/index.json")
      local s, page = get(index.files[1].url .. "diff.json")
      assert.are.same({ 404, "no baseline: start the server with --baseline FILE" }, { s, page.error })
    end)
  end)
  it("shows the finance report of --db, as sift report gives it", function()
    local finance, sample = require "sift.finance", require "sift.finance.sample"
    local db = tmpdir() .. "/books.db"
    local books = assert(finance.open(db))
    books:import(sample.statements { transactions = 300, seed = 5 })
    books:close()
    local cli = cli_json { "report", "--json", "--db", db }
    with_server({ data = tmpdir(), db = db }, function(get)
      local s, view = get("/finance.json")
      assert.are.equal(200, s)
      assert.are.same(cli, view)
      local _, page = get("/finance")
      assert.truthy(page:find('<div id="chart"><svg', 1, true))
    end)
    with_server({ data = tmpdir() }, function(get)
      assert.are.equal(404, (get("/finance.json")))
    end)
    assert.are.same({ nil, "/nonexistent.db: no such finance store" },
      { serve.new { data = tmpdir(), db = "/nonexistent.db" } })
  end)
  it("opens a file in a thread of its own, and a browser sees how far it is", function()
    local heap = helper.fixture(JVM)
    if not heap then return end
    with_server({ files = { heap }, data = tmpdir(), analyses = 1 }, function(get)
      local _, index = get("/index.json")
      local url = index.files[1].url
      local _, idle = get(url .. "progress.json")
      assert.are.equal("idle", idle.state)
      local s, waiting = get(url .. "histogram")  -- a browser's first visit
      assert.are.equal(200, s)
      assert.truthy(waiting:find('<p id="progress">', 1, true) and waiting:find(url .. "progress.json", 1, true))
      local state
      local deadline = cqueues.monotime() + 300  -- (a busy machine under ASan is slow: minutes, not seconds)
      repeat
        local _, p = get(url .. "progress.json")
        state = p.state
        if state ~= "ready" then cqueues.sleep(0.05) end
      until state == "ready" or cqueues.monotime() > deadline
      assert.are.equal("ready", state)
      -- the histogram is a computation of its own: its page says so, then
      -- shows it once it is done (and kept: the next visit answers at once)
      local _, computing = get(url .. "histogram")
      assert.truthy(computing:find('var KEY = "histogram:shark";', 1, true), computing)
      helper.wait_for("the histogram to be computed", function()
        local _, p = get(url .. "progress.json")
        return p.computations[1] and p.computations[1].state == "ready", cjson.encode(p)
      end)
      local _, page = get(url .. "histogram")
      assert.truthy(page:find('<table id="histogram">', 1, true))
      -- the main loop answered all along; index pages never wait for a worker
      assert.are.equal(200, (get("/index.json")))
    end)
  end)
end)
