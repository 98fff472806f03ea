-- The sift command line: exit codes (0 ok, 1 bad input, 2 bad usage), one
-- readable line per error, JSON output, progress bars only on a terminal.
local cjson = require "cjson"
local helper = require "spec.helper"

local sift = helper.sift

-- an error is one line on stderr, never a Lua traceback or a C file name
local function assert_one_line(err)
  assert.are.equal(1, #helper.lines(err), err)
  assert.matches("^sift: ", err)
  assert.not_matches("traceback", err)
  assert.not_matches("%.lua:%d", err)
  assert.not_matches("%.c:%d", err)
end

describe("sift (command line)", function()
  it("prints its version", function()
    local out, err, code = sift { "--version" }
    assert.are.equal(0, code)
    assert.matches("^sift %d+%.%d+%.%d+\n$", out)
    assert.are.equal("", err)
  end)

  it("has help for itself and for each command", function()
    local out, _, code = sift { "--help" }
    assert.are.equal(0, code)
    assert.matches("Usage: sift", out)
    assert.matches("info", out)
    assert.matches("Exit status: 0 ok, 1 bad input, 2 bad usage", out)
    out, _, code = sift { "info", "--help" }
    assert.are.equal(0, code)
    assert.matches("Usage: sift info", out)
    assert.matches("%-%-json", out)
  end)

  it("exits 2 with one line on bad usage", function()
    for _, args in ipairs { {}, { "frob" }, { "info" }, { "info", "--bogus", "x" }, { "--bogus" } } do
      local out, err, code = sift(args)
      assert.are.equal(2, code, table.concat(args, " "))
      assert.are.equal("", out)
      assert_one_line(err)
      assert.matches("try 'sift %-%-help'", err)
    end
  end)

  it("exits 1 with one clear line for files it cannot read or recognise", function()
    local empty, three = helper.tmpfile(""), helper.tmpfile("abc")
    local cases = {
      { "/nonexistent/app.hprof", "sift: /nonexistent/app.hprof: No such file or directory\n" },
      { "/tmp", "sift: /tmp: Is a directory\n" },
      { empty, "sift: " .. empty .. ": empty file: 0 bytes\n" },
      { three, "sift: " .. three .. ": too short to recognise: 3 bytes\n" },
    }
    for _, c in ipairs(cases) do
      local out, err, code = sift { "info", c[1] }
      assert.are.equal(1, code)
      assert.are.equal("", out)
      assert.are.equal(c[2], err)
    end
    os.remove(empty)
    os.remove(three)
  end)

  it("never prints the password of a URL on stderr, whatever wrote it", function()
    for _, case in ipairs {
      { "redis://:hunter22@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0" },
      { "postgresql://sift:p@ss:w0rd@db.example:5432/sift", "postgresql://sift:***@db.example:5432/sift" },
      { "https://host.example/a:b@c", "https://host.example/a:b@c" },  -- (no user info: left alone)
    } do
      local out, err, code = sift { "info", case[1] }
      assert.are.same({ 1, "", ("sift: %s: No such file or directory\n"):format(case[2]) }, { code, out, err })
    end
  end)

  it("never prints a mistyped engine URL, which still holds its password", function()
    local data = helper.tmpdir()
    local out, err, code = sift { "fleet", "status", "--data", data, "--redis", "redis//:hunter22@127.0.0.1:1",
      "--postgres", "postgresql://u:pw@127.0.0.1:1/x" }
    assert.are.same({ 2, "", "sift: --redis: not a URL (scheme://host:port, with a user and password before the host)\n" },
      { code, out, err })
  end)

  it("says when a file is none of the formats", function()
    local path = helper.fixture("ofx/MANIFEST.md")
    if not path then return end
    local _, err, code = sift { "info", path }
    assert.are.equal(1, code)
    assert_one_line(err)
    assert.matches('not a recognised dump %(HPROF, BMD, Android trace or OFX%): starts with "# OFX', err)
  end)

  it("prints the format and header facts of a dump", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
    if not path then return end
    local out, err, code = sift { "info", path }
    assert.are.equal(0, code)
    assert.are.equal("", err)
    local lines = helper.lines(out)
    assert.are.equal(path .. ": HPROF 1.0.1 heap dump, 8-byte ids, dumped 2018-01-14 12:47:39 UTC", lines[1])
    assert.matches("\n  id_size%s+8\n", out)
    assert.matches("\n  timestamp_ms%s+1515934059480\n", out)
  end)

  it("prints valid JSON: an object for one file, an array for several", function()
    local trace = helper.fixture("trace/firefox-art-trace-streaming.trace")
    if not trace then return end
    local out, _, code = sift { "info", "--json", trace }
    assert.are.equal(0, code)
    local t = cjson.decode(out)
    assert.are.same({ "trace", "streaming", "dual", 61, 3963, 39377 },
      { t.format, t.variant, t.clock, t.threads, t.methods, t.records })
    assert.are.equal(662173553092, t.start_time_us)  -- exact, not rounded
    assert.are.equal(9, t.unknown_methods)             -- decoded: ids the file never names
    assert.matches("^main %d+", t.thread_records)

    out, _, code = sift { "info", "--json", trace, "/nonexistent" }
    assert.are.equal(1, code)
    t = cjson.decode(out)
    assert.are.equal(2, #t)
    assert.are.equal("trace", t[1].format)
    assert.are.same({ "/nonexistent", "io" }, { t[2].path, t[2].code })
  end)

  it("shows what it found and exits 1 when a recognised header is damaged", function()
    local path = helper.fixture("trace/perflib-header.trace")
    if not path then return end
    local out, err, code = sift { "info", path }
    assert.are.equal(1, code)
    assert_one_line(err)
    assert.matches("unsupported binary trace version 25610 at byte 561", err)
    assert.matches("\n  problem%s+unsupported binary trace version", out)
    assert.matches("\n  methods%s+4\n", out)
  end)

  describe("progress", function()
    -- `script` runs the command on a pseudo-terminal, as a user would
    local function on_terminal(args)
      local words = { "lua5.4", "bin/sift" }
      for _, a in ipairs(args) do words[#words + 1] = helper.quote(a) end
      local p = io.popen("script -qec " .. helper.quote(table.concat(words, " ")) .. " /dev/null")
      local out = p:read("a")
      p:close()
      return out
    end

    it("draws a bar on a terminal for a whole-file pass, and erases it", function()
      local trace = helper.fixture("trace/firefox-art-trace-streaming.trace")
      if not trace then return end
      local screen = on_terminal { "info", trace }
      assert.matches("%[#+%] 100%%", screen)
      assert.matches("\r\27%[K", screen)
      assert.matches("records%s+39377", screen)
    end)

    it("draws sift growth's trees of paths by their share done, not in bytes", function()
      local dump = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
      if not dump then return end
      local screen = on_terminal { "growth", dump, dump }
      local _, bars = screen:gsub("paths from the roots %[#+%] 100%% ", "")
      assert.are.equal(2, bars)  -- (one a dump)
      assert.not_matches("paths from the roots %[[#.]*%] +%d+%% %d", screen)
      assert.matches("\r\27%[K2 dumps; 0 classes grew at every step", screen)
    end)

    it("draws sift leaks' dominator tree by its share done, after the index", function()
      local dump = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
      if not dump then return end
      local screen = on_terminal { "leaks", "--suspects", dump }
      local index = screen:find("hprof-64.bin [", 1, true)
      local tree = screen:find("\rdominators %[#+%] 100%% ")
      assert.is_true(index ~= nil and tree ~= nil and index < tree, screen)
      assert.not_matches("dominators %[[#.]*%] +%d+%% %d", screen)
      assert.matches("\r\27%[K=+\r?\n0 APPLICATION LEAKS", screen)
    end)

    it("draws nothing with --quiet or when stderr is not a terminal", function()
      local trace = helper.fixture("trace/firefox-art-trace-streaming.trace")
      if not trace then return end
      assert.not_matches("%[#", on_terminal { "--quiet", "info", trace })
      assert.not_matches("%[#", on_terminal { "info", "-q", trace })
      local _, err = sift { "info", trace }
      assert.are.equal("", err)
    end)
  end)
end)

describe("sift histogram / info / repl on heap dumps", function()
  it("prints the histogram JSON contract", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
    if not path then return end
    local out, err, code = sift { "histogram", path, "--json", "--top", "3" }
    assert.are.equal(0, code, err)
    local t = cjson.decode(out)
    assert.are.same({ "hprof", "1.0.1", 8, 4149, 474, 748, 2891 },
      { t.format, t.version, t.id_size, t.instances, t.classes, t.object_arrays, t.primitive_arrays })
    assert.are.same({ thread_object = 9, jni_global = 5, java_frame = 22, sticky_class = 413, monitor_used = 4 }, t.roots)
    assert.are.equal(3, #t.rows)
    assert.are.same({ class = "int[]", count = 436, shallow = 2082392 }, t.rows[1])
    assert.is_true(t.rows[1].shallow >= t.rows[2].shallow and t.rows[2].shallow >= t.rows[3].shallow)
  end)

  it("prints a readable histogram with totals", function()
    local path = helper.fixture("hprof/py-hprof/example-java.hprof.bz2")
    if not path then return end
    local out, _, code = sift { "histogram", path, "--top", "2" }
    assert.are.equal(0, code)
    local lines = helper.lines(out)
    assert.are.equal(4, #lines)
    assert.matches("^%s+shallow bytes%s+instances%s+class$", lines[1])
    assert.matches("^%s+[%d,]+%s+[%d,]+%s+total: %d+ rows %(2 shown%), 504 classes$", lines[4])
  end)

  it("deobfuscates with --mapping", function()
    local path = helper.fixture("hprof/android/ahat/test-dump.hprof")
    if not path then return end
    local plain = sift { "histogram", path, "--top", "0" }
    local mapped = sift { "histogram", path, "--top", "0", "--mapping", helper.fixture("hprof/android/ahat/test-dump.map") }
    assert.matches("\n%s+[%d,]+%s+20,000  o\n", plain)
    assert.matches("\n%s+[%d,]+%s+20,000  DumpedStuff%$StackSmasher\n", mapped)
  end)

  it("adds object, class and root counts to sift info for heap dumps", function()
    local path = helper.fixture("hprof/android/perflib/dialer.android-hprof")
    if not path then return end
    local out, _, code = sift { "info", "--json", path }
    assert.are.equal(0, code)
    local t = cjson.decode(out)
    assert.are.same({ 43687, 3571, 24612, 1919, 13585, 7286 },
      { t.objects, t.classes, t.instances, t.object_arrays, t.primitive_arrays, t.roots.interned_string })
    assert.are.same({ classes = 38, instances = 918, object_arrays = 67, primitive_arrays = 421 }, t.heaps.app)
    out = sift { "info", "--header", path }
    assert.not_matches("objects", out)
  end)

  it("reports a truncated dump as a warning and still counts what is there", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
    if not path then return end
    local cut = helper.tmpfile(helper.read(path):sub(1, 2000000))
    local out, err, code = sift { "histogram", cut, "--top", "1" }
    os.remove(cut)
    assert.are.equal(0, code)
    assert.matches("warning: truncated record %(tag 0x0C%) at byte %d+", err)
    assert.matches("total", out)
  end)

  it("fails with one line for a damaged dump", function()
    local bad = helper.tmpfile("JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
      .. string.pack(">BI4I4", 0x1C, 0, 9) .. string.char(0x42) .. ("\0"):rep(8))
    local out, err, code = sift { "histogram", bad }
    os.remove(bad)
    assert.are.equal(1, code)
    assert.are.equal("", out)
    assert.matches("^sift: .*: unknown heap dump sub%-record tag 0x42 at byte 40\n$", err)
  end)

  it("runs Lua against the heap in the repl, printing values readably", function()
    local path = helper.fixture("hprof/py-hprof/example-java.hprof.bz2")
    if not path then return end
    local script = helper.tmpfile(table.concat({
      'heap:class("com.example.Cars"):instance_count()',
      'local c = heap:class("com.example.Cars"):instances()() return c.swe.make:string(), c.swe.numWheels',
      'for i = 1,',
      '  2 do print("line", i) end',
      'heap:info().roots.thread_object',
      'error("boom")',
      '{ a = 1, "x" }',
    }, "\n") .. "\n")
    local out, err, code = sift({ "repl", path }, "< " .. helper.quote(script))
    os.remove(script)
    assert.are.equal(0, code)
    assert.are.equal('1\n"Lolvo"\t4\nline\t1\nline\t2\n6\n{ "x", a = 1 }\n', out)
    assert.matches("error: repl:1: boom", err)
  end)
end)

describe("sift path / top / dominators", function()
  local dump = "hprof/generated-jdk17/leaky_jdk17_live.hprof"

  it("prints the path JSON contract, with retained sizes on request", function()
    local path = helper.fixture(dump)
    if not path then return end
    local out, err, code = sift { "path", path, "--class", "LeakyApp$Leaked", "--json", "--retained", "--model", "jvm" }
    assert.are.equal(0, code, err)
    local t = cjson.decode(out)
    assert.are.equal(11, #t)
    assert.are.same({ "0xfd5c0290", "LeakyApp$Leaked", 24, 10088, "sticky_class" },
      { t[1].id, t[1].class, t[1].shallow, t[1].retained, t[1].root })
    assert.are.same({
      { class = "sun.launcher.LauncherHelper", id = "0xfd5bb970", ref = "static appClass" },
      { class = "LeakyApp", id = "0xfd5bf850", ref = "static CACHE" },
      { class = "java.util.ArrayList", id = "0xfd5c0138", ref = "field elementData" },
      { class = "java.lang.Object[]", id = "0xfd5de470", ref = "[0]" },
      { class = "LeakyApp$Leaked", id = "0xfd5c0290" },
    }, t[1].path)
    out = sift { "path", path, "--class", "LeakyApp$Leaked", "--json" }
    assert.is_nil(cjson.decode(out)[1].retained)
  end)

  it("draws paths as leak traces", function()
    local path = helper.fixture(dump)
    if not path then return end
    local out, _, code = sift { "path", path, "--class", "LeakyApp$Holder" }
    assert.are.equal(0, code)
    assert.matches("│ GC Root: System class\n", out, 1, true)  -- (LeakCanary's words, as sift leaks writes them)
    assert.matches("│    ↓ static LeakyApp.HOLDER\n", out, 1, true)
    assert.matches("╰→ LeakyApp$Holder@0xfd5f9960", out, 1, true)
    local _, err, bad = sift { "path", path, "--class", "No.Such" }
    assert.are.equal(1, bad)
    assert.matches("no class named 'No.Such'", err)
  end)

  it("lists the largest retainers and prints the dominator tree", function()
    local path = helper.fixture(dump)
    if not path then return end
    local out, _, code = sift { "top", path, "-n", "2", "--json", "--model", "visualvm" }
    assert.are.equal(0, code)
    local t = cjson.decode(out)
    assert.are.same({ "java.lang.Class", 121968 }, { t[1].class, t[1].retained })  -- VisualVM 2.1.5: class 0xfd5bf850
    assert.is_true(t[1].retained >= t[2].retained)
    out = sift { "dominators", path, "--depth", "2", "--min", "10" }
    assert.matches("%d+%.%d+%% +[%d,]+  class LeakyApp\n", out)
    assert.matches("\n +[%d.]+%% +[%d,]+    java.util.ArrayList@0xfd5c0138\n", out)
    assert.matches("total reachable", out)
  end)
end)

describe("sift leaks", function()
  it("prints the JSON contract for a KeyedWeakReference leak", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local out, err, code = sift { "leaks", path, "--finder", "keyed", "--json" }
    assert.are.equal(0, code, err)
    local t = cjson.decode(out)
    local leak = t.application_leaks[1]
    assert.are.same({ 1, 0, 378 }, { #t.application_leaks, #t.library_leaks, leak.retained })
    assert.are.equal(40, #leak.signature)
    local trace = leak.traces[1]
    assert.are.same({ "jni_global", "com.example.leakcanary.LeakyService", "0xb0fa7cb0" },
      { trace.root, trace.leaking_class, trace.leaking_id })
    assert.are.same({ class = "com.example.leakcanary.LeakyService$MyBinder", id = trace.elements[1].id,
      ref = "field service", status = "UNKNOWN", suspect = true, retained = 402, retained_count = 12 },
      trace.elements[1])
    -- the leaking object retains what the leak does, and is one of the binder's 12
    assert.are.same({ 378, 11 }, { trace.elements[2].retained, trace.elements[2].retained_count })
    assert.are.same({ "LEAKING", "ObjectWatcher was watching this and Service not held by ActivityThread" },
      { trace.elements[2].status, trace.elements[2].reason })
    assert.are.same({ 19, "com.example.leakcanary:leakyprocess" }, { t.metadata.sdk_int, t.metadata.process })
  end)

  it("treats what a --where expression selects as leaking", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not path then return end
    local out, _, code = sift { "leaks", path, "--class", "LeakyApp$Leaked", "--where", "#obj.payload > 15000" }
    assert.are.equal(0, code)
    assert.matches("1 APPLICATION LEAKS", out)
    assert.matches("╰→ LeakyApp%$Leaked instance\n\u{200B}     Leaking: YES %(%-%-where #obj.payload > 15000%)", out)
    assert.matches("↓ LeakyApp%$Node.value", out)
    local _, err, bad = sift { "leaks", path, "--where", "obj.(" }
    assert.are.equal(2, bad)
    assert.matches("^sift: %-%-where:", err)
  end)
end)

describe("sift leaks --suspects and --html", function()
  it("lists MAT-style suspects in text and JSON, and writes an HTML report", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not path then return end
    local out, _, code = sift { "leaks", path, "--suspects" }
    assert.are.equal(0, code)
    assert.matches("1 LEAK SUSPECTS", out)
    assert.matches("One java.util.ArrayList %(java.util.ArrayList@0xfd5c0138%) retains 100,476 bytes", out)
    assert.matches("The memory accumulates in java.lang.Object%[10%]@0xfd5de470", out)
    out = sift { "leaks", path, "--suspects", "--json" }
    local t = cjson.decode(out)
    assert.are.same({ "object", "java.util.ArrayList", "0xfd5c0138" }, { t.suspects[1].kind, t.suspects[1].class, t.suspects[1].id })
    assert.are.equal("java.lang.Object[]", t.suspects[1].accumulation.class)
    local html = os.tmpname()
    local k = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    _, _, code = sift { "leaks", k, "--finder", "keyed", "--html", html }
    assert.are.equal(0, code)
    local page = helper.read(html)
    os.remove(html)
    assert.matches("^<!DOCTYPE html>", page)
    assert.matches("<details open><summary>com.example.leakcanary.LeakyService instance — 378 bytes retained", page)
    assert.matches('class="suspect"', page)
  end)
end)

describe("sift ofx on a cut download", function()
  -- a v1 file cut 155 bytes in (inside <SIGNONMSGSRSV1), a v2 file cut inside
  -- <SIGN, and files with no <OFX> at all: never a quiet success
  local function cut(rel, marker)
    local text = helper.read(helper.fixture(rel))
    local at = assert(text:find(marker, 1, true))
    return helper.tmpfile(text:sub(1, at + #marker - 1))
  end

  it("is an error with its line and column in strict mode, warnings on stderr in every other", function()
    if not helper.fixture("ofx") then return end
    local v1 = helper.tmpfile(helper.read(helper.fixture("ofx/ofxparse/checking.ofx")):sub(1, 155))
    local v2 = cut("ofx/beancount-import/fidelity-ira.ofx", "<SIGN")
    for _, file in ipairs { v1, v2 } do
      local _, err, code = sift { "ofx", "--strict", file }
      assert.are.equal(1, code)
      assert.matches(": line %d+, column %d+: the file ends inside a tag: \"<SIGN", err)
      for _, mode in ipairs { {}, { "--csv" }, { "--json" } } do
        local args = { "ofx", file }
        for _, m in ipairs(mode) do args[#args + 1] = m end
        local _, werr = sift(args)
        assert.matches("warning %(line %d+%): the file ends inside a tag", werr, 1)
        assert.matches("warning %(line %d+%): <OFX> has no end tag %(the file ends%)", werr)
      end
    end
    os.remove(v1)
    os.remove(v2)
  end)

  it("is an error in every mode when the file has no <OFX> element", function()
    local empty = helper.tmpfile("")
    for _, file in ipairs { empty, "/usr/bin/true" } do
      for _, mode in ipairs { "--csv", "--json", "--strict" } do
        local out, err, code = sift { "ofx", mode, file }
        assert.are.equal(1, code, mode)
        -- (strict mode names the first problem: the ELF bytes are text outside any element)
        assert.matches((mode == "--strict" and file ~= empty) and "line 1, column 1: text outside any element"
          or "no <OFX> element", err)
        if mode == "--csv" then assert.are.equal("", out) end
      end
    end
    os.remove(empty)
  end)
end)

describe("cut heap dumps and traces never look like success", function()
  it("every heap analysis says where a dump was cut; a file with no heap dump is an error", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not path then return end
    local bytes = helper.read(path)
    local cut = helper.tmpfile(bytes:sub(1, 2900000))  -- inside the heap dump's records
    local header = helper.tmpfile(bytes:sub(1, 31) .. "\1\0\0\0\0\0\0\0\0")  -- a header and one empty record
    for _, args in ipairs { { "top" }, { "dominators" }, { "leaks" }, { "path", "--class", "LeakyApp" },
        { "histogram" } } do
      local a = { args[1], cut, table.unpack(args, 2) }
      local _, err, code = sift(a)
      assert.are.equal(0, code, args[1])
      assert.matches("^sift: [^\n]+: warning: truncated [^\n]* at byte %d+", err)
      a[2] = header
      local out
      out, err, code = sift(a)
      assert.are.same({ 1, "" }, { code, out }, args[1])
      assert.matches("holds no heap dump %(no HEAP_DUMP record%): nothing to analyse\n$", err)
    end
    os.remove(cut)
    os.remove(header)
  end)

  it("sift info calls a cut OFX damaged, with the byte where it ends: in its header, before </OFX>", function()
    local v1 = helper.fixture("ofx/ofxparse/checking.ofx")
    local v2 = helper.fixture("ofx/ofxtools/stmtrs.ofx")
    if not (v1 and v2) then return end
    local sgml, xml = helper.read(v1), helper.read(v2)
    local blank = sgml:find("\r?\n\r?\n")                 -- where the v1 header ends
    local body = sgml:find("<OFX>", 1, true)
    local pi_end = select(2, xml:find("?>", xml:find("<?OFX", 1, true), true))
    for _, case in ipairs {
      { sgml:sub(1, 30), "cut short: the file ends at byte 30, inside its header, before its <OFX> element" },
      { sgml:sub(1, blank + 1), ("cut short: the file ends at byte %d, after its header, before its <OFX> element")
        :format(blank + 1) },
      { sgml:sub(1, body + 200), ("cut short: the body has no </OFX> end tag: the file ends at byte %d"):format(body + 200) },
      { sgml:sub(1, #sgml - 10), ("cut short: the body has no </OFX> end tag: the file ends at byte %d"):format(#sgml - 10) },
      { xml:sub(1, pi_end - 3), ("cut short: the file ends at byte %d, inside its header, before its <OFX> element")
        :format(pi_end - 3) },
      { xml:sub(1, #xml // 2), ("cut short: the body has no </OFX> end tag: the file ends at byte %d"):format(#xml // 2) },
    } do
      local file = helper.tmpfile(case[1])
      local out, err, code = sift { "info", file }
      assert.are.same({ 1, ("sift: %s: %s\n"):format(file, case[2]) }, { code, err })
      assert.matches("\n  problem +" .. case[2]:gsub("%p", "%%%0") .. "\n$", out)
      assert.is_nil(out:find("nil", 1, true))
      local json = cjson.decode((sift { "info", "--json", file }))
      assert.are.same({ "ofx", case[2], "truncated" }, { json.format, json.problem, json.problem_code })
      os.remove(file)
    end
    -- whole: 0, nothing said; compressed and cut in the compressed text
    local out, err, code = sift { "info", v1 }
    assert.are.same({ 0, "" }, { code, err })
    assert.is_nil(out:find("problem", 1, true))
    local file = helper.tmpfile(sgml:sub(1, 1000))
    local gz = file .. ".gz"
    assert(os.execute(("gzip -c %s > %s"):format(helper.quote(file), helper.quote(gz))))
    out, err, code = sift { "info", gz }
    assert.are.same({ 1, ("sift: %s: cut short: the body has no </OFX> end tag: the decompressed text ends at byte 1000\n")
      :format(gz) }, { code, err })
    assert.matches("\n  problem +cut short: the body has no </OFX> end tag: the decompressed text ends at byte 1000\n$", out)
    os.remove(file)
    os.remove(gz)
  end)

  it("names a header cut inside its magic, and a trace cut at a record boundary", function()
    local hprof = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not hprof then return end
    for _, case in ipairs {
      { hprof, 10, "the 10 bytes there begin an HPROF heap dump" },
      { helper.fixture("trace/perflib-basic.trace"), 8, "the 8 bytes there begin an Android method trace" },
    } do
      local file = helper.tmpfile(helper.read(case[1]):sub(1, case[2]))
      local _, err, code = sift { "info", file }
      assert.are.equal(1, code)
      assert.matches("truncated header at byte " .. case[2] .. ": " .. case[3], err, 1, true)
      os.remove(file)
    end
    -- perflib-basic.trace ends in its 9 records of 14 bytes: two of them cut off
    local trace = helper.read(helper.fixture("trace/perflib-basic.trace"))
    local file = helper.tmpfile(trace:sub(1, #trace - 2 * 14))
    local _, err, code = sift { "profile", file }
    assert.are.equal(0, code)
    assert.matches("warning: the header counts 9 method calls, the file holds 7: it was cut short", err)
    os.remove(file)
  end)
end)
