-- Fleet mode, the same scenario on both backends: the embedded default
-- (SQLite in --data) and Redis Streams + PostgreSQL (Debian's
-- redis-server and postgresql, started by spec/engines.lua). 200 dumps made
-- now with jcmd from spec/java/FleetLeaks.java (planted leaks watched as
-- LeakCanary's ObjectWatcher does) go through a real sift serve --ingest;
-- two `sift worker` processes analyse them; the groups are checked against
-- what `sift leaks --json` says of each file.
require("sift.paths").older_lua()
local cqueues = require "cqueues"
local request = require "http.request"
local cjson = require "cjson"
local serve = require "sift.serve"
local fleet_mod = require "sift.fleet"
local helper = require "spec.helper"
local engines_mod = require "spec.engines"

local quote = helper.quote

-- the planted leaks of each dump kind (-Dleaks=...)
local KINDS = { "sessions", "listeners", "sessions,handlers", "sessions,listeners,handlers" }

-- a dump of each kind: path and bytes
local function kinds()
  local out = {}
  for i, leaks in ipairs(KINDS) do
    local path = helper.jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=" .. leaks)
    if not path then return nil end
    out[i] = { path = path, bytes = helper.read(path) }
  end
  return out
end

-- a copy of an HPROF that differs only in its header's timestamp: a
-- distinct file (its own SHA-256) with the same heap
local function stamped(bytes, n)
  local header = bytes:find("\0", 1, true)  -- "JAVA PROFILE 1.0.2\0", u4 id size, u8 timestamp
  return bytes:sub(1, header + 4) .. string.pack(">i8", 1700000000000 + n) .. bytes:sub(header + 13)
end

-- ingest each {bytes (or a function making them), meta, device} through a
-- server's POST /ingest; the answers
local function ingest_all(data, uploads, opts)
  local server = assert(serve.new { data = data, ingest = true, redis = opts.redis, postgres = opts.postgres })
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
      req:set_body(type(u.bytes) == "function" and u.bytes() or u.bytes)
      local h, st = assert(req:go(60))
      answers[i] = { status = tonumber(h:get(":status")), body = cjson.decode(st:get_body_as_string()) }
    end
    server.http:close()
  end)
  assert(cq:loop())
  server:close()
  return answers
end

