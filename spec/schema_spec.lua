-- The --json output of every command, on real files (and on the empty
-- cases where an array is easily written as {}), validated against its
-- JSON Schema in docs/schema/ by Debian's python3-jsonschema.
local helper = require "spec.helper"

local have_validator = helper.have_validator

-- run `sift args` and validate its stdout against docs/schema/<name>
local function check(name, args, expect_code)
  local out, err, code = helper.sift(args)
  assert.are.equal(expect_code or 0, code, err)
  local ok, problems = helper.schema_problems(name, out)
  assert(ok, ("sift %s: output does not match %s:\n%s\n%s"):format(table.concat(args, " "), name, problems,
    out:sub(1, 400)))
  return out
end

describe("JSON output matches docs/schema #once", function()
  local F = helper.fixtures() or "../shared/fixtures"
  local jdk17 = F .. "/hprof/generated-jdk17/leaky_jdk17_live.hprof"
  local binder = F .. "/hprof/android/leakcanary-1.x/leak_service_binder.hprof"

  before_each(function()
    if not have_validator() then pending("python3-jsonschema is not installed") end
  end)

  it("for heap commands: info, histogram, path, top, leaks", function()
    if not helper.fixture("hprof") or not have_validator() then return end
    check("info.schema.json", { "info", "--json", jdk17 })
    check("info.schema.json", { "info", "--json", jdk17, binder, F .. "/trace/perflib-basic.trace" })
    for _, model in ipairs { "shark", "jvm", "visualvm" } do
      check("histogram.schema.json", { "histogram", "--json", "--model", model, jdk17 })
    end
    check("histogram.schema.json", { "histogram", "--json", "--top", "0", binder })
    check("path.schema.json", { "path", "--json", "--retained", jdk17, "--class", "LeakyApp$Leaked" })
    assert.are.equal("[]\n", check("path.schema.json", { "path", "--json", jdk17, "--class", "java.lang.Void" }))
    check("path-merge.schema.json", { "path", "--json", "--merge", jdk17, "--class", "LeakyApp$Leaked" })
    check("top.schema.json", { "top", "--json", "-n", "5", jdk17 })
    check("top.schema.json", { "top", "--json", "-n", "5", "--flat", jdk17 })
    check("waste.schema.json", { "waste", "--json", "-q", jdk17 })
    check("waste.schema.json", { "waste", "--json", "-q", binder })
    check("threads.schema.json", { "threads", "--json", "-q", jdk17 })
    check("threads.schema.json", { "threads", "--json", "-q", binder })
    check("loaders.schema.json", { "loaders", "--json", "-q", jdk17 })
    check("loaders.schema.json", { "loaders", "--json", "-q", binder })
    check("bitmaps.schema.json", { "bitmaps", "--json", "-q", binder })
    check("bitmaps.schema.json", { "bitmaps", "--json", "-q", jdk17 })
    check("bitmaps.schema.json", { "bitmaps", "--json", "-q", "--mapping", F .. "/hprof/android/ahat/test-dump.map",
      F .. "/hprof/android/ahat/test-dump.hprof" })
    check("growth.schema.json", { "growth", "--json", "-q", jdk17, F .. "/hprof/generated-jdk17/leaky_jdk17_all.hprof" })
    check("growth.schema.json", { "growth", "--json", "-q", binder, binder })
    local out = check("leaks.schema.json", { "leaks", "--json", jdk17 })
    assert.matches('"application_leaks":%[%]', out)
    assert.matches('"library_leaks":%[%]', out)
    check("leaks.schema.json", { "leaks", "--json", "--suspects", binder })
  end)

  it("for BMD and traces: crunch, decrunch, profile, info", function()
    if not helper.fixture("hprof") or not have_validator() then return end
    local bmd, hprof = os.tmpname(), os.tmpname()
    check("crunch.schema.json", { "crunch", "--json", "-q", jdk17, bmd })
    check("decrunch.schema.json", { "decrunch", "--json", "-q", bmd, hprof })
    check("info.schema.json", { "info", "--json", bmd })
    os.remove(bmd)
    os.remove(hprof)
    check("profile.schema.json", { "profile", "--json", F .. "/trace/firefox-art-trace-streaming.trace" })
  end)

  it("for OFX and the finance store, empty and not", function()
    if not helper.fixture("ofx") or not have_validator() then return end
    local ofx = F .. "/ofx/ofxparse/"
    check("ofx.schema.json", { "ofx", "--json", ofx .. "checking.ofx" })
    check("ofx.schema.json", { "ofx", "--json", ofx .. "fidelity.ofx", ofx .. "account_listing_aggregation.ofx" })
    local all = { "ofx", "--json" }  -- every statement of the fixtures, in one array
    for _, f in ipairs(helper.fixture_files("ofx")) do
      if f:lower():match("%.[oq]fx$") then all[#all + 1] = F .. "/" .. f end
    end
    check("ofx.schema.json", all, 1)  -- (one of libofx's fuzz files has no <OFX>: exit 1, an error object)
    local out = check("ofx.schema.json", { "ofx", "--json", ofx .. "account_listing_aggregation.ofx" })
    assert.matches('"statements":%[%]', out)
    local db = os.tmpname()
    os.remove(db)
    local empty = {
      { "report.schema.json", { "report", "--db", db, "--json" } },
      { "transactions.schema.json", { "transactions", "--db", db, "--json" } },
      { "pairs.schema.json", { "transfers", "--db", db, "--json" } },
      { "pairs.schema.json", { "duplicates", "--db", db, "--json" } },
      { "categorize.schema.json", { "categorize", "--db", db, "--json" } },
    }
    for _, c in ipairs(empty) do check(c[1], c[2]) end
    check("import.schema.json", { "import", "-q", "--db", db, "--json", ofx .. "checking.ofx", ofx .. "fidelity.ofx" })
    for _, c in ipairs(empty) do check(c[1], c[2]) end
    check("categorize.schema.json", { "categorize", "--db", db, "--json", "--evaluate" })
    os.remove(db)
  end)
end)
