-- Android method traces: every fixture decodes or fails clearly, and the
-- per-method profiles equal dmtracedump's (reference/*.dmtracedump-*.txt).
local sift = require "sift"
local helper = require "spec.helper"
local writer = dofile("spec/trace_writer.lua")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- dmtracedump's profile: name -> { excl, incl, calls, recursive }; methods
-- with no exclusive time are not in its exclusive table (0)
local function reference_profile(path)
  local s = read(path)
  local out = {}
  local exclusive = s:match("sorted by exclusive time%.\n\n[^\n]*\n(.-)\n\n")
  for usecs, name in exclusive:gmatch("%s*(%d+)%s+[%d.]+%s+[%d.]+%s+%[%d+%] ([^\n]+)") do
    out[name] = { excl = tonumber(usecs) }
  end
  for calls, rec, usecs, name in s:gmatch("\n%[%s*%d+%]%s+[%d.]+%%%s+(%d+)%+(%d+)%s+(%d+) ([^\n]+)") do
    local e = out[name] or { excl = 0 }
    e.calls, e.recursive, e.incl = tonumber(calls), tonumber(rec), tonumber(usecs)
    out[name] = e
  end
  return out
end

-- the profile in dmtracedump's terms: slashed class names
local function profile(trace)
  local out = {}
  for _, m in ipairs(trace:methods()) do
    if m.calls + m.recursive_calls > 0 then
      out[m.class .. "." .. m.name .. " " .. m.signature] = { excl = m.cpu_excl, incl = m.cpu_incl,
        calls = m.calls, recursive = m.recursive_calls }
    end
  end
  out["(toplevel)"] = { excl = trace:toplevel(), incl = (out["(toplevel)"] or {}).incl }
  return out
end

describe("Android traces against dmtracedump's profiles (CPU clock)", function()
  for _, case in ipairs {
    { "perflib-basic.trace", "perflib-basic" },
    { "perflib-basic-api10.trace", "perflib-basic-api10" },
    { "perflib-exception.trace", "perflib-exception" },
    { "perflib-mismatched.trace", "perflib-mismatched" },
    { "synthetic/orphan-v1.trace", "synthetic-orphan-v1" },
    { "synthetic/simple-v2.trace", "synthetic-simple-v2" },
  } do
    it("matches every method's times and calls in " .. case[1], function()
      local path = helper.fixture("trace/" .. case[1])
      if not path then return end
      local ref = reference_profile(helper.fixture("trace/reference/" .. case[2] .. ".dmtracedump-profile.txt"))
      local mine = profile(assert(sift.open(path)))
      for name, e in pairs(ref) do
        if name == "(toplevel)" then
          assert.are.equal(e.excl, mine[name].excl, "(toplevel)")
        else
          assert.truthy(mine[name], name)
          assert.are.same(e, mine[name], name)
        end
      end
      -- dmtracedump leaves out methods that took no time
      for name, e in pairs(mine) do
        if not ref[name] then assert.are.same({ 0, 0 }, { e.excl, e.incl }, name) end
      end
    end)
  end

  it("counts recursion once for inclusive time, and the recursive calls apart", function()
    local path = helper.fixture("trace/synthetic/simple-v2.trace")
    if not path then return end
    local leaf = profile(assert(sift.open(path)))["C.leaf ()I"]
    -- 20-30 under B.work, 45-70 under A.run with 60-65 nested in it
    assert.are.same({ excl = 35, incl = 35, calls = 2, recursive = 1 }, leaf)
  end)
end)

