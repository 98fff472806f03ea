-- Format detection, on every fixture family in ../shared/fixtures (values
-- from their MANIFEST.md files and record-stats.txt) and on synthetic edge
-- cases built here.
local sift = require "sift"
local helper = require "spec.helper"

local pack = string.pack

local function basename(path) return path:match("[^/]+$") end

-- every fixture file whose basename (or basename .. suffix) is `name`
local function find_fixture(dir, name)
  for _, rel in ipairs(helper.fixture_files(dir)) do
    local base = basename(rel)
    if base == name or base == name .. ".gz" or base == name .. ".bz2" then
      return helper.fixtures() .. "/" .. rel
    end
  end
end

describe("sift.detect on the shared fixtures", function()
  it("reads version and id size of every dump in hprof/record-stats.txt", function()
    local stats = helper.fixture("hprof/record-stats.txt")
    if not stats then return end
    local checked = 0
    for line in io.lines(stats) do
      local name, version, idsize = line:match("^(%S+): header='JAVA PROFILE (1%.0%.%d)' idSize=(%d)")
      if name then
        local path = assert(find_fixture("hprof", name), "no fixture for " .. name)
        local info = assert(sift.detect(path))
        assert.are.equal("hprof", info.format)
        assert.are.equal(version, info.version, name)
        assert.are.equal(tonumber(idsize), info.id_size, name)
        assert.is_nil(info.problem)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 10)
  end)

  it("agrees with every 'version, id size' the HPROF manifest states", function()
    local manifest = helper.fixture("hprof/MANIFEST.md")
    if not manifest then return end
    local checked = 0
    for line in io.lines(manifest) do
      local name = line:match("^| ([%w_.%-]+%.[%w.]+)")
      local version, idsize = line:match("(1%.0%.%d)`?,? id[ %-](%d)")
      if name and version then
        local path = assert(find_fixture("hprof", name), "no fixture for " .. name)
        local info = assert(sift.detect(path))
        assert.are.same({ "hprof", version, tonumber(idsize) },
          { info.format, info.version, info.id_size }, name)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 15)
  end)

  it("sees through gzip and bzip2 to the dump inside", function()
    local gz = helper.fixture("hprof/eclipse-mat/openjdk_jdk11_04_x64.hprof.gz")
    if not gz then return end
    local info = assert(sift.detect(gz))
    assert.are.same({ "hprof", "gzip", "1.0.2", 8 }, { info.format, info.compressed, info.version, info.id_size })
    assert.are.equal("2019-11-16T10:53:20Z", info.time)
    info = assert(sift.detect(helper.fixture("hprof/py-hprof/example-java.hprof.bz2")))
    assert.are.same({ "hprof", "bzip2", "1.0.2", 8 }, { info.format, info.compressed, info.version, info.id_size })
  end)

  it("reads every Android dump as HPROF 1.0.3 with 4-byte ids (android/MANIFEST.md)", function()
    if not helper.fixture("hprof/android") then return end
    local n = 0
    for _, rel in ipairs(helper.fixture_files("hprof/android")) do
      if rel:match("hprof$") then
        local info = assert(sift.detect(helper.fixture(rel)))
        assert.are.same({ "1.0.3", 4 }, { info.version, info.id_size }, rel)
        n = n + 1
      end
    end
    assert.are.equal(5, n)
  end)

  it("reads the BMD header and the HPROF version it came from (bmd/MANIFEST.md)", function()
    local expected = {
      ["hprof-32.bmd"] = "1.0.1", ["hprof-32.rt.bmd"] = "1.0.1", ["jdk17-sample.id4.bmd"] = "1.0.2",
    }
    if not helper.fixture("bmd") then return end
    for name, hprof in pairs(expected) do
      local info = assert(sift.detect(helper.fixture("bmd/" .. name)))
      assert.are.same({ "bmd", 1, hprof, "JAVA PROFILE " .. hprof },
        { info.format, info.version, info.hprof_version, info.hprof_header }, name)
    end
  end)

  it("reads trace headers and counts as trace/MANIFEST.md states them", function()
    -- variant, version, clock, threads, methods, records, record size
    local expected = {
      ["firefox-art-trace-regular.trace"] = { "regular", 3, "dual", 66, 2067, 13295, 14 },
      ["firefox-art-trace-streaming.trace"] = { "streaming", 3, "dual", 61, 3963, 39377, 14 },
      ["amp-legacy.trace"] = { "regular", 3, "dual", 14, 287, 16472, 14 },
      ["perflib-basic.trace"] = { "regular", 3, "dual", 11, 7, 9, 14 },
      ["perflib-basic-api10.trace"] = { "regular", 1, "thread-cpu", 8, 7, 10, 9 },
      ["perflib-exception.trace"] = { "regular", 3, "dual", 11, 14, 23, 14 },
      ["perflib-mismatched.trace"] = { "regular", 3, "dual", 11, 8, 9, 14 },
      ["synthetic/simple-v2.trace"] = { "regular", 2, "thread-cpu", 4, 4, 12, 10 },
      ["synthetic/orphan-v1.trace"] = { "regular", 1, "thread-cpu", 4, 5, 8, 9 },
    }
    if not helper.fixture("trace") then return end
    for name, e in pairs(expected) do
      local info = assert(sift.detect(helper.fixture("trace/" .. name)))
      assert.are.same(e, { info.variant, info.version, info.clock, info.threads,
        info.methods, info.records, info.record_size }, name)
      assert.is_nil(info.problem, name)
    end
  end)

  it("names the broken binary header of perflib-header.trace as dmtracedump does", function()
    local path = helper.fixture("trace/perflib-header.trace")
    if not path then return end
    local info = assert(sift.detect(path))
    assert.are.same({ "trace", "regular", 3, "unsupported" },
      { info.format, info.variant, info.version, info.problem_code })
    assert.matches("unsupported binary trace version 25610 at byte 561", info.problem)
  end)

  it("reads the OFX header and charset of every file as ofx/MANIFEST.md lists them", function()
    local manifest = helper.fixture("ofx/MANIFEST.md")
    if not manifest then return end
    local checked = 0
    for line in io.lines(manifest) do
      local cells = {}
      for cell in line:gmatch("|([^|]*)") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$") end
      local file, header, cs = cells[1], cells[4], cells[5]
      if file and file:match("%.%a+$") and header and header:match("^v%d") or header == "none" then
        local info, msg, code = sift.detect(helper.fixture("ofx/" .. file))
        local hv, version = header:match("^(v%d) (%d+)$")
        if hv then
          local charset, encoding = cs:match("^(.-)/(.-)$")
          assert.truthy(info, msg)
          assert.are.same({ "ofx", hv, tonumber(version), charset, encoding },
            { info.format, info.header, info.version,
              info.charset and tostring(info.charset) or "-", info.encoding or "-" }, file)
        elseif line:match("regression/fuzz input") then  -- anything but a crash or a header
          assert.truthy(code == "unknown_format" or info.header == "none", file)
        else
          assert.truthy(info, msg)
          assert.are.same({ "ofx", "none" }, { info.format, info.header }, file)
        end
        checked = checked + 1
      end
    end
    assert.are.equal(84, checked)
  end)

  it("recognises every dump in the fixture families and rejects everything else", function()
    if not helper.fixture("hprof") then return end
    local dump_ext = { hprof = "hprof", bin = "hprof", ["android-hprof"] = "hprof",
      bmd = "bmd", trace = "trace", ofx = "ofx", sgml = "ofx" }
    local counts = {}
    for _, family in ipairs { "hprof", "bmd", "trace", "ofx" } do
      for _, rel in ipairs(helper.fixture_files(family)) do
        local ext = rel:gsub("%.gz$", ""):gsub("%.bz2$", ""):match("%.([%w%-]+)$")
        local info, msg, code = sift.detect(helper.fixtures() .. "/" .. rel)
        if dump_ext[ext] and not rel:match("libofx/") then
          assert.truthy(info, msg)
          assert.are.equal(dump_ext[ext], info.format, rel)
          counts[info.format] = (counts[info.format] or 0) + 1
        elseif not rel:match("%.xml$") and not rel:match("libofx/") then
          -- manifests, licences, sources, expected outputs: none is a dump
          assert.is_nil(info, rel)
          assert.truthy(code == "unknown_format" or code == "empty", rel)
          assert.matches("^" .. helper.fixtures():gsub("%p", "%%%0") .. "/", msg)
        end
      end
    end
    assert.are.same({ hprof = 32, bmd = 3, trace = 11, ofx = 65 }, counts)
  end)
