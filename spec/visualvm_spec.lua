-- --model visualvm against VisualVM itself: spec/java/VisualVMSizes.java
-- runs Debian's VisualVM heap library (2.1.5) at test time and prints every
-- object's Instance.getSize() and getRetainedSize(); sift must give the
-- same numbers for every object of dumps made here with jcmd (compressed
-- oops on and off) and of the 32- and 64-bit fixtures. One rule is told
-- apart: an object VisualVM's walk does not reach has retained size 0
-- there and nil (unreachable) in sift. Also: a dominator computation that
-- is cancelled leaves the heap as it was.
local sift = require "sift"
local helper = require "spec.helper"

local JAR = "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

local sh = helper.sh

-- VisualVMSizes' output for a dump, cached in build/visualvm/ by the dump's
-- SHA-256 (so the ASan pass reuses it); VisualVM writes its cache beside
-- the file it opens, so it opens a link made there, never the fixture
local function oracle(path)
  if not exists(JAR) or not sh("command -v javac") then return nil, "VisualVM (apt-get install visualvm) and a JDK are needed" end
  local _, sum = sh("sha256sum " .. helper.quote(path))
  local dir = "build/visualvm/" .. sum:match("^(%x+)")
  local out = dir .. ".txt"
  assert(os.execute("mkdir -p " .. dir .. "/classes"))
  helper.once(out .. ".lock", function() return exists(out) end, function()
    local ok, msg = sh(("javac -cp %s -d %s/classes spec/java/VisualVMSizes.java"):format(JAR, dir))
    assert(ok, msg)
    local link = dir .. "/dump.hprof"
    os.remove(link)
    assert(os.execute(("ln -s \"$(realpath %s)\" %s"):format(helper.quote(path), link)))
    ok, msg = sh(("java -cp %s:%s/classes VisualVMSizes %s > %s.tmp"):format(JAR, dir, link, out))
    assert(ok, msg)
    assert(os.rename(out .. ".tmp", out))
  end)
  return helper.read(out)
end

