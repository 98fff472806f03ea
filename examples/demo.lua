-- `make demo` (or `bin/sift run examples/demo.lua`): what sift can do so
-- far, on the shared fixtures when they are there and on files generated
-- here either way. The example scripts run as a user runs them from a
-- checkout: `bin/sift run examples/x.lua ...` (no LUA_PATH to set).
local sift = require "sift"

local fixtures = os.getenv("SIFT_FIXTURES") or "../shared/fixtures"

local function section(title) print(("\n== %s =="):format(title)) end

local function sh(cmd)
  print("$ " .. cmd)
  io.stdout:flush()
  os.execute(cmd)
end

-- 1. detection over every real file we have
section("format detection on real dumps, traces and statements")
local probe = io.open(fixtures .. "/hprof/MANIFEST.md")
if probe then
  probe:close()
  local by_format, failures, total = {}, {}, 0
  local p = io.popen(("find %q -type f | sort"):format(fixtures))
  for path in p:lines() do
    local rel = path:sub(#fixtures + 2)
    local family = rel:match("^(%a+)/")
    if family == "hprof" or family == "bmd" or family == "trace" or family == "ofx" then
      total = total + 1
      local info, _, code = sift.detect(path, { bytes = false })
      if info then
        local key = info.format .. (info.compressed and " (" .. info.compressed .. ")" or "")
        by_format[key] = by_format[key] or {}
        table.insert(by_format[key], { rel = rel, info = info })
      else
        failures[code] = (failures[code] or 0) + 1
      end
    end
  end
  p:close()
  local keys = {}
  for k in pairs(by_format) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local list = by_format[k]
    print(("%-14s %3d files, e.g. %s"):format(k, #list, list[1].rel))
    print(("%-14s     %s"):format("", list[1].info.description))
  end
  local codes = {}
  for code, n in pairs(failures) do codes[#codes + 1] = ("%d %s"):format(n, code) end
  table.sort(codes)
  print(("%d files looked at; not dumps (manifests, licences, expected outputs): %s")
    :format(total, table.concat(codes, ", ")))
else
  print("(no shared fixtures at " .. fixtures .. "; set SIFT_FIXTURES to see real files)")
end

-- 2. the command line on files made here
section("sift info on generated files")
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function write(name, bytes)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(bytes)
  f:close()
  return dir .. "/" .. name
end
local hprof = write("app.hprof", "JAVA PROFILE 1.0.3\0" .. string.pack(">I4I8", 4, os.time() * 1000))
os.execute("gzip -k " .. hprof)
write("bank.qfx", "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\n"
  .. "ENCODING:USASCII\r\nCHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\n"
  .. "NEWFILEUID:NONE\r\n\r\n<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</STATUS></SONRS></SIGNONMSGSRSV1></OFX>\r\n")
write("notes.txt", "not a dump at all\n")
sh(("bin/sift info %s/app.hprof.gz %s/bank.qfx"):format(dir, dir))
sh(("bin/sift info --json %s/bank.qfx"):format(dir))
sh(("bin/sift info %s/notes.txt; echo \"exit status $?\""):format(dir))

-- 3. heap dumps
section("heap dumps: info, histogram, a REPL session, a tour from Lua")
local leaky = fixtures .. "/hprof/generated-jdk17/leaky_jdk17_live.hprof"
local android = fixtures .. "/hprof/android/ahat/test-dump.hprof"
if io.open(leaky) then
  sh("bin/sift info " .. leaky)
  sh("bin/sift histogram --top 6 " .. fixtures .. "/hprof/hprof-slurp/hprof-64.bin")
  sh(("printf '%%s\\n' %s | bin/sift repl %s"):format(table.concat({
    [['local c = heap:class("LeakyApp"):static("CACHE") return c, c:field("size")']],
    [['heap:class("LeakyApp"):static("CACHE").elementData[1].name:string()']],
    [['show(heap:class("LeakyApp"):static("DERIVED"))']],
  }, " "), leaky))
  sh("bin/sift run examples/heap_tour.lua " .. leaky .. " 'LeakyApp$Leaked' | head -20")
  sh(("bin/sift histogram --top 4 --mapping %s %s"):format(android:gsub("hprof$", "map"), android))
  section("why is it alive, and what holds the memory")
  sh("bin/sift path " .. leaky .. " --class 'LeakyApp$Leaked' --limit 1 --retained --model jvm")
  sh("bin/sift top " .. leaky .. " -n 5")
  sh("bin/sift dominators " .. leaky .. " --depth 3 --min 3")
  sh("bin/sift run examples/why_alive.lua " .. leaky .. " 'LeakyApp$Node'")
  section("leaks, as LeakCanary reports them")
  sh("bin/sift leaks " .. fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder.hprof --finder keyed | head -20")
  sh("bin/sift leaks " .. leaky .. " --class 'LeakyApp$Leaked' --where '#obj.payload > 15000' | head -24")
  section("Android lifecycles: a finished service a singleton keeps (perflib's Dialer dump)")
  sh("bin/sift leaks " .. fixtures .. "/hprof/android/perflib/dialer.android-hprof --finder android | sed -n 1,36p")
  section("Android heaps (app, zygote) and the bitmaps a dump holds, drawn as PNG")
  local binder = fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder.hprof"
  sh("bin/sift histogram -q --heap app --top 3 " .. binder)
  sh("bin/sift bitmaps -q " .. binder .. " | head -5")
  sh("bin/sift run examples/bitmaps.lua " .. binder .. " build/demo/bitmaps | tail -2")
  print("(docs/heap.md: bitmaps; sift serve shows them on each dump's bitmaps page)")
else
  print("(no heap dump fixtures here)")
end

-- 3b. a dump made here, of the kind users' programs leave
section("a heap engine to trust: a JVM dump made here with javac and jcmd")
if os.execute("command -v javac >/dev/null && command -v jcmd >/dev/null") then
  local out = "build/demo/trust"
  os.execute("mkdir -p " .. out)
  local dump = out .. "/TrustSample.hprof"
  if not io.open(dump) then
    os.execute(("javac -encoding UTF-8 -d %s spec/java/TrustSample.java"):format(out))
    local java = io.popen(("exec java -Xmx128m -XX:+UseSerialGC -cp %s TrustSample"):format(out))
    local pid = java:read("l"):match("^ready (%d+)$")
    os.execute(("jcmd %s GC.class_histogram > /dev/null"):format(pid))
    os.execute(("jcmd %s GC.heap_dump %s > /dev/null"):format(pid, dump))
    os.execute(("jcmd %s GC.class_histogram > %s.histo"):format(pid, dump))
    os.execute("kill " .. pid)
    java:close()
  end
  print("(spec/java/TrustSample.java: a class with fields named id, size, kind, string...; a class-loader "
    .. "leak; a 200,000-node list)")
  sh(("printf '%%s\n' %s | bin/sift repl %s"):format(table.concat({
    [['s = heap:class("TrustSample$Session"):instances()()']],
    [['return s:id() > 0, s:field("id"), s:field("size"), s:field("kind"):string()']],
    [['help(s)']],
    [['return heap:class("Session")']],
    [['return heap:retained(heap:class("TrustSample")), s:id()']],
  }, " "), dump))
  sh("bin/sift path " .. dump .. " --class java.net.URLClassLoader | head -16")
  sh("bin/sift path " .. dump .. " --class 'TrustSample$Node' --limit 1000 --json --max-memory 200M | wc -c")
  sh("bin/sift path " .. dump .. " --class 'TrustSample$Node' --limit 1 | tail -6")
  sh("bin/sift top " .. dump .. " -n 3 --model jvm")
  sh("bin/sift run examples/jvm_sizes.lua " .. dump .. " " .. dump .. ".histo | sed -n '1p;$p'")
  sh("bin/sift leaks " .. dump .. " --suspects | sed -n '/LEAK SUSPECTS/,/^Path/p'")
  sh("bin/sift top " .. dump .. " --max-memory 3M; echo \"exit status $?\"")
  print("(the same dump with the index's big arrays past 1 MB spilled to files, mapped back)")
  sh("bin/sift run examples/spill.lua " .. dump)
else
  print("(no JDK: apt-get install openjdk-17-jdk-headless)")
end
if io.open(fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof") then
  sh("bin/sift run examples/matchers.lua " .. fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
end

-- 3c. cut and hostile files
section("cut and hostile files: never a quiet success, never unbounded")
if io.open(fixtures .. "/ofx/ofxparse/checking.ofx") then
  sh("bin/sift run examples/cut_files.lua " .. fixtures .. "/ofx/ofxparse/checking.ofx")
  sh("bin/sift run examples/cut_files.lua " .. fixtures .. "/trace/perflib-basic.trace")
end
do  -- 76 bytes of BMD that would decrunch to 1 GiB of zeros
  local amp = "\1\18JAVA PROFILE 1.0.2"
  for i = 1, 8 do amp = amp .. "\7" .. string.char(i) .. "\7\128\128\128\8" end
  local f = assert(io.open(dir .. "/amplifier.bmd", "wb"))
  f:write(amp)
  f:close()
  sh(("bin/sift decrunch %s/amplifier.bmd %s/amplifier.hprof; echo \"exit status $?\""):format(dir, dir))
end

-- 4. Android method traces
section("Android method traces: profile, flame graph, loops folded")
local amp = fixtures .. "/trace/amp-legacy.trace"
if io.open(amp) then
  os.execute("mkdir -p build/demo")
  sh("bin/sift profile " .. amp .. " -n 5")
  sh("bin/sift fold " .. amp .. " --thread main --include 'cad3d' | sort -k2 -n -r | head -3"
    .. " | awk '{n = split($1, f, \";\"); print $2 \" µs  ...\" f[n-1] \";\" f[n]}'")
  sh("bin/sift flame " .. amp .. " -o build/demo/amp.svg --title 'amp legacy trace'")
  sh("bin/sift run examples/traces.lua " .. fixtures .. "/trace/firefox-art-trace-streaming.trace build/demo/firefox.svg")
  print("(open build/demo/*.svg in a browser: click to zoom, Ctrl-F to search; "
    .. "docs/traces.md has the rules and options)")
end

-- 5. BMD: crunch, inspect, analyse, decrunch
section("BMD: a heap dump crunched for shipping, analysed as it is, decrunched back")
local jdk = fixtures .. "/bmd/jdk17-sample.hprof"
if io.open(jdk) then
  os.execute("mkdir -p build/demo")
  sh("bin/sift crunch " .. jdk .. " build/demo/sample.bmd")
  sh("bin/sift info build/demo/sample.bmd --source " .. jdk .. " | head -12")
  sh("bin/sift histogram build/demo/sample.bmd --top 5")
  sh("bin/sift decrunch build/demo/sample.bmd build/demo/sample.decrunched.hprof")
  sh("bin/sift run examples/bmd.lua " .. fixtures .. "/hprof/hprof-slurp/hprof-32.bin | tail -4")
  print("(docs/bmd.md: what BMD keeps, name recovery from jars and apks, Badoo compatibility)")
end

-- 6. OFX statements
section("OFX/QFX bank statements: summaries, exact JSON, what was left out")
local stmt = fixtures .. "/ofx/ofxparse/bank_medium.ofx"
if io.open(stmt) then
  sh("bin/sift ofx " .. stmt .. " " .. fixtures .. "/ofx/ofxparse/fail_nice/decimal_error.ofx")
  sh("bin/sift ofx --csv " .. fixtures .. "/ofx/ledger-autosync/accented_characters_latin1.ofx")
  sh("bin/sift run examples/ofx.lua " .. fixtures .. "/ofx/beangulp/tests_ofx_ofxdownload.ofx | head -4")
  -- an investment statement (v1) written back as v2 from its typed statements, and read again
  os.execute("mkdir -p build/demo")
  sh("bin/sift run examples/ofx_convert.lua " .. fixtures .. "/ofx/ofxparse/fidelity.ofx build/demo/fidelity.xml 2")
  sh("bin/sift ofx build/demo/fidelity.xml")
  print("(docs/ofx.md: the grammar's rules, typed statements, strict and lenient modes, writing back)")
end

-- 6b. finance
section("finance: import (twice: nothing doubles), categorise, transfers, report, journals")
os.execute("mkdir -p build/demo && rm -f build/demo/books.db* build/demo/fixture.db* build/demo/csv.db*")
sh("bin/sift run examples/finance.lua build/demo/books.db | head -5")
local checking = fixtures .. "/ofx/ofxparse/checking.ofx"
if io.open(checking) then
  sh("bin/sift import --db build/demo/fixture.db " .. checking .. " " .. checking)
end
sh("bin/sift categorize --db build/demo/books.db --set 2 Coffee --set 3 Coffee >/dev/null; "
  .. "bin/sift categorize --db build/demo/books.db --evaluate | head -1")
sh("bin/sift transfers --db build/demo/books.db | tail -4")
sh("bin/sift report --db build/demo/books.db --top 3 --svg build/demo/report.svg | tail -12")
sh("bin/sift journal hledger --db build/demo/books.db -o build/demo/books.journal && export LC_ALL=C.UTF-8 && "
  .. "hledger -f build/demo/books.journal check && hledger -f build/demo/books.journal balance --depth 1")
-- your own entries beside the bank's: a cash purchase added, cleared, refused when the date is none
sh("bin/sift add --db build/demo/books.db --date 2024-03-02 --amount -4.20 --payee 'Corner shop' "
  .. "--category Food:Groceries --currency GBP > build/demo/added.id && "
  .. "bin/sift edit --db build/demo/books.db --status cleared $(cat build/demo/added.id) && "
  .. "bin/sift add --db build/demo/books.db --date 2024-02-30 --amount -1 --payee X; echo \"(status $?)\"")
sh("bin/sift run examples/finance_add.lua build/demo/books.db | tail -3")
-- a bank that speaks only CSV, read with hledger-shaped rules, imported twice
sh("bin/sift run examples/finance_csv.lua build/demo/csv.db | head -2")
print("(docs/finance.md: the store, entries, CSV rules, learning, transfers, reports and journals)")

-- 6c. OFX Direct Connect, against the specs' local OFX server over HTTPS
section("OFX Direct Connect: sift fetch from a local HTTPS OFX server (self-signed)")
if io.open(fixtures .. "/ofx/ofxparse/checking.ofx") and os.execute("command -v openssl >/dev/null") then
  local d = "build/demo/direct"
  os.execute("rm -rf " .. d .. " && mkdir -p " .. d)
  os.execute(("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s/key.pem -out %s/cert.pem -days 1 "
    .. "-subj /CN=localhost -addext subjectAltName=DNS:localhost >/dev/null 2>&1"):format(d, d))
  local server = io.popen(("exec lua5.4 spec/ofx_server.lua fixtures=%s user=demo password=demo-secret org=FAKE "
    .. "fid=1101 cert=%s/cert.pem key=%s/key.pem 2>/dev/null"):format(fixtures, d, d))
  local port, pid = server:read("l"):match("PORT (%d+) PID (%d+)")
  local f = io.open(d .. "/profiles.ini", "w")
  f:write(("[demo]\nurl = https://localhost:%s/ofx\norg = FAKE\nfid = 1101\nuser = demo\nversion = 103\n"
    .. "password_env = DEMO_OFX_PASSWORD\n"):format(port))
  f:close()
  local env = ("DEMO_OFX_PASSWORD=demo-secret XDG_DATA_HOME=%s "):format(d)
  sh(env .. "bin/sift fetch accounts demo --profiles " .. d .. "/profiles.ini")
  sh(env .. "bin/sift fetch accounts demo --profiles " .. d .. "/profiles.ini --cafile " .. d .. "/cert.pem")
  for _ = 1, 2 do
    sh(env .. "bin/sift fetch statements demo --profiles " .. d .. "/profiles.ini --cafile " .. d
      .. "/cert.pem --since 2024-01-01 --import --db " .. d .. "/books.db --log " .. d .. "/requests.log")
  end
  sh("grep -c 'USERPASS>\\*\\*\\*' " .. d .. "/requests.log; grep -c demo-secret " .. d .. "/requests.log")
  os.execute("kill " .. pid)
  server:close()
  print("(docs/direct.md: profiles, the password, requests, TLS, errors)")
end

-- 7. the reader, from Lua
section("walking HPROF records with the bounds-checked reader")
local dump = fixtures .. "/hprof/hprof-slurp/hprof-32.bin"
if io.open(dump) then
  sh("bin/sift run examples/hprof_records.lua " .. dump)
  local cut = dir .. "/cut.hprof"
  os.execute(("head -c 5000 %s > %s"):format(dump, cut))
  sh("bin/sift run examples/hprof_records.lua " .. cut)
end
os.execute("rm -rf " .. dir)

-- the web UI: sift serve on a heap, a trace and a statement; one page's
-- JSON twin fetched the way a script would, then the server stops
section("sift serve: heap, trace and OFX pages in the browser, each with a JSON twin")
local served = {}
for _, rel in ipairs { "hprof/generated-jdk17/leaky_jdk17_all.hprof", "trace/amp-legacy.trace",
    "ofx/ofxparse/bank_medium.ofx" } do
  if io.open(fixtures .. "/" .. rel) then served[#served + 1] = fixtures .. "/" .. rel end
end
if #served > 0 then
  sh("bin/sift run examples/serve.lua " .. table.concat(served, " ") .. " --upload " .. served[#served] .. " --for 1")
  print("(docs/serve.md: `sift serve FILE...` serves the same pages until ^C; uploads go to --data)")
  section("sift serve under hostile clients: bad lengths, cut bodies, other sites, rebound names")
  sh("bin/sift run examples/serve_security.lua " .. served[1])
  print("(docs/serve.md, Security: every rule, and spec/serve_hostile_spec.lua trying each)")
end

-- fleet mode: dumps from devices grouped by leak signature
section("fleet mode: dumps ingested, analysed by a worker, leaks grouped by signature")
local binder = fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder.hprof"
if io.open(binder) then
  os.execute("rm -rf build/demo/fleet")
  sh("bin/sift run examples/fleet.lua build/demo/fleet " .. binder .. "@1.0 " .. binder .. "@1.1 "
    .. fixtures .. "/hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof@1.1 | head -8")
  sh("bin/sift fleet status --data build/demo/fleet")
  -- the same on Redis Streams + PostgreSQL, started here for the demo (spec/engines.lua)
  local engines = require("spec.engines").start()
  if engines then
    local redis, postgres = engines.fresh()
    print(("\n-- on Redis %s + PostgreSQL %s:"):format(redis, postgres))
    local env = ("SIFT_REDIS=%s SIFT_POSTGRES=%s "):format(redis, postgres)
    sh(env .. "bin/sift fleet migrate")
    sh(env .. "bin/sift run examples/fleet.lua build/demo/fleet-engines " .. binder .. "@1.0 " .. binder .. "@1.1 | head -3")
    sh(env .. "bin/sift fleet groups")
    engines.stop()
  end
  print("(docs/fleet.md: sift serve --ingest --workers N, sift worker, sift fleet groups; --redis, --postgres)")
end
-- a release build's BMD (names only as hashes) grouped nameless, then named when its version's jar comes
local fleet_leaks = require("spec.helper").jvm_dump("leakcanary.FleetLeaks", nil, "-Xmx16m -Dleaks=sessions")
if fleet_leaks then
  os.execute("rm -rf build/demo/symbols && mkdir -p build/demo/symbols")
  sh("bin/sift crunch -q " .. fleet_leaks .. " build/demo/symbols/sessions.bmd && jar cf build/demo/symbols/app.jar -C "
    .. fleet_leaks:match("^(.*)/[^/]*$") .. " leakcanary && bin/sift run examples/fleet_symbols.lua "
    .. "build/demo/symbols/data build/demo/symbols/sessions.bmd 2.0 build/demo/symbols/app.jar")
  sh("bin/sift fleet symbols --list --data build/demo/symbols/data")
  print("(docs/fleet.md, Symbols: sift fleet symbols --app APP --version V FILE..., POST /symbols, --platform)")
end

-- lint: the Cursor rule over classes javac makes now
section("lint: Cursors that can leak, from bytecode; resources a dump shows left open")
if os.execute("command -v javac >/dev/null 2>&1") then
  os.execute("rm -rf build/demo/lint && mkdir -p build/demo/lint")
  os.execute("javac -d build/demo/lint/classes $(find spec/java/lint -name '*.java')")
  sh("bin/sift lint build/demo/lint/classes | tail -5")
  sh("bin/sift run examples/lint.lua build/demo/lint/classes --rules closeable")
  print("(docs/lint.md: --rules, --json, --sarif; sift leaks reports UNCLOSED RESOURCES in dumps)")
end
-- Android Lint's Recycle rules on a real app: an apk of Debian's androguard package
local corpus = require "spec.lint.android_corpus"
if corpus.ensure(require("spec.lint.android").package) then
  local apk = corpus.ROOT .. "/android/abcore/app-prod-debug.apk"
  sh("bin/sift lint --rules android " .. apk .. " | tail -3")
  sh("bin/sift lint --rules android --write-baseline build/demo/lint-baseline.txt " .. apk .. " >/dev/null; "
    .. "bin/sift lint --rules android --baseline build/demo/lint-baseline.txt " .. apk .. "; echo \"(status $?)\"")
  print("(docs/lint.md: Android's rules beside Android Lint's, baselines, suppressions, fingerprints)")
end

-- the reports after the leak trace: waste, threads, loaders, growth, root kinds through BMD
section("heap reports: waste, threads, class loaders, growth across dumps, root kinds through BMD")
local leaky_all = fixtures .. "/hprof/generated-jdk17/leaky_jdk17_all.hprof"
if io.open(leaky_all) then
  sh("bin/sift waste -q --top 2 " .. leaky_all .. " | head -14")
  sh("bin/sift threads -q " .. leaky_all .. " | head -6")
  sh("bin/sift loaders -q " .. leaky_all .. " | head -6")
  sh("bin/sift crunch -q " .. leaky_all .. " build/demo/leaky.bmd | grep roots")
  sh("bin/sift path -q build/demo/leaky.bmd --class java.lang.Thread --limit 1 | head -3")
end
local series = require("spec.helper").jvm_series("GrowthSample", "leak", 3)
if series then
  sh("bin/sift growth -q " .. table.concat(series, " "))
  sh("bin/sift run examples/reports.lua " .. table.concat(series, " ") .. " | tail -3")
end
-- growth held by the program's own map beside a JDK cache that grows too
local mapped = require("spec.helper").jvm_series("GrowthSample", "map", 3)
if mapped then sh("bin/sift growth -q --top 4 " .. table.concat(mapped, " ")) end
-- the JVM's sizes with @Contended paddings, and class data sharing's unseen mirrors
local contended = require("spec.helper").jvm_dump("ContendedSample", nil, "-Xmx64m -XX:+UseG1GC", true)
if contended then
  sh("bin/sift run examples/jvm_sizes.lua " .. contended .. " " .. contended .. ".histo | sed -n '1,2p;$p'")
  sh("bin/sift histogram --model jvm --top 0 " .. contended
    .. " | grep -E 'java.lang.Class  |ForkJoinPool(\\$WorkQueue)?$|BufferedSubscription$'")
end
print("(docs/heap.md: sift waste, threads, loaders, growth; docs/bmd.md: root kinds)")

-- the finance app of sift serve --db, on a generated ledger: a form posted
-- as a browser would, the same form from another site refused; then, on a
-- terminal, the app stays open at the URL it prints until ^C
section("the finance app: accounts, transactions, forms, charts and budgets in the browser")
os.execute("rm -f build/demo/app.db*")
sh("bin/sift run examples/finance_app.lua build/demo/app.db --check 2>&1 | tail -5")
print("(docs/finance.md: the app's pages and its safe writes)")
if os.execute("test -t 1") then
  print("\nThe app stays open on the ledger just made (^C to stop):")
  sh("bin/sift run examples/finance_app.lua build/demo/app.db")
end
