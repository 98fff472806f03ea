-- Bad input never crashes, hangs or over-allocates: real dumps cut at
-- hundreds of points and with random bytes flipped either open (with a
-- warning when something was lost) or fail with one clear line, and every
-- read of what did open stays inside the data.
local core = require "sift.core"
local helper = require "spec.helper"

-- read everything the index points at, through every raw accessor
local function exercise(h)
  local info = h:info()
  h:histogram()
  h:heaps()
  h:roots()
  for _, t in ipairs(h:threads()) do h:trace(t.trace) end
  for c = 1, h:nclasses() do
    local cls = h:class(c)
    h:class_name(c)
    h:group_size(c)
    for _, f in ipairs(cls.fields) do
      local num = h:group(c, 1)
      if num then h:field(num, f.offset, f.type) end
    end
  end
  for num = 1, h:count() do
    local _, kind, _, _, length, elem = h:object(num)
    if kind == "primitive_array" then
      h:bytes(num)
      h:element(num, 1)
      h:element(num, length)
      if elem == "char" or elem == "byte" then h:text(num, "utf16be") h:text(num, "latin1", 1, 3) end
    elseif kind == "object_array" then
      h:element(num, length)
    end
  end
  return info
end

local function check_result(h, msg, code, what)
  if h then
    exercise(h)
    h:close()
  else
    assert.is_string(msg, what)
    assert.is_string(code, what)
    assert.not_matches("\n", msg)
  end
end

