-- The heap graph: retained sizes against their definition (brute force),
-- VisualVM's paths and sizes on the JVM fixtures, and structures made at
-- test time with jcmd (spec/java/GraphSample.java) checked by hand.
local sift = require "sift"
local helper = require "spec.helper"

local function open(rel, opts)
  local path = helper.fixture(rel)
  return path and assert(sift.open(path, opts))
end

local function steps(path)
  local out = {}
  for i, st in ipairs(path) do out[i] = st.label or "?" end
  return out
end

describe("retained sizes", function()
  -- the retained set of X is what no GC root reaches once X is removed
  -- (Reference.referent not followed): checked object by object
  local function check_definition(heap, every)
    heap:dominators()
    local n, checked = 0, 0
    for obj in heap:objects() do
      n = n + 1
      if n % every == 0 then
        local retained = heap:retained(obj)
        local count, bytes = heap.index:unreachable_without((select(2, require("sift.core").object_parts(obj))))
        if retained then
          assert.are.equal(bytes, retained, tostring(obj))
          assert.are.equal(count, #heap:retained_set(obj), tostring(obj))
          checked = checked + 1
        else
          assert.are.equal(0, count)  -- an unreachable object frees nothing more
        end
      end
    end
    return checked
  end

  it("match the definition on every object of a small dump (hprof-32.bin)", function()
    local heap = open("hprof/hprof-slurp/hprof-32.bin")
    if not heap then return end
    assert.is_true(check_definition(heap, 1) > 2000)
  end)

  it("match the definition on a sample of a JDK 17 dump and an Android dump", function()
    local jdk = open("hprof/generated-jdk17/leaky_jdk17_all.hprof")
    if not jdk then return end
    assert.is_true(check_definition(jdk, 37) > 300)
    assert.is_true(check_definition(open("hprof/android/ahat/test-dump-base.hprof"), 41) > 300)
  end)

  -- per class, as a walk of the dominator tree in Lua counts them: an
  -- instance's retained size unless an instance of its class is above it
  -- (class objects and instances of unknown classes one group, not
  -- shown); with a heap named, only that heap's objects count or hide
  local function walked_by_class(heap, which)
    local sums, active, stack = {}, {}, {}
    for i, c in ipairs(heap:dominated(nil)) do stack[i] = { obj = c } end
    while #stack > 0 do
      local top = table.remove(stack)
      if top.leave then
        active[top.leave] = nil
      else
        local obj, key = top.obj, nil
        if not which or obj:heap() == which then
          key = obj:kind() == "class" and "?" or obj:class_name() or "?"
        end
        if key and not active[key] then
          active[key] = true
          sums[key] = (sums[key] or 0) + heap:retained(obj)
          stack[#stack + 1] = { leave = key }
        end
        for _, c in ipairs(heap:dominated(obj)) do stack[#stack + 1] = { obj = c } end
      end
    end
    sums["?"] = nil
    local rows = {}
    for name, bytes in pairs(sums) do
      if bytes > 0 then rows[#rows + 1] = name .. " " .. bytes end  -- (a class retaining nothing: no row)
    end
    table.sort(rows)
    return rows
  end
  local function rows_of(list)
    local rows = {}
    for i, row in ipairs(list) do rows[i] = row.class .. " " .. row.retained end
    table.sort(rows)
    return rows
  end

  it("per class are what a walk of the dominator tree counts (hprof-32.bin; a LeakCanary dump's app heap)", function()
    local heap = open("hprof/hprof-slurp/hprof-32.bin")
    if not heap then return end
    heap:dominators()
    local want = walked_by_class(heap)
    assert.is_true(#want > 100)
    assert.are.same(want, rows_of(heap:retained_by_class()))
    local android = open("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    android:dominators()
    want = walked_by_class(android, "app")
    assert.is_true(#want > 20 and #want < #walked_by_class(android))
    assert.are.same(want, rows_of(android:retained_by_class("app")))
  end)

  it("count each object once per class, and sum to the reachable heap", function()
    local heap = open("hprof/generated-jdk17/leaky_jdk17_live.hprof")
    if not heap then return end
    local summary = heap:dominators()
    local by_class = {}
    for _, row in ipairs(heap:retained_by_class()) do by_class[row.class] = row.retained end
    assert.are.equal(10 * (16 + 10000 + 14 + 8) + (16 + 20000), by_class["LeakyApp$Leaked"])  -- shark sizes
    local total = 0
    for _, obj in ipairs(heap:dominated(nil)) do total = total + heap:retained(obj) end
    local all = 0
    for obj in heap:objects() do all = all + heap:shallow(obj) end
    local u = heap:unreachable()
    assert.are.equal(all - u.bytes, total)
    assert.are.equal(summary.unreachable, u.count)
    -- the same rows with progress, which ends at twice the objects; false stops it, an error is raised again
    local calls = {}
    local rows = heap:retained_by_class(nil, { progress = function(done, n) calls[#calls + 1] = { done, n } end })
    local n = 2 * heap:info().objects
    assert.are.same(heap:retained_by_class(), rows)
    assert.are.same({ n, n }, calls[#calls])
    for i = 2, #calls do assert.is_true(calls[i][1] >= calls[i - 1][1]) end
    assert.are.same({ nil, "cancelled" }, { heap:retained_by_class(nil, { progress = function() return false end }) })
    assert.has_error(function() heap:retained_by_class(nil, { progress = function() error("stop here", 0) end }) end,
      "stop here")
  end)
end)

describe("retained sizes past 4 GB", function()
  -- kept in 32 bits while every one fits (csrc/heap/dominators.c), in 64
  -- once one does not: three arrays of 2 GiB each (their elements left out
  -- of the dump, 0xC3) held by one Object[]
  it("are exact when the heap's objects total more than 4 GB", function()
    local w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    local object = w:class("java.lang.Object")
    local array = w:class("java.lang.Object[]", { super = object })
    local big = {}
    for i = 1, 3 do big[i] = w:primitive_array_nodata("long", 1 << 28) end
    local holder = w:object_array(array, big)
    w:root("jni_global", holder)
    local small = w:primitive_array("long", { 1, 2 })
    w:root("jni_global", small)
    local heap = assert(sift.open(helper.tmpfile(w:bytes())))
    heap:dominators()
    local holder_obj = heap:object(holder)
    assert.are.same({ 3 * 8 * (1 << 28) + 3 * 8, 8 * (1 << 28), 16 },
      { heap:retained(holder_obj), heap:retained(heap:object(big[2])), heap:retained(heap:object(small)) })
    assert.are.equal(holder_obj, heap:dominated(nil, 1)[1])
    assert.are.equal(3 * 8 * (1 << 28) + 3 * 8 + 16, heap:reachable_bytes())
  end)
end)

describe("path searches one after another", function()
  -- the first search stops at a, whose field is b's shortest path: the
  -- second, going on from there, must still follow it (a longer path
  -- through two holders leads to b as well)
  it("go on from the last one's stop with what it had still to follow", function()
    local w = dofile("spec/hprof_writer.lua").new { version = "1.0.2", id_size = 8 }
    local object = w:class("java.lang.Object")
    local holder = w:class("Holder", { super = object, fields = { { "kept", "object" } } })
    local root = w:class("Root", { super = object, statics = { { "a", "object" }, { "b", "object" } } })
    local b = w:instance(object, {})
    local a = w:instance(holder, { kept = b })
    w:set_static(root, "b", w:instance(holder, { kept = w:instance(holder, { kept = b }) }))
    w:set_static(root, "a", a)
    w:root("sticky_class", root)
    local file = helper.tmpfile(w:bytes())
    local heap = assert(sift.open(file))
    assert.are.same({ "root sticky_class", "static Root.a" }, steps(heap:path_to_root(heap:object(a))))
    assert.are.same({ "root sticky_class", "static Root.a", "Holder.kept" }, steps(heap:path_to_root(heap:object(b))))
    -- a rule read by the search starts it again: b's path is now the longer one
    heap:reference_rules { { class = "Root", static = "a", rule = "skip" } }
    assert.are.same({ "root sticky_class", "static Root.b", "Holder.kept", "Holder.kept" },
      steps(heap:path_to_root(heap:object(b))))
    heap:close()
    os.remove(file)
  end)
end)

describe("VisualVM's nearest-root paths and retained sizes (--model visualvm)", function()
  -- generated-jdk17/*.visualvm-jfluid-heap.txt list, per instance, its
  -- shallow and retained size and its path to the nearest GC root
  local ROOTS = { ["sticky class"] = "sticky_class", ["thread object"] = "thread_object",
                  ["JNI global"] = "jni_global", ["Java frame"] = "java_frame" }

  for _, name in ipairs { "leaky_jdk17_live", "leaky_jdk17_all" } do
    it("are reproduced on " .. name, function()
      local heap = open("hprof/generated-jdk17/" .. name .. ".hprof")
      if not heap then return end
      heap:dominators { model = "visualvm" }
      local oracle = helper.read(helper.fixture("hprof/generated-jdk17/" .. name .. ".hprof.visualvm-jfluid-heap.txt"))
      local checked = 0
      for id, shallow, retained, path in oracle:gmatch("id=0x(%x+) shallow=(%d+) retained=(%d+) path: ([^\n]+)") do
        local obj = assert(heap:object(tonumber(id, 16)))
        assert.are.equal(tonumber(shallow), heap:shallow(obj, "visualvm"), id)
        local nodes = select(2, path:gsub(" <%- ", "")) + 1
        local root = path:match("%[GC root: ([^%]]-)%s*%]")
        local found = heap:path_to_root(obj)
        if root then
          assert.are.equal(nodes, #found, id)
          assert.are.equal(ROOTS[root], found[1].root, id)
          assert.are.equal(tonumber(retained), heap:retained(obj), id)
        else  -- only weakly reachable: no strong path, nothing retained (0 in VisualVM)
          assert.is_nil(found)
          assert.is_nil(heap:retained(obj))
          assert.are.equal(0, tonumber(retained))
        end
        checked = checked + 1
      end
      assert.is_true(checked >= 16)
    end)
  end
end)

describe("paths, dominators and sizes on structures made with jcmd", function()
  local heap, sample

  setup(function()
    local path, why = helper.jvm_dump("GraphSample", "-all", "-Xmx256m")
    if not path then print("graph_spec: skipped: " .. why) return end
    heap = assert(sift.open(path))
    heap:dominators()
    sample = heap:class("GraphSample")
  end)

  it("static array of items: paths through the static and the index, sizes by hand", function()
    if not heap then return pending("no JDK") end
    local cache = sample:static("CACHE")
    local item = cache[2]
    local path = heap:path_to_root(item)
    assert.are.same({ "root sticky_class", "static LauncherHelper.appClass", "static GraphSample.CACHE", "[1]" },
      steps(path))
    assert.are.equal(8 + 200, heap:retained(item))                 -- Item: one reference; byte[200]
    assert.are.equal(3 * 8 + (8 + 100) + (8 + 200) + (8 + 300), heap:retained(cache))
    assert.are.equal(cache, heap:idom(item))
  end)

  it("chain of nodes: the path walks it, each node retains the rest", function()
    if not heap then return pending("no JDK") end
    local head = sample:static("CHAIN")
    local last = head.next.next.next.next
    local path = heap:path_to_root(last.value)
    assert.are.same({ "static GraphSample.CHAIN", "GraphSample$Node.next", "GraphSample$Node.next",
      "GraphSample$Node.next", "GraphSample$Node.next", "GraphSample$Node.value" },
      { table.unpack(steps(path), 3) })
    assert.are.equal(5 * 16 + 1000, heap:retained(head))            -- Node: two references
    assert.are.equal(16 + 1000, heap:retained(last))
  end)

  it("weakly reachable object: no strong path, retained by nobody", function()
    if not heap then return pending("no JDK") end
    local weak = sample:static("WEAK")
    local item = weak.referent
    assert.is_not_nil(item)
    assert.is_nil(heap:path_to_root(item))
    assert.are.same({ nil, "unreachable" }, { heap:idom(item) })
    assert.are.equal(heap:shallow(weak), heap:retained(weak))  -- the reference keeps only itself
  end)

  it("cycle: the object the static holds retains both", function()
    if not heap then return pending("no JDK") end
    local a = sample:static("CYCLE")
    assert.are.equal(a, a.b.a)
    assert.are.equal(16 + 64 + 16 + 32, heap:retained(a))
    assert.are.equal(16 + 32, heap:retained(a.b))
    assert.are.equal(a, heap:idom(a.b))
  end)

  it("object held only by a thread's stack: a Java-frame root with the thread's name", function()
    if not heap then return pending("no JDK") end
    local local_item
    for item in heap:class("GraphSample$Item"):instances() do
      if #item.payload == 700 then local_item = item end
    end
    local path = heap:path_to_root(local_item)
    assert.are.equal(1, #path)
    assert.are.same({ "java_frame", "holder-thread" }, { path[1].root, path[1].thread })
    assert.are.same({ "GraphSample", "lambda$main$0", "GraphSample.java", 40 }, { path[1].frame_info.class,
      path[1].frame_info.method, path[1].frame_info.source, path[1].frame_info.line })  -- the frame, as MAT's root
    assert.are.equal(8 + 700, heap:retained(local_item))
  end)

  it("a million-node list: no stack overflow, exact sizes", function()
    if not heap then return pending("no JDK") end
    local head = sample:static("LONG")
    assert.are.equal(1000000 * 8, heap:retained(head))              -- Link: one reference
    local node = head
    for _ = 1, 3 do node = node.next end
    assert.are.equal((1000000 - 3) * 8, heap:retained(node))
    assert.are.equal(head.next.next, heap:idom(node))
  end)

  it("merges shortest paths and lists referrers", function()
    if not heap then return pending("no JDK") end
    local cache = sample:static("CACHE")
    local trees = heap:paths { cache[1], cache[2], cache[3] }
    assert.are.equal(1, #trees)
    local node = trees[1]
    while #node.children == 1 do node = node.children[1] end
    assert.are.equal(3, #node.children)          -- they part at the array
    assert.are.equal(cache, node.step.object)
    assert.are.equal(3, node.count)
    assert.are.same({ cache }, heap:referrers(cache[2]))
    assert.are.equal("class GraphSample", tostring(heap:referrers(cache)[1]):match("^class [^@]+"))
  end)

  -- each search goes on from where the last one stopped (graph.h's
  -- hg_search_run): its paths must be those of one search for all
  it("finds one object's path after another with the paths one search for all of them finds", function()
    if not heap then return pending("no JDK") end
    -- (after the referent of the WeakReference planted: an object with no
    -- strong path whatever else the dump holds, searched for last)
    local function every_9973th(h)
      local list, n = { h:class("GraphSample"):static("WEAK").referent }, 0
      for obj in h:objects() do
        n = n + 1
        if n % 9973 == 0 then list[#list + 1] = obj end
      end
      return list
    end
    -- (a path down the million-node list as one step with its count)
    local function text(h, obj)
      local path = h:path_segments(obj, true)
      if not path then return "none" end
      local out = {}
      for i, st in ipairs(path) do out[i] = ("%s %s x%d"):format(st.label or "?", tostring(st.object), st.count) end
      return table.concat(out, " / ")
    end
    local all_heap, each_heap = assert(sift.open(heap.path)), assert(sift.open(heap.path))
    local all, each = every_9973th(all_heap), every_9973th(each_heap)
    local want, calls = {}, {}
    all_heap:path_search(all, { progress = function(done, total) calls[#calls + 1] = { done, total } end })
    for i, obj in ipairs(all) do want[i] = text(all_heap, obj) end
    local n = all_heap:info().objects
    assert.is_true(#calls >= 10, #calls .. " calls")
    for i, c in ipairs(calls) do
      assert.is_true(c[2] == n and c[1] <= n and (i == 1 or c[1] > calls[i - 1][1]))
    end
    -- stopped by its progress at its first call, the search goes on from there the next time
    local asked = 0
    local none_found, why = each_heap:path_search(each, { progress = function() asked = asked + 1 return false end })
    assert.are.same({ nil, "cancelled", 1 }, { none_found, why, asked })
    local got, none = {}, 0
    for i = #each, 1, -1 do  -- (backwards: most were expanded by an earlier search)
      each_heap:path_search { each[i] }
      got[i] = text(each_heap, each[i])
      if got[i] == "none" then none = none + 1 end
    end
    assert.are.same(want, got)
    assert.is_true(#each > 50 and none > 0 and none < #each, ("%d objects, %d with no path"):format(#each, none))
    -- a rule that changes what the search follows starts it again
    each_heap:reference_rules { { class = "GraphSample", static = "CACHE", rule = "skip" } }
    assert.is_nil(each_heap:path_to_root(each_heap:class("GraphSample"):static("CACHE")[1]))
    all_heap:close()
    each_heap:close()
  end)

  it("follows ignored references last or never, as rules say", function()
    if not heap then return pending("no JDK") end
    local h2 = assert(sift.open(heap.path))
    h2:reference_rules { { class = "GraphSample", static = "CACHE", rule = "skip" } }
    assert.is_nil(h2:path_to_root(h2:class("GraphSample"):static("CACHE")[1]))
    h2:reference_rules { { class = "GraphSample", static = "CACHE", rule = "low" } }
    local path = h2:path_to_root(h2:class("GraphSample"):static("CACHE")[1])
    assert.is_true(path[3].low)
    h2:close()
  end)
end)
