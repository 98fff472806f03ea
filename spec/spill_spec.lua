-- Spilling: when the index's big arrays pass the threshold they become
-- files in the spill directory, mapped back. The answers must not change:
-- histogram, top retainers, paths and leak signatures of a dump analysed
-- with every big array on disk equal those of the in-memory run, the spill
-- files are gone from the directory as soon as they are made, and the
-- command line says so when --spill cannot be written in.
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
end)