describe("HPROF decoding of damaged files", function()
  for _, rel in ipairs { "hprof/hprof-slurp/hprof-32.bin", "hprof/android/ahat/test-dump-base.hprof",
                         "bmd/jdk17-sample.hprof", "hprof/synthetic-android/synthetic_android.hprof" } do
    it("opens " .. rel:match("[^/]+$") .. " cut at 150 points, warning where it was cut #sanitized", function()
      local path = helper.fixture(rel)
      if not path then return end
      local data = helper.read(path)
      local full = exercise(assert(core.hprof(data)))
      local boundary, r = { [31] = true }, core.reader(data, 31)   -- where top-level records start
      while r:remaining() > 0 do
        r:skip(5)
        r:skip(r:u4be())
        boundary[r:tell()] = true
      end
      local step = math.max(1, #data // 150)
      local opened = 0
      for cut = 0, #data - 1, step do
        local h, msg, code = core.hprof(data:sub(1, cut))
        if h then
          local info = h:info()
          assert.is_true(info.objects <= full.objects)
          if not boundary[cut] and cut > 31 then  -- cut inside a record: say where
            assert.is_truthy(info.truncated_at, "no truncation reported for a cut at " .. cut)
            assert.matches("truncated", table.concat(info.warnings, "\n"))
          end
          opened = opened + 1
        else
          assert.is_true(cut < 31, ("%d: %s"):format(cut, msg))  -- only a cut header is fatal
        end
        check_result(h, msg, code, "cut at " .. cut)
      end
      assert.is_true(opened > 100)
    end)
  end

  it("survives 400 random byte flips without a crash and with clear errors #sanitized", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-32.bin")
    if not path then return end
    local data = helper.read(path)
    math.randomseed(20261122)
    local failures = {}
    for _ = 1, 400 do
      local bytes = { data:byte(1, -1) }
      for _ = 1, math.random(1, 8) do
        local at = math.random(32, #bytes)
        bytes[at] = math.random(0, 255)
      end
      local damaged = {}
      for i = 1, #bytes, 4096 do damaged[#damaged + 1] = string.char(table.unpack(bytes, i, math.min(i + 4095, #bytes))) end
      local h, msg, code = core.hprof(table.concat(damaged))
      if not h then failures[code] = (failures[code] or 0) + 1 end
      check_result(h, msg, code, "flip")
    end
    for code in pairs(failures) do
      assert.truthy(({ bad_tag = 1, corrupt = 1, truncated = 1, bad_header = 1, unsupported = 1 })[code], code)
    end
  end)

  it("reports an unknown heap sub-record with its offset", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
    local body = string.char(0x42) .. ("\0"):rep(8)
    local data = header .. string.pack(">BI4I4", 0x1C, 0, #body) .. body
    local h, msg, code = core.hprof(data)
    assert.is_nil(h)
    assert.are.same({ "bad_tag", "unknown heap dump sub-record tag 0x42 at byte 40" }, { code, msg })
  end)

  it("reads Android's PRIMITIVE_ARRAY_NODATA (0xC3) as an array without data", function()
    local header = "JAVA PROFILE 1.0.3\0" .. string.pack(">I4I8", 4, 0)
    local body = string.pack(">BI4I4I4B", 0xC3, 0x500, 0, 7, 10)        -- int[7], no elements
      .. string.pack(">BI4I4I4B", 0x23, 0x600, 0, 2, 8) .. "hi"          -- byte[2] "hi"
    local h = assert(core.hprof(header .. string.pack(">BI4I4", 0x1C, 0, #body) .. body
      .. string.pack(">BI4I4", 0x2C, 0, 0)))
    local info = h:info()
    assert.are.same({ 2, 2, 0 }, { info.objects, info.primitive_arrays, #info.warnings })
    local _, kind, _, shallow, length, elem = h:object(h:find(0x500))
    assert.are.same({ "primitive_array", 28, 7, "int" }, { kind, shallow, length, elem })
    assert.is_nil(h:bytes(h:find(0x500)))
    assert.is_nil(h:element(h:find(0x500), 1))
    assert.are.equal("hi", h:bytes(h:find(0x600)))
  end)

  it("warns when a segmented dump has no HEAP_DUMP_END", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
    local body = string.pack(">BI4", 0x05, 0x100)
    local h = assert(core.hprof(header .. string.pack(">BI4I4", 0x1C, 0, #body) .. body))
    assert.matches("no HEAP_DUMP_END", table.concat(h:info().warnings, "\n"))
  end)

  it("skips unknown top-level records by their length and says so", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
    local data = header .. string.pack(">BI4I4", 0x77, 0, 3) .. "abc"
      .. string.pack(">BI4I4", 0x01, 0, 7) .. string.pack(">I4", 9) .. "xyz"
    local h = assert(core.hprof(data))
    local info = h:info()
    assert.are.same({ 1, 1 }, { info.unknown_records, info.strings })
    assert.are.equal("xyz", h:string(9))
    assert.matches("1 top%-level records with unknown tags were skipped", table.concat(info.warnings, "\n"))
  end)

  it("counts instances whose class is missing and ids that repeat, and keeps going", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
    local inst = string.pack(">BI4I4I4I4", 0x21, 0x10, 0, 0x99, 4) .. "abcd"   -- class 0x99 is absent
    local again = string.pack(">BI4I4I4I4", 0x21, 0x10, 0, 0x99, 0)
    local roots = string.pack(">BI4BI4", 0x05, 0x12345, 0x05, 0x12345)        -- sticky roots at absent ids
    local body = inst .. again .. roots
    local h = assert(core.hprof(header .. string.pack(">BI4I4", 0x0C, 0, #body) .. body))
    local info = h:info()
    assert.are.same({ 1, 1, 1, 2 }, { info.objects, info.missing_classes, info.duplicates, info.roots.sticky_class })
    local _, kind, cls, shallow = h:object(1)
    assert.are.same({ "instance", nil, 4 }, { kind, cls, shallow })
    assert.are.equal(0x99, h:class_id_of(1))
  end)

  it("keeps ids too far apart for 32-bit keys whole, in id order, each with its record", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 8, 0)
    local function array(id, n) return string.pack(">BI8I4I4B", 0x23, id, 0, n, 0x08) .. ("\0"):rep(n) end
    local far, near = 0x7000000000000018, 0x10
    local body = array(far, 3) .. array(near, 5) .. array(far, 9)   -- far again: the first is kept
    local h = assert(core.hprof(header .. string.pack(">BI4I4", 0x0C, 0, #body) .. body))
    local info = h:info()
    assert.are.same({ 2, 1, 12 }, { info.objects, info.duplicates, info.object_bytes })
    assert.are.same({ 1, 2 }, { h:find(near), h:find(far) })
    assert.are.same({ 5, 3 }, { (select(5, h:object(1))), (select(5, h:object(2))) })
    assert.is_nil(h:find(0x20))
  end)

  it("keeps 32-bit keys and offsets, 8 bytes an object, for aligned ids in a small file", function()
    local header = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 8, 0)
    local function array(id, n) return string.pack(">BI8I4I4B", 0x23, id, 0, n, 0x08) .. ("\0"):rep(n) end
    local body = array(0x7f0000000040, 3) .. array(0x7f0000000010, 5) .. array(0x7f0000000040, 9)
    local h = assert(core.hprof(header .. string.pack(">BI4I4", 0x0C, 0, #body) .. body))
    local info = h:info()
    assert.are.same({ 2, 1, 8 }, { info.objects, info.duplicates, info.object_bytes })
    assert.are.same({ 1, 2 }, { h:find(0x7f0000000010), h:find(0x7f0000000040) })
    assert.are.same({ 5, 3 }, { (select(5, h:object(1))), (select(5, h:object(2))) })
  end)
end)
