-- The scripts in examples/ run as a user would run them (`bin/sift run`,
-- as their headers say), and say true things: record counts match the
-- independent walker's record-stats.txt.
local helper = require "spec.helper"
local cjson = require "cjson"

local function run(script, args, env)
  local words = {}
  for i, a in ipairs(args) do words[i] = helper.quote(a) end
  local p = io.popen(("%slua5.4 bin/sift run examples/%s %s 2>&1"):format(env or "", script,
    table.concat(words, " ")))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

describe("examples", function()
  it("detect.lua describes each file and exits 1 when one is not a dump", function()
    local hprof = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not hprof then return end
    local out, code = run("detect.lua", { hprof, "/nonexistent" })
    assert.are.equal(1, code)
    assert.matches("HPROF 1%.0%.1 heap dump, 4%-byte ids, dumped 2006%-10%-27 09:35:54 UTC", out)
    assert.matches("No such file or directory %[io%]", out)
  end)

  it("hprof_records.lua counts top-level records as record-stats.txt does", function()
    local stats = helper.fixture("hprof/record-stats.txt")
    if not stats then return end
    local text = helper.read(stats)
    for _, name in ipairs { "hprof-32.bin", "hprof-64.bin" } do
      local top = text:match(name:gsub("%p", "%%%0") .. ":[^\n]*\n%s*top={([^}]*)}")
      local out, code = run("hprof_records.lua", { helper.fixture("hprof/hprof-slurp/" .. name) })
      assert.are.equal(0, code, out)
      local n = 0
      for tag, count in top:gmatch("'0x(%x%x)': (%d+)") do
        assert.matches(("0x%s %%S+%%s+%d records"):format(tag:upper(), count), out)
        n = n + 1
      end
      assert.is_true(n >= 5)
    end
  end)

  it("heap_tour.lua shows counts, the histogram and a class's instances with their fields", function()
    local dump = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not dump then return end
    local out, code = run("heap_tour.lua", { dump, "LeakyApp$Leaked" })
    assert.are.equal(0, code, out)
    assert.matches("13271 objects %(8744 instances, 1452 object arrays, 2392 primitive arrays%), 683 classes", out)
    assert.matches("class LeakyApp%$Leaked: 11 instances", out)
    assert.matches('name%s+"leaked%-0"', out)
    assert.matches("sticky_class%s+553", out)
  end)

  it("spill.lua finds the same top retainers with the index's arrays on disk", function()
    local dump = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not dump then return end
    local out, code = run("spill.lua", { dump, "4096" })
    assert.are.equal(0, code, out)
    assert.matches("the same top retainers", out)
    local mb = tonumber(out:match("spilled: [%d.]+ s, ([%d.]+) MB on disk"))
    assert.is_true(mb > 1, out)
  end)

  it("jvm_sizes.lua infers the JVM's layout and agrees with GC.class_histogram", function()
    local dump = helper.jvm_dump("TrustSample", nil, "-Xmx128m", true)
    if not dump then return pending("no JDK") end
    local out, code = run("jvm_sizes.lua", { dump, dump .. ".histo" })
    assert.are.equal(0, code, out)
    assert.matches("layout: 12%-byte headers, 4%-byte references, JDK 15%+ field placement, arrays from byte 16", out)
    assert.matches("\nJDK 17's @Contended paddings; 0 class mirrors followed by a gap\n", out)  -- (SerialGC: no archived heap)
    -- the JVM's, the dump's and VisualVM's sizes: 24, 12 and 24 bytes a node
    assert.matches("4800000%s+2400000%s+4800000%s+200000%s+TrustSample%$Node\n", out)
    local same, total = out:match("(%d+) of (%d+) classes have the JVM's own count and bytes")
    assert.are.equal(total, same)
  end)

  it("cut_files.lua shows a warning or an offset for every cut", function()
    local file = helper.fixture("ofx/ofxparse/checking.ofx")
    if not file then return end
    local out, code = run("cut_files.lua", { file })
    assert.are.equal(0, code, out)
    assert.matches("10 of 1758: exit 1  sift: %(cut%): no <OFX> element", out)
    assert.matches("1755 of 1758: exit 0  sift: %(cut%): warning %(line 83%): the file ends inside a tag", out)
  end)

  it("matchers.lua reports the Binder leak three ways", function()
    local dump = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not dump then return end
    local out, code = run("matchers.lua", { dump })
    assert.are.equal(0, code, out)
    assert.matches("no matcher +1 application leak%(s%), 0 library leak%(s%), 0 unreachable", out)
    assert.matches("Binder roots ignored +0 application leak%(s%), 0 library leak%(s%), 1 unreachable", out)
    assert.matches("root android.os.Binder, 378 bytes", out)
  end)

  it("why_alive.lua merges the paths and counts retained bytes once", function()
    local dump = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not dump then return end
    local out, code = run("why_alive.lua", { dump, "LeakyApp$Node", "--model", "jvm" })
    assert.are.equal(0, code, out)
    assert.matches("3 instances of LeakyApp%$Node", out)
    assert.matches("together they retain 20112 bytes %(model jvm%)", out)  -- the outermost node's size
    assert.matches("static LeakyApp.HOLDER LeakyApp%$Holder@0xfd5f9960  %(3 below%)", out)
    assert.matches("its immediate dominator: LeakyApp%$Node@0xfd5f97f0", out)
  end)

  it("leaks.lua reports the KeyedWeakReference leak with its retained size", function()
    local dump = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not dump then return end
    local out, code = run("leaks.lua", { dump })
    assert.are.equal(0, code, out)
    assert.matches("%d+ known library%-leak patterns apply to SDK 19 %(unknown%)", out)
    assert.matches('2 APPLICATION LEAKS\n\nReferences underlined with "~~~" are likely causes%.\n\n'
      .. "378 bytes retained by leaking objects", out)
    assert.matches("key = b3abfae6%-2c53%-42e1%-b8c1%-96b0558dbeae", out)
  end)

  it("traces.lua profiles the streaming trace and writes its flame graph", function()
    local trace = helper.fixture("trace/firefox-art-trace-streaming.trace")
    if not trace then return end
    local svg = helper.tmpfile("")
    local out, code = run("traces.lua", { trace, svg })
    assert.are.equal(0, code, out)
    assert.matches("version 3 %(streaming%), dual clock, 39377 records, 61 threads, 3963 methods", out)
    assert.matches("450077 µs     263 calls  java%.lang%.Thread%.sleep", out)
    assert.matches("<svg", helper.read(svg))
  end)

  it("hprof_records.lua stops at a truncated record and says where", function()
    local hprof = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not hprof then return end
    local cut = helper.tmpfile(helper.read(hprof):sub(1, 5000))
    local out, code = run("hprof_records.lua", { cut })
    os.remove(cut)
    assert.are.equal(0, code)
    assert.matches("stopped at the record starting at byte 4978: truncated bytes at byte 4987: needs 37 bytes, 13 left", out, 1, true)
  end)

  it("bmd.lua crunches, reads, analyses and decrunches a dump", function()
    local hprof = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not hprof then return end
    local out, code = run("bmd.lua", { hprof })
    assert.are.equal(0, code, out)
    -- (Badoo's 86,886 bytes and 119 strings, plus sift's record of the roots' kinds)
    assert.matches("282310 %-> 87044 bytes %(30.8%%%): 120 strings as text, 1377 hashed, 1293 instances, 862 roots", out)
    assert.matches("BMD of JAVA PROFILE 1.0.1: 361 classes", out)
    assert.matches("retains the most: class java.lang.System@0x%x+ %(64238 bytes%)", out)
    assert.matches("%d+ names recovered, %d+ left as Hash%$<hash>", out)
  end)

  it("ofx.lua shows balances, the largest debits and what it left out", function()
    local a, b = helper.fixture("ofx/ofxparse/bank_medium.ofx"), helper.fixture("ofx/ofxparse/fail_nice/empty_balance.ofx")
    if not a then return end
    local out, code = run("ofx.lua", { a, b })
    assert.are.equal(0, code, out)
    assert.matches("bank account 12300 000012345678 %(CAD%), 3 transactions, balance 382.34 on 2009%-05%-23T12:20:17Z", out)
    assert.matches("2009%-04%-02 +%-316.67  Joe's Bald Hairstyles\n  2009%-04%-03 +%-22.00", out)
    assert.matches("balance not given\n  warning %(line 37%): STMTRS 1/LEDGERBAL/BALAMT is empty", out)
  end)

  it("ofx_convert.lua writes an investment statement as v2 and reads it back the same", function()
    local fidelity = helper.fixture("ofx/ofxparse/fidelity.ofx")
    if not fidelity then return end
    local out_path = os.tmpname()
    local out, code = run("ofx_convert.lua", { fidelity, out_path, "2" })
    assert.are.equal(0, code, out)
    assert.matches("%(OFX 211%): 1 statement%(s%), 14 trade%(s%), 6 position%(s%), 7 securities; read back the same", out)
    assert.matches('^<%?xml version="1.0"', helper.read(out_path))
    os.remove(out_path)
  end)

  it("finance.lua imports a generated statement, categorises, confirms transfers and writes a journal", function()
    local db = os.tmpname()
    os.remove(db)
    local out, code = run("finance.lua", { db })
    assert.are.equal(0, code, out)
    assert.matches("%.sample%.ofx: 1501 new, 0 already there, 0 changed", out)
    assert.matches("categorised: %d+ by rules", out)
    assert.matches("transfers confirmed: 13", out)
    assert.matches("balance of 11223344 on 2025%-02%-20: 6374.72 %(matches the transactions%)", out)
    assert.matches("Housing:Rent +%-16800.00", out)
    local journal = helper.read(db .. ".beancount")
    assert.matches('fitid: "S00000001"', journal)
    out, code = run("finance.lua", { db, db .. ".sample.ofx" })  -- again: nothing new
    assert.are.equal(0, code, out)
    assert.matches("1501 already there", out)
    os.execute("rm -f " .. helper.quote(db) .. "*")
  end)
  it("serve.lua reads the suspects and the busiest thread from JSON twins, and uploads as a program", function()
    local trace, heap = helper.fixture("trace/amp-legacy.trace"), helper.fixture("hprof/generated-jdk17/leaky_jdk17_all.hprof")
    if not trace or not heap then return end
    local android = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    local out, code = run("serve.lua", { heap, trace, android, "--upload", trace, "--for", "0" })
    assert.are.equal(0, code, out)
    -- the Android dump's heaps, as sift histogram --heap totals them; its bitmaps, as sift bitmaps counts them
    for _, name in ipairs { "app", "zygote" } do
      local total = helper.sift { "histogram", "-q", "--top", "1", "--heap", name, android }
      local bytes, count = total:match("\n%s*([%d,]+)%s+([%d,]+)%s+total:")
      assert.matches(("  heap %s: %s objects, %s bytes\n"):format(name, count:gsub(",", ""), bytes:gsub(",", "")), out,
        1, true)
    end
    local bitmaps = cjson.decode((helper.sift { "bitmaps", "--json", "-q", android }))
    assert.matches(("  %d bitmaps, the largest %dx%d at /f/%%x+/bitmap/%s%%.png\n"):format(bitmaps.count,
      bitmaps.bitmaps[1].width, bitmaps.bitmaps[1].height, bitmaps.bitmaps[1].id), out)
    assert.matches("open http://127%.0%.0%.1:%d+/", out)
    -- as sift leaks --suspects says: "the ArrayList ... 15.5% of the reachable heap"
    assert.matches("leaky_jdk17_all.hprof: 1 suspects, the largest java.util.ArrayList 0xfc0dd2a8 (15.5% of the "
      .. "reachable heap)", out, 1, true)
    assert.matches("amp-legacy.trace: play opens on main (tid 3142, 7764 calls)", out, 1, true)
    assert.matches("upload amp%-legacy%.trace: 201 /f/(%x+)/ duplicate=false\nupload amp%-legacy%.trace: 200 /f/%1/ "
      .. "duplicate=true\n", out)
  end)
  it("bitmaps.lua lists the Bitmaps, writes the largest as a private PNG of its size, and finds the copies", function()
    local dump = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not dump then return end
    local dir = helper.tmpdir() .. "/pictures"
    local out, code = run("bitmaps.lua", { dump, dir })
    assert.are.equal(0, code, out)
    local count = cjson.decode((helper.sift { "bitmaps", "--json", "-q", dump })).count
    assert.matches(("^%d bitmaps\n"):format(count), out)
    local id, w, h = out:match("wrote [^\n]*/(0x%x+)%.png %((%d+)x(%d+),")
    assert.truthy(id, out)
    local png = helper.read(("%s/%s.png"):format(dir, id))
    local iw, ih = string.unpack(">I4I4", png, 17)
    assert.are.same({ tonumber(w), tonumber(h) }, { iw, ih }, "the PNG's IHDR")
    local p = io.popen("stat -c %a " .. helper.quote(dir) .. " " .. helper.quote(("%s/%s.png"):format(dir, id)))
    assert.are.equal("700\n600\n", p:read("a"))
    p:close()
    assert.matches("2 copies of a 96x96 picture %(2 buffers%): 36,864 bytes wasted: 0xb0f93f80, 0xb0f9e288", out)
  end)
  it("serve_security.lua answers each hostile request, stores one upload, and keeps it 0600", function()
    local heap = helper.fixture("hprof/generated-jdk17/leaky_jdk17_all.hprof")
    if not heap then return end
    local out, code = run("serve_security.lua", { heap })
    assert.are.equal(0, code, out)
    assert.matches("the same bytes again%s+200 OK", out)
    assert.matches("Content%-Length: 1e99%s+400 Bad Request%s+Content%-Length is not a length", out)
    assert.matches("400 Bad Request%s+the body broke off after 1,000 of the 4,911,426 bytes Content%-Length says", out)
    assert.matches("another site posting%s+403 Forbidden%s+a request from https://attacker%.example may not", out)
    assert.matches('a DNS%-rebound name%s+403 Forbidden%s+Host "attacker%.example:%d+" is not this server', out)
    local kept = {}
    for mode, name in out:gmatch("\n  (%d%d%d%d)  (%S+)") do kept[#kept + 1] = mode .. " " .. name:gsub("^/.*/$", "DIR") end
    assert.are.same({ "0700 DIR", "0600 b376db169c60627ef8c6cdc108652dcc973bfc382db5e32177ff84ee8c21fb33.hprof",
      "0600 b376db169c60627ef8c6cdc108652dcc973bfc382db5e32177ff84ee8c21fb33.meta" }, kept)
  end)
  it("fleet.lua ingests two dumps, analyses them and prints their leak groups, embedded and on the engines",
      function()
    local a = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not a then return end
    local b = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    local function check(out, code)
      assert.are.equal(0, code, out)
      assert.matches("2 uploads, 2 analysed now; 2 done, 0 failed", out, 1, true)
      assert.matches("   2 dumps  ef9d39eb4003  com.example.leakcanary.LeakyService instance  (versions 1.0, 1.1", out,
        1, true)
      assert.matches("GC Root: Global variable in native code", out, 1, true)
      assert.matches("\ngroups 1-2 of 2\n", out, 1, true)
    end
    check(run("fleet.lua", { helper.tmpdir() .. "/new", a .. "@1.0", b .. "@1.1" }))  -- (a directory not there yet)
    local engines = require("spec.engines").start()
    if not engines then return pending("no Redis or PostgreSQL") end
    local ok, err = pcall(function()
      local redis, postgres = engines.fresh()
      local _, msg, code = helper.sift { "fleet", "migrate", "--redis", redis, "--postgres", postgres }
      assert(code == 0, msg)
      check(run("fleet.lua", { helper.tmpdir(), a .. "@1.0", b .. "@1.1" },
        ("SIFT_REDIS=%s SIFT_POSTGRES=%s "):format(helper.quote(redis), helper.quote(postgres))))
    end)
    engines.stop()
    assert(ok, err)
  end)
  it("lint.lua lists the leaking Cursor shapes by method", function()
    if not os.execute("command -v javac >/dev/null") then return pending("no JDK") end
    local dir = helper.tmpdir()
    assert(os.execute(("env -u LD_PRELOAD javac -d %s $(find spec/java/lint -name '*.java')"):format(helper.quote(dir))))
    local out, code = run("lint.lua", { dir })
    assert.are.equal(0, code, out)
    assert.matches("sample.Shapes.outsideTry\n  line %d+  op%-outside%-try     invokeinterface android/database/Cursor.getCount%(%)I\n",
      out)
    assert.matches("4 classes checked\n$", out)
  end)
  it("reports.lua prints waste, threads, loaders and the growth of a series", function()
    local dumps = helper.jvm_series("GrowthSample", "leak", 3)
    if not dumps then return pending("no JDK") end
    local out, code = run("reports.lua", dumps)
    assert.are.equal(0, code, out)
    assert.matches("grows at every step: GrowthSample%$Leaked, %+100, %+100 instances per step\n", out)
    assert.matches("  held through .-static LEAKS → ArrayList", out)
    assert.matches("0 class%(es%) defined by more than one loader", out)
  end)
end)
