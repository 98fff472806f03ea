-- `--model jvm` against the JVM's own GC.class_histogram on a program that
-- keeps the JDK's @Contended classes alive (spec/java/ContendedSample.java:
-- ForkJoinPool and its WorkQueues, SubmissionPublisher's subscriptions,
-- LongAdder and ConcurrentHashMap cells, Exchanger nodes), dumped by jcmd
-- under Serial and G1, with compressed oops on and off and class data
-- sharing off, and under G1 with sharing on (JDK 17's default), where the
-- JVM counts class mirrors that no dump holds. The histograms taken before
-- and after the dump tell which classes held still; on every one of them
-- sift must give the JVM's count and bytes.
local sift = require "sift"
local helper = require "spec.helper"
local cjson = require "cjson"
local contended = require "sift.heap.contended"

local RUNS = {
  { args = "-Xmx64m -Xshare:off", oop = 4 },
  { args = "-Xmx64m -Xshare:off -XX:-UseCompressedOops", oop = 8 },
  { args = "-Xmx64m -XX:+UseG1GC -Xshare:off", oop = 4 },
  { args = "-Xmx64m -XX:+UseG1GC -Xshare:off -XX:-UseCompressedOops", oop = 8 },
  { args = "-Xmx64m -XX:+UseG1GC", oop = 4, sharing = true },
}

-- the classes the sample keeps alive whose layout @Contended pads
local PADDED = {
  "java.lang.Thread", "java.util.concurrent.ForkJoinPool", "java.util.concurrent.ForkJoinPool$WorkQueue",
  "java.util.concurrent.SubmissionPublisher$BufferedSubscription", "java.util.concurrent.atomic.Striped64$Cell",
  "java.util.concurrent.ConcurrentHashMap$CounterCell", "java.util.concurrent.Exchanger$Node",
}

-- where sift may differ from the JVM, and why
local EXCEPTIONS = {
  sharing = { ["java.lang.Class"] = "the mirrors of CDS-archived classes not loaded yet: the JVM counts them, "
    .. "a dump leaves them out (said beside the row)" },
}

local sh = helper.sh

local function sift_cli(args)
  local out, err, code = helper.sift(args)
  assert.are.equal(0, code, err)
  return out
end

describe("--model jvm equals the JVM's GC.class_histogram #heavy", function()
  for _, run in ipairs(RUNS) do
    it("on every class that held still, with " .. run.args, function()
      local path, why = helper.jvm_dump("ContendedSample", nil, run.args, true)
      if not path then return pending(why) end
      local heap <close> = assert(sift.open(path))
      local l = heap:jvm_layout()
      assert.are.same({ true, 12, run.oop, "jdk15", 17 }, { l.inferred, l.header, l.oop, l.algorithm, l.jdk })
      local before = helper.class_histogram(helper.read(path .. ".before.histo"))
      local after = helper.class_histogram(helper.read(path .. ".histo"))
      local mine = {}
      for _, r in ipairs(heap:histogram("jvm")) do mine[r.class] = { count = r.count, bytes = r.shallow } end
      local exceptions = run.sharing and EXCEPTIONS.sharing or {}
      local checked, moved, excepted = 0, {}, {}
      for name, r in pairs(after) do
        if not before[name] or before[name].count ~= r.count then
          moved[#moved + 1] = name
        elseif exceptions[name] then
          excepted[name] = { jvm = r, sift = mine[name] }
        else
          assert.are.same(r, mine[name], name)
          checked = checked + 1
        end
      end
      for name in pairs(mine) do  -- (an object made and dropped around the dump, as a busy JVM's attach does: moved)
        if not after[name] then moved[#moved + 1] = name .. " (not in the JVM's histogram after the dump)" end
      end
      assert.is_true(checked > 250, checked)
      assert.is_true(#moved <= 5, "classes whose count moved: " .. table.concat(moved, ", "))
      for _, name in ipairs(PADDED) do  -- all there, all checked, all padded
        assert.truthy(after[name] and before[name].count == after[name].count, name)
        assert.is_true(after[name].bytes // after[name].count >= 256 + 16, name)
      end
      assert.are.equal(3, after["java.util.concurrent.SubmissionPublisher$BufferedSubscription"].count)

      local text = sift_cli({ "histogram", path, "--model", "jvm", "--top", "0" })
      local class_row = text:match("\n([^\n]* java%.lang%.Class[^\n]*)\n")
      local json = cjson.decode(sift_cli({ "histogram", path, "--model", "jvm", "--json", "--top", "1" }))
      if run.sharing then
        -- the JVM counts more mirrors than the dump holds, and sift says so
        local e = excepted["java.lang.Class"]
        assert.is_true(e.jvm.count > e.sift.count + 100, cjson.encode(e))
        assert.are.equal(heap:class("java.lang.Class") and e.sift.count, mine["java.lang.Class"].count)
        assert.are.same({ "archived", l.mirror_gaps }, { json.cds_mirrors.state, json.cds_mirrors.mirror_gaps })
        assert.is_true(l.mirror_gaps >= 8, l.mirror_gaps)
        assert.matches(("%%s+%d  java%%.lang%%.Class  %%(the JVM counts more: the mirrors of CDS%%-archived classes "
          .. "not loaded yet, which the dump leaves out %%(%d class mirrors"):format(e.sift.count, l.mirror_gaps), class_row)
      else
        -- (without an archived heap a G1 region's end may still follow a mirror or two: fewer than 8)
        assert.are.same({ "none", true }, { json.cds_mirrors.state, json.cds_mirrors.mirror_gaps < 8 })
        assert.is_nil(json.cds_mirrors.note)
        assert.matches("java%.lang%.Class$", class_row)
        assert.is_nil(text:match("CDS"))
      end
    end)
  end

  it("pads the classes JDK 17's own class files mark @Contended, as sift.heap.contended lists them", function()
    if not sh("command -v javap") then return pending("no javap") end
    local names = {}
    for name in pairs(contended[17]) do names[#names + 1] = name end
    table.sort(names)
    -- every class of the JDK that names the annotation is listed ...
    local listed_ok, list = sh("java spec/java/ContendedSample.java list")
    assert(listed_ok, list)
    assert.are.equal(table.concat(names, "\n") .. "\n", list)
    -- ... with its annotated fields in their groups, or as a class
    local quoted = {}
    for i, name in ipairs(names) do quoted[i] = helper.quote(name) end
    local ok, text = sh("javap -v -p " .. table.concat(quoted, " "))
    assert(ok, text)
    -- javap's view of each class: the fields annotated (by group) and the class itself
    local seen, class, field, pending_at = {}, nil, nil, nil
    for line in text:gmatch("[^\n]*") do
      local header = line:match("^[%a ]-class ([%w%.%$]+)")
      if header then class, field = header, nil seen[class] = seen[class] or {} end
      local decl = line:match("^  [^ (]+.- ([%w_$]+);$")
      if decl then field = decl elseif line:match("^  %S.*%(") then field = nil end
      if line:match("^%s+jdk%.internal%.vm%.annotation%.Contended") then
        if field then pending_at = field else seen[class].class = true end
      end
      local group = line:match('^%s+value="(.-)"') and pending_at and line:match('value="(.-)"')
      if group then
        seen[class][group] = seen[class][group] or {}
        table.insert(seen[class][group], pending_at)
        pending_at = nil
      end
    end
    local listed = {}
    for _, name in ipairs(names) do listed[name] = contended[17][name] end
    assert.are.same(listed, seen)
  end)

  it("pads Thread's random seeds in the JDK 8 and 11 dumps of the fixtures as their addresses show", function()
    local dir = helper.fixture("hprof/eclipse-mat")
    if not dir then return end
    local core = require "sift.core"
    for file, jdk in pairs { ["oracle_jdk8_05_x64.hprof"] = 8, ["openjdk_jdk11_04_x64.hprof.gz"] = 11 } do
      local heap <close> = assert(sift.open(dir .. "/" .. file))
      assert.are.same({ "legacy", jdk }, { heap:jvm_layout().algorithm, heap:jvm_layout().jdk })
      local sizes = {}
      for thread in heap:class("java.lang.Thread"):instances() do  -- a packed heap: the next object's address
        local _, num = core.object_parts(thread)
        sizes[#sizes + 1] = heap.index:object(num + 1) - thread:id()
        assert.are.equal(sizes[#sizes], heap:shallow(thread, "jvm"), file)
      end
      assert.is_true(#sizes >= 5, file)
      assert.are.equal(376, sizes[1], file)  -- 104 bytes of fields, 128 before the seeds and 128 after
    end
  end)
end)