-- every object VisualVM lists: shallow and retained sizes equal; its 100
-- largest retainers are sift's; returns the counts checked
local function compare(heap, text)
  heap:dominators { model = "visualvm" }
  local n, classes, top = 0, 0, {}
  for kind, id, size, retained in text:gmatch("(%a) (%x+) (%d+) (%d+)") do
    local obj = assert(heap:object(tonumber(id, 16)), id)
    assert.are.equal(tonumber(size), heap:shallow(obj, "visualvm"), kind .. " " .. id .. " shallow")
    assert.are.equal(tonumber(retained), heap:retained(obj) or 0, kind .. " " .. id .. " retained")
    if heap:retained(obj) == nil then assert.are.equal("0", retained) end  -- unreached: 0 there, nil here
    n, classes = n + 1, classes + (kind == "c" and 1 or 0)
  end
  for id in text:gmatch("\nt (%x+)") do top[#top + 1] = heap:retained(heap:object(tonumber(id, 16))) end
  local ours = {}
  for i, row in ipairs(heap:top(#top)) do ours[i] = row.retained end
  assert.are.same(top, ours)  -- the same sizes in the same order (ties may swap objects)
  return n, classes, #top
end

describe("--model visualvm equals VisualVM's heap library", function()
  local LAYOUTS = {
    { args = "-Xmx128m", oop = 4 },                           -- trust_spec's dumps, shared
    { args = "-Xmx128m -XX:-UseCompressedOops", oop = 8 },
  }
  for _, layout in ipairs(LAYOUTS) do
    it("on every object of TrustSample dumped with " .. layout.args .. " #heavy", function()
      local path, why = helper.jvm_dump("TrustSample", nil, layout.args, true)
      if not path then return pending(why) end
      local text, why2 = oracle(path)
      if not text then return pending(why2) end
      local heap = assert(sift.open(path))
      assert.are.equal(layout.oop, heap:visualvm_layout().oop)
      local n, classes, top = compare(heap, text)
      assert.is_true(n > 20000 and classes > 500 and top == 100, n .. " " .. classes .. " " .. top)
      -- planted: a Session and its class object (sized as a java.lang.Class
      -- instance: the header and Class's fields, not the statics)
      local session = heap:class("TrustSample$Session")
      local obj = session:instances()()  -- (Session has a field named id: Object.id)
      local Object = require("sift.heap.index").Object
      local function listed(kind, id) return tonumber(text:match("\n" .. kind .. " " .. ("%x"):format(id) .. " (%d+)")) end
      assert.are.equal(listed("o", Object.id(obj)), heap:shallow(obj, "visualvm"))
      assert.are.equal(listed("c", session.id), heap:shallow(session, "visualvm"))
      assert.are.equal(heap:shallow(heap:class("java.lang.Thread"), "visualvm"), heap:shallow(session, "visualvm"))
    end)
  end

  -- the fixtures VisualVM reads: 32-bit, 64-bit with and without compressed
  -- oops (JDK 5-7, 17). Not the HPROF agent's files with two heap dumps:
  -- sift indexes one dump of a file, VisualVM's library all of them
  local FIXTURES = {
    "eclipse-mat/sun_jdk6_18_x32.hprof", "eclipse-mat/sun_jdk6_32bit.hprof",
    "eclipse-mat/sun_jdk5_64bit.hprof", "eclipse-mat/sun_jdk6_30_x64_compressedOops.hprof",
    "eclipse-mat/sun_jdk6_30_x64_nocompressedOops.hprof", "eclipse-mat/oracle_jdk7_21_x64.hprof",
    "generated-jdk17/leaky_jdk17_all.hprof", "hprof-slurp/hprof-64.bin",
  }
  -- (#peer: a peer's comparison runs once, not again under ASan)
  for _, rel in ipairs(FIXTURES) do
    it("on every object of " .. rel .. " #peer", function()
      local path = helper.fixture("hprof/" .. rel)
      if not path then return end
      local text, why = oracle(path)
      if not text then return pending(why) end
      local n = compare(assert(sift.open(path)), text)
      assert.is_true(n > 1000, tostring(n))
    end)
  end
end)

describe("a dominator computation that fails", function()
  -- the fresh answers of a fixture: reachable objects and the top retainers
  local function answers(heap, model)
    local summary = heap:dominators { model = model }
    local top = {}
    for i, row in ipairs(heap:top(5)) do top[i] = { select(2, require("sift.core").object_parts(row.object)), row.retained } end
    return { reachable = summary.reachable, unreachable = heap:unreachable().count, top = top }
  end

  it("leaves the previous tree, and the next computation equals a fresh open", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not path then return end
    local fresh = {}
    for _, model in ipairs { "shark", "jvm", "visualvm" } do fresh[model] = answers(assert(sift.open(path)), model) end
    -- objects the roots reach: VisualVM's walk, the strong graph with the
    -- JVM's class references, and the same for jvm
    assert.are.same({ 12786, 12830, 12830 }, { fresh.visualvm.reachable, fresh.shark.reachable, fresh.jvm.reachable })
    local heap = assert(sift.open(path))
    for _, model in ipairs { "shark", "visualvm", "jvm" } do
      local before = model == "jvm" and "visualvm" or "jvm"
      for _, stop in ipairs { 0.05, 0.3, 0.45, 0.6, 0.9 } do  -- each stage of the computation
        heap:dominators { model = before }
        local res, err = heap:dominators { model = model, progress = function(done, total) return done < stop * total end }
        assert.is_nil(res)
        assert.are.equal("cancelled", err)
        assert.is_true(heap.index:graph_info().tree)  -- kept, not dropped to be made again
        assert.are.same(fresh[before], answers(heap, before))  -- the previous tree, whole
        assert.has_error(function()
          heap:dominators { model = model, progress = function(done, total) if done >= stop * total then error("stop here") end end }
        end)
        assert.is_true(heap.index:graph_info().tree)
        assert.are.same(fresh[before], answers(heap, before))
        assert.are.same(fresh[model], answers(heap, model))  -- then computed as a fresh open does
      end
    end
  end)
end)
