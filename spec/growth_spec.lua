-- sift growth on series of dumps jcmd takes now of one running
-- spec/java/GrowthSample.java: in "leak" mode each step keeps 100 more
-- objects in a static list; in "churn" mode each step makes and drops
-- 10,000 (nothing may be reported). The leak series crunched to BMD too.
local cjson = require "cjson"
local helper = require "spec.helper"

local quote = helper.quote

describe("sift growth", function()
  it("finds the objects a leak adds at every step, by class and by the path that holds them", function()
    local dumps, dir = helper.jvm_series("GrowthSample", "leak", 4)
    if not dumps then return pending("no JDK") end
    local args = { "growth", "--json", "-q" }
    for _, d in ipairs(dumps) do args[#args + 1] = d end
    local out, err, code = helper.sift(args)
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    local by = {}
    for _, g in ipairs(r.classes) do by[g.class] = g end
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Leaked"].deltas)
    assert.are.same({ 100, 200, 300, 400 }, by["GrowthSample$Leaked"].counts)
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Payload[]"].deltas)  -- each Leaked's payload
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Payload"].deltas)
    assert.are.equal(3, #r.classes)
    assert.are.equal(1, #r.holders)
    assert.matches("class GrowthSample → static LEAKS → ArrayList → field elementData → Object%[%]$", r.holders[1].text)
    assert.are.same({ "java.util.ArrayList", "field elementData" },
      { r.holders[1].path[#r.holders[1].path - 1].class, r.holders[1].path[#r.holders[1].path - 1].ref })
    -- the same series as BMD (the app's names kept as text: BMD hashes the others)
    local bmd = { "growth", "--json", "-q" }
    for i, d in ipairs(dumps) do
      local b = ("%s/dump-%d.bmd"):format(dir, i)
      local _, cerr, ccode = helper.sift { "crunch", "-q", "--keep", "GrowthSample", d, b }
      assert(ccode == 0, cerr)
      bmd[#bmd + 1] = b
    end
    local from_bmd = cjson.decode((helper.sift(bmd)))
    local counts = {}
    for _, g in ipairs(from_bmd.classes) do counts[g.class] = g.deltas end
    assert.are.same({ 100, 100, 100 }, counts["GrowthSample$Leaked"])
    out = helper.sift { "growth", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.matches("GrowthSample%$Leaked: 100 → 200 → 300 → 400 instances %(%+100, %+100, %+100 per step%)", out)
    os.execute("rm -rf " .. quote(dir))
  end)

  it("reports no growth for a program that only churns, and says what is wrong with a missing dump", function()
    local dumps, dir = helper.jvm_series("GrowthSample", "churn", 4)
    if not dumps then return pending("no JDK") end
    local out, err, code = helper.sift { "growth", "--json", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    assert.are.same({ {}, {} }, { r.classes, r.holders })
    assert.matches('"classes":%[%]', out)  -- (an array, also when empty)
    out, err, code = helper.sift { "growth", dumps[1], dir .. "/missing.hprof" }
    assert.are.same({ "", 1 }, { out, code })
    assert.matches("^sift: .-missing%.hprof: No such file or directory\n$", err)
    os.execute("rm -rf " .. quote(dir))
  end)
end)