describe("Android trace call trees", function()
  -- a thread's tree as "method@depth calls incl" lines in preorder
  local function tree(trace, root)
    local methods, out = trace:methods(), {}
    local function walk(n, depth)
      local node = trace.core:node(n)
      if node.method then
        local m = methods[node.method]
        out[#out + 1] = ("%s%s.%s %d %d"):format((" "):rep(depth), m.class, m.name, node.calls, node.cpu_incl)
      end
      local kids = trace.core:children(n)
      table.sort(kids)
      for _, k in ipairs(kids) do walk(k, node.method and depth + 1 or depth) end
    end
    walk(root, 0)
    return out
  end

  it("makes an exit with no entry the caller of what ran before (tracing began mid-call)", function()
    local path = helper.fixture("trace/synthetic/orphan-v1.trace")
    if not path then return end
    local trace = assert(sift.open(path))
    local info = trace:info()
    assert.are.same({ 2, 0 }, { info.orphan_exits, info.mismatched_exits })
    local main = trace:threads()[1]
    -- dmtracedump puts A.run, B.work and C.leaf side by side at the top;
    -- here A.run holds B.work, which holds C.leaf
    assert.are.same({ "A.run 1 30", " B.work 1 20", "  C.leaf 1 10", "D.next 1 50", " E.inner 1 15" },
      tree(trace, main.root))
  end)

  it("keeps each thread's stack apart when records interleave, and reads a wrapped 32-bit clock", function()
    local w = writer.new { threads = { { 1, "main" }, { 2, "worker" } } }
    local run, work = w:method("A", "run"), w:method("B", "work")
    local top = 0xFFFFFFFF
    w:enter(1, run, top - 99, 0)    -- main's CPU clock wraps inside A.run
    w:enter(2, run, 5, 5)
    w:enter(1, work, top - 9, 10)   -- B.work on main, A.run still open on worker
    w:exit(2, run, 25, 25)
    w:exit(1, work, 20, 40)         -- 30 µs across the wrap
    w:enter(2, run, 30, 30)         -- worker's second A.run is not recursive
    w:exit(1, run, 100, 100)
    w:exit(2, run, 40, 40)
    local trace = assert(sift.open(helper.tmpfile(w:bytes())))
    local main, worker = trace:threads()[1], trace:threads()[2]
    assert.are.same({ "A.run 1 200", " B.work 1 30" }, tree(trace, main.root))
    assert.are.same({ "A.run 2 30" }, tree(trace, worker.root))
    local p = profile(trace)
    assert.are.same({ excl = 200, incl = 230, calls = 3, recursive = 0 }, p["A.run ()V"])
  end)

  it("reads the streaming trace dmtracedump cannot (methods and threads inline, summary last)", function()
    local path = helper.fixture("trace/firefox-art-trace-streaming.trace")
    if not path then return end
    local trace = assert(sift.open(path))
    local info = trace:info()
    assert.are.same({ true, "dual", 39377, 61, 3963, 9 },
      { info.streaming, info.clock, info.records, info.threads, info.methods, info.unknown_methods })
    local top = trace:profile { clock = "wall" }[1]
    assert.is_true(top.exclusive > 0 and top.inclusive >= top.exclusive)
    assert.matches("\n", trace:fold { thread = "main" })
  end)

  it("has each thread's records as dmtracedump lists them (regular traces, 14-byte dual records)", function()
    for _, name in ipairs { "amp-legacy", "firefox-art-trace-regular" } do
      local path = helper.fixture("trace/" .. name .. ".trace")
      if not path then return end
      local gz = helper.fixture("trace/reference/" .. name .. ".dmtracedump-o.txt.gz")
      local p = io.popen("gzip -dc " .. gz)
      local counts = {}
      for line in p:lines() do
        local tid = line:match("^%s*(%d+) [ex][ni]t ")
        if tid then counts[tonumber(tid)] = (counts[tonumber(tid)] or 0) + 1 end
      end
      p:close()
      local mine = {}
      for _, th in ipairs(assert(sift.open(path)):threads()) do
        if th.records > 0 then mine[th.tid] = th.records end
      end
      assert.are.same(counts, mine, name)
    end
  end)
end)

describe("Android traces: bad input", function()
  it("rejects the header-only perflib file and the space-separated synthetic one clearly", function()
    local header = helper.fixture("trace/perflib-header.trace")
    if not header then return end
    local t, msg, code = sift.open(header)
    assert.is_nil(t)
    assert.are.equal("unsupported", code)
    assert.matches("version 25610", msg)
    t, msg, code = sift.open(helper.fixture("trace/synthetic/simple-v2-spaces-as-emitted.trace"))
    assert.is_nil(t)
    assert.matches("byte %d+: a thread line needs a tab", msg)
    assert.are.equal("bad_header", code)
  end)

  it("decodes a deep stack followed by as many exits with no entry (each exit costs O(1))", function()
    local w = dofile("spec/trace_writer.lua").new()
    local a, b = w:method("A", "a"), w:method("B", "b")
    for i = 1, 200000 do w:enter(1, a, i, i) end
    for i = 1, 200000 do w:exit(1, b, 200000 + i, 200000 + i) end
    local info = assert(require("sift.core").trace(w:bytes())):info()
    assert.are.same({ 200000, 200000, 400001 }, { info.orphan_exits, info.mismatched_exits, info.nodes })
  end)

  it("never crashes on a trace cut at any byte or with a lying data offset", function()
    local path = helper.fixture("trace/perflib-exception.trace")
    if not path then return end
    local core = require "sift.core"
    local bytes = read(path)
    for cut = 0, #bytes - 1 do
      local t, msg = core.trace(bytes:sub(1, cut))
      assert.is_true(t ~= nil or type(msg) == "string")
    end
    local data = bytes:find("SLOW", 1, true)
    for _, offset in ipairs { 0, 1, 17, 0xFFFF } do
      local lying = bytes:sub(1, data + 5) .. string.pack("<I2", offset) .. bytes:sub(data + 8)
      local t, msg = core.trace(lying)
      assert.is_true(t ~= nil or type(msg) == "string")
    end
  end)
end)

describe("loop-collapsed call listings", function()

  it("shows a loop once with its count, nested calls under it, and a two-call body as a group", function()
    local w = writer.new()
    local run, nxt, lex = w:method("App", "run"), w:method("Parser", "next"), w:method("Lexer", "read")
    local x, y = w:method("A", "x"), w:method("B", "y")
    local t = 0
    local function call(m, body)
      w:enter(1, m, t, t); t = t + 1
      if body then body() end
      w:exit(1, m, t, t); t = t + 1
    end
    call(run, function()
      for _ = 1, 250 do call(nxt, function() call(lex) end) end
      for _ = 1, 4 do call(x); call(y) end
    end)
    local trace = assert(sift.open(helper.tmpfile(w:bytes())))
    local lines, stats = trace:calls { thread = "main" }
    assert.are.same({ "App.run", "  Parser.next ×250", "    Lexer.read", "  ┌ ×4", "  │ A.x", "  │ B.y", "  └" },
      lines)
    assert.are.same({ 1 + 500 + 8, 7 }, { stats.calls, stats.lines })
    -- filters: Parser frames fold into their caller; a depth limit cuts below
    lines = trace:calls { thread = "main", exclude = { "^Parser%." } }
    assert.are.same({ "App.run", "  Lexer.read ×250", "  ┌ ×4", "  │ A.x", "  │ B.y", "  └" }, lines)
    lines = trace:calls { thread = "main", depth = 1 }
    assert.are.same({ "App.run" }, lines)
  end)
end)

describe("sift profile, fold, flame, diff, calls and export", function()
  local cjson = require "cjson"
  local run = helper.sift

  it("prints the profile JSON contract, largest exclusive time first", function()
    local path = helper.fixture("trace/synthetic/simple-v2.trace")
    if not path then return end
    local out, err, code = run { "profile", path, "--clock", "cpu", "--json" }
    assert.are.equal(0, code, err)
    local t = cjson.decode(out)
    assert.are.same({ "cpu", 4, 12, 4 }, { t.clock, t.threads, t.records, #t.methods })
    assert.are.same({ name = "C.leaf ()I", calls = 2, recursive_calls = 1, inclusive = 35, exclusive = 35 }, t.methods[3])
    for i = 2, #t.methods do assert.is_true(t.methods[i - 1].exclusive >= t.methods[i].exclusive) end
    out, err, code = run { "profile", helper.fixture("trace/perflib-basic-api10.trace"), "--clock", "wall" }
    assert.are.same({ 1, "sift: " .. helper.fixture("trace/perflib-basic-api10.trace")
      .. ": this trace has only the thread-cpu clock\n", "" }, { code, err, out })
  end)

  it("prints dmtracedump's exclusive table: the same times and self percentages, (toplevel) included", function()
    local path = helper.fixture("trace/perflib-basic.trace")
    if not path then return end
    local ref = helper.read(helper.fixture("trace/reference/perflib-basic.dmtracedump-profile.txt"))
    local want = {}
    for usecs, pct, name in ref:match("sorted by exclusive time%.\n\n[^\n]*\n(.-)\n\n")
        :gmatch("%s*(%d+)%s+([%d.]+)%s+[%d.]+%s+%[%d+%] ([^\n]+)") do
      want[#want + 1] = ("%s %s %s"):format(usecs, pct, (name:gsub("^(%S+)", function(c) return (c:gsub("/", ".")) end)))
    end
    local got = {}
    for usecs, pct, name in run({ "profile", path }):gmatch("\n%s+(%d+)%s+([%d.]+)%%%s+[%d,]+%s+[%d.]+%%%s+%S+%s%s([^\n]+)") do
      if tonumber(usecs) > 0 then got[#got + 1] = ("%s %s %s"):format(usecs, pct, name) end
    end
    assert.are.equal(6, #want)
    assert.are.same(want, got)
  end)

  it("folds stacks with the thread first, filters frames, and merges threads", function()
    local path = helper.fixture("trace/synthetic/simple-v2.trace")
    if not path then return end
    local out = run { "fold", path }
    assert.are.equal(table.concat({ "main;A.run 45", "main;A.run;C.leaf 20", "main;A.run;C.leaf;C.leaf 5",
      "main;A.run;B.work 20", "main;A.run;B.work;C.leaf 10", "foo;X.loop 45", "" }, "\n"), out)
    out = run { "fold", path, "--thread", "main", "--exclude", "^B%.", "--merge" }
    assert.are.equal("A.run 65\nA.run;C.leaf 30\nA.run;C.leaf;C.leaf 5\n", out)
    -- recursion once: C.leaf inside C.leaf adds its 5 µs to the outer one
    out = run { "fold", path, "--thread", "main", "--collapse-recursion" }
    assert.are.equal("main;A.run 45\nmain;A.run;B.work 20\nmain;A.run;B.work;C.leaf 10\nmain;A.run;C.leaf 25\n", out)
  end)

  it("writes a valid SVG whose frames add up, from a trace and from its folded stacks", function()
    local path = helper.fixture("trace/amp-legacy.trace")
    if not path then return end
    local svg, folded = helper.tmpfile(""), helper.tmpfile(run { "fold", path })
    local out, err, code = run { "flame", path, "-o", svg, "--title", "amp <legacy>", "--hash" }
    assert.are.equal(0, code, err)
    assert.matches("2,991,204 µs in all", out)
    assert.is_true(os.execute("xmllint --noout " .. svg))
    local text = helper.read(svg)
    assert.matches("amp &lt;legacy&gt;", text)
    local frames = select(2, text:gsub('<g class="f"', ""))
    run { "flame", folded, "-o", svg, "--hash" }
    assert.are.equal(frames, select(2, helper.read(svg):gsub('<g class="f"', "")))
    out, err, code = run { "diff", path, path, "-o", svg }
    assert.are.same({ 0, ("%s: %d bytes, 2,991,204 µs in all\n"):format(svg, #helper.read(svg)) }, { code, out }, err)
    assert.not_matches("rgb%(255,%d+,%d+%)\"", helper.read(svg):match("<g class.*"))  -- nothing grew
  end)

  it("draws a flame chart with each call at its time", function()
    local path = helper.fixture("trace/synthetic/simple-v2.trace")
    if not path then return end
    local svg = helper.tmpfile("")
    local _, err, code = run { "flame", path, "--flamechart", "--thread", "main", "-o", svg }
    assert.are.equal(0, code, err)
    local frames = {}
    for x, w, name in helper.read(svg):gmatch('data%-x="(%d+)" data%-w="(%d+)" data%-name="([^"]*)"') do
      frames[#frames + 1] = ("%s@%s+%s"):format(name, x, w)
    end
    assert.are.same({ "main@0+100", "A.run@0+100", "B.work@10+30", "C.leaf@20+10", "C.leaf@45+25", "C.leaf@60+5" },
      frames)
  end)

  it("exports balanced speedscope profiles and Chrome B/E pairs for the streaming trace", function()
    local path = helper.fixture("trace/firefox-art-trace-streaming.trace")
    if not path then return end
    local out, err, code = run { "export", path, "--clock", "wall" }
    assert.are.equal(0, code, err)
    local doc = cjson.decode(out)
    assert.are.equal(52, #doc.profiles)
    for _, p in ipairs(doc.profiles) do
      local depth, last = 0, -1
      for _, e in ipairs(p.events) do
        assert.is_true(e.at >= last)
        last, depth = e.at, depth + (e.type == "O" and 1 or -1)
        assert.is_true(depth >= 0)
      end
      assert.are.equal(0, depth)
    end
    doc = cjson.decode((run { "export", path, "--format", "chrome" }))
    local open = 0
    for _, e in ipairs(doc.traceEvents) do open = open + (e.ph == "B" and 1 or e.ph == "E" and -1 or 0) end
    assert.are.equal(0, open)
  end)
end)
