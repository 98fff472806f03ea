-- sift waste on a dump jcmd makes now of spec/java/WasteSample.java, whose
-- waste is planted (see its header): strings copied two ways (each copy
-- with its own array; copies sharing one array), duplicate int[], byte[]
-- and long[], a HashMap sized for 1,024 holding 3 entries, 100 byte[1000]
-- never written, 10,000 Integers of 10 values. The expected bytes are
-- derived from the dump's own layout (the shallow sizes of one copy under
-- each model), never written down. The C pass is also compared with the
-- Lua passes it replaced (spec/waste_oracle.lua) where their answers were
-- right, on that dump and on the shared fixtures.
local cjson = require "cjson"
local helper = require "spec.helper"
local sift = require "sift"
local waste = require "sift.heap.waste"
local oracle = dofile("spec/waste_oracle.lua")

-- what a user computes from the dump: the shallow sizes (under `model`) of
-- one copy of each planted duplicate, read through WasteSample's statics
local function layout(dump, model)
  local heap <close> = assert(sift.open(dump))
  local cls = assert(heap:class("WasteSample"))
  local function element(static, i) return cls:static(static).elementData[i] end
  local own, shared = element("COPIES", 1), element("SHARED", 1)
  local int, byte, long = element("ARRAYS", 1), element("ARRAYS", 41), element("ARRAYS", 71)
  assert(int:length() == 100 and byte:length() == 64 and long:length() == 10)
  return { string = heap:shallow(own, model), own_array = heap:shallow(own.value, model),
    shared_string = heap:shallow(shared, model), int = heap:shallow(int, model), byte = heap:shallow(byte, model),
    long = heap:shallow(long, model) }
end

local function row(list, match)
  for _, r in ipairs(list) do
    if match(r) then return r end
  end
end