end)

-- a streaming trace: header, then records and special records
local function streaming(body, version)
  return pack("<c4I2I2I8I2", "SLOW", version or 0xF3, 32, 1000, 14) .. ("\0"):rep(14) .. body
end
local function sp_thread(tid, name) return pack("<I2BI2s2", 0, 2, tid, name) end
local function sp_method(line) return pack("<I2Bs2", 0, 1, line) end
local function record(thread, method) return pack("<I2I4I4I4", thread, method, 5, 7) end
local function summary(text) return pack("<I2Bs4", 0, 3, text) end
local SUMMARY = "*version\n3\nclock=dual\nvm=art\n*threads\n7\tmain\n8\tbg\n*methods\n*end\n"

describe("sift.detect on synthetic input", function()
  local hprof = "JAVA PROFILE 1.0.2\0" .. pack(">I4I8", 8, 1573901600779)

  it("reads an HPROF header from bytes", function()
    local info = assert(sift.detect(hprof))
    assert.are.same({ "hprof", "1.0.2", 8, 1573901600779, "2019-11-16T10:53:20Z", 31 },
      { info.format, info.version, info.id_size, info.timestamp_ms, info.time, info.size })
    assert.are.equal("HPROF 1.0.2 heap dump, 8-byte ids, dumped 2019-11-16 10:53:20 UTC", info.description)
  end)

  it("reports damaged HPROF headers as problems with offsets", function()
    local cases = {
      { hprof:sub(1, 21), "truncated", "truncated u4 at byte 19: needs 4 bytes, 2 left" },
      { "JAVA PROFILE 1.0.2\0" .. pack(">I4I8", 5, 0), "bad_header", "bad HPROF identifier size 5 at byte 19" },
      { "JAVA PROFILE 1.0.9\0" .. pack(">I4I8", 4, 0), "unsupported", "unknown HPROF version '1.0.9' at byte 13" },
      { "JAVA PROFILE 1.0.2" .. ("x"):rep(60), "truncated", "no NUL after 'JAVA PROFILE'" },
    }
    for _, c in ipairs(cases) do
      local info = assert(sift.detect(c[1], { bytes = true }))
      assert.are.equal("hprof", info.format)
      assert.are.equal(c[2], info.problem_code)
      assert.matches(c[3], info.problem, 1, true)
    end
  end)

  it("never invents a dump time from a zero timestamp", function()
    local info = assert(sift.detect("JAVA PROFILE 1.0.2\0" .. pack(">I4I8", 4, 0)))
    assert.are.equal(0, info.timestamp_ms)
    assert.is_nil(info.time)
    assert.not_matches("dumped", info.description)
  end)

  it("sees a gzip-compressed HPROF and reports corrupt gzip", function()
    local plain = helper.tmpfile(hprof .. ("\0"):rep(1000))
    local p = io.popen("gzip -c " .. helper.quote(plain))
    local gz = p:read("a")
    p:close()
    os.remove(plain)
    local info = assert(sift.detect(gz))
    assert.are.same({ "hprof", "gzip", 8 }, { info.format, info.compressed, info.id_size })
    local v, msg, code = sift.detect("\x1f\x8b\x08\0\0\0\0\0\0\3" .. ("\xff"):rep(20))
    assert.is_nil(v)
    assert.are.equal("corrupt", code)
    assert.matches("gzip data is corrupt", msg)
    v, msg, code = sift.detect(gz:sub(1, 12))
    assert.are.same({ nil, "truncated", "gzip stream ends before any data" }, { v, code, msg })
  end)

  it("reads a BMD header and refuses other versions", function()
    local info = assert(sift.detect("\1\18JAVA PROFILE 1.0.3\8\14"))
    assert.are.same({ "bmd", 1, "1.0.3" }, { info.format, info.version, info.hprof_version })
    info = assert(sift.detect("\2\18JAVA PROFILE 1.0.3\8\14"))
    assert.are.equal("unsupported", info.problem_code)
    info = assert(sift.detect("\1\30JAVA PROFILE 1.0.3", { bytes = true }))
    assert.are.equal("truncated", info.problem_code)
  end)

  it("walks a streaming trace: inline threads and methods, summary facts", function()
    local body = sp_thread(7, "main") .. sp_method("0x10\tA\tb\t()V\tA.java")
      .. record(7, 0x10) .. record(7, 0x11) .. sp_method("0x14\tA\tc\t()V\tA.java")
      .. summary(SUMMARY)
    local info = assert(sift.detect(streaming(body)))
    assert.are.same({ "trace", "streaming", 3, "dual", "art", 2, 2, 2, 32, 14 },
      { info.format, info.variant, info.version, info.clock, info.vm, info.threads,
        info.methods, info.records, info.data_offset, info.record_size })
    assert.is_nil(info.problem)
  end)

  it("says where a streaming trace is cut short or malformed", function()
    local cut = streaming(sp_thread(7, "main") .. record(7, 0x10)):sub(1, -4)
    local info = assert(sift.detect(cut))
    assert.are.equal("truncated", info.problem_code)
    assert.matches("streaming trace: truncated trace record at byte 43: needs 14 bytes, 11 left", info.problem, 1, true)

    info = assert(sift.detect(streaming(record(7, 0x10))))
    assert.matches("no summary record", info.problem)

    info = assert(sift.detect(streaming(pack("<I2B", 0, 9))))
    assert.are.equal("bad_header", info.problem_code)
    assert.matches("unknown streaming trace opcode 9 at byte 34", info.problem)

    info = assert(sift.detect(streaming("", 0xF4)))
    assert.are.equal("unsupported", info.problem_code)
    assert.matches("version 4 %(0xF4%).*LEB128", info.problem)
  end)

  it("reports progress through a whole-file pass and can be cancelled", function()
    local parts = { sp_thread(7, "main"), sp_method("0x10\tA\tb\t()V\tA.java") }
    for _ = 1, 5000 do parts[#parts + 1] = record(7, 0x10) end
    parts[#parts + 1] = summary(SUMMARY)
    local bytes = streaming(table.concat(parts))
    local seen, last = 0, -1
    local info = assert(sift.detect(bytes, { progress = function(done, total)
      assert.are.equal(#bytes, total)
      assert.is_true(done > last)
      last, seen = done, seen + 1
    end }))
    assert.are.equal(5000, info.records)
    assert.are.equal(#bytes, last)
    assert.is_true(seen >= 50 and seen <= 102)

    local v, msg, code = sift.detect(bytes, { progress = function(done) return done < 1000 end })
    assert.are.same({ nil, "cancelled", "cancelled" }, { v, msg, code })
  end)

  it("reads a regular trace and counts whole records only", function()
    local text = "*version\n2\nclock=wall\n*threads\n1\tmain\n*methods\n0x10\tA\tb\t()V\tA.java\n*end\n"
    local bin = pack("<c4I2I2I8", "SLOW", 2, 16, 99) .. pack("<I2I4I4", 1, 0x10, 3):rep(2)
    local info = assert(sift.detect(text .. bin))
    assert.are.same({ "regular", 2, "wall", 1, 1, 2, 10, #text + 16 },
      { info.variant, info.version, info.clock, info.threads, info.methods,
        info.records, info.record_size, info.data_offset })
    info = assert(sift.detect(text .. bin .. "abc"))
    assert.are.equal("truncated", info.problem_code)
    info = assert(sift.detect((text:gsub("%*end\n", ""))))
    assert.matches("no '%*end' line", info.problem)
    info = assert(sift.detect(text .. "SLOX"))
    assert.matches("no 'SLOW' binary trace header at byte " .. #text, info.problem)
  end)

  it("reads OFX headers written loosely", function()
    local info = assert(sift.detect("OFXHEADER: 100\r\r\nDATA:OFXSGML\nVERSION:103\nCHARSET: 1252\n\n<OFX>"))
    assert.are.same({ "v1", 103, 1252 }, { info.header, info.version, info.charset })
    info = assert(sift.detect("OFXHEADER:100DATA:OFXSGMLVERSION:102SECURITY:NONEENCODING:USASCII<OFX>",
      { bytes = true }))
    assert.are.same({ 102, "NONE", "USASCII" }, { info.version, info.security, info.encoding })
    info = assert(sift.detect('<?xml version="1.0" encoding="UTF-8"?>\n<!-- bank -->\n'
      .. '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE"?>\n<OFX></OFX>'))
    assert.are.same({ "xml", "v2", 220, "UTF-8" }, { info.variant, info.header, info.version, info.encoding })
    info = assert(sift.detect('\xEF\xBB\xBF  <ofx>\n<SIGNONMSGSRSV1>'))
    assert.are.same({ "headerless", "none" }, { info.variant, info.header })
    info = assert(sift.detect('<?xml version="1.0"?>\n<OFX>'))
    assert.are.equal("headerless", info.variant)
  end)

  it("says what unrecognised input is, in one line", function()
    local cases = {
      { "", "empty", "empty file: 0 bytes" },
      { "abc", "unknown_format", "too short to recognise: 3 bytes" },
      { "PK\3\4" .. ("\0"):rep(30), "unknown_format", "a zip archive (jar, apk or zip)" },
      { "this is totally not an ofx file\n", "unknown_format", 'starts with "this is totally not an ofx file"' },
      { "\0\1\2\3\4\5\6\7\8", "unknown_format", "starts with bytes 00 01 02 03 04 05 06 07" },
      { "<STATUS><CODE>0</CODE></STATUS>", "unknown_format", 'starts with "<STATUS>' },
    }
    for _, c in ipairs(cases) do
      local v, msg, code = sift.detect(c[1], { bytes = true })
      assert.is_nil(v)
      assert.are.equal(c[2], code)
      assert.matches(c[3], msg, 1, true)
      assert.not_matches("\n", msg)
    end
  end)

  it("tells paths from bytes, and raises on misuse", function()
    local v, msg, code = sift.detect("/nonexistent/app.hprof")
    assert.are.same({ nil, "/nonexistent/app.hprof: No such file or directory", "io" }, { v, msg, code })
    assert.are.equal("hprof", sift.detect(hprof).format)  -- has a NUL: bytes
    assert.are.equal("io", select(3, sift.detect("JAVA PROFILE", { bytes = false })))
    assert.has_error(function() sift.detect(42) end)
    assert.has_error(function() sift.detect("x", { progress = 1 }) end)
  end)
end)

describe("sift.open", function()
  it("opens an OFX statement as sift.ofx.read does, and refuses a compressed one", function()
    local text = "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\n\r\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>"
      .. "<CURDEF>EUR<BANKACCTFROM><ACCTID>42</BANKACCTFROM><BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT"
      .. "<DTPOSTED>20240105<TRNAMT>-12.50<FITID>f1<NAME>Bakery</STMTTRN></BANKTRANLIST>"
      .. "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\r\n"
    local path = helper.tmpfile(text)
    local doc = assert(sift.open(path))
    assert.are.same(require("sift.ofx").view(assert(require("sift.ofx").read(path))), require("sift.ofx").view(doc))
    local t = doc.statements[1].transactions[1]
    assert.are.same({ "42", "-12.50", "Bakery" }, { doc.statements[1].account.id, tostring(t.amount), t.name })
    os.execute("gzip -f " .. path)
    local v, msg, code = sift.open(path .. ".gz")
    os.remove(path .. ".gz")
    assert.are.same({ nil, path .. ".gz: a gzip-compressed OFX statement: decompress it first", "unsupported" },
      { v, msg, code })
  end)

  it("refuses a recognised file whose header is damaged", function()
    local path = helper.tmpfile("JAVA PROFILE 1.0.2\0" .. pack(">I4I8", 5, 0))
    local v, msg, code = sift.open(path)
    os.remove(path)
    assert.are.same({ nil, path .. ": bad HPROF identifier size 5 at byte 19 (must be 4 or 8)", "bad_header" },
      { v, msg, code })
  end)

  it("passes detection failures through", function()
    local path = helper.tmpfile("abc")
    local v, msg, code = sift.open(path)
    os.remove(path)
    assert.are.same({ nil, path .. ": too short to recognise: 3 bytes", "unknown_format" }, { v, msg, code })
    assert.has_error(function() sift.open() end)
  end)
end)
