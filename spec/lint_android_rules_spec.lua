-- Android Lint's Recycle rules in sift lint, on spec/java/lintandroid (stubs of TypedArray,
-- Context, MotionEvent and VelocityTracker, and sample/Recycle.java, one shape per method) compiled
-- by javac now: by default Android Lint's terms (released or escaping on some path; no try block
-- asked for; MotionEvent.obtain(e) is no escape of e), and under --strict every criterion.
local cjson = require "cjson"
local helper = require "spec.helper"

local function compile()
  if not os.execute("command -v javac >/dev/null") then return nil end
  local dir = helper.tmpdir()
  local p = io.popen("find spec/java/lintandroid -name '*.java'")
  local sources = p:read("a"):gsub("\n", " ")
  p:close()
  assert(os.execute(("env -u LD_PRELOAD javac -d %s/classes %s"):format(helper.quote(dir), sources)))
  return dir .. "/classes"
end

local function found(args)
  local out, err, code = helper.sift(args)
  local got = {}
  for _, f in ipairs(cjson.decode(out).findings) do
    got[#got + 1] = ("%s %s/%s line %d"):format(f.method, f.rule, f.criterion, f.line)
  end
  return got, err, code
end

describe("sift lint: Android Lint's Recycle rules", function()
  local classes
  setup(function() classes = compile() end)

  it("reports what Android Lint reports: released or escaping nowhere", function()
    if not classes then return pending("no javac") end
    local got, err, code = found { "lint", "--json", "--rules", "android", classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.are.same({
      "eventCopied motionevent/never-closed line 62",
      "eventNeverRecycled motionevent/never-closed line 56",
      "neverRecycled typedarray/never-closed line 19",
    }, got)
  end)

  it("leaves out what a suppressions file names", function()
    if not classes then return pending("no javac") end
    local file = helper.tmpdir() .. "/suppressions.txt"
    local f = assert(io.open(file, "wb"))
    f:write("# known\nRecycle sample.Recycle.neverRecycled\n"
      .. "sift:motionevent/never-closed sample.Recycle.eventCopied   # a copy, kept on purpose\n\n"
      .. "sift:typedarray sample.Other*\n")
    f:close()
    local out, err, code = helper.sift { "lint", "--rules", "android", "--suppressions", file, classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.is_truthy(out:find("sample.Recycle.eventNeverRecycled [motionevent/never-closed]", 1, true))
    assert.is_truthy(out:match("\n1 finding in 5 classes, 2 suppressed\n$"), out)
    -- a prefix
    f = assert(io.open(file, "wb"))
    f:write("all sample.*\n")
    f:close()
    out, err, code = helper.sift { "lint", "--rules", "android", "--suppressions", file, classes }
    assert.are.same({ 0, "0 findings in 5 classes, 3 suppressed\n", "" }, { code, out, err })
    -- a line that is none: bad usage, said with its number
    f = assert(io.open(file, "wb"))
    f:write("all sample.*\nRecycle\n")
    f:close()
    out, err, code = helper.sift { "lint", "--rules", "android", "--suppressions", file, classes }
    assert.are.same({ 2, "", "sift: --suppressions: line 2 is no suppression (ID WHERE): Recycle\n" }, { code, out, err })
  end)

  it("under --strict, every path and the try criteria", function()
    if not classes then return pending("no javac") end
    local got, err, code = found { "lint", "--json", "--strict", "--rules", "android", classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.are.same({
      "eventCopied motionevent/never-closed line 62",
      "eventNeverRecycled motionevent/never-closed line 56",
      "eventNeverRecycled motionevent/op-outside-try line 57",
      "neverRecycled typedarray/never-closed line 19",
      "neverRecycled typedarray/op-outside-try line 20",
      "passedOn typedarray/never-closed line 41",
      "recycled typedarray/op-outside-try line 26",
      "recycledOnOnePath typedarray/not-closed-on-path line 33",
      "tracker velocitytracker/op-outside-try line 70",
    }, got)
  end)
end)
