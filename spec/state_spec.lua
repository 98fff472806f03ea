-- State you can trust (issue 31, item 1): an analysis leaves no reference
-- flags behind, so what ran before never changes an answer; two heaps
-- analysed in two threads at once (as sift serve's workers do) answer as
-- each does alone, and a thread's spill setting and big-array counts are
-- its own.
local sift = require "sift"
local leaks = require "sift.heap.leaks"
local helper = require "spec.helper"

-- what a report says, in exact values
local function summary(r)
  local function groups(list)
    local out = {}
    for i, g in ipairs(list) do
      out[i] = ("%s traces=%d retained=%s"):format(g.signature, #g.traces, tostring(g.retained))
    end
    return out
  end
  return { app = groups(r.application_leaks), library = groups(r.library_leaks), unreachable = #r.unreachable }
end

describe("leaks.analyze leaves the heap's reference flags as it found them", function()
  -- LeakCanary 1.x's Binder dump: rules A skip the Binder roots (the service is then unreachable),
  -- rules B add none (one application leak of 378 bytes through a Binder root)
  local RULES_A = { finder = "keyed", rules = { { root_class = "android.os.Binder", rule = "skip" } } }
  local RULES_B = { finder = "keyed" }
  local LIBRARY = { finder = "keyed", library = { { root_class = "android.os.Binder", description = "Binder roots" } } }

  it("answers rules B after rules A as B does on a fresh open", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not path then return end
    local fresh_a = summary(leaks.analyze(assert(sift.open(path)), RULES_A))
    local fresh_b = summary(leaks.analyze(assert(sift.open(path)), RULES_B))
    local fresh_lib = summary(leaks.analyze(assert(sift.open(path)), LIBRARY))
    assert.are.same({ app = {}, library = {}, unreachable = 1 }, fresh_a)
    assert.are.same({ app = { "ef9d39eb400396891e65dd2cd441b7a862892ef9 traces=1 retained=378" }, library = {},
      unreachable = 0 }, fresh_b)
    assert.are.same({ app = {}, library = { "ef9d39eb400396891e65dd2cd441b7a862892ef9 traces=1 retained=378" },
      unreachable = 0 }, fresh_lib)
    local heap = assert(sift.open(path))
    heap:reference_rules {}  -- (Shark's default rules: they stay once applied)
    local before = heap.index:flags_state()
    assert.are.same(fresh_a, summary(leaks.analyze(heap, RULES_A)))
    assert.are.same(fresh_b, summary(leaks.analyze(heap, RULES_B)))   -- the skipped roots are followed again
    assert.are.same(fresh_lib, summary(leaks.analyze(heap, LIBRARY)))
    assert.are.same(fresh_b, summary(leaks.analyze(heap, RULES_B)))   -- and no longer low priority
    assert.is_true(before == heap.index:flags_state(), "the reference flags changed")
    -- the same for paths asked after an analysis
    local service = heap:class("com.example.leakcanary.LeakyService"):instances()()
    local fresh = assert(sift.open(path))
    local alone = fresh:path_to_root(fresh:object(service:id()))
    leaks.analyze(heap, RULES_A)
    local after = heap:path_to_root(service)
    assert.are.equal(#alone, #after)
    for i = 1, #alone do assert.are.equal(alone[i].object:id(), after[i].object:id()) end
  end)

  it("puts the flags back also when the analysis fails", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not path then return end
    local heap = assert(sift.open(path))
    heap:reference_rules {}
    local before = heap.index:flags_state()
    assert.has_error(function()
      leaks.analyze(heap, { finder = function() error("finder failed") end,
        rules = { { root_class = "android.os.Binder", rule = "skip" } } })
    end)
    assert.is_true(before == heap.index:flags_state(), "the reference flags changed")
    assert.are.same({ app = { "ef9d39eb400396891e65dd2cd441b7a862892ef9 traces=1 retained=378" }, library = {},
      unreachable = 0 }, summary(leaks.analyze(heap, RULES_B)))
  end)
end)

-- A thread's job (no upvalues: it is dumped into the thread's own Lua
-- state): open a dump, build its dominator tree, list the top retainers,
-- analyse its leaks; reply one line of answers and one of the thread's
-- big-array usage. With `together`, it waits for "go" so that both threads
-- work at once.
local function job(sock, lpath, cpath, path, class, predicate, spill, together)
  package.path, package.cpath = lpath, cpath
  -- (a thread is a fresh Lua state: it requires its own modules)
  local core, sift_mod, leaks_mod = require "sift.core", require "sift", require "sift.heap.leaks"
  sock:setmode("b", "b")
  if spill ~= "" then core.spill(spill, 4096) end
  if together == "1" then
    sock:write("ready\n")
    sock:flush()
    assert(sock:read("*l") == "go")
  end
  local heap = assert(sift_mod.open(path))
  local parts = { ("reachable=%d"):format(heap:dominators().reachable) }
  for _, row in ipairs(heap:top(5)) do
    parts[#parts + 1] = ("0x%x %s %d"):format(row.object:id(), row.class, row.retained)
  end
  local test = assert(load("local obj = ... return " .. predicate))
  local report = leaks_mod.analyze(heap, { finder = leaks_mod.where(test, class) })
  for _, g in ipairs(report.application_leaks) do
    parts[#parts + 1] = ("%s %d %d"):format(g.signature, #g.traces, g.retained)
  end
  heap:close()
  local usage, dir = core.big_usage(), core.spilling()
  sock:write(table.concat(parts, "; "), "\n", ("spilling=%s memory_peak=%d spilled_peak=%d\n"):format(
    tostring(dir), usage.memory_peak, usage.spilled_peak))
  sock:flush()
end

describe("two heaps analysed in two threads at once", function()
  local thread = require "cqueues.thread"
  local dumps

  setup(function()
    local leaky = helper.jvm_dump("LeakySample")
    local trust = helper.jvm_dump("TrustSample", nil, "-Xmx128m", true)
    if leaky and trust then
      dumps = {
        { leaky, "LeakySample$Session", "obj.closed" },
        { trust, "TrustSample$Session", 'obj:field("kind"):string() == "web"' },
      }
    end
  end)

  -- start a job in a thread; spill: a directory for its big arrays past 4 KB
  local function start(d, spill, together)
    local th, sock = thread.start(job, package.path, package.cpath, d[1], d[2], d[3], spill or "",
      together and "1" or "0")
    sock:setmode("b", "b")
    return { thread = th, sock = sock }
  end
  local function finish(t)
    local answers, usage = t.sock:read("*l"), t.sock:read("*l")
    assert(t.thread:join())
    t.sock:close()
    return answers, usage
  end

  it("give the answers each gives alone, and count their memory apart", function()
    if not dumps then return pending("no JDK") end
    local spill_dir = helper.tmpdir()
    local alone, alone_usage = {}, {}
    for i, d in ipairs(dumps) do alone[i], alone_usage[i] = finish(start(d, i == 1 and spill_dir or nil)) end
    -- the answers, checked by value: LeakySample's 2,000 closed sessions (17 + 4,096 bytes each),
    -- TrustSample's 3 web sessions
    assert.matches("; %x+ 2000 8226000$", alone[1])
    assert.matches("; %x+ 3 %d+$", alone[2])
    assert.matches("^spilling=" .. spill_dir:gsub("%p", "%%%0") .. " memory_peak=%d+ spilled_peak=[1-9]%d+$",
      alone_usage[1])
    assert.matches("^spilling=nil memory_peak=[1-9]%d+ spilled_peak=0$", alone_usage[2])
    -- at once: both wait for "go", then work side by side
    local a, b = start(dumps[1], spill_dir, true), start(dumps[2], nil, true)
    assert.are.same({ "ready", "ready" }, { a.sock:read("*l"), b.sock:read("*l") })
    a.sock:write("go\n") a.sock:flush()
    b.sock:write("go\n") b.sock:flush()
    local a_answers, a_usage = finish(a)
    local b_answers, b_usage = finish(b)
    assert.are.equal(alone[1], a_answers)
    assert.are.equal(alone[2], b_answers)
    -- the second thread neither spilled (the first's setting is the first's) nor counted the
    -- first's arrays: its peak is what it was alone
    assert.are.equal(alone_usage[2], b_usage)
    assert.matches("spilled_peak=[1-9]%d+$", a_usage)
    -- and in this thread, no setting of theirs
    assert.is_nil((require("sift.core").spilling()))
  end)
end)
