-- The bounds-checked reader: every read at every boundary (exact fit, one
-- byte short, empty input), over strings and mapped files.
local core = require "sift.core"
local helper = require "spec.helper"

-- name, extra arguments, encoded bytes, decoded value
local cases = {
  { "u1", {}, "\xfe", 0xfe },
  { "u2be", {}, "\x12\x34", 0x1234 },
  { "u2le", {}, "\x34\x12", 0x1234 },
  { "u4be", {}, "\xde\xad\xbe\xef", 0xdeadbeef },
  { "u4le", {}, "\xef\xbe\xad\xde", 0xdeadbeef },
  { "u8be", {}, "\x01\x02\x03\x04\x05\x06\x07\x08", 0x0102030405060708 },
  { "u8le", {}, "\x08\x07\x06\x05\x04\x03\x02\x01", 0x0102030405060708 },
  { "varint", {}, "\xac\x02", 300 },                       -- protobuf's own example
  { "varint", {}, "\xc0\xbb\xf8\xff\xff\xff\xff\xff\xff\x01", -123456 },  -- int32 as 10 bytes
  { "uleb128", {}, "\xe5\x8e\x26", 624485 },              -- DWARF's example
  { "uleb128", {}, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", -1 },  -- 2^64-1 wraps
  { "sleb128", {}, "\xc0\xbb\x78", -123456 },
  { "sleb128", {}, "\x7f", -1 },
  { "sleb128", {}, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x7f", math.mininteger },
  { "cstring", {}, "JAVA PROFILE 1.0.2\0", "JAVA PROFILE 1.0.2" },
  { "bytes", { 3 }, "abc", "abc" },
  { "lstring", { "u1" }, "\3abc", "abc" },
  { "lstring", { "u2be" }, "\0\3abc", "abc" },
  { "lstring", { "u2le" }, "\3\0abc", "abc" },
  { "lstring", { "u4be" }, "\0\0\0\3abc", "abc" },
  { "lstring", { "u4le" }, "\3\0\0\0abc", "abc" },
  { "lstring", { "varint" }, "\3abc", "abc" },
}

local function read(r, case)
  return r[case[1]](r, table.unpack(case[2]))
end

describe("sift.core.reader", function()
  for _, case in ipairs(cases) do
    local name = case[1] .. "(" .. table.concat(case[2], ",") .. ")"

    it(name .. " reads an exact fit and stops at the end", function()
      local r = core.reader(case[3])
      assert.are.equal(case[4], read(r, case))
      assert.are.equal(#case[3], r:tell())
      assert.are.equal(0, r:remaining())
    end)

    it(name .. " one byte short fails with the offset and does not move", function()
      local bytes = "\0\0" .. case[3]:sub(1, -2)
      local r = core.reader(bytes, 2)
      local v, msg, code = read(r, case)
      assert.is_nil(v)
      assert.are.equal("truncated", code)
      -- a length-prefixed string is reported where its bytes start
      local at = case[1] == "lstring" and 2 + #case[3] - 3 or 2
      assert.matches("at byte " .. at .. ":", msg)
      assert.are.equal(2, r:tell())
    end)

    it(name .. " on empty input fails", function()
      local v, msg, code = read(core.reader(""), case)
      assert.is_nil(v)
      assert.are.equal("truncated", code)
      assert.matches("at byte 0", msg)
    end)
  end

  it("words its failures with what was needed and what was left", function()
    local r = core.reader("\1\2\3\4\5\6")
    r:seek(4)
    assert.are.same({ nil, "truncated u4 at byte 4: needs 4 bytes, 2 left", "truncated" },
      { r:u4be() })
    assert.are.same({ nil, "unterminated string at byte 4: no NUL in the 2 bytes left", "truncated" },
      { r:cstring() })
    assert.are.same({ nil, "truncated varint at byte 6: input ends after 0 bytes", "truncated" },
      { r:seek(6):varint() })
  end)

  it("rejects base-128 integers longer than 10 bytes", function()
    local eleven = ("\x80"):rep(10) .. "\1"
    for _, fn in ipairs { "varint", "uleb128", "sleb128" } do
      local r = core.reader(eleven)
      local v, msg, code = r[fn](r)
      assert.is_nil(v)
      assert.are.equal("bad_varint", code)
      assert.matches("^bad " .. fn .. " at byte 0", msg)
      assert.are.equal(0, r:tell())
    end
  end)

  it("treats 64-bit overflow as an error for LEB128 but drops it for protobuf varints", function()
    local over = ("\xff"):rep(9) .. "\x7f"  -- 70 bits of ones
    assert.are.equal(-1, core.reader(over):varint())
    assert.are.equal("bad_varint", select(3, core.reader(over):uleb128()))
    assert.are.equal(-1, core.reader(over):sleb128())  -- all sign bits: fine
    assert.are.equal("bad_varint", select(3, core.reader(("\x80"):rep(9) .. "\x02"):sleb128()))
  end)

  it("reads a length prefix and its bytes together or not at all", function()
    local r = core.reader("\0\5abc")
    local v, msg, code = r:lstring("u2be")
    assert.is_nil(v)
    assert.are.equal("truncated", code)
    assert.are.equal("truncated string at byte 2: needs 5 bytes, 3 left", msg)
    assert.are.equal(0, r:tell())
  end)

  it("checks a huge count against what is left, never allocating from it", function()
    local r = core.reader("\xff\xff\xff\xff\xff\xff\xff\xff\x7f")  -- 2^63-1 bytes follow?
    local v, _, code = r:lstring("varint")
    assert.is_nil(v)
    assert.are.equal("truncated", code)
  end)

  it("raises on misuse", function()
    local r = core.reader("abc")
    assert.has_error(function() r:bytes(-1) end)
    assert.has_error(function() r:seek(4) end)
    assert.has_error(function() r:seek(-1) end)
    assert.has_error(function() r:lstring("u3") end)
    assert.has_error(function() core.reader("abc", 4) end)
    assert.has_error(function() core.reader(42) end)
    assert.has_error(function() r.u1(io.stdout) end)
  end)

  it("skips, seeks and chains", function()
    local r = core.reader("\0\0\0\1\0\2")
    assert.are.equal(2, r:skip(4):u2be())
    assert.are.equal(1, r:seek(2):u2be())
    assert.are.equal(6, r:size())
    assert.matches("^sift.Reader %(at 4 of 6 bytes%)$", tostring(r))
  end)

  describe("over a mapped file", function()
    it("reads the same as over a string, without copying the file", function()
      local path = helper.tmpfile("JAVA PROFILE 1.0.2\0\0\0\0\8")
      local map <close> = assert(core.map(path))
      os.remove(path)  -- the mapping outlives the name
      local r = core.reader(map)
      assert.are.equal("JAVA PROFILE 1.0.2", r:cstring())
      assert.are.equal(8, r:u4be())
      assert.are.equal("truncated", select(3, r:u1()))
      assert.are.equal(23, map:size())
      assert.are.equal("PROFILE", map:read(5, 7))
      assert.are.equal("\8", map:read(22, 100))
      assert.are.equal("", map:read(23, 1))
    end)

    it("maps an empty file as zero bytes", function()
      local path = helper.tmpfile("")
      local map = assert(core.map(path))
      os.remove(path)
      assert.are.equal(0, map:size())
      assert.are.equal("truncated", select(3, core.reader(map):u1()))
      map:close()
    end)

    it("refuses to read once the map is closed", function()
      local path = helper.tmpfile("abcd")
      local map = assert(core.map(path))
      os.remove(path)
      local r = core.reader(map)
      map:close()
      map:close()  -- closing twice is harmless
      assert.matches("closed", tostring(map))
      assert.has_error(function() r:u1() end, "attempt to use a reader of a closed sift.Map")
      assert.has_error(function() map:size() end, "attempt to use a closed sift.Map")
    end)

    it("returns nil, message, 'io' for files it cannot map", function()
      local v, msg, code = core.map("/nonexistent/x.hprof")
      assert.is_nil(v)
      assert.are.equal("/nonexistent/x.hprof: No such file or directory", msg)
      assert.are.equal("io", code)
      v, msg, code = core.map("/tmp")
      assert.are.same({ nil, "/tmp: Is a directory", "io" }, { v, msg, code })
    end)
  end)
end)
