-- Spilling: when the index's big arrays pass the threshold they become
-- files in the spill directory, mapped back. The answers must not change:
-- histogram, top retainers, paths and leak signatures of a dump analysed
-- with every big array on disk equal those of the in-memory run, the spill
-- files are gone from the directory as soon as they are made, and the
-- command line says so when --spill cannot be written in. The dominator
-- tree answers exactly as the plain semi-NCA did, under every size model.
local sift = require "sift"
local core = require "sift.core"
local leaks = require "sift.heap.leaks"
local helper = require "spec.helper"

-- what an analysis of path says, as plain values
local function analyse(path)
  local heap = assert(sift.open(path))
  local out = { histogram = {}, top = {}, paths = {}, leaks = {} }
  for i, row in ipairs(heap:histogram()) do
    out.histogram[i] = ("%s %d %d"):format(row.class, row.count, row.shallow)
  end
  heap:dominators()
  for i, r in ipairs(heap:top(20)) do out.top[i] = ("%s %d"):format(tostring(r.object), r.retained) end
  local targets = {}
  for obj in heap:objects() do
    if #targets == 50 then break end
    if obj:kind() == "instance" then targets[#targets + 1] = obj end
  end
  for i, p in ipairs(heap:path_to_root(targets)) do
    local labels = {}
    for k, st in ipairs(p or {}) do labels[k] = st.label or tostring(st.root) end
    out.paths[i] = table.concat(labels, " > ")
  end
  local report = leaks.analyze(heap)
  for _, l in ipairs(report.application_leaks) do out.leaks[#out.leaks + 1] = l.signature end
  for _, l in ipairs(report.library_leaks) do out.leaks[#out.leaks + 1] = l.signature end
  heap:close()
  return out
end

local function listing(dir)
  local p = io.popen("ls -A " .. helper.quote(dir))
  local s = p:read("a")
  p:close()
  return s
end

-- the dominator tree of path under model in a few exact sums: idom (as
-- object numbers, weighted by object), retained sizes, children counts,
-- the roots' children and what they retain
local function tree_summary(path, model)
  local heap = assert(sift.open(path))
  heap:dominators { model = model }
  local idx = heap.index
  local idoms, retained, kids = 0, 0, 0
  for num = 1, heap:info().objects do
    local d = idx:idom(num)
    if d then
      idoms = idoms + d * (num % 1000 + 1)
      retained = retained + idx:retained(num)
      kids = kids + idx:dominated_count(num) * (num % 7 + 1)
    end
  end
  local s = ("idoms=%d retained=%d kids=%d roots=%d reach=%d"):format(idoms, retained, kids,
    idx:dominated_count(0), idx:reachable_bytes())
  heap:close()
  return s
end

-- the answers of the dominator tree before its phases were made to free
-- as they go (semi-NCA over every reference, a child table per object)
local TREES = {
  ["hprof/android/leakcanary-1.x/leak_service_binder.hprof"] = {
    shark = "idoms=359971338841 retained=7810215 kids=122839 roots=12614 reach=2020112",
    jvm = "idoms=359971338841 retained=9523632 kids=122839 roots=12614 reach=2605312",
    visualvm = "idoms=355876333968 retained=8808360 kids=121694 roots=12914 reach=2781076",
  },
  ["hprof/generated-jdk17/leaky_jdk17_all.hprof"] = {
    shark = "idoms=47858746260 retained=2413949 kids=42384 roots=2508 reach=647304",
    jvm = "idoms=47858746260 retained=2493272 kids=42384 roots=2508 reach=727176",
    visualvm = "idoms=39953922491 retained=2082376 kids=34708 roots=4224 reach=672128",
  },
  ["hprof/hprof-slurp/hprof-64.bin"] = {
    shark = "idoms=8119764342 retained=1006575 kids=16202 roots=752 reach=201189",
    jvm = "idoms=8119764342 retained=1178744 kids=16202 roots=752 reach=275864",
    visualvm = "idoms=7382401926 retained=829240 kids=14108 roots=1259 reach=243768",
  },
}

describe("spilling the index to disk", function()
  it("gives the same answers as the in-memory run, its files unlinked at once", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local in_memory = analyse(path)
    assert.is_true(#in_memory.leaks > 0)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. helper.quote(dir)))
    local before = core.big_usage().spilled_peak
    core.spill(dir, 4096)  -- every big array past the first 4 KB goes to disk
    local ok, spilled = pcall(analyse, path)
    local usage = core.big_usage()
    core.spill(nil)
    assert(ok, spilled)
    assert.is_true(usage.spilled_peak > before + 1000000, "nothing was spilled")
    assert.are.equal(0, usage.spilled)  -- the heap is closed: every spill file unmapped
    assert.are.same(in_memory, spilled)
    assert.are.equal("", listing(dir))
    os.execute("rm -rf " .. helper.quote(dir))
  end)

  it("says so, before any work, when --spill is not a directory it can write in", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local out, err, code = helper.sift { "top", "-q", "--spill", "/nonexistent/dir", path }
    assert.are.equal(2, code)
    assert.are.equal("", out)
    assert.matches("%-%-spill: cannot write in '/nonexistent/dir'", err)
  end)

  it("takes its default budget from the memory cgroup the process is in, not the machine's", function()
    local cg = "/sys/fs/cgroup/memory/sift-spec-" .. tostring({}):match("0x(%x+)")
    if not os.execute("mkdir " .. cg .. " 2>/dev/null") then
      return pending("cannot make a cgroup (v1) here: needs root and /sys/fs/cgroup/memory")
    end
    local f = assert(io.open(cg .. "/memory.limit_in_bytes", "w"))
    f:write(tostring(64 << 20))
    f:close()
    local p = io.popen(("sh -c 'echo $$ > %s/cgroup.procs; LUA_CPATH=\"%s\" exec lua5.4 -e "
      .. "\"print(require(\\\"sift.core\\\").memory_default())\"'"):format(cg, os.getenv("SIFT_CPATH") or "build/?.so"))
    local inside = p:read("a")
    p:close()
    os.execute("rmdir " .. cg)
    assert.are.equal(tostring((64 << 20) // 4 * 3) .. "\n", inside)
  end)
end)

describe("the dominator tree", function()
  it("answers exactly as before under every model, in memory and spilled", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. helper.quote(dir)))
    for rel, models in pairs(TREES) do
      local path = helper.fixture(rel)
      if path then
        for model, want in pairs(models) do
          assert.are.equal(want, tree_summary(path, model), rel .. " " .. model)
        end
        core.spill(dir, 4096)
        local ok, got = pcall(tree_summary, path, "jvm")
        core.spill(nil)
        assert(ok, got)
        assert.are.equal(models.jvm, got, rel .. " spilled")
      end
    end
    assert.are.equal("", listing(dir))
    os.execute("rm -rf " .. helper.quote(dir))
  end)
end)
