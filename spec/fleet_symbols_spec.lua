-- Fleet symbols (issue 40), on the embedded SQLite backend: symbol files
-- per app version and per platform (sift fleet symbols, POST /symbols),
-- uploads analysed without them marked "no symbols for APP VERSION", names
-- recovered before the analysis, and a dump analysed before its symbols
-- came analysed again when they come, its group merged into the named one.
require("sift.paths").older_lua()
local cqueues = require "cqueues"
local request = require "http.request"
local cjson = require "cjson"
local serve = require "sift.serve"
local fleet_mod = require "sift.fleet"
local helper = require "spec.helper"
local engines_mod = require "spec.engines"

local quote = helper.quote

local MAPPING = "# compiler: R8\ncom.example.Shop -> a.a:\n    java.util.List carts -> a\n"

-- POST each {path, query (a table), headers, bytes} to a server over data
-- (token "t0ken"); the answers {status, body (decoded)}
local function post_all(data, posts, opts)
  opts = opts or {}
  local server = assert(serve.new { data = data, ingest = true, token = "t0ken", redis = opts.redis,
    postgres = opts.postgres })
  server:listen()
  local answers = {}
  local cq = cqueues.new()
  cq:wrap(function() server:run() end)
  cq:wrap(function()
    for i, p in ipairs(posts) do
      local query = {}
      for k, v in pairs(p.query or {}) do query[#query + 1] = k .. "=" .. v end
      table.sort(query)
      local req = request.new_from_uri(server:url() .. p.path .. "?" .. table.concat(query, "&"))
      req.headers:upsert(":method", p.method or "POST")
      for k, v in pairs(p.headers or { authorization = "Bearer t0ken" }) do req.headers:upsert(k, v) end
      req:set_body(p.bytes)
      local h, st = assert(req:go(60))
      local body = st:get_body_as_string()
      answers[i] = { status = tonumber(h:get(":status")), body = p.html and body or cjson.decode(body) }
    end
    server.http:close()
  end)
  assert(cq:loop())
  server:close()
  return answers
end

local function mode(path) return select(2, helper.sh("stat -c %a " .. quote(path))):match("%d+") end

-- spec/java/FleetLeaks.java built twice, as a jar and as that jar
-- obfuscated by Debian's ProGuard (proguard-cli; its mapping written), each
-- run with -Dleaks=sessions and dumped with jcmd; cached in build/jvm/ by the
-- source's checksum. Returns {jar, obf_jar, mapping, plain, obf} (paths),
-- or nil and why.
local function release_builds()
  if not helper.sh("command -v javac && command -v jcmd && command -v proguard") then
    return nil, "no JDK or no proguard (Debian's proguard-cli)"
  end
  local _, sum = helper.sh("cksum spec/java/FleetLeaks.java")
  local dir = "build/jvm/proguard-" .. sum:match("^(%d+)")
  local out = { jar = dir .. "/app.jar", obf_jar = dir .. "/obf.jar", mapping = dir .. "/mapping.txt",
    plain = dir .. "/plain.hprof", obf = dir .. "/obf.hprof" }
  assert(os.execute("mkdir -p " .. quote(dir)))
  helper.once(dir .. ".lock", function() return io.open(out.obf) ~= nil end, function()
    local d = quote(dir)
    -- (--release 11: ProGuard 6.2 reads class files up to Java 13's; it cannot
    -- read JDK 17's modules as a library, so it keeps the program's method
    -- names, writes no stack map frames, and the obfuscated build runs
    -- without the verifier)
    assert(helper.sh(("rm -rf %s/classes && javac --release 11 -encoding UTF-8 -d %s/classes spec/java/FleetLeaks.java "
      .. "&& jar cf %s/app.jar -C %s/classes leakcanary"):format(d, d, d, d)))
    local cfg = assert(io.open(dir .. "/proguard.pro", "w"))
    cfg:write("-injars app.jar\n-outjars obf.jar\n-printmapping mapping.txt\n",  -- (beside the configuration)
      "-dontoptimize\n-dontshrink\n-dontpreverify\n-dontwarn\n-ignorewarnings\n",
      "-keep public class leakcanary.FleetLeaks { public static void main(java.lang.String[]); }\n",
      "-keepclassmembernames class * { <methods>; }\n")
    cfg:close()
    local ok, text = helper.sh(("proguard @%s/proguard.pro"):format(d))
    assert(ok, text)
    for _, run in ipairs { { out.jar, out.plain, "" }, { out.obf_jar, out.obf,
        "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote" } } do
      local java = io.popen(("exec env -u LD_PRELOAD java -Xmx16m -XX:+UseSerialGC %s -Dleaks=sessions -cp %s "
        .. "leakcanary.FleetLeaks"):format(run[3], quote(run[1])))
      local pid = assert(java:read("l"):match("^ready (%d+)$"))
      local dumped, said = helper.sh(("jcmd %s GC.heap_dump %s.tmp"):format(pid, quote(run[2])))
      os.execute("kill " .. pid)
      java:close()
      assert(dumped and said:match("Heap dump file created"), said)
      assert(os.rename(run[2] .. ".tmp", run[2]))
    end
  end)
  return out
end

-- issue 40's "done means", on a backend (opts: {redis, postgres} or {}):
-- the plain HPROF, a BMD of it (before its symbols) and the obfuscated
-- build's HPROF ingested and analysed; then the jar and the mapping
-- uploaded for their versions: one group of the three, on real names,
-- with the signature sift leaks gives the plain HPROF
local function release_fleet(opts)
  local b, why = release_builds()
  if not b then return pending(why) end
  local dir = helper.tmpdir()
  local data = dir .. "/data"
  local bmd = dir .. "/plain.bmd"
  assert(require("sift.heap.bmd").crunch(b.plain, bmd))
  local want = helper.sift_json { "leaks", "--json", "-q", b.plain }.application_leaks
  assert.are.same({ 1, "leakcanary.FleetLeaks$Session instance" }, { #want, want[1].description })
  local engines = {}
  if opts.redis then
    engines = { "--redis", opts.redis, "--postgres", opts.postgres }
    local m = assert(fleet_mod.open(data, { redis = opts.redis, postgres = opts.postgres, migrating = true }))
    m:migrate()
    m:close()
  end
  local function sift(list)
    for _, a in ipairs(engines) do list[#list + 1] = a end
    list[#list + 1] = "--data"
    list[#list + 1] = data
    return helper.sift_ok(list)
  end
  local function ingest(path, version)
    return { path = "ingest", query = { app = "shop", version = version }, bytes = helper.read(path) }
  end
  local answers = post_all(data, { ingest(b.plain, "1.0"), ingest(bmd, "1.0"), ingest(b.obf, "1.0-r8") }, opts)
  for i = 1, 3 do assert.are.equal(202, answers[i].status) end
  sift { "worker", "--once", "-q" }
  local groups = cjson.decode(sift { "fleet", "groups", "--json" })
  -- before the symbols: the plain HPROF named, the BMD hashed, the obfuscated one's leak not even found
  assert.are.equal(2, #groups)
  local status = cjson.decode(sift { "fleet", "status", "--json" })
  assert.are.same({ { nameless = "no symbols for shop 1.0", files = 2 }, { nameless = "no symbols for shop 1.0-r8",
    files = 1 } }, status.no_symbols)
  answers = post_all(data, {
    { path = "symbols", query = { app = "shop", version = "1.0" }, bytes = helper.read(b.jar) },
    { path = "symbols", query = { app = "shop", version = "1.0-r8" }, bytes = helper.read(b.mapping) },
  }, opts)
  assert.are.same({ 201, "strings", 2, 201, "mapping", 1 }, { answers[1].status, answers[1].body.symbols[1].kind,
    answers[1].body.symbols[1].requeued, answers[2].status, answers[2].body.symbols[1].kind,
    answers[2].body.symbols[1].requeued })
  sift { "worker", "--once", "-q" }
  groups = cjson.decode(sift { "fleet", "groups", "--json" })
  assert.are.equal(1, #groups)
  local g = groups[1]
  assert.are.same({ want[1].signature, 3, 3, { "1.0", "1.0-r8" }, "leakcanary.FleetLeaks$Session instance" },
    { g.signature, g.dumps, #g.files, g.versions, g.description })
  assert.is_nil(g.no_symbols)
  assert.matches("│    ↓ static SESSIONS\n", g.trace, 1, true)
  assert.matches("├─ leakcanary.FleetLeaks$Session [", g.trace, 1, true)
  assert.are.same({}, cjson.decode(sift { "fleet", "status", "--json" }).no_symbols)
end

describe("fleet symbols", function()
  it("are stored once by SHA-256 per app version or platform, from the CLI and POST /symbols, and listed", function()
    local data = helper.tmpdir() .. "/data"
    local mapping = helper.tmpfile(MAPPING)
    local dex = helper.tmpfile("dex\n035\0" .. string.rep("\0", 104))
    local bad = helper.tmpfile("hello, not symbols\n")
    local _, out, err, code
    out, err, code = helper.sift { "fleet", "symbols", "--app", "shop", "--version", "4.2.0", mapping, dex,
      "--data", data }
    assert.are.same({ "", 0 }, { err, code })
    local lines = helper.lines(out)
    assert.matches("^added .+ %(mapping, %x+%): no dump to analyse again$", lines[1])
    assert.matches("^added .+ %(dex, %x+%): no dump to analyse again$", lines[2])
    -- the same file again: known, stored once
    out = helper.sift_ok { "fleet", "symbols", "--app", "shop", "--version", "4.2.0", mapping, "--data", data }
    assert.matches("^known ", out)
    -- not symbols: refused, by name, nothing stored
    out, err, code = helper.sift { "fleet", "symbols", "--app", "shop", "--version", "4.3.0", mapping, bad,
      "--data", data }
    assert.are.same({ "", ("sift: %s: neither an apk, jar, dex or class file nor an R8/ProGuard mapping (whose "
      .. "lines read `com.example.Foo -> a.b:`)\n"):format(bad), 1 }, { out, err, code })
    -- a mapping or a jar that would fail the analyses they are for: refused as they come
    local broken = helper.tmpfile(MAPPING .. "not a mapping line\n")
    local cut = helper.tmpfile("PK\3\4 cut short")
    out, err, code = helper.sift { "fleet", "symbols", "--app", "shop", "--version", "4.3.0", broken, "--data", data }
    assert.are.same({ "", ("sift: %s:4: not a class line of a mapping: not a mapping line\n"):format(broken), 1 },
      { out, err, code })
    out, err, code = helper.sift { "fleet", "symbols", "--app", "shop", "--version", "4.3.0", cut, "--data", data }
    assert.are.same({ "", ("sift: %s: no zip directory (not a jar or apk, or cut short)\n"):format(cut), 1 },
      { out, err, code })
    -- a platform's: no mapping
    _, err, code = helper.sift { "fleet", "symbols", "--platform", "android-34", mapping, "--data", data }
    assert.are.same({ 1, ("sift: %s: a platform's symbols are its jars, apks or dex files (the names a BMD "
      .. "hashes), not a mapping\n"):format(mapping) }, { code, err })
    helper.sift_ok { "fleet", "symbols", "--platform", "android-34", dex, "--data", data }
    _, err, code = helper.sift { "fleet", "symbols", mapping, "--data", data }
    assert.are.same({ 2, "sift: fleet symbols takes --app and --version (or --platform) and the files, or --list\n" },
      { code, err })

    -- POST /symbols: guarded like /ingest (the token), the same sniffing
    local answers = post_all(data, {
      { path = "symbols", query = { app = "shop", version = "4.3.0" }, bytes = MAPPING },
      { path = "symbols", query = { app = "shop", version = "4.3.0" }, bytes = MAPPING,
        headers = { accept = "application/json" } },
      { path = "symbols", query = { app = "shop", version = "4.3.0" }, bytes = "hello", headers = {
        authorization = "Bearer t0ken", ["x-filename"] = "notes.txt" } },
      { path = "symbols", query = { app = "shop" }, bytes = MAPPING },
      { path = "symbols", query = { app = "shop", version = "4.3.0" }, bytes = MAPPING .. "oops\n", headers = {
        authorization = "Bearer t0ken", ["x-filename"] = "mapping.txt" } },
    })
    local sha = select(2, helper.sh("sha256sum " .. quote(mapping))):match("^%x+")
    assert.are.same({ 201, { { sha256 = sha, kind = "mapping", what = "mapping", name = "upload", new = true,
      requeued = 0 } } }, { answers[1].status, answers[1].body.symbols })
    assert.are.equal(401, answers[2].status)
    assert.are.same({ 400, "notes.txt: neither an apk, jar, dex or class file nor an R8/ProGuard mapping (whose "
      .. "lines read `com.example.Foo -> a.b:`)" }, { answers[3].status, answers[3].body.error })
    assert.are.same({ 400, "the version is missing" }, { answers[4].status, answers[4].body.error })
    assert.are.same({ 400, "mapping.txt:4: not a class line of a mapping: oops" },
      { answers[5].status, answers[5].body.error })

    -- listed; each file once beside the dumps, private
    local list = helper.sift_json { "fleet", "symbols", "--list", "--json", "--data", data }
    local got = {}
    for i, s in ipairs(list) do got[i] = { s.app, s.version, s.platform, s.kind, s.sha256 == sha } end
    assert.are.same({ { "", "", "android-34", "strings", false }, { "shop", "4.2.0", "", "mapping", true },
      { "shop", "4.2.0", "", "strings", false }, { "shop", "4.3.0", "", "mapping", true } }, got)
    local stored = {}
    for _, name in ipairs(helper.names(data)) do
      if name:match("%.mapping$") or name:match("%.strings$") then stored[#stored + 1] = name end
    end
    table.sort(stored, function(a, b) return a:match("%a+$") < b:match("%a+$") end)  -- (the mapping first)
    assert.are.same({ sha .. ".mapping", "strings" }, { stored[1], stored[2]:match("^%x+%.(%a+)$") })
    assert.are.same({ "600", "600", "700" }, { mode(data .. "/" .. stored[1]), mode(data .. "/" .. stored[2]),
      mode(data) })
    local text = helper.sift_ok { "fleet", "symbols", "--list", "--data", data }
    assert.matches("^platform android%-34  strings  %x+  ", text)
    for _, p in ipairs { mapping, dex, bad, broken, cut } do os.remove(p) end
  end)

  -- the scenario of late symbols on a backend: opts {redis, postgres} or {}
  local function late_symbols(opts)
    local hprof = helper.jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=sessions")
    if not hprof then return pending("no JDK") end
    local dir = helper.tmpdir()
    local data = dir .. "/data"
    local cli = {}
    if opts.redis then
      cli = { "--redis", opts.redis, "--postgres", opts.postgres }
      local m = assert(fleet_mod.open(data, { redis = opts.redis, postgres = opts.postgres, migrating = true }))
      m:migrate()
      m:close()
    end
    local function args(list)
      for _, a in ipairs(cli) do list[#list + 1] = a end
      return list
    end
    local bmd = dir .. "/sessions.bmd"
    assert(require("sift.heap.bmd").crunch(hprof, bmd))
    -- the program's classes in a jar (what BMD hashes: its names), by the JDK's jar
    local classes = hprof:match("^(.*)/[^/]*$")
    local jar = dir .. "/app.jar"
    assert(helper.sh(("jar cf %s -C %s leakcanary"):format(quote(jar), quote(classes))))
    local want = helper.sift_json { "leaks", "--json", "-q", hprof }.application_leaks[1]
    assert.are.equal("leakcanary.FleetLeaks$Session instance", want.description)

    local fleet <close> = assert(fleet_mod.open(data, { redis = opts.redis, postgres = opts.postgres }))
    local symbols = require "sift.fleet.symbols"
    fleet:ingest(symbols.sha256(hprof), hprof, "hprof", { app = "shop", version = "1.0-plain", device = "a" })
    fleet:ingest(symbols.sha256(bmd), bmd, "bmd", { app = "shop", version = "1.0", device = "b" })
    assert.are.equal(2, fleet:work { once = true })
    local groups = fleet:groups()
    assert.are.equal(2, #groups)
    local by = {}
    for _, g in ipairs(groups) do by[g.signature] = g end
    local named, hashed = by[want.signature], nil
    for s, g in pairs(by) do if s ~= want.signature then hashed = g end end
    assert.are.same({ "no symbols for shop 1.0-plain" }, named.no_symbols)
    assert.are.same({ "no symbols for shop 1.0" }, hashed.no_symbols)
    assert.matches("^Hash%$%-?%d+ instance$", hashed.description)
    local st = fleet:status()
    assert.are.same({ { nameless = "no symbols for shop 1.0", files = 1 },
      { nameless = "no symbols for shop 1.0-plain", files = 1 } }, cjson.decode(cjson.encode(st.no_symbols)))
    local text = helper.sift_ok(args { "fleet", "status", "--data", data })
    assert.are.same({ "2 uploads; files: 0 queued, 0 running, 2 done, 0 failed",
      "  no symbols for shop 1.0: 1 file analysed without names",
      "  no symbols for shop 1.0-plain: 1 file analysed without names" }, helper.lines(text))
    assert.matches("\n             no symbols for shop 1.0\n", helper.sift_ok(args { "fleet", "groups", "--data", data }),
      1, true)
    -- and /fleet, /fleet.json
    local pages = post_all(data, { { path = "fleet", method = "GET", html = true },
      { path = "fleet.json", method = "GET" } }, opts)
    assert.matches("<br><em>no symbols for shop 1.0</em>", pages[1].body, 1, true)
    assert.matches("Analysed without names (upload their symbols: sift fleet symbols): no symbols for shop 1.0 (",
      pages[1].body, 1, true)
    assert.are.same(cjson.decode(cjson.encode(st.no_symbols)), pages[2].body.status.no_symbols)
    local json_marks = {}
    for _, jg in ipairs(pages[2].body.groups) do json_marks[#json_marks + 1] = jg.no_symbols[1] end
    table.sort(json_marks)
    assert.are.same({ "no symbols for shop 1.0", "no symbols for shop 1.0-plain" }, json_marks)

    -- the jar comes late: the BMD is queued again, analysed with its names, in the named group
    local added = assert(fleet:add_symbols({ app = "shop", version = "1.0" }, { jar }))
    assert.are.same({ "strings", "jar or apk", true, 1 }, { added[1].kind, added[1].what, added[1].new,
      added[1].requeued })
    assert.are.equal(1, fleet:status().queued)
    assert.are.equal(1, fleet:work { once = true })
    groups = fleet:groups()
    assert.are.equal(1, #groups)
    local g = groups[1]
    assert.are.same({ want.signature, 2, "leakcanary.FleetLeaks$Session instance", { "1.0", "1.0-plain" },
      { "no symbols for shop 1.0-plain" } }, { g.signature, g.dumps, g.description, g.versions, g.no_symbols })
    assert.matches("├─ leakcanary.FleetLeaks$Session [", g.trace, 1, true)
    assert.falsy(g.trace:find("Hash$", 1, true) and g.trace:find("FleetLeaks$Session", 1, true) == nil)
    assert.are.same({ { nameless = "no symbols for shop 1.0-plain", files = 1 } },
      cjson.decode(cjson.encode(fleet:status().no_symbols)))
    -- idempotent: the same jar again queues nothing, the group stays
    added = assert(fleet:add_symbols({ app = "shop", version = "1.0" }, { jar }))
    assert.are.same({ false, 0 }, { added[1].new, added[1].requeued })
    assert.are.equal(0, fleet:work { once = true })
    local again = fleet:groups()
    assert.are.same({ 1, 2 }, { #again, again[1].dumps })
    -- the JDK's names for the BMD (what sift's analysis does not name stays
    -- hashed without them): java.base's module as a platform's symbols
    local _, javac = helper.sh("readlink -f \"$(command -v javac)\"")
    local jmod = javac:match("^(.*)/bin/javac") .. "/jmods/java.base.jmod"
    if io.open(jmod) then
      local bmd_sha = symbols.sha256(bmd)
      local function bmd_trace()
        for _, g2 in ipairs(fleet:groups()) do
          for _, sha in ipairs(g2.files) do if sha == bmd_sha then return g2 end end
        end
      end
      assert.are.equal(want.signature, bmd_trace().signature)
      added = assert(fleet:add_symbols({ platform = "jdk-17" }, { jmod }))
      assert.are.same({ "strings", "jmod", true, 1 }, { added[1].kind, added[1].what, added[1].new,
        added[1].requeued })
      assert.are.equal(1, fleet:work { once = true })
      assert.are.same({ 1, want.signature, 2 }, { #fleet:groups(), bmd_trace().signature, bmd_trace().dumps })
      if not opts.redis then  -- (the BMD's own trace, beside the HPROF's the group shows)
        local row = fleet.queue.db:first("SELECT trace FROM leaks WHERE sha256 = ?", bmd_sha)
        assert.matches("├─ sun.launcher.LauncherHelper [NOT_LEAKING]", row.trace, 1, true)
        assert.falsy(row.trace:find("Hash$", 1, true), row.trace)
      end
    end
    -- the page and its JSON say it too
    local page = helper.sift_json(args { "fleet", "groups", "--json", "--data", data })
    assert.are.same({ "no symbols for shop 1.0-plain" }, page[1].no_symbols)
  end

  it("mark uploads without them, recover names when they come, and merge the nameless group into the named one",
    function() late_symbols {} end)

  it("of a ProGuard build and its BMD, uploaded late: one group of three on real names #heavy", function()
    release_fleet {}
  end)

  it("of a ProGuard build and its BMD, uploaded late, on Redis and PostgreSQL #heavy", function()
    local e = engines_mod.start()
    if not e then return pending("no Redis or PostgreSQL") end
    local redis, postgres = e.fresh()
    local ok, err = pcall(release_fleet, { redis = redis, postgres = postgres })
    e.stop()
    assert(ok, err)
  end)

  it("examples/fleet_symbols.lua: a BMD nameless, then named by its jar", function()
    local hprof = helper.jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=sessions")
    if not hprof then return pending("no JDK") end
    local dir = helper.tmpdir()
    local bmd, jar = dir .. "/sessions.bmd", dir .. "/app.jar"
    assert(require("sift.heap.bmd").crunch(hprof, bmd))
    assert(helper.sh(("jar cf %s -C %s leakcanary"):format(quote(jar), quote(hprof:match("^(.*)/[^/]*$")))))
    local want = helper.sift_json { "leaks", "--json", "-q", hprof }.application_leaks[1].signature
    local out, err, code = helper.sift { "run", "examples/fleet_symbols.lua", dir .. "/data", bmd, "2.0", jar }
    assert.are.same({ "", 0 }, { err, code })
    local lines = helper.lines(out)
    assert.are.equal("without symbols:", lines[1])
    assert.matches("^     1 dumps  %x+  Hash%$%-?%d+ instance  %[no symbols for example 2%.0%]$", lines[2])
    assert.are.same({ "added app.jar (jar or apk): 1 dump(s) queued again", "with them:",
      ("     1 dumps  %s  leakcanary.FleetLeaks$Session instance"):format(want:sub(1, 12)) },
      { lines[3], lines[4], lines[5] })
    assert.are.equal(5, #lines)
  end)

  it("on Redis and PostgreSQL: the same #heavy", function()
    local e = engines_mod.start()
    if not e then return pending("no Redis or PostgreSQL") end
    local redis, postgres = e.fresh()
    local ok, err = pcall(late_symbols, { redis = redis, postgres = postgres })
    e.stop()
    assert(ok, err)
  end)
end)