describe("sift waste", function()
  for _, model in ipairs { "shark", "jvm" } do
    it("counts what deduplication frees, copies sharing an array or not (--model " .. model .. ")", function()
      local dump = helper.jvm_dump("WasteSample")
      if not dump then return pending("no JDK") end
      local size = layout(dump, model)
      local args = { "waste", "--json", "-q", "--top", "50", dump }
      if model ~= "shark" then table.insert(args, 2, "--model=" .. model) end
      local out, err, code = helper.sift(args)
      assert.are.same({ 0, "" }, { code, err })
      local r = cjson.decode(out)
      assert.are.same({ model, waste.RULES }, { r.model, r.rules })
      -- 500 copies made with new String(char[]) beside the literal: 501
      -- Strings, 501 arrays; all but one String and one array go
      local own = row(r.duplicate_strings, function(d) return d.value == "duplicate-me" end)
      assert.are.same({ count = 501, arrays = 501, bytes = size.string + size.own_array,
        wasted = 500 * (size.string + size.own_array) },
        { count = own.count, arrays = own.arrays, bytes = own.bytes, wasted = own.wasted })
      -- 300 copies made with new String(s): they share the literal's one
      -- array, so only their 300 String objects are freed
      local shared = row(r.duplicate_strings, function(d) return d.value == "shared-copy" end)
      assert.are.same({ count = 301, arrays = 1, wasted = 300 * size.shared_string },
        { count = shared.count, arrays = shared.arrays, wasted = shared.wasted })
      assert.are.equal("java.lang.Object[]", shared.holders[1].class)  -- the list's array
      -- equal primitive arrays behind no String: all copies but one
      for _, a in ipairs { { "int[]", 100, 40, size.int }, { "byte[]", 64, 30, size.byte },
                           { "long[]", 10, 25, size.long } } do
        local d = row(r.duplicate_arrays, function(x) return x.class == a[1] and x.length == a[2] and x.count == a[3] end)
        assert(d, a[1] .. " copies not found")
        assert.are.same({ a[4], (a[3] - 1) * a[4], "java.lang.Object[]" }, { d.bytes, d.wasted, d.holders[1].class })
      end
      -- what tells two groups of one type and length apart: a[k] = 7k + 3
      assert.are.equal("{3, 10, 17, 24, 31, 38, 45, 52, …}", row(r.duplicate_arrays, function(x)
        return x.class == "int[]" and x.length == 100 end).preview)
      -- no array is in two reports: the strings' arrays are in neither
      -- duplicate_arrays nor zero_arrays, the zeros not in duplicate_arrays
      assert.is_nil(row(r.duplicate_arrays, function(x) return x.class == "byte[]" and x.length == 1000 end))
      -- the totals cover every group, shown or not
      local sum = 0
      for _, d in ipairs(r.duplicate_strings) do sum = sum + d.wasted end
      assert.is_true(r.totals.duplicate_strings.wasted >= sum and r.totals.duplicate_strings.groups >= 2)
    end)
  end

  it("finds the other planted waste, and says each rule in text and JSON", function()
    local dump = helper.jvm_dump("WasteSample")
    if not dump then return pending("no JDK") end
    local out, err, code = helper.sift { "waste", "--json", "-q", dump }
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    -- the map: capacity 1,024, 3 entries, its table's unused share wasted
    local map = row(r.collections, function(c) return c.class == "java.util.HashMap" end)
    assert.are.same({ 1024, 3 }, { map.worst[1].capacity, map.worst[1].size })
    assert.is_true(map.worst[1].wasted > 1000 * 4)
    -- the buffers: 100 arrays of 1,000 zeros
    local bytes = row(r.zero_arrays, function(z) return z.class == "byte[]" end)
    assert.are.same({ length = 1000, count = 100 }, bytes.lengths[1])
    -- the boxes: 1,000 each of 1000..1009
    local ints = r.boxed[1]
    assert.are.equal("java.lang.Integer", ints.class)
    for i = 1, 10 do assert.are.same({ value = tostring(999 + i), count = 1000 }, ints.values[i]) end
    assert.are.equal((ints.count - ints.distinct) * (ints.bytes // ints.count), ints.wasted)
    assert.is_true(ints.count >= 10000)
    local valid, problems = helper.schema_problems("waste.schema.json", out)
    assert(valid, problems)
    -- the text says the same, each report under its rule
    out = helper.sift { "waste", "--top", "3", "-q", dump }
    assert.matches('\n     501      501 +[%d,]+  "duplicate%-me"  java%.lang%.Object%[%]\n', out)
    assert.matches('\n     301        1 +[%d,]+  "shared%-copy"  java%.lang%.Object%[%]\n', out)
    assert.matches("\n      40 +[%d,]+  int%[100%] {3, 10, 17, 24, 31, 38, 45, 52, …}  java%.lang%.Object%[%]\n", out)
    assert.matches("\n%s+0x%x+ holds 3 of 1,024\n", out)
    assert.matches("\n     1%d%d +[%d,]+  byte%[%]  100 × 1000", out)
    assert.matches("^sizes: %-%-model shark\n", out)
    for key, rule in pairs(waste.RULES) do
      assert(out:find("\nwasted: " .. rule .. "\n", 1, true), key .. "'s rule is not in the text")
    end
  end)

  -- the C pass against the Lua passes it replaced: which strings are
  -- equal, how many copies and one copy's bytes; arrays of zeros; boxes
  -- (their ten most repeated values may break a tie at the tenth place
  -- differently: the oracle orders ties by text, C by value); the
  -- collections row for row, with every wasteful instance listed too
  -- (`worst`: all of them, in order); the holders of the copies
  local function compare_content(heap, path)
    local r = waste.report(heap, { top = math.maxinteger })
    local o = { strings = oracle.duplicate_strings(heap, { top = math.maxinteger }), zeros = oracle.zero_arrays(heap),
      boxed = oracle.boxed(heap) }
    local function groups(list)
      local out = {}
      for _, d in ipairs(list) do out[d.value] = { d.count, d.bytes, d.holders } end
      return out
    end
    -- the referrers of every row's copies, found in one walk, are what
    -- heap:referrers lists for each (the incoming references built whole)
    local string_class = heap:class("java.lang.String")
    local raw = heap.index:waste("shark", string_class and string_class.number, {}, math.maxinteger)
    for _, set in ipairs { raw.strings, raw.arrays } do
      for _, g in ipairs(set.rows) do
        for k, num in ipairs(g.copies) do assert.are.same(heap.index:referrers(num), g.referrers[k], path) end
      end
    end
    assert.are.same(groups(o.strings), groups(r.duplicate_strings), path)
    assert.are.same(o.zeros, r.zero_arrays, path)
    assert.are.equal(#o.boxed, #r.boxed, path)
    for i, b in ipairs(o.boxed) do
      local c = r.boxed[i]
      assert.are.same({ b.class, b.count, b.bytes, b.distinct, b.wasted, #b.values },
        { c.class, c.count, c.bytes, c.distinct, c.wasted, #c.values }, path)
      local last = b.values[#b.values]
      for k, v in ipairs(b.values) do
        assert.are.equal(v.count, c.values[k].count, path)
        if v.count > last.count then assert.are.same(v, c.values[k], path) end
      end
    end
    return #r.duplicate_strings, r
  end

  -- compare_content, and the collections: how many wasteful instances
  local function compare(path, models)
    local heap <close> = assert(sift.open(path))
    local rows = 0
    for _, model in ipairs(models) do
      local all = { worst = math.maxinteger, model = model }
      local c = waste.collections(heap, all)
      assert.are.same(oracle.collections(heap, all), c, path)
      for _, line in ipairs(c) do rows = rows + #line.worst end
    end
    local strings, r = compare_content(heap, path)
    assert.are.same(oracle.collections(heap), r.collections, path)  -- (5 worst each, as the report shows them)
    return strings, rows
  end

  it("agrees with the Lua passes it replaced, on the planted dump and the fixtures", function()
    local dump = helper.jvm_dump("WasteSample")
    if dump then
      local strings, instances = compare(dump, { "shark", "jvm" })
      assert.is_true(strings >= 2 and instances >= 200)
    end
    local root = helper.fixture("hprof")
    if not root then return end
    local seen, wasteful = 0, 0
    for _, rel in ipairs { "generated-jdk17/leaky_jdk17_live.hprof", "android/ahat/test-dump.hprof",
                           "android/leakcanary-1.x/leak_service_binder.hprof",
                           "eclipse-mat/sun_jdk6_18_x64.hprof",  -- char[] values with offset and count
                           "eclipse-mat/oracle_jdk7_21_x64.hprof", "../bmd/jdk17-sample.id4.bmd" } do
      local strings, instances = compare(root .. "/" .. rel, { "shark" })
      seen, wasteful = seen + strings, wasteful + instances
    end
    assert.is_true(seen > 1000 and wasteful > 1000)
  end)

  it("says what is wrong with a file that is not a dump", function()
    local _, err, code = helper.sift { "waste", "/nonexistent.hprof" }
    assert.are.equal(1, code)
    assert.matches("/nonexistent.hprof", err)
  end)
end)
