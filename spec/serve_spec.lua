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
local helper = require "spec.helper"

local ANDROID = "hprof/android/ahat/test-dump.hprof"
local JVM = "hprof/generated-jdk17/leaky_jdk17_all.hprof"
local BMD = "bmd/jdk17-sample.id4.bmd"
local TRACE = "trace/firefox-art-trace-streaming.trace"
local OFX = "ofx/ofxparse/bank_medium.ofx"

local tmpdir = helper.tmpdir

local with_server = helper.with_server

local function cli_json(args)
  local out, err, code = helper.sift(args)
  assert(code == 0, err)
  return cjson.decode(out)
end

describe("sift serve", function()
  it("serves heap, BMD, trace and OFX pages whose JSON is the CLI's", function()
    local files = {}
    for _, rel in ipairs { ANDROID, JVM, BMD, TRACE, OFX } do
      local path = helper.fixture(rel)
      if not path then return end
      files[#files + 1] = path
    end
    with_server({ files = files, data = tmpdir() }, function(get)
      local status, index = get("/index.json")
      assert.are.equal(200, status)
      assert.are.equal(5, #index.files)
      local by_name = {}
      for _, f in ipairs(index.files) do by_name[f.name] = f end
      -- a page a file does not have is 404 at once, not a waiting page while the file opens
      local s_no, no_page = get(by_name["firefox-art-trace-streaming.trace"].url .. "histogram", { accept = "text/html" })
      assert.are.equal(404, s_no)
      assert.truthy(no_page:find('no page &quot;histogram&quot; for a trace file', 1, true), no_page)
      -- heaps: the histogram is sift histogram's, with retained bytes added
      for _, rel in ipairs { ANDROID, JVM, BMD } do
        local f = by_name[rel:match("[^/]+$")]
        local s, view = get(f.url .. "histogram.json?sort=shallow")
        assert.are.equal(200, s)
        local cli = cli_json { "histogram", "--json", "-q", "--top", "0", helper.fixture(rel) }
        assert.are.same({ cli.instances, cli.classes, #cli.rows }, { view.instances, view.classes, #view.rows })
        for i = 1, 5 do
          assert.are.same({ cli.rows[i].class, cli.rows[i].count, cli.rows[i].shallow },
            { view.rows[i].class, view.rows[i].count, view.rows[i].shallow })
          assert.is_true(view.rows[i].retained >= 0)
        end
        -- the overview's largest retainers are sift top's
        local _, overview = get(f.url .. "index.json")
        local top = cli_json { "top", "--json", "-q", "-n", "10", helper.fixture(rel) }
        assert.are.same(top, overview.top)
        -- the object page of the largest retainer: its path is sift path's
        local id = overview.top[1].id
        local _, obj = get(f.url .. "object/" .. id .. ".json")
        assert.are.same({ id, top[1].retained }, { obj.id, obj.retained })
        local paths = cli_json { "path", "--json", "-q", "--retained", "--limit", "0", "--class", obj.class, helper.fixture(rel) }
        local mine
        for _, p in ipairs(paths) do if p.id == id then mine = p end end
        if mine then assert.are.same(mine.path, obj.path) end
        -- the dominator tree's children of it add up to less than it retains
        local _, tree = get(f.url .. "dominators.json?of=" .. id)
        local sum = 0
        for _, c in ipairs(tree.children) do sum = sum + c.retained end
        assert.is_true(sum <= obj.retained)
        -- the class page, paged
        local _, cls = get(f.url .. "class.json?name=java.lang.String&page=2")
        assert.are.same({ "java.lang.String", 2 }, { cls.name, cls.page })
        assert.is_true(#cls.rows > 0 and cls.instances > 100)
        -- leaks: sift leaks's JSON
        local _, leaks = get(f.url .. "leaks.json")
        assert.are.same(cli_json { "leaks", "--json", "-q", helper.fixture(rel) }.application_leaks, leaks.application_leaks)
        -- the reports beyond the trace: the CLI's JSON, and a page each
        for _, report in ipairs { "waste", "threads", "loaders" } do
          local status, view = get(f.url .. report .. ".json")
          assert.are.equal(200, status, report .. ": " .. cjson.encode(view))
          assert.are.same(cli_json { report, "--json", "-q", helper.fixture(rel) }, view)
          local page_status, page = get(f.url .. report, { accept = "text/html" })
          assert.are.equal(200, page_status)
          assert.truthy(page:find("<header>", 1, true) and (page:find("<table", 1, true) or page:find("no threads", 1, true)
            or page:find('<p class="muted empty"', 1, true)),
            report)
          if report == "waste" then  -- each report under its rule, as the CLI prints it
            assert.truthy(page:find("<h2>Duplicate arrays</h2><p class=rule>wasted: freed if deduplicated: every copy "
              .. "but one of a primitive array", 1, true), page)
          end
        end
      end
      -- the JVM dump's planted leak is in the histogram, filtered by name
      local _, leaky = get(by_name["leaky_jdk17_all.hprof"].url .. "histogram.json?filter=LeakyApp")
      assert.is_true(#leaky.rows > 0)
      for _, r in ipairs(leaky.rows) do assert.truthy(r.class:find("LeakyApp", 1, true)) end
      -- the trace: sift profile's methods; flame graph and icicle as SVG
      local t = by_name["firefox-art-trace-streaming.trace"]
      local _, profile = get(t.url .. "profile.json?clock=wall")
      local cli = cli_json { "profile", "--json", "--clock", "wall", helper.fixture(TRACE) }
      assert.are.same({ cli.records, #cli.methods, cli.methods[1] }, { profile.records, #profile.methods, profile.methods[1] })
      local _, trace_view = get(t.url .. "index.json")
      local s, svg, h = get(t.url .. "flame.svg?icicle=1&thread=" .. trace_view.threads[1].tid)
      assert.are.equal(200, s)
      assert.are.equal("image/svg+xml", h:get("content-type"))
      assert.truthy(type(svg) == "string" and svg:find("<svg", 1, true))
      assert.are.equal(404, (get(t.url .. "flame.json?thread=no-such-thread")))
      -- play mode: the steps of sift calls, filtered by package as substrings
      local tid = trace_view.threads[1].tid
      local _, play = get(t.url .. "play.json?thread=" .. tid)
      local listing = helper.sift { "calls", "--thread", tostring(tid), helper.fixture(TRACE) }
      local lines = 0
      for _ in listing:gmatch("[^\n]+") do lines = lines + 1 end
      assert.are.equal(lines, #play.steps)
      assert.are.same({ 1, "com.android.internal.os.ZygoteInit.main" }, { play.steps[1].depth, play.steps[1].call })
      local _, only = get(t.url .. "play.json?include=mozilla.gecko&thread=" .. tid)
      assert.is_true(#only.steps > 0 and #only.steps < #play.steps)
      for _, st in ipairs(only.steps) do
        if st.call then assert.truthy(st.call:find("mozilla.gecko", 1, true), st.call) end
      end
      -- the call tree: each node's time covers its children's
      local _, tree = get(t.url .. "calltree.json?clock=wall")
      local sums, open = {}, {}
      for i, n in ipairs(tree.nodes) do
        open[n.depth] = i
        sums[i] = 0
        if n.depth > 0 then sums[open[n.depth - 1]] = sums[open[n.depth - 1]] + n.value end
      end
      for i, n in ipairs(tree.nodes) do assert.is_true(sums[i] <= n.value, n.name) end
      assert.are.same({ 0, tree.total }, { tree.nodes[1].depth, tree.nodes[1].value })
      assert.is_true(#tree.nodes > 100)
      local _, page_play = get(t.url .. "play?thread=" .. tid)
      assert.truthy(page_play:find('<script type="application/json" id="steps">', 1, true))
      local _, page = get(t.url .. "flame")
      assert.truthy(page:find('<div id="flame"><svg', 1, true))
      -- the statement: sift ofx's JSON
      local _, ofx = get(by_name["bank_medium.ofx"].url .. "index.json")
      local cli_ofx = cli_json { "ofx", "--json", helper.fixture(OFX) }
      assert.are.same(cli_ofx.statements, ofx.statements)
      -- errors: clean, in the format asked for
      local s0, none = get("/f/0000000000000000/.json")
      assert.are.same({ 404, "no such file here" }, { s0, none.error })
      local s404, missing = get(by_name["test-dump.hprof"].url .. "object/0x1.json")
      assert.are.same({ 404, "no object 0x1 in this dump" }, { s404, missing.error })
      local s2, html = get(by_name["test-dump.hprof"].url .. "nosuchpage")
      assert.are.equal(404, s2)
      assert.truthy(html:find('id="error"', 1, true))
    end)
  end)

  it("takes uploads by SHA-256, once, and refuses what it should, deleting it", function()
    local jvm = helper.fixture(JVM)
    if not jvm then return end
    local data = tmpdir()
    local bytes = helper.read(jvm)
    local gz = tmpdir() .. "/bomb.gz"
    assert(os.execute(("head -c 400000000 /dev/zero | gzip -1 > %s"):format(gz)))
    local files_in = helper.names
    with_server({ data = data, max_upload = 64 << 20, max_decompressed = 100 << 20 }, function(get, post)
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
      assert.is_true(#overview.warnings > 0)
      -- refused, and nothing left behind
      local before = #files_in(data)
      assert.are.equal(415, (post("/upload?name=notes.txt", "just some text\n", json_h)))
      assert.are.equal(400, (post("/upload", "", json_h)))
      local s4, big = post("/upload", ("\0"):rep(65 << 20), json_h)
      assert.are.same({ 413, true }, { s4, big.error:find("limit", 1, true) ~= nil })
      local s5, bomb = post("/upload?name=bomb.hprof.gz", helper.read(gz), json_h)
      assert.are.equal(415, s5)  -- zeros are not a dump: refused before inflating
      local hprof_gz = tmpdir() .. "/dump.hprof.gz"
      local f = assert(io.open(hprof_gz:gsub("%.gz$", ""), "wb"))
      f:write(bytes:sub(1, 31), ("\0"):rep(200 << 20))  -- an HPROF header, then 200 MB of zeros
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
      local seen, state = {}, nil
      local deadline = cqueues.monotime() + 300  -- (a busy machine under ASan is slow: minutes, not seconds)
      repeat
        local _, p = get(url .. "progress.json")
        state = p.state
        if p.label then seen[p.label] = true end
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
