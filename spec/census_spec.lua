-- sift threads and sift loaders on a dump jcmd makes now of
-- spec/java/CensusSample.java: a thread "holder" keeping a 5,000,000-byte
-- array in a local, and a child-first class loader defining a class the
-- application loader defines too.
local cjson = require "cjson"
local helper = require "spec.helper"

-- the line of the source holding text
local function source_line(text)
  local n = 0
  for line in io.lines("spec/java/CensusSample.java") do
    n = n + 1
    if line:find(text, 1, true) then return n end
  end
end

describe("sift threads and sift loaders", function()
  local dump
  setup(function() dump = helper.jvm_dump("CensusSample") end)

  it("show the thread holding a large local, in the frame that holds it", function()
    if not dump then return pending("no JDK") end
    local out, err, code = helper.sift { "threads", "--json", "-q", dump }
    assert.are.same({ 0, "" }, { code, err })
    local threads = cjson.decode(out)
    local holder = threads[1]  -- the largest holder first
    assert.are.same({ "holder", 5000000 }, { holder.name, holder.locals[1].retained })
    assert.is_true(holder.held >= 5000000)
    local frame = holder.frames[holder.locals[1].frame]
    assert.are.same({ "CensusSample", source_line("Thread.sleep(600_000); } catch") },
      { frame.class, frame.line })
    assert.matches("^lambda%$main%$", frame.method)
    assert.are.same({ "java.lang.Thread", "sleep", -3 }, { holder.frames[1].class, holder.frames[1].method,
      holder.frames[1].line })
    local main
    for _, t in ipairs(threads) do if t.name == "main" then main = t end end
    assert.are.equal("main", main.frames[#main.frames].method)
    out = helper.sift { "threads", "-q", dump }
    assert.matches('^"holder" %(serial %d+%): the thread retains [%d,]+ bytes; its stack holds 5,000,[%d,]+\n'
      .. "    at java%.lang%.Thread%.sleep%(Native method%)\n    at CensusSample%.lambda%$main%$0%(CensusSample%.java:%d+%)\n"
      .. "        local byte%[%] 0x%x+ retains 5,000,000\n", out)
  end)

  it("show the class defined by two loaders, and each loader's parent and classes", function()
    if not dump then return pending("no JDK") end
    local out, err, code = helper.sift { "loaders", "--json", "-q", dump }
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    assert.are.equal(1, #r.duplicates)
    local dup = r.duplicates[1]
    assert.are.equal("CensusSample$Payload", dup.name)
    local names = {}
    for i, l in ipairs(dup.loaders) do names[i] = l.name end
    table.sort(names)
    assert.are.same({ 'CensusSample$ChildFirst "child-first"', 'jdk.internal.loader.ClassLoaders$AppClassLoader "app"' },
      names)
    local by_name = {}
    for _, l in ipairs(r.loaders) do by_name[l.name] = l end
    local child, app = by_name['CensusSample$ChildFirst "child-first"'], by_name['jdk.internal.loader.ClassLoaders$AppClassLoader "app"']
    assert.are.same({ 1, app.id, { "CensusSample$Payload" } }, { child.classes, child.parent, child.duplicates })
    assert.is_true(app.classes >= 3 and app.retained > 0)
    assert.are.equal("<bootstrap>", r.loaders[1].name)  -- it defines the most
    out = helper.sift { "loaders", "-q", dump }
    assert.matches("\n1 class defined by more than one loader\n  CensusSample%$Payload: ", out)
  end)

  -- what the dominator tree says each thread and each local retains, against
  -- the retained set by its definition: the bytes no longer reachable from
  -- the roots once that object is gone (a breadth-first walk per object)
  it("give each thread, each local and each stack the bytes that go when they go", function()
    local sift = require "sift"
    local census = require "sift.heap.census"
    local function compare(path)
      local heap = assert(sift.open(path))
      local rows = census.threads(heap)
      local function gone(hex_id)
        local obj = heap:object(tonumber(hex_id:sub(3), 16))
        return select(2, heap.index:unreachable_without((select(2, require("sift.core").object_parts(obj)))))
      end
      local locals = 0
      for _, t in ipairs(rows) do
        if t.id then assert.are.equal(gone(t.id), t.retained, t.name) end
        local held, once = 0, {}
        for _, l in ipairs(t.locals) do
          assert.are.equal(gone(l.id), l.retained, t.name .. " " .. l.id)
          if not once[l.id] then once[l.id], held = true, held + l.retained end
          locals = locals + 1
        end
        assert.are.equal(held, t.held, t.name)
      end
      heap:close()
      return #rows, locals
    end
    if not dump then return pending("no JDK") end
    local threads, locals = compare(dump)
    assert.is_true(threads >= 5 and locals >= 3, threads .. " threads, " .. locals .. " locals")
    local root = helper.fixture("hprof")
    if not root then return end
    local counts = {}
    for _, rel in ipairs { "generated-jdk17/leaky_jdk17_live.hprof", "android/ahat/test-dump.hprof",
                           "eclipse-mat/oracle_jdk8_05_x64.hprof" } do
      counts[#counts + 1] = { compare(root .. "/" .. rel) }
    end
    assert.are.same({ { 7, 14 }, { 7, 55 }, { 5, 22 } }, counts)  -- (threads, locals)
  end)

  -- (#once: the oracle is Lua over every object; the C it reads runs under
  -- ASan above) spec/census_oracle.lua counts again one object at a time
  it("count each loader's classes and instances as a walk over every object does #once", function()
    local sift = require "sift"
    local census = require "sift.heap.census"
    local oracle = require "spec.census_oracle"
    local function compare(path)
      local heap = assert(sift.open(path))
      local list, duplicates = census.loaders(heap)
      local rows, names = oracle.loaders(heap)
      heap:close()
      local got, got_names = {}, {}
      for _, r in ipairs(list) do
        got[r.id or "<bootstrap>"] = { classes = r.classes, instances = r.instances, duplicates = r.duplicates }
      end
      for i, d in ipairs(duplicates) do got_names[i] = d.name end
      assert.are.same(rows, got, path)
      assert.are.same(names, got_names, path)
      return #list, #names
    end
    if not dump then return pending("no JDK") end
    assert.are.same({ 3, 1 }, { compare(dump) })  -- (loaders, duplicated names)
    local root = helper.fixture("hprof")
    if not root then return end
    local counts = {}
    for _, rel in ipairs { "generated-jdk17/leaky_jdk17_live.hprof", "android/ahat/test-dump.hprof",
                           "eclipse-mat/sun_jdk6_18_x64.hprof" } do
      counts[#counts + 1] = { compare(root .. "/" .. rel) }
    end
    assert.are.same({ { 2, 0 }, { 2, 0 }, { 63, 0 } }, counts)
  end)
end)
