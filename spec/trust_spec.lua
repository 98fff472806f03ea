-- The heap engine on dumps nobody here wrote: spec/java/TrustSample.java
-- (fields named like sift's methods, a class-loader leak, a 200,000-node
-- list, weak and soft references, 2-D arrays, lambdas, a generated
-- reflection accessor) is dumped by jcmd under three JVM layouts, each with
-- the JVM's own GC.class_histogram beside it as the oracle for sizes.
local sift = require "sift"
local hprof = require "sift.heap"
local helper = require "spec.helper"
local cjson = require "cjson"

local LAYOUTS = {
  { args = "-Xmx128m", header = 12, oop = 4 },
  { args = "-Xmx128m -XX:-UseCompressedOops", header = 12, oop = 8 },
  { args = "-Xmx128m -XX:-UseCompressedClassPointers", header = 16, oop = 4 },
}

local function dump(layout)
  local path, why = helper.jvm_dump("TrustSample", nil, layout.args, true)
  if not path then pending(why) end
  return path
end

local function sessions(heap)
  local out = {}
  for s in heap:class("TrustSample$Session"):instances() do out[#out + 1] = s end
  table.sort(out, function(a, b) return a:field("id") < b:field("id") end)
  return out
end

describe("a JVM dump with the shapes users' programs have", function()
  local path, heap

  setup(function()
    path = helper.jvm_dump("TrustSample", nil, LAYOUTS[1].args, true)
    if path then heap = assert(sift.open(path)) end
  end)
  teardown(function() if heap then heap:close() end end)

  it("keeps sift's methods whatever the Java fields are named; obj:field reaches them all", function()
    if not heap then return pending("no JDK") end
    local s = sessions(heap)
    assert.are.equal(3, #s)
    local session = s[2]
    for _, name in ipairs(hprof.method_names()) do
      assert.are.equal(hprof.Object[name], session[name], name)
    end
    assert.are.same({ 1, 3, 4, 5, true, false },
      { session:field("id"), session:field("size"), session:field("length"), session:field("get"),
        session:field("has_field"), session:field("is_instance_of") })
    assert.are.same({ "web", "not the text", "eu-west", "Session" },
      { session:field("kind"):string(), session:field("string"):string(), session:field("heap"):string(),
        session:field("class_name"):string() })
    assert.are.equal("\1\2\3", session:field("bytes"):bytes())
    assert.are.same({ "instance", "TrustSample$Session", "default" }, { session:kind(), session:class_name(), session:heap() })
    assert.is_nil(session:string())
    assert.is_true(session:id() > 0xffff)
    assert.is_true(session:has_field("size") and not session:has_field("nothing"))
  end)

  it("runs every heap command on that class without an internal error", function()
    if not heap then return pending("no JDK") end
    local runs = {
      { "path", path, "--class", "TrustSample$Session", "--retained", "--model", "jvm" },
      { "path", path, "--class", "TrustSample$Session", "--merge" },
      { "leaks", path, "--class", "TrustSample$Session", "--where", 'obj:field("kind"):string() == "web"' },
      { "leaks", path, "--suspects" },
      { "top", path, "-n", "5" },
      { "dominators", path, "--depth", "2" },
    }
    for _, args in ipairs(runs) do
      local out, err, code = helper.sift(args)
      assert.are.equal(0, code, table.concat(args, " ") .. ": " .. err)
      assert.is_nil(err:match("internal error"), err)
      assert.is_true(#out > 0)
    end
    local top = cjson.decode((helper.sift({ "top", path, "-n", "4", "--json" })))
    assert.are.equal(4, #top)
    for _, row in ipairs(top) do  -- no row holds another: each is dominated by the roots only
      local _, why = heap:idom(heap:object(tonumber(row.id:sub(3), 16)))
      assert.are.equal("roots", why)
    end
    assert.are.equal(("0x%x"):format(heap:class("TrustSample").object:id()), top[1].id)  -- the list's holder
    assert.are.same({ 6, "TrustSample$Node" }, { #top[1].inside, top[1].inside[1].class })
    local out = helper.sift({ "leaks", path, "--class", "TrustSample$Session", "--json", "--where",
      'obj:field("kind"):string() == "web"' })
    local traces = 0
    for _, leak in ipairs(cjson.decode(out).application_leaks) do traces = traces + #leak.traces end
    assert.are.equal(3, traces)
    -- the list is the one suspect; its memory accumulates at the end of the
    -- list, 199,998 nodes down the dominator tree (its next-to-last node)
    local suspects = cjson.decode((helper.sift({ "leaks", path, "--suspects", "--json" }))).suspects
    assert.are.same({ 1, "TrustSample$Node", 2400000, "TrustSample$Node", 48 },
      { #suspects, suspects[1].class, suspects[1].retained, suspects[1].accumulation.class,
        suspects[1].accumulation.retained })
    local repl_out, repl_err = helper.sift({ "repl", path },
      [[<<'EOF'
s = heap:class("TrustSample$Session"):instances()()
show(s)
help(s)
print(s:id() == s:id(), s:field("size"), type(s.size))
EOF]])
    assert.are.equal("", repl_err)
    assert.matches("size %(named like a method: obj:field%(\"size\"%)%)", repl_out)
    assert.matches("true\t3\tfunction\n", repl_out)
    local complete = require("sift.repl").complete
    local env = { heap = heap, s = sessions(heap)[1] }
    assert.are.same({ "s:has_field", "s:heap" }, complete(env, "s:h"))
    assert.are.same({ "heap:class", "heap:class_at", "heap:class_histogram", "heap:classes", "heap:classes_named",
      "heap:close" },
      complete(env, "heap:cl"))
  end)

  it("explains a class-loader leak: instance -> <class> -> <loader>", function()
    if not heap then return pending("no JDK") end
    local out, err, code = helper.sift({ "path", path, "--class", "java.net.URLClassLoader", "--json" })
    assert.are.equal(0, code, err)
    local found
    for _, r in ipairs(cjson.decode(out)) do
      if r.path and r.path[#r.path - 2].class == "TrustSample$Plugin" then found = r end
    end
    assert.truthy(found, out)
    local p = found.path
    assert.are.same({ "sticky_class", "static PLUGIN", "<class>", "<loader>" },
      { found.root, p[#p - 3].ref, p[#p - 2].ref, p[#p - 1].ref })
    local report = require("sift.heap.leaks").analyze(heap, {
      finder = require("sift.heap.leaks").where(function() return true end, "java.net.URLClassLoader") })
    local refs = {}
    for _, e in ipairs(report.application_leaks[1].traces[1].elements) do refs[#refs + 1] = e.ref_name end
    assert.are.same({ "appClass", "PLUGIN", "<class>", "<loader>" }, refs)
  end)

  it("gives retained sizes that equal the definition (what no root reaches without the object)", function()
    if not heap then return pending("no JDK") end
    heap:dominators { model = "jvm" }
    local checked = 0
    local objs = sessions(heap)
    objs[#objs + 1] = heap:class("TrustSample"):static("PLUGIN")
    objs[#objs + 1] = heap:class("java.net.URLClassLoader"):instances()()
    objs[#objs + 1] = heap:class("TrustSample"):static("GRID")
    objs[#objs + 1] = heap:class("TrustSample"):static("SOFT")
    for _, obj in ipairs(objs) do
      local _, num = require("sift.core").object_parts(obj)
      local _, bytes = heap.index:unreachable_without(num)
      assert.are.equal(bytes, heap:retained(obj), tostring(obj))
      checked = checked + 1
    end
    assert.are.equal(7, checked)
    -- a softly held object is not retained through its referent
    local soft = heap:class("TrustSample"):static("SOFT")
    assert.are.equal("soft", heap:reachability(soft:field("referent")))
    assert.are.equal(heap:shallow(soft, "jvm"), heap:retained(soft))
  end)

  it("prints 1000 paths down a 200,000-node list within a small memory budget", function()
    if not heap then return pending("no JDK") end
    local out, err, code = helper.sift({ "path", path, "--class", "TrustSample$Node", "--limit", "1000", "--json",
      "--max-memory", "200M" })
    assert.are.equal(0, code, err)
    local results = cjson.decode(out)
    assert.are.equal(1000, #results)
    local depths = {}
    for i, r in ipairs(results) do
      local run = r.path[#r.path]
      assert.are.equal("field next", run.run_ref)
      depths[i] = run.count + #r.path - 1
    end
    table.sort(depths)
    assert.is_true(depths[1] >= 199000 and depths[#depths] == 200000 + 2, depths[#depths])
    local text = helper.sift({ "path", path, "--class", "TrustSample$Node", "--limit", "1" })
    assert.matches("↓ TrustSample$Node.next … 199,998 more TrustSample$Node the same way\n", text, 1, true)
    if require("sift.core").memory_budget(0) then  -- not under AddressSanitizer
      local _, small_err, small_code = helper.sift({ "top", path, "--max-memory", "3M" })
      assert.are.equal(1, small_code)
      assert.matches("^sift: .*: needs more memory than the budget of 3MB %(%-%-max%-memory%)\n$", small_err)
      local fixtures = helper.fixtures()  -- every command honours a budget, not only the heap's
      if fixtures then
        for _, args in ipairs {
          { "profile", fixtures .. "/trace/firefox-art-trace-streaming.trace", "--max-memory", "2M" },
          { "ofx", fixtures .. "/ofx/ofxparse/fidelity.ofx", "--max-memory", "1M" },
          { "crunch", path, os.tmpname(), "--max-memory", "2M" },
        } do
          local _, e, c = helper.sift(args)
          assert.are.equal(1, c, args[1])
          assert.matches("^sift: [^\n]+: needs more memory than the budget of [12]MB %(%-%-max%-memory%)\n$", e)
        end
      end
    end
    local _, usage_err, usage_code = helper.sift({ "top", path, "--max-memory", "lots" })
    assert.are.same({ 2, "sift: --max-memory: cannot read 'lots' (say 512M or 4G)\n" }, { usage_code, usage_err })
  end)
end)

describe("--model jvm against the JVM's own GC.class_histogram #heavy", function()
  for _, layout in ipairs(LAYOUTS) do
    it("gives every class's count and bytes with " .. layout.args, function()
      local path = dump(layout)
      if not path then return end
      local heap <close> = assert(sift.open(path))
      local l = heap:jvm_layout()
      assert.are.same({ true, layout.header, layout.oop, "jdk15" }, { l.inferred, l.header, l.oop, l.algorithm })
      local jvm = helper.class_histogram(helper.read(path .. ".histo"))
      local mine, classes = {}, 0
      for _, r in ipairs(heap:histogram("jvm")) do mine[r.class] = { count = r.count, bytes = r.shallow } end
      for name, r in pairs(jvm) do
        assert.are.same(r, mine[name], name)
        classes = classes + 1
      end
      for name in pairs(mine) do assert.truthy(jvm[name], name .. " is not in the JVM's histogram") end
      assert.is_true(classes > 250)
      for _, name in ipairs { "java.lang.ref.WeakReference", "java.lang.ref.SoftReference", "int[][]",
          "java.lang.Object[][]", "java.lang.Class", "java.lang.Thread" } do
        assert.truthy(jvm[name], name)
      end
      local accessor
      for name in pairs(jvm) do accessor = accessor or name:match("^jdk%.internal%.reflect%.GeneratedMethodAccessor") end
      assert.truthy(accessor, "no generated reflection accessor in the dump")
    end)
  end

  it("matches jmap's histograms of JDK 5 and 6 dumps as MAT's TestInstanceSizes expects", function()
    local dir = helper.fixture("hprof/eclipse-mat")
    if not dir then return end
    -- instance sizes per class (and, where counts agree, array totals);
    -- MAT expects one mismatch on the JDK 5 dump, none on the others
    for name, expected in pairs { sun_jdk5_13_x32 = 1, sun_jdk6_18_x32 = 0, sun_jdk6_18_x64 = 0 } do
      local heap <close> = assert(sift.open(dir .. "/" .. name .. ".hprof"))
      assert.are.equal("legacy", heap:jvm_layout().algorithm)
      local mine = {}
      for _, r in ipairs(heap:histogram("jvm")) do mine[r.class] = r end
      local checked, wrong = 0, 0
      local text = helper.read(dir .. "/histogram_" .. name .. ".txt")
      for count, bytes, class in text:gmatch("(%d+)%s+(%d+)%s+(%S+)") do
        local r = not class:match("^<") and mine[hprof.normalize(class)]
        if r and r.count == tonumber(count) and class ~= "java.lang.Class" then
          checked = checked + 1
          if r.shallow ~= tonumber(bytes) then wrong = wrong + 1 end
        end
      end
      assert.is_true(checked >= 60, name)
      assert.are.equal(expected, wrong, name)
    end
  end)
end)

describe("the heap commands and the REPL on every dump of the fixtures #sanitized", function()
  it("never end in an internal error", function()
    if not helper.fixtures() then return pending("no fixtures") end
    local cli = require "sift.cli"
    local sink = { write = function() end }
    local checked = 0
    local files = helper.fixture_files("hprof")
    for _, rel in ipairs(helper.fixture_files("bmd")) do files[#files + 1] = rel end
    for _, rel in ipairs(files) do
      local file = helper.fixture(rel)
      if (rel:match("%.hprof$") or rel:match("%.hprof%.gz$") or rel:match("%.bin$") or rel:match("%.bz2$")
          or rel:match("%.android%-hprof$") or rel:match("%.bmd$")) then
        for _, args in ipairs {
          { "path", file, "--class", "java.lang.String", "--limit", "3", "-q" },
          { "path", file, "--class", "java.lang.String", "--limit", "3", "--merge", "--json", "-q" },
          { "top", file, "-n", "3", "--model", "jvm", "-q" },
          { "dominators", file, "--depth", "2", "-q" },
          { "leaks", file, "--suspects", "-q" },
        } do
          local errors = {}
          local status = cli.main(args, { out = sink, err = { write = function(_, ...)
            for _, s in ipairs { ... } do errors[#errors + 1] = s end
          end } })
          local err = table.concat(errors)
          assert.is_nil(err:match("internal error"), table.concat(args, " ") .. ": " .. err)
          assert.truthy(status == 0 or (status == 1 and err:match("^sift: ")), table.concat(args, " ") .. ": " .. err)
        end
        -- and the REPL: help, an object of every kind shown, the top retainers
        local input = helper.tmpfile(table.concat({ "help()",
          "for _, k in ipairs { 'instance', 'object_array', 'primitive_array', 'class' } do",
          "  for o in heap:objects() do if o:kind() == k then show(o) help(o) break end end",
          "end",
          "for _, r in ipairs(heap:top(3)) do print(r.object, r.retained) end" }, "\n") .. "\n")
        local _, rerr, rcode = helper.sift({ "repl", file, "-q" }, "< " .. helper.quote(input))
        os.remove(input)
        assert.are.same({ 0, "" }, { rcode, (rerr:gsub("sift: [^\n]*: warning: [^\n]*\n", "")) }, rel)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 30, checked)
  end)
end)
