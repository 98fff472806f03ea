-- sift waste on a dump jcmd makes now of spec/java/WasteSample.java, whose
-- waste is planted: 500 copies of one string, a HashMap sized for 1,024
-- holding 3 entries, 100 byte[1000] never written, 10,000 Integers of 10
-- values.
local cjson = require "cjson"
local helper = require "spec.helper"

describe("sift waste", function()
  it("finds each planted waste, and says so in text and JSON", function()
    local dump = helper.jvm_dump("WasteSample")
    if not dump then return pending("no JDK") end
    local out, err, code = helper.sift { "waste", "--json", "-q", dump }
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    -- the string: 500 copies made at run time and the literal they copy
    local dup = r.duplicate_strings[1]
    assert.are.same({ "duplicate-me", 501 }, { dup.value, dup.count })
    assert.are.equal(500 * dup.bytes, dup.wasted)
    assert.are.equal("java.lang.Object[]", dup.holders[1].class)  -- the list's array
    -- the map: capacity 1,024, 3 entries, its table's unused share wasted
    local map
    for _, c in ipairs(r.collections) do
      if c.class == "java.util.HashMap" then map = c end
    end
    assert.are.same({ 1024, 3 }, { map.worst[1].capacity, map.worst[1].size })
    assert.is_true(map.worst[1].wasted > 1000 * 4)
    -- the buffers: 100 arrays of 1,000 zeros
    local bytes
    for _, z in ipairs(r.zero_arrays) do
      if z.class == "byte[]" then bytes = z end
    end
    assert.are.same({ length = 1000, count = 100 }, bytes.lengths[1])
    -- the boxes: 1,000 each of 1000..1009
    local ints = r.boxed[1]
    assert.are.equal("java.lang.Integer", ints.class)
    for i = 1, 10 do assert.are.same({ value = tostring(999 + i), count = 1000 }, ints.values[i]) end
    assert.is_true(ints.count >= 10000 and ints.wasted >= (10000 - 10) * 4)
    -- the text says the same
    out = helper.sift { "waste", "--top", "3", "-q", dump }
    assert.matches('\n     501       %d[%d,]*  "duplicate%-me"  java%.lang%.Object%[%]\n', out)
    assert.matches("\n%s+0x%x+ holds 3 of 1,024\n", out)
    assert.matches("\n     1%d%d +[%d,]+  byte%[%]  100 × 1000", out)
  end)

  it("says what is wrong with a file that is not a dump", function()
    local _, err, code = helper.sift { "waste", "/nonexistent.hprof" }
    assert.are.equal(1, code)
    assert.matches("/nonexistent.hprof", err)
  end)
end)
