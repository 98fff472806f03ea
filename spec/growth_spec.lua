-- sift growth on series of dumps jcmd takes now of one running
-- spec/java/GrowthSample.java: in "leak" mode each step keeps 100 more
-- objects in a static list; in "churn" mode each step makes and drops
-- 10,000 (nothing may be reported); in "map" mode a static HashMap keeps
-- 100 more while the JDK's time-zone cache keeps 20 more ZoneInfo, and two
-- classes grow where no one path holds them. The leak series crunched to
-- BMD too.
local cjson = require "cjson"
local helper = require "spec.helper"

local quote = helper.quote

describe("sift growth", function()
  it("finds the objects a leak adds at every step, by class and by the path that holds them", function()
    local dumps, dir = helper.jvm_series("GrowthSample", "leak", 4)
    if not dumps then return pending("no JDK") end
    local args = { "growth", "--json", "-q" }
    for _, d in ipairs(dumps) do args[#args + 1] = d end
    local out, err, code = helper.sift(args)
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    local by = {}
    for _, g in ipairs(r.classes) do by[g.class] = g end
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Leaked"].deltas)
    assert.are.same({ 100, 200, 300, 400 }, by["GrowthSample$Leaked"].counts)
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Payload[]"].deltas)  -- each Leaked's payload
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Payload"].deltas)
    assert.are.equal(3, #r.classes)
    assert.are.equal(1, #r.holders)
    assert.matches("class GrowthSample → static LEAKS → ArrayList → field elementData → Object%[%]$", r.holders[1].text)
    assert.are.same({ "java.util.ArrayList", "field elementData" },
      { r.holders[1].path[#r.holders[1].path - 1].class, r.holders[1].path[#r.holders[1].path - 1].ref })
    -- the same series as BMD (the app's names kept as text: BMD hashes the others)
    local bmd = { "growth", "--json", "-q" }
    for i, d in ipairs(dumps) do
      local b = ("%s/dump-%d.bmd"):format(dir, i)
      local _, cerr, ccode = helper.sift { "crunch", "-q", "--keep", "GrowthSample", d, b }
      assert(ccode == 0, cerr)
      bmd[#bmd + 1] = b
    end
    local from_bmd = cjson.decode((helper.sift(bmd)))
    local counts, held = {}, {}
    for _, g in ipairs(from_bmd.classes) do
      counts[g.class], held[g.class] = g.deltas, g.holder and g.holder.text
      assert(g.holder or g.reason, g.class .. " has neither a holder nor a reason")
    end
    assert.are.same({ 100, 100, 100 }, counts["GrowthSample$Leaked"])
    -- (the statics' names are hashed: BMD keeps only the names --keep asks for)
    for _, class in ipairs { "GrowthSample$Leaked", "GrowthSample$Payload" } do
      assert.matches("→ class GrowthSample → static Hash%$%-?%d+ → ArrayList → field elementData → Object%[%]$", held[class])
    end
    out = helper.sift { "growth", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.matches("GrowthSample%$Leaked: 100 → 200 → 300 → 400 instances %(%+100, %+100, %+100 per step%)", out)
    os.execute("rm -rf " .. quote(dir))
  end)

  it("names the program's map as the holder of what the map keeps, the JDK's cache of what it keeps, or says why not", function()
    local dumps, dir = helper.jvm_series("GrowthSample", "map", 4)
    if not dumps then return pending("no JDK") end
    local out, err, code = helper.sift { "growth", "--json", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.are.same({ 0, "" }, { code, err })
    local valid, problems = helper.schema_problems("growth.schema.json", out)
    assert(valid, problems)
    local r = cjson.decode(out)
    local by = {}
    for _, g in ipairs(r.classes) do
      by[g.class] = g
      assert(g.holder or g.reason, g.class .. " has neither a holder nor a reason")
    end
    local function steps(c) return { c[2] - c[1], c[3] - c[2], c[4] - c[3] } end
    -- the program's map holds its entries, their keys and values: never the Integer cache
    local map = "class LauncherHelper → static appClass → class GrowthSample → static BY_ID → HashMap → field table → "
      .. "HashMap$Node[]"
    for _, class in ipairs { "GrowthSample$Leaked", "GrowthSample$Payload", "GrowthSample$Payload[]",
                             "java.util.HashMap$Node", "java.lang.Integer" } do
      local g = by[class]
      assert.are.same({ class, map, { 100, 200, 300, 400 }, 1 }, { class, g.holder.text, g.holder.counts, g.holder.share })
    end
    assert.are.same({ 100, 100, 100 }, by["GrowthSample$Leaked"].deltas)
    -- the JDK's cache holds the time zones it read, and its own entries
    local zones = "class ZoneInfoFile → static zones → ConcurrentHashMap → field table → ConcurrentHashMap$Node[]"
    assert.are.same({ 20, 20, 20 }, by["sun.util.calendar.ZoneInfo"].deltas)
    for _, class in ipairs { "sun.util.calendar.ZoneInfo", "java.util.concurrent.ConcurrentHashMap$Node" } do
      local g = by[class]
      assert.are.same({ class, zones, { 20, 20, 20 } }, { class, g.holder.text, steps(g.holder.counts) })
    end
    assert.are.same({ "java.util.concurrent.ConcurrentHashMap", "field table" },
      { by["sun.util.calendar.ZoneInfo"].holder.path[2].class, by["sun.util.calendar.ZoneInfo"].holder.path[2].ref })
    -- no path for these two: said why
    assert.are.same({ 6, 6, 6 }, by["GrowthSample$Spread"].deltas)
    assert.are.equal("no single path: 6 paths each grow by less than 5 at some step; they meet at class LauncherHelper "
      .. "→ static appClass → class GrowthSample → static SHELVES → GrowthSample$Shelves", by["GrowthSample$Spread"].reason)
    assert.are.same({ 101, 201, 301, 401 }, by["GrowthSample$Finalizable"].counts)
    assert.are.equal("held only by objects without a strong path (unreachable, or only through weak, soft or finalizer "
      .. "references): 400 of 401 in the last dump, 100 of 101 in the first", by["GrowthSample$Finalizable"].reason)
    out = helper.sift { "growth", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.matches("\n  GrowthSample%$Spread: 6 → 12 → 18 → 24 instances %(%+6, %+6, %+6 per step%), %d+ bytes more\n"
      .. "    no holder: no single path: 6 paths", out)
    assert.matches("\nheld through: " .. map:gsub("[%$%[%]]", "%%%0") .. "\n  growing there: [^\n]*GrowthSample%$Leaked", out)
    os.execute("rm -rf " .. quote(dir))
  end)

  it("reports no growth for a program that only churns, and says what is wrong with a missing dump", function()
    local dumps, dir = helper.jvm_series("GrowthSample", "churn", 4)
    if not dumps then return pending("no JDK") end
    local out, err, code = helper.sift { "growth", "--json", "-q", dumps[1], dumps[2], dumps[3], dumps[4] }
    assert.are.same({ 0, "" }, { code, err })
    local r = cjson.decode(out)
    assert.are.same({ {}, {} }, { r.classes, r.holders })
    assert.matches('"classes":%[%]', out)  -- (an array, also when empty)
    out, err, code = helper.sift { "growth", dumps[1], dir .. "/missing.hprof" }
    assert.are.same({ "", 1 }, { out, code })
    assert.matches("^sift: .-missing%.hprof: No such file or directory\n$", err)
    os.execute("rm -rf " .. quote(dir))
  end)

  -- the tree of holder paths each dump is matched by (heap:path_tree, in C
  -- over the CSR of the references) against spec/paths_tree_oracle.lua's
  -- search of one object at a time, node for node; on one thread, and on
  -- two from a block of two objects on (the search's blocks of the queue,
  -- search_blocks in csrc/heap/graph.c)
  local function compare(path, model, rules)
    local function tree(threads)
      local heap = assert(require("sift").open(path, { threads = threads }))
      heap:reference_rules(rules or {})
      local t = heap.index:path_tree(model)
      local o = threads == 1 and require("spec.paths_tree_oracle").path_tree(heap, model)
      heap:close()
      return t, o
    end
    local c, o = tree(1)
    local two = tree(2)
    for _, f in ipairs { "parent", "ref", "index", "kind", "class", "first", "count", "bytes", "unreached" } do
      assert.are.same(o[f], c[f], ("%s (%s): %s"):format(path, model, f))
      assert.are.same(o[f], two[f], ("%s (%s), two threads: %s"):format(path, model, f))
    end
    return #c.parent, c
  end

  it("reports the tree's progress to its end, and stops when the progress says so", function()
    local path = helper.fixture("hprof/hprof-slurp/hprof-64.bin")
    if not path then return pending("no fixtures") end
    local heap = assert(require("sift").open(path, { threads = 2 }))
    local total = 4 * heap:info().objects  -- (the CSR, the search, the labels, the nodes)
    local calls = {}
    local t = heap.index:path_tree("shark", function(done, all) calls[#calls + 1] = { done, all } end)
    for i = 2, #calls do assert.is_true(calls[i][1] >= calls[i - 1][1] and calls[i][2] == total) end
    assert.is_true(#calls >= 50)  -- (about one a percent)
    assert.are.same({ total, total }, calls[#calls])
    local plain = heap.index:path_tree("shark")
    for _, f in ipairs { "parent", "ref", "index", "class", "first", "count", "bytes", "unreached" } do
      assert.are.same(plain[f], t[f], f)
    end
    local asked = 0
    local none, why = heap.index:path_tree("shark", function() asked = asked + 1 return false end)
    assert.are.same({ nil, "cancelled", 1 }, { none, why, asked })
    assert.has_error(function() heap.index:path_tree("shark", function() error("stop here", 0) end) end, "stop here")
    assert.are.same(plain.count, heap.index:path_tree("shark").count)  -- (nothing left behind by the stops)
    heap:close()
  end)

  -- the two shapes the CSR's bookkeeping is for: Holder g's first field
  -- holds an id in no record, its second the object `kept`; class Target is
  -- reached first through the class of an instance (low priority), then by
  -- Holder u's field `cls`, and the instance comes after u in the dump
  it("holds an object by the reference its parent holds it by, past an id in no record and once promoted", function()
    local w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    local object = w:class("java.lang.Object")
    local holder = w:class("Holder", { super = object,
      fields = { { "missing", "object" }, { "kept", "object" }, { "cls", "object" } } })
    local target = w:class("Target", { super = object })
    local root = w:class("Root", { super = object, statics = { { "a", "object" }, { "b", "object" }, { "c", "object" } } })
    local kept = w:instance(object, {})
    local u = w:instance(holder, { cls = target.id })
    w:set_static(root, "a", w:instance(holder, { missing = 0xDEAD0, kept = kept }))
    w:set_static(root, "b", w:instance(holder, { kept = u }))
    w:set_static(root, "c", w:instance(target, {}))
    w:root("sticky_class", root)
    local file = helper.tmpfile(w:bytes())
    local n, t = compare(file, "shark")
    os.remove(file)
    local held = {}
    for i = 1, n do held[#held + 1] = ("%s %d %s"):format(t.ref[i], t.index[i], t.kind[i]) end
    assert.are.same({ "root sticky_class 0 class", "super 0 class", "static 1 instance", "class 0 class",
      "static 2 instance", "field 2 instance", "field 3 class", "field 2 instance", "static 3 instance" }, held)
    -- the tree of the dump a writer made, under a rule making Holder's
    -- field `missing` low: its nodes as "parent reference index kind"
    local function low_missing_tree(writer)
      local path = helper.tmpfile(writer:bytes())
      local count, tree = compare(path, "shark", { { class = "Holder", field = "missing", rule = "low" } })
      os.remove(path)
      local nodes = {}
      for i = 1, count do
        nodes[i] = ("%d %s %d %s"):format(tree.parent[i], tree.ref[i], tree.index[i], tree.kind[i])
      end
      return nodes, tree
    end
    -- a field the rules make low, ahead of a normal one to the same object:
    -- x, reached first at low priority through another Holder's `missing`,
    -- is promoted by p's `kept` and held by p's first reference to it
    w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    object = w:class("java.lang.Object")
    holder = w:class("Holder", { super = object, fields = { { "missing", "object" }, { "kept", "object" } } })
    root = w:class("Root", { super = object, statics = { { "a", "object" }, { "b", "object" } } })
    local x = w:instance(object, {})
    local p = w:instance(holder, { missing = x, kept = x })
    w:set_static(root, "a", w:instance(holder, { missing = x }))
    w:set_static(root, "b", w:instance(holder, { kept = p }))
    w:root("sticky_class", root)
    held, t = low_missing_tree(w)
    n = #held
    assert.are.same({ 7, 6, "field", 1 }, { n, t.parent[n], t.ref[n], t.index[n] })
    -- the same holder's low field, then its normal one, to x: x is promoted
    -- by its own parent, still held by the first (field 1), and expanded at
    -- normal priority, so that it, not h3 (a level deeper on the path from
    -- b), holds the Leaf
    w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    object = w:class("java.lang.Object")
    holder = w:class("Holder", { super = object, fields = { { "missing", "object" }, { "kept", "object" } } })
    local leaf = w:class("Leaf", { super = object })
    root = w:class("Root", { super = object, statics = { { "a", "object" }, { "b", "object" } } })
    local y = w:instance(leaf, {})
    x = w:instance(holder, { kept = y })
    local h3 = w:instance(holder, { kept = y })
    w:set_static(root, "a", w:instance(holder, { missing = x, kept = x }))
    w:set_static(root, "b", w:instance(holder, { kept = w:instance(holder, { kept = h3 }) }))
    w:root("sticky_class", root)
    held, t = low_missing_tree(w)
    assert.are.same({ "0 root sticky_class 0 class", "1 super 0 class", "1 static 1 instance", "3 class 0 class",
      "3 field 1 instance", "5 field 2 instance", "6 class 0 class", "1 static 2 instance", "8 field 2 instance" }, held)
    assert.are.same({ 1, 1, 2 }, { t.count[5], t.count[6], t.count[9] })  -- x; the Leaf; h2 and h3, a run
    -- h's low field to c, its normal field to d, its normal field to c
    -- again: c is queued where that last reference promotes it, after d, so
    -- d, not c, holds the Leaf both hold
    w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    object = w:class("java.lang.Object")
    holder = w:class("Holder", { super = object,
      fields = { { "missing", "object" }, { "kept", "object" }, { "again", "object" } } })
    local box = w:class("Box", { super = object, fields = { { "leaf", "object" } } })
    leaf = w:class("Leaf", { super = object })
    root = w:class("Root", { super = object, statics = { { "a", "object" }, { "b", "object" } } })
    y = w:instance(leaf, {})
    local c, d = w:instance(box, { leaf = y }), w:instance(box, { leaf = y })
    w:set_static(root, "a", w:instance(holder, { missing = c, kept = d, again = c }))
    w:set_static(root, "b", w:instance(object, {}))  -- (h in a block of two: search_blocks)
    w:root("sticky_class", root)
    held = low_missing_tree(w)
    assert.are.same({ "0 root sticky_class 0 class", "1 super 0 class", "1 static 1 instance", "3 class 0 class",
      "3 field 2 instance", "5 class 0 class", "5 field 1 instance", "7 class 0 class", "3 field 1 instance",
      "1 static 2 instance" }, held)  -- (5: d, by h's field 2; 7: the Leaf, by d; 9: c, by h's field 1)
  end)

  -- (#once: the oracle is Lua; the C it checks runs under ASan above and in
  -- the series) the old Eclipse MAT dumps hold ids in no record; most
  -- fixtures have objects reached at low priority first, then promoted
  it("holds every object where the Lua search holds it, on a jcmd dump and the fixtures #once", function()
    local dump = helper.jvm_dump("HeapSample")
    if dump then
      for _, model in ipairs { "shark", "jvm" } do assert.is_true(compare(dump, model) > 300) end
    end
    local root = helper.fixture("hprof")
    if not root then return end
    local nodes = {}
    for _, rel in ipairs { "generated-jdk17/leaky_jdk17_live.hprof", "android/ahat/test-dump.hprof",
                           "android/leakcanary-1.x/leak_service_binder.hprof", "eclipse-mat/sun_jdk6_18_x64.hprof",
                           "eclipse-mat/oracle_jdk7_21_x64.hprof", "../bmd/jdk17-sample.id4.bmd" } do
      nodes[#nodes + 1] = compare(root .. "/" .. rel, "shark")
    end
    assert.are.same({ 3976, 3494, 15229, 5147, 1948, 3851 }, nodes)
  end)
end)
