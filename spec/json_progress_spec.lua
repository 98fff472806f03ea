-- sift.json (exact integers, valid UTF-8 always) and sift.progress bars.
local cjson = require "cjson"
local json = require "sift.json"
local progress = require "sift.progress"

describe("sift.json", function()
  it("writes 64-bit integers exactly and sorts object keys", function()
    assert.are.equal('{"a":7710900257051369610,"b":-1,"c":1.5,"d":null}',
      json.encode { b = -1, a = 7710900257051369610, c = 1.5, d = 0 / 0 })
  end)

  it("writes arrays, nesting and escapes that a JSON parser reads back", function()
    local v = { { name = 'say "hi"\n\ttab\1' }, true, false, "x" }
    assert.are.same(v, cjson.decode(json.encode(v)))
  end)

  it("turns bytes that are not UTF-8 into Latin-1 code points", function()
    assert.are.equal('"caf\xc3\xa9"', json.encode("caf\xe9"))
    assert.are.equal('"caf\xc3\xa9"', json.encode("caf\xc3\xa9"))  -- already UTF-8
  end)

  it("takes Lua's strict UTF-8 rules: surrogates, overlong forms and cut sequences make a string Latin-1", function()
    assert.are.equal('"\xe2\x82\xac"', json.encode("\xe2\x82\xac"))               -- the euro sign: kept
    assert.are.equal('"\xc3\xad\xc2\xa0\xc2\x80"', json.encode("\xed\xa0\x80"))   -- a surrogate
    assert.are.equal('"\xc3\x80\xc2\x80"', json.encode("\xc0\x80"))             -- an overlong NUL
    assert.are.equal('"a\xc3\xa2\xc2\x82"', json.encode("a\xe2\x82"))           -- cut short
    assert.are.equal('"\\u0000\\u001f\\u007f\\"\\\\\\b\\f\\n\\r\\t"', json.encode("\0\31\127\"\\\b\f\n\r\t"))
  end)

  it("writes empty tables as objects unless marked or named in opts.arrays", function()
    assert.are.equal('{"a":{},"b":[],"c":[],"d":[1,2]}', json.encode({ a = {}, b = json.array(), c = {},
      d = json.array { 1, 2 } }, { arrays = { c = true } }))
    assert.are.equal('[-9223372036854775808,9223372036854775807,-0,1.0000000000000001e+300,null,null]',
      json.encode { math.mininteger, math.maxinteger, -0.0, 1e300, 1 / 0, -1 / 0 })
  end)

  it("raises on values JSON cannot hold", function()
    assert.has_error(function() json.encode { [1.5] = 1, x = 2 } end)
    assert.has_error(function() json.encode(print) end)
    local cycle = {}
    cycle.self = cycle
    assert.has_error(function() json.encode(cycle) end, "sift.json: nesting too deep (a cycle?)")
    assert.has_error(function() json.encode { [true] = 1 } end, "sift.json: object keys must be strings, got boolean")
  end)
end)

describe("sift.progress", function()
  it("draws a bar that fits the width and erases it at the end", function()
    local f = io.tmpfile()
    local bar = progress.bar { label = "dump.hprof", stream = f, width = 60 }
    bar.update(0, 2048)
    bar.update(1024, 2048)
    bar.update(2048, 2048)
    bar.finish()
    f:seek("set")
    local drawn = f:read("a")
    local frames = {}
    for frame in drawn:gmatch("\r([^\r]*)") do frames[#frames + 1] = frame end
    assert.are.equal("dump.hprof [" .. ("."):rep(20) .. "]   0% 0 B/2.0 kB", frames[1]:match("^(.-)%s*$"))
    assert.are.equal("dump.hprof [" .. ("#"):rep(10) .. ("."):rep(10) .. "]  50% 1.0 kB/2.0 kB",
      frames[2]:match("^(.-)%s*$"))
    assert.are.equal("dump.hprof [" .. ("#"):rep(20) .. "] 100% 2.0 kB/2.0 kB", frames[3]:match("^(.-)%s*$"))
    assert.are.equal(#frames[1], #frames[3])  -- a fixed width: the bar does not jump
    assert.are.equal("\27[K", frames[4])
    for i = 1, 3 do assert.is_true(utf8.len(frames[i]) <= 60) end
  end)

  it("shows only the share done of work not counted in bytes", function()
    local f = io.tmpfile()
    local bar = progress.bar { label = "dominators", stream = f, width = 60, bytes = false }
    bar.update(35, 140)
    f:seek("set")
    assert.are.equal("\rdominators [" .. ("#"):rep(5) .. ("."):rep(15) .. "]  25%", f:read("a"):match("^(.-)%s*$"))
  end)

  it("draws nothing when quiet or when stderr is not a terminal", function()
    assert.is_nil(progress.bar { quiet = true, stream = io.tmpfile() })
    if not require("sift.core").isatty(2) then
      assert.is_nil(progress.bar {})
    end
  end)
end)
