-- BMD: crunching as Badoo's cruncher does, reading Badoo's files into the
-- heap index, decrunching for other analysers, names recovered from jars
-- and dex files, and bad input.
local sift = require "sift"
local bmd = require "sift.heap.bmd"
local core = require "sift.core"
local helper = require "spec.helper"
local hwriter = dofile("spec/hprof_writer.lua")

local function tmp() local p = os.tmpname() os.remove(p) return p end

-- the counts, retained sizes and reachability of a heap, to compare two
local function summary(heap)
  local info, shallow = heap:info(), 0
  for _, r in ipairs(heap:histogram()) do shallow = shallow + r.shallow end
  heap:dominators()
  local top, retained = heap:top(5), {}
  for i, t in ipairs(top) do retained[i] = t.retained end
  local roots = 0
  for _, n in pairs(info.roots) do roots = roots + n end
  return { objects = info.objects, classes = info.classes, instances = info.instances,
    object_arrays = info.object_arrays, primitive_arrays = info.primitive_arrays, roots = roots,
    shallow = shallow, retained = retained, unreachable = heap:unreachable() }
end

describe("BMD crunching", function()
  it("writes exactly the bytes of Badoo's cruncher for both HPROF fixtures", function()
    for _, case in ipairs {
      { "bmd/jdk17-sample.id4.hprof", "bmd/jdk17-sample.id4.bmd" },
      { "hprof/hprof-slurp/hprof-32.bin", "bmd/hprof-32.bmd" },
    } do
      local input, theirs = helper.fixture(case[1]), helper.fixture(case[2])
      if not input or not theirs then return end
      local out = tmp()
      local counts = assert(bmd.crunch(input, out, { badoo = true }))
      assert.are.equal(helper.read(theirs), helper.read(out))
      assert.are.equal(#helper.read(theirs), counts.bytes_out)
      -- the same from the dump gzipped
      local gz = tmp() .. ".gz"
      assert(os.execute(("gzip -c %s > %s"):format(helper.quote(input), helper.quote(gz))))
      assert(bmd.crunch(gz, out, { badoo = true }))
      assert.are.equal(helper.read(theirs), helper.read(out))
      os.remove(gz)
      os.remove(out)
    end
  end)

  it("crunches 8-byte ids and Android 1.0.3 dumps, keeping prefixes and primitives on request", function()
    local w = hwriter.new { version = "1.0.3", id_size = 8 }
    local obj = w:class("java.lang.Object")
    local leak = w:class("com.example.Leaking", { super = obj, fields = { { "count", "int" }, { "next", "object" } } })
    local holder = w:class("com.example.Holder", { super = obj, statics = { { "leak", "object" } } })
    w:heap("A", "app")
    local b = w:instance(leak, { count = -5 })
    local a = w:instance(leak, { count = 7, next = b })
    w:set_static(holder, "leak", a)
    w:root("sticky_class", holder)
    local hprof, out = helper.tmpfile(w:bytes()), tmp()
    local function java_hash(text)
      local h = 0
      for i = 1, #text do h = (31 * h + text:byte(i)) & 0xFFFFFFFF end
      return h >= 0x80000000 and h - 0x100000000 or h
    end
    local function counts_of(heap, name)
      local seen = {}
      for o in assert(heap:class(name)):instances() do seen[#seen + 1] = o.count or "lost" end
      table.sort(seen, function(x, y) return tostring(x) < tostring(y) end)
      return seen
    end
    -- as Badoo's cruncher: the name hashed, the primitives dropped
    local counts = assert(bmd.crunch(hprof, out))
    assert.are.same({ 3, 2, 1, 1 }, { counts.classes, counts.instances, counts.roots, counts.dropped })
    local hashed = ("Hash$%d"):format(java_hash("com.example.Leaking"))
    local heap = assert(sift.open(out))
    assert.are.equal("bmd", heap:info().format)
    assert.are.same({ "lost", "lost" }, counts_of(heap, hashed))
    local first
    for o in heap:class(hashed):instances() do if o.next then first = o end end
    assert.are.equal(heap:class(hashed), first.next:class())
    assert.are.equal(3, #heap:path_to_root(first.next))
    heap:close()
    -- a kept prefix: the name stays text, and so its class keeps its primitives
    assert(bmd.crunch(hprof, out, { keep = { "com.example." } }))
    heap = assert(sift.open(out))
    assert.are.same({ -5, 7 }, counts_of(heap, "com.example.Leaking"))
    heap:close()
    -- every class keeps its primitives
    assert(bmd.crunch(hprof, out, { keep_primitives = true }))
    heap = assert(sift.open(out))
    assert.are.same({ -5, 7 }, counts_of(heap, hashed))
    heap:close()
    os.remove(out)
    os.remove(hprof)
  end)
end)

describe("BMD reading", function()
  it("counts the records of Badoo's files as their MANIFEST gives them", function()
    local path = helper.fixture("bmd/jdk17-sample.id4.bmd")
    if not path then return end
    local info = assert(bmd.info(path, { source = helper.fixture("bmd/jdk17-sample.id4.hprof") }))
    assert.are.same({ 44, 40189, 680, 8799, 1454, 2416, 22, 613 }, { info.strings, info.hashed_strings,
      info.classes, info.instances, info.object_arrays, info.primitive_arrays, info.legacy, info.roots })
    assert.are.same({ [0x04] = 14, [0x05] = 8 }, info.legacy_tags)
    assert.are.equal("JAVA PROFILE 1.0.2", info.header)
    assert.are.equal("26.8", ("%.1f"):format(100 * info.ratio))
    info = assert(bmd.info(helper.fixture("bmd/hprof-32.bmd")))
    assert.are.same({ 119, 1377, 361, 1293, 423, 849, 589, 862 }, { info.strings, info.hashed_strings,
      info.classes, info.instances, info.object_arrays, info.primitive_arrays, info.legacy, info.roots })
    assert.are.same({ [0x04] = 365, [0x05] = 216, [0x06] = 1, [0x0A] = 5, [0x0B] = 1, [0x0E] = 1 }, info.legacy_tags)
  end)

  it("opens every fixture BMD into the heap of the HPROF it came from", function()
    for _, case in ipairs {
      { "bmd/hprof-32.bmd", "hprof/hprof-slurp/hprof-32.bin", true },
      -- crunched from Badoo's decrunched file, whose names are hashes of
      -- their placeholders: no name a reference rule knows comes back
      { "bmd/hprof-32.rt.bmd", "hprof/hprof-slurp/hprof-32.bin", false },
      -- the narrowed JDK 17 dump kept its 8-byte instance sizes: counts only
      { "bmd/jdk17-sample.id4.bmd", "bmd/jdk17-sample.id4.hprof", false },
    } do
      local b, h = helper.fixture(case[1]), helper.fixture(case[2])
      if not b or not h then return end
      local mine, theirs = summary(assert(sift.open(b))), summary(assert(sift.open(h)))
      if not case[3] then
        for _, k in ipairs { "shallow", "retained", "unreachable" } do mine[k], theirs[k] = nil, nil end
      end
      assert.are.same(theirs, mine, case[1])
    end
  end)

  it("finds the same shortest paths from the roots as in the source HPROF", function()
    local b, h = helper.fixture("bmd/hprof-32.bmd"), helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not b or not h then return end
    local function lengths(heap)
      -- BMD keeps no root kinds: every root is "unknown", so no root is
      -- followed last here either
      local rules = {}
      for _, kind in ipairs { "unknown", "java_frame", "interned_string", "finalizing", "debugger",
          "reference_cleanup", "vm_internal", "unreachable" } do
        rules[#rules + 1] = { root = kind, rule = "normal" }
      end
      heap:reference_rules(rules)
      local out = {}
      for _, cls in ipairs { "java.lang.Thread", "java.lang.ThreadGroup", "java.lang.String" } do
        for o in heap:class(cls):instances() do
          local path = heap:path_to_root(o)
          out[#out + 1] = cls .. " " .. (path and #path or "unreachable")
        end
      end
      table.sort(out)
      return out
    end
    assert.are.same(lengths(assert(sift.open(h))), lengths(assert(sift.open(b))))
  end)

  it("round-trips HPROF -> BMD -> HPROF -> BMD: one string more, then the same bytes", function()
    local path = helper.fixture("bmd/hprof-32.bmd")
    if not path then return end
    local h2, b2, h3, b3 = tmp(), tmp(), tmp(), tmp()
    assert(bmd.decrunch(path, h2))
    assert(bmd.crunch(h2, b2))
    assert(bmd.decrunch(b2, h3))
    assert(bmd.crunch(h3, b3))
    assert.are.equal(helper.read(b2), helper.read(b3))
    local before, after = assert(bmd.info(path)), assert(bmd.info(b2))
    before.bytes, after.bytes = nil, nil
    assert.are.equal(before.hashed_strings + 1, after.hashed_strings)  -- "field_removed"
    after.hashed_strings = before.hashed_strings
    assert.are.same(before, after)
    for _, p in ipairs { h2, b2, h3, b3 } do os.remove(p) end
  end)
end)

-- a stored (uncompressed) zip of { name = bytes }
local function zip(entries)
  local locals, central, offset = {}, {}, 0
  for _, e in ipairs(entries) do
    local name, data = e[1], e[2]
    local head = string.pack("<I4I2I2I2I2I2I4I4I4I2I2", 0x04034b50, 10, 0, 0, 0, 0, 0, #data, #data, #name, 0)
    locals[#locals + 1] = head .. name .. data
    central[#central + 1] = string.pack("<I4I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4", 0x02014b50, 20, 10, 0, 0, 0, 0,
      0, #data, #data, #name, 0, 0, 0, 0, 0, offset) .. name
    offset = offset + #head + #name + #data
  end
  local cd = table.concat(central)
  return table.concat(locals) .. cd .. string.pack("<I4I2I2I2I2I4I4I2", 0x06054b50, 0, 0, #entries, #entries,
    #cd, offset, 0)
end

-- a class file whose constant pool holds these Utf8 strings
local function class_file(strings)
  local pool = {}
  for i, s in ipairs(strings) do pool[i] = string.pack(">Bs2", 1, s) end
  return string.pack(">I4I2I2I2", 0xCAFEBABE, 0, 61, #strings + 1) .. table.concat(pool)
end

-- a dex file whose string table holds these strings
local function dex_file(strings)
  local data, ids, at = {}, {}, 0x70 + 4 * #strings
  for i, s in ipairs(strings) do
    ids[i] = string.pack("<I4", at)
    data[i] = string.char(#s) .. s .. "\0"
    at = at + #data[i]
  end
  local header = "dex\n039\0" .. string.rep("\0", 0x38 - 8) .. string.pack("<I4I4", #strings, 0x70)
  return header .. string.rep("\0", 0x70 - #header) .. table.concat(ids) .. table.concat(data)
end

describe("BMD name recovery", function()
  it("recovers class and field names from a jar's class files and an apk's dex files", function()
    local path = helper.fixture("bmd/jdk17-sample.id4.bmd")
    if not path then return end
    local jar = helper.tmpfile(zip {
      { "BmdSample$Holder.class", class_file { "BmdSample$Holder", "ints", "objs", "next", "[I" } },
      { "BmdSample.class", class_file { "root", "GREETING" } },
    })
    local apk = helper.tmpfile(zip { { "classes2.dex", dex_file { "LBmdSample$Base;", "baseRef", "baseInt" } } })
    local out = tmp()
    -- all 11 names the two files hold are in the dump: BmdSample, its
    -- Holder and Base classes, root, GREETING, ints, objs, next, [I, baseRef, baseInt
    local stats = assert(bmd.decrunch(path, out, { strings = { jar, apk }, analysis_names = false }))
    assert.are.equal(11, stats.recovered)
    local heap = assert(sift.open(path, { strings = { jar, apk } }))
    local holder = assert(heap:class("BmdSample$Holder"))
    assert.are.equal("BmdSample$Base", holder.super.name)
    local names = {}
    for o in holder:instances() do
      assert.are.equal(holder, o.next and o.next:class() or holder)
      for name in require("sift.heap").Object.fields(o) do names[name] = true end
    end
    for _, n in ipairs { "ints", "objs", "next", "baseRef" } do assert.truthy(names[n], n) end
    assert.are.equal(holder, heap:class("BmdSample"):static("root"):class())
    heap:close()
    -- unknown files are refused with their name
    local bad = helper.tmpfile("not a jar")
    local ok, msg, code = bmd.decrunch(path, out, { strings = { bad } })
    assert.is_nil(ok)
    assert.are.equal("unknown_format", code)
    assert.matches(bad, msg, 1, true)
    for _, p in ipairs { jar, apk, out, bad } do os.remove(p) end
  end)

  it("gives VisualVM's heap library files it opens, with the source's counts", function()
    local jar = "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"
    local bmds = { helper.fixture("bmd/jdk17-sample.id4.bmd"), helper.fixture("bmd/hprof-32.bmd") }
    if not bmds[1] or not io.open(jar) or not os.execute("command -v javac >/dev/null") then
      pending("VisualVM (apt-get install visualvm) and javac are needed")
      return
    end
    local classes = os.tmpname() .. ".d"
    assert(os.execute(("javac -encoding UTF-8 -cp %s -d %s bench/java/VisualVMIndex.java"):format(jar, classes)))
    for i, expect in ipairs { "instances=12669 classes=680 roots=613", "instances=2565 classes=361 roots=862" } do
      local out = tmp() .. ".hprof"
      assert(bmd.decrunch(bmds[i], out))
      local p = io.popen(("java -cp %s:%s VisualVMIndex %s 2>&1"):format(jar, classes, out))
      local text = p:read("a")
      p:close()
      assert.matches(expect, text, 1, true)
      os.remove(out)
      os.execute("rm -rf " .. helper.quote(out .. ".hwcache"))
    end
    os.execute("rm -rf " .. helper.quote(classes))
  end)
end)

describe("BMD bad input", function()
  -- a small BMD to damage
  local function small()
    local w = hwriter.new { version = "1.0.2", id_size = 4 }
    local obj = w:class("java.lang.Object")
    local node = w:class("Node", { super = obj, fields = { { "next", "object" }, { "n", "int" } } })
    local b = w:instance(node, { n = 1 })
    w:root("unknown", w:instance(node, { next = b, n = -1 }))
    w:primitive_array("char", { "a", "b" })
    local h, out = helper.tmpfile(w:bytes()), tmp()
    assert(bmd.crunch(h, out))
    local bytes = helper.read(out)
    os.remove(h)
    os.remove(out)
    return bytes
  end

  it("cut at every byte: each cut reads to a record boundary or says where it broke", function()
    local bytes = small()
    local whole = assert(core.bmd_info(bytes))
    for n = 0, #bytes - 1 do
      local info, msg, code = core.bmd_info(bytes:sub(1, n))
      if info then  -- a cut between records is a shorter file
        assert.is_true(info.instances <= whole.instances)
      else
        assert.is_truthy(({ truncated = true, corrupt = true, unsupported = true })[code], code)
        assert.matches("byte %d+", msg)
      end
    end
  end)

  it("refuses, before writing a byte, a decrunch that would amplify 76 bytes into 1 GiB", function()
    -- eight long[2^24] placeholders: BMD keeps no contents, decrunching writes zeros
    local bytes = "\1\18JAVA PROFILE 1.0.2"
    for i = 1, 8 do bytes = bytes .. "\7" .. string.char(i) .. "\7\128\128\128\8" end
    assert.are.equal(76, #bytes)
    local input, output = helper.tmpfile(bytes), tmp()
    local out, err, code = helper.sift { "decrunch", input, output }
    assert.are.same({ 1, "" }, { code, out })
    assert.matches("decrunching would write up to 1073742432 bytes %(1073741824 of them zeros for primitive arrays "
      .. "BMD does not hold%), over the 268511456 allowed %(%-%-max%-output%): nothing written", err)
    assert.is_nil(io.open(output))
    assert.is_nil(io.open(output .. ".part"))
    local none, msg, why = bmd.decrunch(input, output, { max_output = 1 << 20 })
    assert.are.same({ nil, "too_big" }, { none, why })
    assert.matches("over the 1048576 allowed", msg)
    -- read as a heap it is no amplifier: the arrays stay lengths
    local heap <close> = assert(sift.open(input))
    assert.are.same({ 8, 8 << 27 }, { heap:histogram()[1].count, heap:histogram()[1].shallow })
    os.remove(input)
  end)

  it("rejects unknown tags, long varints, counts larger than the file and looping classes", function()
    local header = "\1\18JAVA PROFILE 1.0.2"
    local function check(body, code, text)
      local info, msg, got = core.bmd_info(header .. body)
      assert.is_nil(info, text)
      assert.are.equal(code, got)
      assert.matches(text, msg)
    end
    check("\9\1", "bad_tag", "unknown record tag at byte 20")
    check("\1" .. ("\128"):rep(10) .. "\1", "bad_varint", "varint at byte 21")
    check("\6\1\2\100", "truncated", "element count of 100 at byte 23 is more than the file holds")
    check("\5\127", "truncated", "root count of 127")
    -- class 1's superclass is 2, whose superclass is 1
    check("\3\1\2\1\0\0\0\0" .. "\3\2\1\1\0\0\0\0", "corrupt", "loops")
    check("\4\5\9", "corrupt", "instance at byte 20: its class is not defined before it")
    check("\1\1\255\255\255\255\15", "corrupt", "negative string length at byte 22")
    local ok, msg, code = core.bmd_info("\2\1x")
    assert.is_nil(ok)
    assert.are.same({ "unsupported", "bmd: version 2 is not BMD 1 (byte 0)" }, { code, msg })
  end)

  it("rejects HPROF input it cannot crunch with the offset", function()
    local w = hwriter.new { version = "1.0.2", id_size = 4 }
    w:class("java.lang.Object")
    local bytes = w:bytes()
    local out = tmp()
    local ok, msg, code = core.bmd_crunch(bytes:sub(1, #bytes - 3), out)
    assert.is_nil(ok)
    assert.are.equal("truncated", code)
    assert.matches("at byte %d+", msg)
    assert.is_nil(io.open(out), "nothing is left behind")
    assert.is_nil(io.open(out .. ".part"))
    ok, msg, code = core.bmd_crunch("PK\3\4 not a dump", out)
    assert.are.same({ nil, "unknown_format", "crunch: not an HPROF file (byte 0)" }, { ok, code, msg })
  end)
end)

describe("sift crunch, decrunch and info on BMD", function()
  it("crunches, tells the sizes and counts, and decrunches back", function()
    local input = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not input then return end
    local out, back = tmp(), tmp()
    local text, _, status = helper.sift { "crunch", input, out, "-q", "--badoo" }
    assert.are.equal(0, status)
    assert.matches("282,310 %-> 86,886 bytes %(30.8%%%)", text)
    assert.matches("strings +119 as text, 1,377 hashed", text)
    assert.matches("roots +862 %(their kinds lost, as Badoo's format does%)", text)
    text = helper.sift { "crunch", input, out, "-q", "--json" }  -- (by default one more string: the roots' kinds)
    local counts = require("cjson").decode(text)
    assert.are.same({ 1377, 365, 120, 862 }, { counts.hashed_strings, counts.legacy_tags["0x04"], counts.strings,
      counts.kinds })
    assert.is_true(counts.bytes_out > 86886 and counts.bytes_out < 86886 + 200)
    text, _, status = helper.sift { "info", out, "--source", input }
    assert.are.equal(0, status)
    assert.matches("ratio +30.8%%", text)
    assert.matches("hashed_names +1377", text)
    text, _, status = helper.sift { "decrunch", out, back, "-q" }
    assert.are.equal(0, status)
    assert.matches("names recovered +%d+ of 1,377", text)
    text, _, status = helper.sift { "histogram", out, "--top", "3", "-q" }
    assert.are.equal(0, status)
    assert.matches("char%[%]", text)
    local _, err
    _, err, status = helper.sift { "crunch", out, back }
    assert.are.equal(1, status)
    assert.matches("not an HPROF file", err)
    os.remove(out)
    os.remove(back)
  end)
end)

describe("sift crunch of an HPROF with no heap dump", function()
  -- the fixture cut just before its first HEAP_DUMP (or SEGMENT) record: a
  -- header, strings and classes, nothing to crunch
  local function before_heap(bytes)
    local pos = bytes:find("\0", 1, true) + 13  -- (1-based: past the header's text, id size and time)
    while pos + 8 <= #bytes do
      local tag, len = bytes:byte(pos), string.unpack(">I4", bytes, pos + 5)
      if tag == 0x0C or tag == 0x1C then return pos - 1 end
      pos = pos + 9 + len
    end
  end

  it("fails as sift histogram does, and writes no file", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not path then return end
    local bytes = helper.read(path)
    local cut = before_heap(bytes)
    assert.is_true(cut > 31)  -- (strings and classes before it)
    local input, output = helper.tmpfile(bytes:sub(1, cut)), tmp()
    local message = ("sift: %s: holds no heap dump (no HEAP_DUMP record): nothing to analyse\n"):format(input)
    local out, err, status = helper.sift { "crunch", input, output, "-q" }
    assert.are.same({ 1, "", message }, { status, out, err })
    assert.is_nil(io.open(output), "no BMD is written")
    assert.is_nil(io.open(output .. ".part"), "nor a part of one")
    out, err, status = helper.sift { "histogram", input, "-q" }
    assert.are.same({ 1, "", message }, { status, out, err })
    -- --json prints nothing either; the library says why, with a code
    out, err, status = helper.sift { "crunch", input, output, "-q", "--json" }
    assert.are.same({ 1, "", message }, { status, out, err })
    local none, msg, code = bmd.crunch(input, output)
    assert.are.same({ nil, input .. ": holds no heap dump (no HEAP_DUMP record): nothing to analyse", "empty" },
      { none, msg, code })
    -- a header alone, too; an existing output is left as it was
    local f = assert(io.open(output, "wb"))
    f:write("before")
    f:close()
    local header = helper.tmpfile(bytes:sub(1, 31))
    out, err, status = helper.sift { "crunch", header, output, "-q" }
    assert.are.same({ 1, "", ("sift: %s: holds no heap dump (no HEAP_DUMP record): nothing to analyse\n"):format(header) },
      { status, out, err })
    assert.are.equal("before", helper.read(output))
    os.remove(input)
    os.remove(header)
    os.remove(output)
  end)
end)

describe("GC root kinds through BMD", function()
  local function kinds_of(heap)
    local by = {}
    for _, r in ipairs(heap:roots()) do by[r.kind] = (by[r.kind] or 0) + 1 end
    return by
  end

  it("keeps them in one STRING record, Badoo's bytes otherwise, and through decrunching", function()
    local input, theirs = helper.fixture("bmd/jdk17-sample.id4.hprof"), helper.fixture("bmd/jdk17-sample.id4.bmd")
    if not input then return end
    local out, back = tmp(), tmp()
    local counts = assert(bmd.crunch(input, out))
    assert.are.same({ 613, 613 }, { counts.roots, counts.kinds })
    -- the file is Badoo's with one STRING record (id 0x7FFFFFFE) before the roots: any BMD reader takes it
    local ours, badoo = helper.read(out), helper.read(theirs)
    local at = assert(ours:find("\1\254\255\255\255\7", 1, true))
    local len, text_at = string.unpack("B", ours, at + 6), at + 7
    assert.are.equal("sift:root-kinds:1:", ours:sub(text_at, text_at + 17))
    assert.is_nil(ours:sub(text_at, text_at + len - 1):find("[^%w:*,%-]"))  -- printable, whatever the charset
    assert.are.equal(badoo, ours:sub(1, at - 1) .. ours:sub(text_at + len))
    -- read back: the kinds of the HPROF, also after decrunching to HPROF
    local original = kinds_of(assert(sift.open(input)))
    assert.are.same({ java_frame = 15, jni_global = 38, sticky_class = 553, thread_object = 7 }, original)
    assert.are.same(original, kinds_of(assert(sift.open(out))))
    assert(bmd.decrunch(out, back))
    assert.are.same(original, kinds_of(assert(sift.open(back))))
    os.remove(out)
    os.remove(back)
  end)

  it("infers them on a BMD from Badoo's cruncher, and says so", function()
    local theirs = helper.fixture("bmd/jdk17-sample.id4.bmd")
    if not theirs then return end
    local heap = assert(sift.open(theirs))
    local info = heap:info()
    assert.is_true(info.roots_inferred)
    -- class objects are sticky classes, Threads thread objects, the rest unknown
    assert.are.same({ sticky_class = 554, thread_object = 15, unknown = 44 }, info.roots)
    local out = helper.sift { "path", "-q", theirs, "--class", "java.lang.Thread", "--limit", "1" }
    assert.matches("│ GC Root: Thread object %(inferred%)\n", out)
    local json = require("cjson").decode((helper.sift { "path", "-q", "--json", theirs, "--class", "java.lang.Thread",
      "--limit", "1" }))
    assert.are.same({ "thread_object", true }, { json[1].root, json[1].root_inferred })
  end)
end)
