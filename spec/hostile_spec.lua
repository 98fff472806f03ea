-- Cut and hostile input through the command line: a truncation sweep over
-- one file of every format (a cut every 5% of the file and at every byte of
-- the first 64), and the shapes that once ran away — a 200,000-deep stack,
-- 65,535 threads, a 2 MB amount — with time and memory bounded from
-- outside the process (generous limits that only a quadratic or unbounded
-- path would break).
local helper = require "spec.helper"
local cli = require "sift.cli"

-- run the CLI in this process: status, stdout, stderr
local function run(args)
  local out, err = {}, {}
  local function sink(t) return { write = function(_, ...)
    for _, s in ipairs { ... } do t[#t + 1] = tostring(s) end
    return true
  end } end
  local status = cli.main(args, { out = sink(out), err = sink(err) })
  return status, table.concat(out), table.concat(err)
end

-- under AddressSanitizer memory limits cannot be set from outside
local asan = (os.getenv("LD_PRELOAD") or ""):match("asan") ~= nil

-- run bin/sift in a shell with a limit of CPU seconds (a busy machine
-- does not make a process use more of them; ten times as many seconds
-- of the clock catch a process that waits forever) and, where it can be
-- set, an address-space limit (KB): exit status (152: over its CPU
-- seconds, 124: over the clock's), bytes of stdout, stderr
local function bounded(args, seconds, kb)
  local words = {}
  for i, a in ipairs(args) do words[i] = helper.quote(a) end
  local limit = ("ulimit -t %d; "):format(seconds) .. (asan and "" or ("ulimit -v %d; "):format(kb))
  local outfile, errfile = os.tmpname(), os.tmpname()
  local p = io.popen(("sh -c %s; echo $?"):format(helper.quote(("%stimeout %d lua5.4 bin/sift %s >%s 2>%s"):format(
    limit, 10 * seconds, table.concat(words, " "), outfile, errfile))))
  local status = tonumber(p:read("a"))
  p:close()
  local f = assert(io.open(outfile, "rb"))
  local bytes = f:seek("end")
  f:close()
  local err = helper.read(errfile)
  os.remove(outfile)
  os.remove(errfile)
  return status, bytes, err
end

describe("a truncation sweep through the command line #sanitized", function()
  local families = {
    { rel = "hprof/generated-jdk17/leaky_jdk17_live.hprof", args = { "histogram" }, detects = true },
    { rel = "trace/perflib-basic.trace", args = { "profile" }, detects = true },
    { rel = "trace/firefox-art-trace-streaming.trace", args = { "profile" }, detects = true },
    { rel = "ofx/ofxparse/checking.ofx", args = { "ofx" }, detects = true },
    { rel = "ofx/ofxparse/checking.ofx", args = { "ofx", "--strict" }, detects = true },
    -- BMD has no end marker: a cut between records is a shorter file
    { rel = "bmd/hprof-32.bmd", args = { "info" }, detects = false },
  }
  for _, fam in ipairs(families) do
    it(("cuts %s for sift %s"):format(fam.rel, table.concat(fam.args, " ")), function()
      local path = helper.fixture(fam.rel)
      if not path then return end
      local bytes = helper.read(path)
      local cuts = {}
      for n = 0, 64 do cuts[#cuts + 1] = n end
      for pct = 5, 95, 5 do cuts[#cuts + 1] = #bytes * pct // 100 end
      local file = os.tmpname()
      for _, n in ipairs(cuts) do
        local f = assert(io.open(file, "wb"))
        f:write(bytes:sub(1, n))
        f:close()
        local args = { fam.args[1], file, "-q", table.unpack(fam.args, 2) }
        local status, _, err = run(args)
        local what = ("%s cut at %d of %d: %s"):format(fam.rel, n, #bytes, err)
        assert.is_nil(err:match("internal error"), what)
        assert.truthy(status == 0 or status == 1, what)
        if status == 1 then  -- the message says where, or why there is nothing
          assert.truthy(err:match("byte %d+") or err:match("line %d+") or err:match("empty file")
            or err:match("no <OFX> element") or err:match("too short") or err:match("no heap dump"), what)
        elseif fam.detects then  -- a cut file is never a quiet success
          assert.truthy(err:match("warning"), what)
        end
      end
      os.remove(file)
    end)
  end
end)

describe("sift info on cut files #sanitized", function()
  -- a cut every 5% (plain, --json and --header) and at every byte of the
  -- first 64 (plain: the header's bytes, read alike in each mode): never
  -- "nil", never an internal error; a cut OFX is damaged (exit 1) up to
  -- the end of its </OFX>, with the byte where it ends
  local families = {
    "ofx/ofxparse/checking.ofx",                -- v1 SGML header
    "ofx/ofxtools/stmtrs.ofx",                  -- v2 XML header
    "ofx/libofx/ofx-2.1.1-sect-13.12.ofx",      -- no header
    "trace/perflib-basic.trace",
    "trace/firefox-art-trace-streaming.trace",
    "bmd/hprof-32.bmd",
    "hprof/hprof-slurp/hprof-32.bin",
  }
  for _, rel in ipairs(families) do
    it("cuts " .. rel, function()
      local path = helper.fixture(rel)
      if not path then return end
      local bytes = helper.read(path)
      local ofx = rel:match("^ofx/") ~= nil
      local body_end  -- just past the last </OFX>
      for at in bytes:gmatch("</OFX>()") do body_end = at - 1 end
      local cuts = {}
      for n = 0, 64 do cuts[#cuts + 1] = n end
      for pct = 5, 95, 5 do cuts[#cuts + 1] = #bytes * pct // 100 end
      if ofx then
        for _, n in ipairs { body_end - 1, body_end, #bytes - 1 } do cuts[#cuts + 1] = n end
      end
      local file = os.tmpname()
      for _, n in ipairs(cuts) do
        local f = assert(io.open(file, "wb"))
        f:write(bytes:sub(1, n))
        f:close()
        for _, extra in ipairs(n <= 64 and { {} } or { {}, { "--json" }, { "--header" } }) do
          local status, out, err = run { "info", "-q", file, table.unpack(extra) }
          local what = ("%s cut at %d of %d %s: %s"):format(rel, n, #bytes, table.concat(extra, " "), err)
          assert.is_nil(err:match("internal error"), what)
          assert.is_nil((out .. err):match("%f[%w]nil%f[%W]"), what .. out)
          assert.truthy(status == 0 or status == 1, what)
          if status == 1 then
            assert.truthy(err:match("byte %d+") or err:match("empty file") or err:match("too short")
              or err:match("not a recognised dump"), what)
          end
          if ofx and n >= body_end then
            assert.are.same({ 0, "" }, { status, err }, what)
          elseif ofx and n > 0 then
            assert.are.equal(1, status, what)
            if err:match("cut short") then  -- (else too short to recognise, or a magic cut)
              assert.matches("the file ends at byte " .. n .. "[,\n]", err, 1, false, what)
            end
          end
        end
      end
      os.remove(file)
    end)
  end
end)

describe("hostile shapes stay within time and memory", function()
  local writer = dofile("spec/trace_writer.lua")
  local deep, threads

  setup(function()
    local w = writer.new()
    local m = {}
    for i = 1, 50 do m[i] = w:method("com.example.Deep", "f" .. i, "()V") end
    local n = 200000
    for i = 1, n do w:enter(1, m[i % 50 + 1], i, i) end
    for i = n, 1, -1 do w:exit(1, m[i % 50 + 1], 2 * n - i + 1, 2 * n - i + 1) end
    deep = helper.tmpfile(w:bytes())
    local names = {}
    for i = 1, 65535 do names[i] = { i, "t" .. i } end
    w = writer.new { threads = names }
    local run_ = w:method("com.example.A", "run", "()V")
    for i = 1, 65535 do w:enter(i, run_, i, i) w:exit(i, run_, i + 1, i + 1) end
    threads = helper.tmpfile(w:bytes())
  end)
  teardown(function()
    os.remove(deep)
    os.remove(threads)
  end)

  it("folds a 200,000-deep stack into bounded output (1024 frames, then one)", function()
    local status, bytes, err = bounded({ "fold", deep }, 60, 2000000)
    assert.are.same({ 0, "" }, { status, err })
    assert.is_true(bytes > 1000000 and bytes < 64 * 1024 * 1024, bytes)
    local fold_status, out = run { "fold", deep, "-q", "--max-depth", "3" }
    assert.are.equal(0, fold_status)
    assert.matches("^main;[^\n]+ 2\n[^\n]+\n[^\n]+\n[^\n]+;com%.example%.Deep%.f4;%[… 199997 frames%] 399993\n$", out)
    for _, args in ipairs { { "flame", deep, "-o", os.tmpname() }, { "export", deep }, { "calls", deep } } do
      status, _, err = bounded(args, 60, 2000000)
      assert.are.equal(0, status, args[1] .. ": " .. err)
    end
  end)

  it("exports 65,535 threads in linear time", function()
    for _, format in ipairs { "speedscope", "chrome" } do
      local status, bytes, err = bounded({ "export", threads, "--format", format }, 30, 2000000)
      assert.are.same({ 0, "" }, { status, err }, format)
      assert.is_true(bytes > 65535 * 40, format)
    end
  end)

  it("says 'not enough memory' without a Lua location when the address space runs out", function()
    if asan then return pending("AddressSanitizer's shadow memory needs the address space") end
    local path, why = helper.jvm_dump("TrustSample", nil, "-Xmx128m", true)
    if not path then return pending(why) end
    -- (about 25 MB of address space index it; the dominator tree needs more than 35)
    local status, _, err = bounded({ "dominators", path, "--max-memory", "0", "--model", "jvm" }, 60, 32000)
    assert.are.equal(1, status, err)
    assert.matches("^sift: [^\n]*not enough memory[^\n]*\n$", err)
    assert.is_nil(err:find(".lua:", 1, true))
  end)

  it("quotes a 2 MB amount in a line of a few hundred bytes", function()
    local path = helper.fixture("ofx/ofxparse/checking.ofx")
    if not path then return end
    local text = helper.read(path):gsub("<TRNAMT>0.01", "<TRNAMT>" .. ("9"):rep(2000000) .. "x", 1)
    local file = helper.tmpfile(text)
    for _, args in ipairs { { "ofx", file }, { "ofx", "--strict", file } } do
      local _, _, err = run(args)
      assert.matches('TRNAMT "9+"… %(2000001 bytes%) is not an amount', err)
      assert.is_true(#err < 1000, #err)
    end
    os.remove(file)
  end)
end)
