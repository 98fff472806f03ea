-- A real JVM heap dump made here: spec/java/HeapSample.java is compiled
-- and run, `jcmd <pid> GC.heap_dump` writes the dump (cached in build/jvm/
-- by the source's checksum), and sift must read back what the program set.
local sift = require "sift"
local helper = require "spec.helper"

describe("a heap dump of a live JVM (jcmd GC.heap_dump)", function()
  local heap, sample

  setup(function()
    local path, why = helper.jvm_dump("HeapSample")
    if path then
      heap = assert(sift.open(path))
      sample = heap:class("HeapSample"):static("ROOT")
    else
      print("jvm_spec: skipped: " .. why)
    end
  end)

  it("is HPROF 1.0.2 with 8-byte ids, a sticky-class root set and our classes", function()
    if not heap then return pending("no JDK") end
    local info = heap:info()
    assert.are.same({ "1.0.2", 8 }, { info.version, info.id_size })
    assert.is_true(info.roots.sticky_class > 100)
    assert.are.equal(1000, heap:class("HeapSample$Base"):instance_count())
    assert.are.equal(1, heap:class("HeapSample$Fields"):instance_count())
    assert.are.equal(42, heap:class("HeapSample"):static("counter"))
  end)

  it("reads fields of every type, most derived first", function()
    if not heap then return pending("no JDK") end
    local f = sample:field("fields")
    assert.are.same({ true, "Ω", 1.5, -2.25, -8, -300, 123456789, -9000000000 },
      { f.z, f.c, f.f, f.d, f.b, f.s, f.i, f.j })
    assert.is_nil(f.nothing)
    assert.are.same({ 2, 1, 7 }, { f.shadowed, f["Base.shadowed"], f.inherited })
    assert.are.same({ "plain ascii", "Grüße, 世界 😀" }, { f.latin:string(), f.wide:string() })
  end)

  it("reads arrays of every primitive type, nested arrays and object arrays", function()
    if not heap then return pending("no JDK") end
    assert.are.same({ 1, -2, 3 }, sample.ints:elements())
    assert.are.same({ math.mininteger, 0, math.maxinteger }, sample.longs:elements())
    assert.are.same({ 0.5, -0.25 }, sample.doubles:elements())
    assert.are.same({ true, false, true }, sample.flags:elements())
    assert.are.equal("chars", sample.chars:string())
    assert.are.same({ 0, 1, -1, 127 }, sample:field("bytes"):elements())
    assert.are.same({ -1, 2 }, sample.shorts:elements())
    assert.are.same({ 2.5 }, sample.floats:elements())
    assert.are.same({ 2, 1, 0 }, { #sample.grid[1], #sample.grid[2], #sample.grid[3] })
    assert.are.equal(3, sample.grid[2][1])
    assert.are.same({ "alpha", false, "gamma" }, {
      sample.words[1]:string(), sample.words[2] == nil and false, sample.words[3]:string() })
    assert.are.equal("java.lang.String[3]", tostring(sample.words):match("^[^@]+"))
  end)

  it("names the threads and gives the main thread's stack", function()
    if not heap then return pending("no JDK") end
    local main
    for _, t in ipairs(heap:threads()) do
      if t.name == "main" then main = t end
    end
    assert.truthy(main, "no thread named main")
    assert.are.equal("java.lang.Thread", main.object:class_name())
    local methods = {}
    for _, f in ipairs(main.frames) do methods[#methods + 1] = (f.class or "?") .. "." .. f.method end
    assert.are.equal("HeapSample.main", methods[#methods])
  end)

  it("follows references through library classes (HashMap, enums)", function()
    if not heap then return pending("no JDK") end
    local found
    for _, node in ipairs(sample.map.table:elements()) do
      if node and node.key:string() == "answer" then found = node.value.value end
    end
    assert.are.equal(42, found)
    assert.are.same({ "GREEN", 1 }, { sample.colour.name:string(), sample.colour.ordinal })
  end)
end)
