-- Fleet mode, the embedded default: dumps ingested through a real sift
-- serve --ingest, analysed by two `sift worker` processes sharing the
-- SQLite queue, grouped by leak signature; checked against what
-- `sift leaks --json` says of each file.
require("sift.paths").older_lua()
local cqueues = require "cqueues"
local request = require "http.request"
local cjson = require "cjson"
local serve = require "sift.serve"
local fleet_mod = require "sift.fleet"
local helper = require "spec.helper"

local BINDER = "hprof/android/leakcanary-1.x/leak_service_binder.hprof"
local IGNORED = "hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof"
local JVM = "hprof/generated-jdk17/leaky_jdk17_all.hprof"
local TRACE = "trace/amp-legacy.trace"

local tmpdir = helper.tmpdir

-- ingest each {bytes, meta} through a server's POST /ingest; the answers
local function ingest_all(data, uploads)
  local server = assert(serve.new { data = data, ingest = true })
  server:listen()
  local answers = {}
  local cq = cqueues.new()
  cq:wrap(function() server:run() end)
  cq:wrap(function()
    for i, u in ipairs(uploads) do
      local query = {}
      for k, v in pairs(u.meta) do query[#query + 1] = k .. "=" .. v end
      local req = request.new_from_uri(server:url() .. "ingest?" .. table.concat(query, "&"))
      req.headers:upsert(":method", "POST")
      req.headers:upsert("x-sift-device", u.device or "pixel")
      req:set_body(u.bytes)
      local h, st = assert(req:go(60))
      answers[i] = { status = tonumber(h:get(":status")), body = cjson.decode(st:get_body_as_string()) }
    end
    server.http:close()
  end)
  assert(cq:loop())
  server:close()
  return answers
end

local function workers(data, n)
  local cmd = {}
  for i = 1, n do cmd[i] = ("lua5.4 bin/sift worker -q --once --data %s &"):format(helper.quote(data)) end
  assert(os.execute(table.concat(cmd, " ") .. " wait"))
end

describe("sift fleet (embedded SQLite)", function()
  it("ingests, analyses each file once with two workers, and groups leaks as sift leaks finds them", function()
    local binder, ignored, jvm, trace = helper.fixture(BINDER), helper.fixture(IGNORED), helper.fixture(JVM),
      helper.fixture(TRACE)
    if not binder then return end
    local data = tmpdir()
    local b = helper.read(binder)
    local uploads = {
      { bytes = b, meta = { app = "sample", version = "1.0" } },
      { bytes = b, meta = { app = "sample", version = "1.1" }, device = "nexus" },  -- the same dump again
      { bytes = helper.read(ignored), meta = { app = "sample", version = "1.1" } },
      { bytes = helper.read(jvm), meta = { app = "server", version = "7" } },
      { bytes = helper.read(trace), meta = { app = "sample", version = "1.1" } },
      { bytes = b:sub(1, 40), meta = { app = "sample", version = "1.1" } },  -- cut after its header
    }
    local answers = ingest_all(data, uploads)
    for i, a in ipairs(answers) do assert.are.equal(202, a.status, cjson.encode(a.body)) end
    assert.are.same({ false, true }, { answers[1].body.duplicate, answers[2].body.duplicate })
    workers(data, 2)
    local fleet = assert(fleet_mod.open(data))
    local st = fleet:status()
    assert.are.same({ 6, 0, 0, 4, 1 }, { st.uploads, st.queued, st.running, st.done, st.failed })
    -- each file analysed exactly once
    for row in fleet.db:rows("SELECT attempts FROM files WHERE state = 'done'") do assert.are.equal(1, row.attempts) end
    local failed = fleet:failures()
    assert.are.equal(answers[6].body.sha256, failed[1].sha256)
    assert.truthy(failed[1].error:find("holds no heap dump", 1, true), failed[1].error)
    -- the groups are the signatures sift leaks gives each file, counted per upload
    local expected = {}
    for _, u in ipairs { { binder, 2 }, { ignored, 1 }, { jvm, 1 } } do
      local out = helper.sift { "leaks", "--json", "-q", u[1] }
      for _, l in ipairs(cjson.decode(out).application_leaks) do
        expected[l.signature] = (expected[l.signature] or 0) + u[2]
      end
    end
    local got = {}
    local groups = fleet:groups()
    for _, g in ipairs(groups) do got[g.signature] = g.dumps end
    assert.are.same(expected, got)
    assert.are.equal(2, #groups)
    local top = groups[1]
    assert.are.same({ 3, { "1.0", "1.1" }, { "nexus", "pixel" } }, { top.dumps, top.versions, top.devices })
    assert.truthy(top.trace:find("GC Root", 1, true) and top.trace:find("LeakyService", 1, true), top.trace)
    assert.is_true(top.retained_total > 0 and top.retained_median > 0)
    -- the CLI says the same
    local out = helper.sift { "fleet", "groups", "--json", "--data", data }
    assert.are.same(cjson.decode(cjson.encode(groups)), cjson.decode(out))
    -- fixed in 1.1: gone, until a later version shows it again
    fleet:mark_fixed(top.signature, "1.1")
    for _, g in ipairs(fleet:groups()) do assert.are_not.equal(top.signature, g.signature) end
    fleet:close()
    ingest_all(data, { { bytes = b, meta = { app = "sample", version = "1.10" } } })
    fleet = assert(fleet_mod.open(data))
    local reopened
    for _, g in ipairs(fleet:groups()) do if g.signature == top.signature then reopened = g end end
    assert.are.same({ true, 4 }, { reopened.reopened, reopened.dumps })
    fleet:close()
  end)

  it("gives a dead worker's job to another once its lease runs out, and keeps one result", function()
    local binder = helper.fixture(BINDER)
    if not binder then return end
    local data = tmpdir()
    ingest_all(data, { { bytes = helper.read(binder), meta = { version = "1" } } })
    local fleet = assert(fleet_mod.open(data))
    local job = assert(fleet:claim("dead-worker", 1))  -- taken, then its worker is killed
    assert.is_nil(fleet:claim("other", 1))             -- nobody else takes it while the lease holds
    os.execute("sleep 1.2")
    local again = assert(fleet:claim("other", 60))
    assert.are.equal(job.sha256, again.sha256)
    assert.is_true(fleet:finish("other", again.sha256, assert(fleet_mod.analyze(again.path, again.format))))
    -- the dead worker, were it to wake, writes nothing
    assert.is_false(fleet:finish("dead-worker", job.sha256, { leaks = {}, summary = {} }))
    local row = fleet.db:first("SELECT state, attempts FROM files")
    assert.are.same({ "done", 2 }, { row.state, row.attempts })
    assert.are.equal(2, fleet.db:first("SELECT count(*) AS n FROM leaks").n)
    fleet:close()
  end)
  it("survives kill -9 of a worker in the middle of a job: another finishes it, one result", function()
    local dump = helper.jvm_dump("FleetSample", nil, "-Xmx1g -Dobjects=6000000")
    if not dump then return pending("no JDK") end
    local data = tmpdir()
    local gz = data .. "/big.hprof.gz"  -- (compressed: its analysis inflates it first, a longer job)
    assert(os.execute(("gzip -1 -c %s > %s"):format(helper.quote(dump), helper.quote(gz))))
    ingest_all(data, { { bytes = helper.read(gz), meta = { version = "1" } } })
    os.remove(gz)
    os.execute(("lua5.4 bin/sift worker -q --once --lease 1 --data %s &"):format(helper.quote(data)))
    local fleet = assert(fleet_mod.open(data))
    local victim
    for _ = 1, 1000 do  -- the job taken: kill its worker (named host:pid) at once
      local row = fleet.db:first("SELECT state, worker FROM files")
      if row.state == "running" then victim = row.worker:match(":(%d+)$") break end
      assert.are_not.equal("done", row.state, "the job finished before it could be killed")
      os.execute("sleep 0.01")
    end
    assert.truthy(victim)
    assert(os.execute("kill -9 " .. victim))
    os.execute("sleep 1.2")  -- its lease runs out
    workers(data, 1)
    local row = fleet.db:first("SELECT state, attempts, worker FROM files")
    assert.are.same({ "done", 2 }, { row.state, row.attempts })
    assert.are_not.equal(victim, row.worker:match(":(%d+)$"))
    assert.are.equal(1, fleet.db:first("SELECT count(*) AS n FROM uploads").n)
    fleet:close()
  end)
  it("runs its own workers with sift serve --ingest --workers, which stop with it", function()
    local binder = helper.fixture(BINDER)
    if not binder then return end
    local url, pid, dir = helper.serve { "--ingest", "--workers", "2" }
    local ok, err = pcall(function()
      assert.truthy(url)
      -- (curl without the sanitizer runtime make spec-asan preloads: it hangs under it)
      local p = io.popen(("env -u LD_PRELOAD curl -s -m 60 -H 'X-Sift-Version: 3.1' --data-binary @%s %singest"):format(
        helper.quote(binder), url))
      local answer = cjson.decode(p:read("a"))
      p:close()
      assert.are.same({ "hprof", false }, { answer.format, answer.duplicate })
      local groups
      for _ = 1, 100 do
        groups = cjson.decode((helper.sift { "fleet", "groups", "--json", "--data", dir .. "/data" }))
        if #groups > 0 then break end
        os.execute("sleep 0.1")
      end
      assert.are.same({ 2, "3.1" }, { #groups, groups[1].versions[1] })
      p = io.popen(("env -u LD_PRELOAD curl -s -m 60 %sfleet.json"):format(url))
      local page = cjson.decode(p:read("a"))
      p:close()
      assert.are.same({ 1, 1 }, { page.status.uploads, page.status.done })
    end)
    os.execute("kill " .. pid)
    -- the workers see their parent gone and stop
    local left
    for _ = 1, 50 do
      local p = io.popen(("env -u LD_PRELOAD pgrep -f -- '[-]-parent %s' | wc -l"):format(pid))
      left = tonumber(p:read("a"))
      p:close()
      if left == 0 then break end
      os.execute("sleep 0.1")
    end
    assert(ok, err)
    assert.are.equal(0, left)
  end)
end)
