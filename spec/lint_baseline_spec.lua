-- sift lint's fingerprints and baselines: two builds of spec/java/lint, the second with unrelated
-- lines added (a field, a method, a statement in a method, comments: every finding's line and pc
-- move), give the same fingerprints; a baseline written from the first silences the findings of
-- the second, and a new leak in a third is still reported. SARIF carries the fingerprint.
local cjson = require "cjson"
local helper = require "spec.helper"

local quote = helper.quote

-- spec/java/lint copied into a fresh directory, Shapes.java edited by edit, compiled; nil without a JDK
local function build(edit)
  if not os.execute("command -v javac >/dev/null") then return nil end
  local dir = helper.tmpdir()
  assert(os.execute(("cp -r spec/java/lint %s/src"):format(quote(dir))))
  local path = dir .. "/src/sample/Shapes.java"
  local text = helper.read(path)
  local f = assert(io.open(path, "wb"))
  f:write(edit(text))
  f:close()
  local p = io.popen(("find %s/src -name '*.java'"):format(quote(dir)))
  local sources = p:read("a"):gsub("\n", " ")
  p:close()
  assert(os.execute(("env -u LD_PRELOAD javac -d %s/classes %s"):format(quote(dir), sources)))
  return dir .. "/classes"
end

local function same(text) return text end

-- unrelated lines: a field and a method at the top of the class, a statement and comments in outsideTry
local function moved(text)
  local out = text:gsub("public class Shapes {\n", "public class Shapes {\n    private int unrelated = 3;\n\n"
    .. "    int twice(int x) {\n        return 2 * x + unrelated;\n    }\n\n", 1)
  out = out:gsub("    int outsideTry%(%) {\n", "    int outsideTry() {\n        long started = System.nanoTime();\n"
    .. "        // a comment\n        // and another\n", 1)
  return out
end

-- the moved build and a new leak
local function leaking(text)
  return (moved(text):gsub("\n}%s*$", "\n\n    int newLeak() {\n        Cursor c = db.rawQuery(\"select 2\", null);\n"
    .. "        return c.getCount();\n    }\n}\n"))
end

local function findings(classes)
  local out, _, code = helper.sift { "lint", "--json", classes }
  return cjson.decode(out).findings, code
end

describe("sift lint's fingerprints and baseline", function()
  local first, second, third
  setup(function()
    first, second, third = build(same), build(moved), build(leaking)
  end)

  it("gives each finding a fingerprint that unrelated lines do not change", function()
    if not first then return pending("no javac") end
    local a, b = findings(first), findings(second)
    assert.are.equal(7, #a)
    assert.are.equal(7, #b)
    local fa, fb, moved_lines = {}, {}, 0
    for k = 1, #a do
      assert.are.equal(a[k].method, b[k].method)
      assert.are.equal(a[k].criterion, b[k].criterion)
      assert.are.equal(a[k].fingerprint, b[k].fingerprint)
      assert.is_truthy(a[k].fingerprint:match("^%x+$") and #a[k].fingerprint == 40)
      if a[k].line ~= b[k].line then moved_lines = moved_lines + 1 end
      fa[#fa + 1], fb[#fb + 1] = a[k].fingerprint, b[k].fingerprint
    end
    assert.are.equal(7, moved_lines)  -- (every finding's line moved: the field and method come first)
    -- distinct findings have distinct fingerprints
    local seen = {}
    for _, fp in ipairs(fa) do
      assert.is_nil(seen[fp])
      seen[fp] = true
    end
    -- SARIF carries them
    local sarif = cjson.decode((helper.sift { "lint", "--sarif", second }))
    local results = sarif.runs[1].results
    assert.are.equal(7, #results)
    for k, r in ipairs(results) do assert.are.equal(fb[k], r.partialFingerprints["siftFinding/v1"]) end
  end)

  it("writes a baseline that silences the known findings and not a new one", function()
    if not first then return pending("no javac") end
    local baseline = helper.tmpdir() .. "/lint-baseline.txt"
    local out, err, code = helper.sift { "lint", "--write-baseline", baseline, first }
    assert.are.same({ 1, "" }, { code, err })
    assert.is_truthy(out:find("7 findings in", 1, true))
    local text = helper.read(baseline)
    local lines = 0
    for line in text:gmatch("[^\n]+") do
      if not line:match("^#") then
        lines = lines + 1
        assert.is_truthy(line:match("^%x+ sample%.Shapes%.%S+ cursor/%S+$"), line)
      end
    end
    assert.are.equal(7, lines)
    -- the second build: every finding known
    out, err, code = helper.sift { "lint", "--baseline", baseline, second }
    assert.are.same({ 0, "" }, { code, err })
    assert.is_truthy(out:match("^0 findings in %d+ classes, 7 in the baseline\n$"), out)
    -- the third: only the new leak
    out, err, code = helper.sift { "lint", "--json", "--baseline", baseline, third }
    assert.are.same({ 1, "" }, { code, err })
    local got = {}
    for _, f in ipairs(cjson.decode(out).findings) do got[#got + 1] = f.method .. " " .. f.criterion end
    assert.are.same({ "newLeak never-closed", "newLeak op-outside-try" }, got)
    -- a baseline that cannot be read: said, bad usage
    local _, err2, code2 = helper.sift { "lint", "--baseline", baseline .. ".missing", second }
    assert.are.equal(2, code2)
    assert.is_truthy(err2:find("sift: --baseline: ", 1, true))
  end)
end)