-- an HPROF cut `drop` bytes before its end, inside its last heap dump
-- segment: the bytes, and the warning sift gives of it, found here by
-- walking the top-level records (u1 tag, u4 time, u4 length) to the one
-- the cut falls in
local function cut_dump(bytes, drop)
  local cut = bytes:sub(1, #bytes - drop)
  local pos = cut:find("\0", 1, true) + 13  -- "JAVA PROFILE 1.0.2\0", u4 id size, u8 timestamp
  while pos + 8 <= #cut do
    local tag, _, len = string.unpack(">I1I4I4", cut, pos)
    if pos + 8 + len > #cut then
      return cut, ("truncated record (tag 0x%02X) at byte %d: it says %d bytes, %d are left"):format(tag, pos - 1, len,
        #cut - (pos - 1) - 9)
    end
    pos = pos + 9 + len
  end
  error("the cut fell between records")
end

-- a CLI command on the backend: its words, with --data and the engines' options
local function cli(words, data, opts)
  local out = {}
  for i, w in ipairs(words) do out[i] = w end
  for _, w in ipairs { "--data", data } do out[#out + 1] = w end
  if opts.redis then
    for _, w in ipairs { "--redis", opts.redis, "--postgres", opts.postgres } do out[#out + 1] = w end
  end
  return out
end

-- what the workers wrote on stderr (worker_cmd's log)
local function log_of(data)
  local f = io.open(data .. "/workers.log")
  if not f then return "(nothing)" end
  local text = f:read("a")
  f:close()
  return text
end

-- what sift info says of a file's warnings
local function info_warnings(path)
  return cjson.decode((helper.sift { "info", "--json", path })).warnings
end

-- `sift worker` with the backend's options
local function worker_cmd(data, opts, extra)
  local engines = opts.redis and (" --redis %s --postgres %s"):format(quote(opts.redis), quote(opts.postgres)) or ""
  return ("lua5.4 bin/sift worker -q --data %s%s %s 2>>%s/workers.log"):format(quote(data), engines, extra or "",
    quote(data))
end

-- the signatures `sift leaks --json` finds in a file, each counted `times`
local function expect_leaks(expected, path, times)
  local out = helper.sift { "leaks", "--json", "-q", path }
  for _, l in ipairs(cjson.decode(out).application_leaks) do
    expected[l.signature] = (expected[l.signature] or 0) + times
  end
end

local BACKENDS = {
  { name = "the embedded default (SQLite)" },
  { name = "Redis Streams + PostgreSQL", engines = true },
}

-- (the engines' runs are #heavy: make spec-asan leaves them out, as their
-- C is the analysis the embedded backend's run exercises under ASan too)
for _, backend in ipairs(BACKENDS) do
  describe("sift fleet on " .. backend.name .. (backend.engines and " #heavy" or ""), function()
    local engines
    -- a fresh backend for one spec: {redis, postgres} URLs, or {}
    local function fresh()
      if not backend.engines then return {} end
      local redis, postgres = engines.fresh()
      local _, err, code = helper.sift { "fleet", "migrate", "--redis", redis, "--postgres", postgres }
      assert(code == 0, err)
      return { redis = redis, postgres = postgres }
    end
    setup(function()
      if backend.engines then engines = assert(engines_mod.start()) end
    end)
    teardown(function()
      if engines then engines.stop() end
    end)

    -- (#heavy: make spec-asan leaves it out; its C is the analysis every other spec runs under ASan)
    it("analyses 200 dumps from two workers once each, groups them as sift leaks does, keeps a cut one "
        .. "with its warnings, and fails a corrupt one #heavy", function()
      local dumps = kinds()
      if not dumps then return pending("no JDK") end
      local opts, data = fresh(), helper.tmpdir()
      -- 198 distinct dumps of the four kinds, the last of them cut inside
      -- its heap dump (1,000 bytes short), one sent twice, and a corrupt one
      local uploads, kind_of = {}, {}
      for n = 1, 198 do
        local k = n % #KINDS + 1
        kind_of[n] = k
        uploads[n] = { bytes = function() return stamped(dumps[k].bytes, n) end,
          meta = { app = "sample", version = ("1.%d"):format(n % 3) }, device = "device-" .. (n % 7) }
      end
      local cut, cut_warning = cut_dump(stamped(dumps[kind_of[198]].bytes, 198), 1000)
      uploads[198].bytes = cut
      uploads[199] = { bytes = uploads[1].bytes, meta = { app = "sample", version = "1.2" } }
      kind_of[199] = kind_of[1]
      uploads[200] = { bytes = dumps[1].bytes:sub(1, 40), meta = { app = "sample", version = "1.2" } }
      local answers = ingest_all(data, uploads, opts)
      for _, a in ipairs(answers) do assert.are.equal(202, a.status, cjson.encode(a.body)) end
      assert.are.same({ false, true }, { answers[1].body.duplicate, answers[199].body.duplicate })

      -- two workers; with the engines, PostgreSQL restarted while they work
      os.execute(("(%s & %s & wait; touch %s/finished) &"):format(worker_cmd(data, opts, "--once"),
        worker_cmd(data, opts, "--once"), quote(data)))
      opts.log = function() end  -- (this process's own retries)
      local fleet = assert(fleet_mod.open(data, opts))
      local function seen()
        local st = fleet:status()
        return ("%d done, %d failed, %d running, %d queued; the workers said: %s"):format(st.done, st.failed,
          st.running, st.queued, log_of(data))
      end
      if backend.engines then
        local done = helper.wait_for("40 dumps done", function()
          local n = fleet:status().done
          return n >= 40 and n
        end, 600, seen)
        assert.is_true(done < 150, "the restart came too late to matter: " .. done)
        engines.restart_postgres(1.5)
      end
      helper.wait_for("the workers to finish", function() return io.open(data .. "/finished") end, 900, seen)
      if backend.engines then  -- they saw it go and waited for it
        assert.matches("sift: engine away %(.-%): retrying in", helper.read(data .. "/workers.log"))
      end

      local st = fleet:status()
      assert.are.same({ 200, 0, 0, 198, 1, 1 }, { st.uploads, st.queued, st.running, st.done, st.done_with_warnings,
        st.failed })
      -- every dump analysed exactly once, by one of the two workers
      local by_worker = {}
      for _, job in ipairs(fleet:jobs()) do
        assert.are.equal(1, job.attempts, job.sha256)
        by_worker[job.worker] = true
      end
      local workers = 0
      for _ in pairs(by_worker) do workers = workers + 1 end
      assert.are.equal(2, workers)
      local failed = fleet:failures()
      assert.are.same({ answers[200].body.sha256 }, { failed[1].sha256 })
      assert.truthy(failed[1].error:find("holds no heap dump", 1, true), failed[1].error)
      -- the cut one: done, with what sift info says of it (the record the cut is in, by its byte offset)
      local cut_path = helper.tmpfile(cut)
      local cut_warnings = info_warnings(cut_path)
      assert.are.equal(cut_warning, cut_warnings[1])
      assert.are.same({ { sha256 = answers[198].body.sha256, warnings = cut_warnings } },
        cjson.decode(cjson.encode(fleet:warned())))
      -- sift fleet status says so, as text and JSON
      local text = helper.sift(cli({ "fleet", "status" }, data, opts))
      assert.are.same({ "200 uploads; files: 0 queued, 0 running, 198 done (1 with warnings), 1 failed",
        ("  warning %s: %s"):format(answers[198].body.sha256:sub(1, 12), cut_warning) },
        { helper.lines(text)[1], helper.lines(text)[2] })
      assert.matches(("\n  failed %s: holds no heap dump"):format(answers[200].body.sha256:sub(1, 12)), text, 1, true)
      local status_text = helper.sift(cli({ "fleet", "status", "--json" }, data, opts))
      local status = cjson.decode(status_text)
      assert.are.same({ 198, 1, 1, { { sha256 = answers[198].body.sha256, warnings = cut_warnings } } },
        { status.done, status.done_with_warnings, status.failed, status.warnings })

      -- the groups: what sift leaks says of each upload's file (a stamped
      -- copy analyses as its kind: checked on one), counted per upload
      local per_kind, expected = {}, {}
      for k, d in ipairs(dumps) do
        per_kind[k] = {}
        expect_leaks(per_kind[k], d.path, 1)
      end
      local copy = helper.tmpfile(stamped(dumps[2].bytes, 7))
      local of_copy = {}
      expect_leaks(of_copy, copy, 1)
      os.remove(copy)
      assert.are.same(per_kind[2], of_copy)
      -- (the cut one: what sift leaks finds in it, its leaks counted as damaged)
      local of_cut, damaged = {}, {}
      expect_leaks(of_cut, cut_path, 1)
      os.remove(cut_path)
      assert.truthy(next(of_cut), "sift leaks finds nothing in the cut dump: its leaks cannot be marked damaged")
      for n = 1, 199 do
        for sig in pairs(n == 198 and of_cut or per_kind[kind_of[n]]) do expected[sig] = (expected[sig] or 0) + 1 end
      end
      local groups = fleet:groups()
      local got, got_damaged = {}, {}
      for _, g in ipairs(groups) do
        got[g.signature], got_damaged[g.signature] = g.dumps, g.damaged_dumps
        damaged[g.signature] = of_cut[g.signature] or 0
      end
      assert.are.same(expected, got)
      assert.are.same(damaged, got_damaged)
      assert.are.equal(3, #groups)
      local top = groups[1]
      assert.are.same({ "1.0", "1.1", "1.2" }, top.versions)
      assert.are.equal(7, #top.devices)
      assert.truthy(top.trace:find("GC Root", 1, true) and top.trace:find("FleetLeaks", 1, true), top.trace)
      assert.is_true(top.retained_total >= top.dumps * top.retained_median and top.retained_median > 0)
      -- the CLI says the same
      assert.are.same(cjson.decode(cjson.encode(groups)),
        cjson.decode((helper.sift(cli({ "fleet", "groups", "--json" }, data, opts)))))
      -- fixed in 1.2: gone, until a later version shows it again
      fleet:mark_fixed(top.signature, "1.2")
      for _, g in ipairs(fleet:groups()) do assert.are_not.equal(top.signature, g.signature) end
      fleet:close()
      ingest_all(data, { { bytes = dumps[4].bytes, meta = { app = "sample", version = "1.10" } } }, opts)
      assert(os.execute(worker_cmd(data, opts, "--once")))
      fleet = assert(fleet_mod.open(data, opts))
      local reopened
      for _, g in ipairs(fleet:groups()) do if g.signature == top.signature then reopened = g end end
      assert.are.same({ true, top.dumps + 1 }, { reopened.reopened, reopened.dumps })
      fleet:close()
      os.execute("rm -rf " .. quote(data))
    end)

    it("gives a dead worker's job to another once its lease runs out, and keeps one result", function()
      local dumps = kinds()
      if not dumps then return pending("no JDK") end
      local opts, data = fresh(), helper.tmpdir()
      ingest_all(data, { { bytes = dumps[1].bytes, meta = { version = "1" } } }, opts)
      local fleet = assert(fleet_mod.open(data, opts))
      local job = assert(fleet:claim("dead-worker", 3))  -- taken, then its worker is killed
      assert.is_nil(fleet:claim("other", 3))             -- nobody else takes it while the lease holds
      os.execute("sleep 3")                              -- its lease runs out
      local again = helper.wait_for("another worker to take the job", function()
        return fleet:claim("other", 3), "no job to take"
      end)
      assert.are.equal(job.sha256, again.sha256)
      assert.is_true(fleet:finish("other", again, assert(fleet_mod.analyze(again.path, again.format))))
      -- the dead worker, were it to wake, writes nothing
      assert.is_false(fleet:finish("dead-worker", job, { leaks = {}, summary = {} }))
      assert.are.same({ { sha256 = job.sha256, state = "done", attempts = 2, worker = "other" } }, fleet:jobs())
      assert.is_nil(fleet:claim("third", 0))  -- and nobody gets it again
      assert.are.equal(1, #fleet:groups())
      fleet:close()
    end)

    it("survives kill -9 of a worker in the middle of a job: another finishes it, one result", function()
      local dump = helper.jvm_dump("FleetSample", nil, "-Xmx1g -Dobjects=6000000")
      if not dump then return pending("no JDK") end
      local opts, data = fresh(), helper.tmpdir()
      local gz = data .. "/big.hprof.gz"  -- (compressed: its analysis inflates it first, a longer job)
      assert(os.execute(("gzip -1 -c %s > %s"):format(quote(dump), quote(gz))))
      ingest_all(data, { { bytes = helper.read(gz), meta = { version = "1" } } }, opts)
      os.remove(gz)
      os.execute(worker_cmd(data, opts, "--once --lease 1") .. " &")
      local fleet = assert(fleet_mod.open(data, opts))
      -- the job taken: kill its worker (named host:pid) at once
      local victim = helper.wait_for("the worker to take the job", function()
        local job = fleet:jobs()[1]
        assert.are_not.equal("done", job.state, "the job finished before it could be killed")
        return job.state == "running" and job.worker:match(":(%d+)$"), job.state
      end)
      assert(os.execute("kill -9 " .. victim))
      os.execute("sleep 1.2")  -- its lease runs out
      -- another worker finishes it (run again while the lease still held it)
      local job = helper.wait_for("another worker to finish the job", function()
        assert(os.execute(worker_cmd(data, opts, "--once --lease 1")))
        local j = fleet:jobs()[1]
        return j.state == "done" and j, ("%s, %d attempts; the workers said: %s"):format(j.state, j.attempts,
          log_of(data))
      end)
      assert.are.same({ "done", 2 }, { job.state, job.attempts })
      assert.are_not.equal(victim, job.worker:match(":(%d+)$"))
      assert.are.equal(1, fleet:status().uploads)
      fleet:close()
      os.execute("rm -rf " .. quote(data))
    end)

    it("runs its own workers with sift serve --ingest --workers, which stop with it", function()
      local dumps = kinds()
      if not dumps then return pending("no JDK") end
      local opts = fresh()
      local args = { "--ingest", "--workers", "2" }
      if opts.redis then
        for _, w in ipairs { "--redis", opts.redis, "--postgres", opts.postgres } do args[#args + 1] = w end
      end
      local url, pid, dir = helper.serve(args)
      local ok, err = pcall(function()
        assert.truthy(url, "sift serve did not start: " .. helper.read(dir .. "/out"))
        -- (curl without the sanitizer runtime make spec-asan preloads: it hangs under it)
        local p = io.popen(("env -u LD_PRELOAD curl -s -m 60 -H 'X-Sift-Version: 3.1' --data-binary @%s %singest"):format(
          quote(dumps[4].path), url))
        local answer = cjson.decode(p:read("a"))
        p:close()
        assert.are.same({ "hprof", false }, { answer.format, answer.duplicate })
        local text
        local page = helper.wait_for("the upload to be analysed", function()
          p = io.popen(("env -u LD_PRELOAD curl -s -m 60 %sfleet.json"):format(url))
          text = p:read("a")
          p:close()
          local read, decoded = pcall(cjson.decode, text)
          return read and decoded.status.done == 1 and decoded
        end, nil, function()  -- (the page, and what the server and its workers said)
          return ("%s; sift serve said: %s"):format(text, helper.read(dir .. "/out"))
        end)
        assert.are.same({ 1, 1, 0, 3, "3.1" }, { page.status.uploads, page.status.done, page.status.done_with_warnings,
          #page.groups, page.groups[1].versions[1] })
        -- (its status is sift fleet status --json's, its groups sift fleet groups --json's)
        assert.truthy(text:find('"failures":[]', 1, true) and text:find('"warnings":[]', 1, true), text)
        if helper.have_validator() then
          local valid, problems = helper.schema_problems("fleet.schema.json", text)
          assert(valid, "fleet.schema.json: " .. problems)
        end
      end)
      os.execute("kill " .. pid)
      -- the workers see their parent gone and stop
      local stopped, why = pcall(helper.wait_for, "the workers to stop with the server", function()
        local p = io.popen(("env -u LD_PRELOAD pgrep -f -- '[-]-parent %s' | wc -l"):format(pid))
        local left = tonumber(p:read("a"))
        p:close()
        return left == 0, left .. " still running"
      end)
      assert(ok, err)
      assert(stopped, why)
      os.execute("rm -rf " .. quote(dir))
    end)

    it("brings a database of the previous schema along (sift fleet migrate), then keeps a cut dump done with "
        .. "its warnings and its leaks damaged", function()
      local dumps = kinds()
      if not dumps then return pending("no JDK") end
      local data, opts = helper.tmpdir(), {}
      -- a dump analysed by the sift before warnings were kept: rows of the first schema
      local sha, sig = ("a"):rep(64), "0123456789abcdef0123456789abcdef01234567"
      local old = {
        ("INSERT INTO files (sha256, path, format, state, worker, attempts) "
          .. "VALUES ('%s', '/old/%s.hprof', 'hprof', 'done', 'old:1', 1)"):format(sha, sha),
        ("INSERT INTO leaks (sha256, signature, kind, description, retained, trace) "
          .. "VALUES ('%s', '%s', 'application', 'com.example.Old instance', 4096, 'GC Root: Thread')"):format(sha,
            sig),
      }
      if backend.engines then
        local redis, postgres = engines.fresh()
        opts = { redis = redis, postgres = postgres }
        -- (the first migration alone: the schema the previous sift made)
        local lib = require "sift.fleet.engines"
        local all = lib.MIGRATIONS
        lib.MIGRATIONS = { all[1] }
        local ok, err = pcall(function()
          local previous = assert(fleet_mod.open(nil, { redis = redis, postgres = postgres, migrating = true }))
          assert.are.equal(1, previous:migrate())
          previous:close()
        end)
        lib.MIGRATIONS = all
        assert(ok, err)
        table.insert(old, 2, ("INSERT INTO uploads (key, sha256, version, device, received_at) "
          .. "VALUES ('old-1', '%s', '0.9', 'old-phone', '2024-01-02T03:04:05Z')"):format(sha))
        for _, sql in ipairs(old) do engines.psql(postgres, sql) end
        local _, msg, code = helper.sift(cli({ "fleet", "status" }, data, opts))
        assert.are.same({ "sift: the PostgreSQL schema is at version 1, this sift needs 5: run sift fleet migrate\n",
          1 }, { msg, code })
      else
        table.insert(old, 2, ("INSERT INTO uploads (sha256, version, device, received_at) "
          .. "VALUES ('%s', '0.9', 'old-phone', '2024-01-02T03:04:05.000Z')"):format(sha))
        local db = assert(require("sift.core").sqlite(data .. "/fleet.db"))
        db:exec(require("sift.fleet.sqlite").MIGRATIONS[1])
        for _, sql in ipairs(old) do db:exec(sql) end
        db:close()
      end
      local out, msg, code = helper.sift(cli({ "fleet", "migrate" }, data, opts))
      assert.are.same({ "schema up to date (4 migrations applied)\n", "", 0 }, { out, msg, code })
      assert.are.equal("schema up to date (0 migrations applied)\n",
        (helper.sift(cli({ "fleet", "migrate" }, data, opts))))
      if not backend.engines then
        local db = assert(require("sift.core").sqlite(data .. "/fleet.db"))
        assert.are.equal(5, db:first("PRAGMA user_version").user_version)
        db:close()
      end
      -- the old dump, as it was: done, not damaged
      local function group(list, signature)
        for _, g in ipairs(list) do if g.signature == signature then return g end end
      end
      local g = group(cjson.decode((helper.sift(cli({ "fleet", "groups", "--json" }, data, opts)))), sig)
      assert.are.same({ 1, 0, 4096, "com.example.Old instance", "2024-01-02T03:04:05.000Z", { "0.9" } },
        { g.dumps, g.damaged_dumps, g.retained_total, g.description, g.first_seen, g.versions })

      -- a cut dump now: done with the warnings sift info gives, its leaks damaged
      local cut, warning = cut_dump(dumps[3].bytes, 1000)
      local cut_path = helper.tmpfile(cut)
      local warnings, leaks = info_warnings(cut_path), {}
      expect_leaks(leaks, cut_path, 1)
      os.remove(cut_path)
      assert.are.equal(warning, warnings[1])
      local answer = ingest_all(data, { { bytes = cut, meta = { version = "2.0" } } }, opts)[1]
      assert(os.execute(worker_cmd(data, opts, "--once")))
      local text = helper.sift(cli({ "fleet", "status" }, data, opts))
      local lines = { "2 uploads; files: 0 queued, 0 running, 2 done (1 with warnings), 0 failed" }
      for _, w in ipairs(warnings) do
        lines[#lines + 1] = ("  warning %s: %s"):format(answer.body.sha256:sub(1, 12), w)
      end
      lines[#lines + 1] = "  no symbols: the upload names no app and version: 1 file analysed without names"
      assert.are.same(lines, helper.lines(text))
      local status_text = helper.sift(cli({ "fleet", "status", "--json" }, data, opts))
      local status = cjson.decode(status_text)
      assert.are.same({ uploads = 2, queued = 0, running = 0, done = 2, done_with_warnings = 1, failed = 0,
        failures = {}, warnings = { { sha256 = answer.body.sha256, warnings = warnings } },
        no_symbols = { { nameless = "no symbols: the upload names no app and version", files = 1 } } }, status)
      local groups_text = helper.sift(cli({ "fleet", "groups", "--json" }, data, opts))
      local groups = cjson.decode(groups_text)
      if helper.have_validator() then  -- (their JSON Schemas, docs/schema/fleet-*.schema.json)
        for name, json in pairs { ["fleet-status.schema.json"] = status_text, ["fleet-groups.schema.json"] = groups_text } do
          local valid, problems = helper.schema_problems(name, json)
          assert(valid, name .. ": " .. problems .. "\n" .. json:sub(1, 400))
        end
      end
      local damaged, expected = {}, { [sig] = 0 }
      for s in pairs(leaks) do expected[s] = 1 end
      for _, gr in ipairs(groups) do damaged[gr.signature] = gr.damaged_dumps end
      assert.are.same(expected, damaged)
      assert.is_true(#groups > 1, "sift leaks finds nothing in the cut dump")
      os.execute("rm -rf " .. quote(data))
    end)
  end)
end

describe("sift fleet's analysis", function()
  it("of a trace: its hottest methods and its heaviest folded stacks, as sift fold gives them", function()
    local trace = helper.fixture("trace/amp-legacy.trace")
    if not trace then return end
    local results = assert(fleet_mod.analyze(trace, "trace"))
    local s = results.summary
    assert.are.same({ "trace", 20, {} }, { s.format, #s.top, results.leaks })
    local weights = {}
    for stack, w in helper.sift({ "fold", "--clock", "cpu", trace }):gmatch("([^\n]+) (%d+)\n") do
      weights[stack] = tonumber(w)
    end
    local kept, last = 0, math.huge
    for stack, w in s.folded:gmatch("([^\n]+) (%d+)\n") do
      assert.are.equal(weights[stack], tonumber(w))
      assert.is_true(tonumber(w) <= last)  -- the heaviest first
      last, kept = tonumber(w), kept + 1
    end
    assert.is_true(kept > 0 and #s.folded <= fleet_mod.FOLDED_BYTES and s.stacks >= kept)
  end)
  it("of a heap: a histogram summary, the classes with the most shallow bytes", function()
    local dump = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not dump then return end
    local s = assert(fleet_mod.analyze(dump, "hprof")).summary
    local histogram = cjson.decode((helper.sift { "histogram", "--json", dump }))
    assert.are.equal(20, #s.histogram)
    for i, row in ipairs(s.histogram) do
      local cli_row = histogram.rows[i]
      assert.are.same({ cli_row.class, cli_row.count, cli_row.shallow }, { row.class, row.count, row.shallow })
    end
  end)
end)

describe("sift fleet migrate #heavy", function()
  it("makes the PostgreSQL schema once; workers refuse a database without it", function()
    local engines = engines_mod.start()
    if not engines then return pending("no Redis or PostgreSQL") end
    local ok, err = pcall(function()
      local redis, postgres = engines.fresh()
      local out, msg, code = helper.sift { "fleet", "status", "--redis", redis, "--postgres", postgres }
      assert.are.same({ "", 1 }, { out, code })
      assert.matches("schema is at version 0, this sift needs 5: run sift fleet migrate", msg)
      out, msg, code = helper.sift { "fleet", "migrate", "--redis", redis, "--postgres", postgres }
      assert.are.same({ "schema up to date (5 migrations applied)\n", "", 0 }, { out, msg, code })
      out = helper.sift { "fleet", "migrate", "--redis", redis, "--postgres", postgres }
      assert.are.equal("schema up to date (0 migrations applied)\n", out)
      out, msg, code = helper.sift { "fleet", "status", "--json", "--redis", redis, "--postgres", postgres }
      assert.are.same({ { uploads = 0, queued = 0, running = 0, done = 0, done_with_warnings = 0, failed = 0,
        failures = {}, warnings = {}, no_symbols = {} }, "", 0 }, { cjson.decode(out), msg, code })
      assert.matches('"failures":[],', out, 1, true)  -- (arrays, even empty)
      assert.matches('"warnings":[]', out, 1, true)
      -- an engine that is not there: a message, not a traceback
      out, msg, code = helper.sift { "fleet", "status", "--redis", "redis://127.0.0.1:1", "--postgres", postgres }
      assert.matches("^sift: cannot reach Redis at 127.0.0.1:1", msg)
      assert.are.same({ "", 1 }, { out, code })
    end)
    engines.stop()
    assert(ok, err)
  end)
end)
