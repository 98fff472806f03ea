-- The HPROF decoder, index and heap API on the real dumps in
-- ../shared/fixtures/hprof, checked against what each MANIFEST.md says the
-- source project (hprof-slurp, VisualVM, py-hprof, ahat, perflib) found.
local sift = require "sift"
local hprof = require "sift.heap"
local helper = require "spec.helper"

local heaps = {}  -- opened once per file and options

local function open(rel, opts)
  local key = rel .. (opts and opts.dump or "") .. (opts and opts.mapping or "")
  if heaps[key] == nil then
    local path = helper.fixture("hprof/" .. rel)
    if not path then return nil end
    heaps[key] = assert(sift.open(path, opts))
  end
  return heaps[key]
end

local function count(iter)
  local n = 0
  for _ in iter do n = n + 1 end
  return n
end

describe("sift.heap on hprof-slurp's dumps", function()
  it("counts records as hprof-slurp does (hprof-64.bin)", function()
    local heap = open("hprof-slurp/hprof-64.bin")
    if not heap then return end
    local info = heap:info()
    assert.are.same({ "1.0.1", 8, 10768, 474, 4149, 748, 2891, 10, 20 },
      { info.version, info.id_size, info.strings, info.classes, info.instances,
        info.object_arrays, info.primitive_arrays, info.stack_traces, info.stack_frames })
    assert.are.same({ thread_object = 9, jni_global = 5, java_frame = 22, sticky_class = 413, monitor_used = 4 },
      info.roots)
    assert.are.equal("2018-01-14T12:47:39Z", info.time)
  end)

  it("gives the threads' stack traces hprof-slurp prints", function()
    local heap = open("hprof-slurp/hprof-64.bin")
    if not heap then return end
    local found
    for _, t in ipairs(heap:threads()) do
      local f = t.frames[3]
      if f and f.method == "get" then found = t end
    end
    assert.truthy(found, "no thread waits in simple.Data.get")
    assert.are.same({ "wait", "java.lang.Object", "Object.java" },
      { found.frames[1].method, found.frames[1].class, found.frames[1].source })
    assert.are.same({ "simple.Data", "Data.java", 47 },
      { found.frames[3].class, found.frames[3].source, found.frames[3].line })
    assert.are.same({ "run", "simple.Consumer", 56 },
      { found.frames[4].method, found.frames[4].class, found.frames[4].line })
  end)

  it("lists the largest classes as hprof-slurp does, with counts", function()
    local heap = open("hprof-slurp/hprof-64.bin")
    if not heap then return end
    local rows = heap:histogram()
    -- hprof-slurp adds a 16-byte header per array (2 x id size); sift
    -- reports the dump's own data size (Shark's model), see docs/heap.md
    assert.are.same({ "int[]", 436, 2089368 - 436 * 16 }, { rows[1].class, rows[1].count, rows[1].shallow })
    assert.are.same({ "char[]", 1991 }, { rows[2].class, rows[2].count })
    local by_name = {}
    for _, r in ipairs(rows) do by_name[r.class] = r.count end
    assert.are.same({ 1516, 378, 126, 212 }, { by_name["java.lang.String"],
      by_name["java.util.LinkedList$Node"], by_name["java.lang.reflect.Field"], by_name["java.util.HashMap$Node"] })
  end)
end)

describe("sift.heap against VisualVM's heap library", function()
  -- *.visualvm-jfluid-heap.txt: VisualVM's counts for the same dumps;
  -- VisualVM reads the first heap dump of a file, so sift is asked for it
  local KIND = {
    ["JNI global"] = "jni_global", ["JNI local"] = "jni_local", ["Java frame"] = "java_frame",
    ["monitor used"] = "monitor_used", ["sticky class"] = "sticky_class", ["thread block"] = "thread_block",
    ["thread object"] = "thread_object", ["unknown"] = "unknown", ["native stack"] = "native_stack",
  }

  it("agrees on objects, classes, roots by kind and the top-10 class counts", function()
    if not helper.fixture("hprof") then return end
    local checked = 0
    for _, rel in ipairs(helper.fixture_files("hprof")) do
      local dump = rel:match("^hprof/(.+)%.visualvm%-jfluid%-heap%.txt$")
      if dump then
        local oracle = helper.read(helper.fixture(rel))
        local heap = open(dump, { dump = 1 })
        local info = heap:info()
        assert.are.equal(tonumber(oracle:match("summary.liveInstances=(%d+)")), info.objects - info.classes, dump)
        assert.are.equal(tonumber(oracle:match("\nclasses=(%d+)")), info.classes, dump)
        local kinds = {}
        for name, n in oracle:match("gcRootKinds={(.-)}"):gmatch("([^=,]+)=(%d+)") do
          kinds[KIND[name:match("^%s*(.-)%s*$")]] = tonumber(n)
        end
        assert.are.same(kinds, info.roots, dump)
        local counts = {}
        for _, r in ipairs(heap:histogram()) do counts[r.class] = r.count end
        for n, class in oracle:match("histogram.-\n(.-)\n[%a]"):gmatch("%s*(%d+) %d+ (%S+)") do
          assert.are.equal(tonumber(n), counts[class], dump .. " " .. class)
        end
        checked = checked + 1
      end
    end
    assert.are.equal(13, checked)
  end)

  it("reads the LeakyApp objects VisualVM describes (generated-jdk17)", function()
    local heap = open("generated-jdk17/leaky_jdk17_live.hprof")
    if not heap then return end
    local leaked = heap:class("LeakyApp$Leaked")
    assert.are.equal(11, leaked:instance_count())
    -- the dump's instance size is the field bytes (2 refs of 8 bytes);
    -- VisualVM's instanceSize=24 adds its object header model
    assert.are.equal(16, leaked.instance_size)
    local cache = heap:class("LeakyApp"):static("CACHE")
    assert.are.equal("java.util.ArrayList", cache:class_name())
    assert.are.equal(10, cache:field("size"))  -- a Java field named like a method: obj:field
    assert.is_function(cache.size)
    for i = 1, 10 do
      local item = cache.elementData[i]
      assert.are.equal("leaked-" .. (i - 1), item.name:string())
      assert.are.equal(10000, item.payload:length())
    end
    assert.are.same({ 0xfd5c0290, 0xfd5de4a8 }, { cache.elementData[1]:id(), cache.elementData[2]:id() })
    local chained = heap:class("LeakyApp"):static("HOLDER").head.next.next.value
    assert.are.equal("chained", chained.name:string())
    assert.are.equal(20000, #chained.payload)
    local d = heap:class("LeakyApp"):static("DERIVED")
    assert.are.same({ 0x11111111, 0x2222222222222222, 0x3333, "derived-d" }, { d.a, d.b, d.c, d.d:string() })
    local order = {}
    for name, _, class in d:fields() do order[#order + 1] = class.name:match("[^$]+$") .. "." .. name end
    -- the subclass's fields first, then the superclass's (ahat's order),
    -- each in source order: JDK 17's dumper writes a class's fields in
    -- reverse (HotSpot's FieldStream), which Class.fields keeps (the C
    -- layer's field numbers index it) and obj:fields() turns back
    assert.are.same({ "Derived.c", "Derived.d", "Base.a", "Base.b" }, order)
    local dumped = {}
    for i, f in ipairs(heap:class("LeakyApp$Derived").fields) do dumped[i] = f.name end
    assert.are.same({ "d", "c", "b", "a" }, dumped)
  end)

  it("keeps the weakly held object that only the -all dump has", function()
    local heap = open("generated-jdk17/leaky_jdk17_all.hprof")
    if not heap then return end
    assert.are.equal(12, heap:class("LeakyApp$Leaked"):instance_count())
    local weak = heap:class("LeakyApp"):static("WEAK")
    assert.are.equal("weakly-held", weak.referent.name:string())
  end)
end)

describe("sift.heap on py-hprof's example (MANIFEST expectations)", function()
  it("reads Cars field by field", function()
    local heap = open("py-hprof/example-java.hprof.bz2")
    if not heap then return end
    local cars = heap:class("com.example.Cars")
    assert.are.equal(1, cars:instance_count())
    local c = cars:instances()()
    local function car(v) return { v:class_name(), v.make:string(), v.numWheels } end
    assert.are.same({ "com.example.cars.Car", "Lolvo", 4 }, car(c.swe))
    assert.are.same({ "com.example.cars.Car", "Toy Yoda", 4 }, car(c.jap))
    assert.are.same({ "com.example.cars.Limo", "Stretch", 4 }, car(c.generic))
    assert.are.same({ "com.example.cars.Bike", "Fånark", 2 }, car(c.mine))
    assert.are.same({ "com.example.cars.Bike", "Axes", 2 }, car(c.redYellow))
    assert.are.same({ c.swe, c.jap, c.generic, c.mine, c.redYellow }, c.vehicles:elements())
    assert.are.equal(2, heap:class("com.example.cars.Car"):instance_count())
    assert.are.equal(5, count(heap:class("com.example.cars.Vehicle"):instances { subclasses = true }))
  end)

  it("reads the Arrays cases", function()
    local heap = open("py-hprof/example-java.hprof.bz2")
    if not heap then return end
    local a = heap:class("com.example.Arrays"):instances()()
    assert.are.same({ 1, 2, 3 }, a.i1:elements())
    assert.are.same({ { 10, 15 }, { 13, 11 } }, { a.i2[1]:elements(), a.i2[2]:elements() })
    assert.are.equal("hello", a.c1:string())
    assert.are.equal(a.c1, a.c2[1])
    assert.are.equal("world", a.c2[2]:string())
    assert.are.equal("h", a.c1[1])  -- a char is a one-character string
    assert.are.equal("int[2][]", tostring(a.i2):match("^[^@]+"))
  end)

  it("resolves shadowed fields: the most derived wins, a qualified name reaches the others", function()
    local heap = open("py-hprof/example-java.hprof.bz2")
    if not heap then return end
    local statics = {}
    for _, n in ipairs { "Base", "ShadowS", "ShadowIS", "ShadowSS" } do
      statics[#statics + 1] = heap:class("com.example." .. n):static("val")
    end
    assert.are.same({ 10, 13, 11, 12 }, statics)
    local i = heap:class("com.example.ShadowI"):instances()()
    local ii = heap:class("com.example.ShadowII"):instances()()
    local si = heap:class("com.example.ShadowSI"):instances()()
    assert.are.same({ 4, 5, 4, 4, 6 }, { i.val, ii.val, ii["ShadowI.val"], ii:field("val", "com.example.ShadowI"), si.val })
  end)
end)

describe("sift.heap on Android dumps", function()
  it("reads ahat's test dump with its R8 mapping", function()
    local heap = open("android/ahat/test-dump.hprof", { mapping = helper.fixture("hprof/android/ahat/test-dump.map") })
    if not heap then return end
    local stuff = heap:class("Main"):static("stuff")
    assert.are.equal("DumpedStuff", stuff:class_name())
    assert.are.same({ "hello, world", "Sigma (Ʃ) is not ASCII", "embedded\0...", "char thing" },
      { stuff.basicString:string(), stuff.nonAscii:string(), stuff.embeddedZero:string(), stuff.charArray:string() })
    assert.are.same({ "hello", "embed", "char ", "Sigma (Ʃ)", "hello, world" },
      { stuff.basicString:string(5), stuff.embeddedZero:string(5), stuff.charArray:string(5),
        stuff.nonAscii:string(9), stuff.basicString:string(50) })
    assert.is_nil(stuff.nullString)
    assert.is_nil(stuff.anObject:string())
    assert.are.same({ 3, 1, 2, 0 }, stuff.modifiedArray:elements())
    local big = stuff.bigArray
    assert.are.equal(1000000, #big)
    for _, i in ipairs { 0, 3, 1000, 999999 } do assert.are.equal((i * i) & 0xFF, big[i + 1] & 0xFF) end
    assert.are.equal(1, heap:class("DumpedStuff"):instance_count())
    assert.are.equal(0, heap:class("SuperDumpedStuff"):instance_count())
    assert.are.equal(1, count(heap:class("SuperDumpedStuff"):instances { subclasses = true }))
    assert.are.equal("class android.graphics.Bitmap", tostring(stuff.bitmapOne:class()))
    assert.matches("^DumpedStuff%$ObjectTree%[4%]@0x%x+$", tostring(stuff.gcPathArray))
    assert.matches("^byte%[1000000%]@0x%x+$", tostring(big))
    assert.are.equal("app", stuff:heap())
  end)

  it("tells ahat's base dump from the test dump", function()
    local base = open("android/ahat/test-dump-base.hprof", { mapping = helper.fixture("hprof/android/ahat/test-dump.map") })
    if not base then return end
    local stuff = base:class("Main"):static("stuff")
    assert.are.same({ 0, 1, 2, 3 }, stuff.modifiedArray:elements())
    assert.are.equal(400000, #stuff.bigArray)
  end)

  it("reproduces perflib's expectations on the Dialer dump", function()
    local heap = open("android/perflib/dialer.android-hprof")
    if not heap then return end
    local info = heap:info()
    assert.are.same({ classes = 38, instances = 918, object_arrays = 67, primitive_arrays = 421 }, info.heaps.app)
    assert.are.equal(3533, info.heaps.zygote.classes)
    local z = info.heaps.zygote
    assert.are.equal(38710, z.instances + z.object_arrays + z.primitive_arrays)
    local roots = 0
    for _, n in pairs(info.roots) do roots = roots + n end
    assert.are.equal(11193, roots)                 -- root sub-records (perflib drops the 11 thread roots)
    assert.are.equal(11182, roots - info.roots.thread_object)
    assert.are.equal(43687, info.objects)
    local counts = {}
    for _, r in ipairs(heap:histogram()) do counts[r.class] = r end
    assert.are.same({ 37, 1396 }, { counts["int[][]"].count, counts["java.lang.String[]"].count })
    local arr = heap:object(0xB0F69F58)
    assert.are.equal("int[10][]@0xb0f69f58", tostring(arr))
    assert.are.same({ 1, 2, 0 }, { #arr[1], #arr[2], #arr[3] })
    assert.are.equal(43224, #heap:object(0xB0D60401))
    local app, dialer = heap:class("android.app.Application"), heap:class("com.android.dialer.DialerApplication")
    assert.are.same({ 5, 5 }, { #app.fields, #dialer.fields })
    assert.are.same({ "android.content.ContextWrapper", "android.content.Context", "java.lang.Object" },
      { app.super.name, app.super.super.name, app.super.super.super.name })
    assert.is_nil(app.super.super.super.super)
    assert.is_nil(app.loader)
    assert.are.equal("dalvik.system.PathClassLoader", dialer.loader:class_name())
    local values = heap:class("java.lang.Thread$State"):static("$VALUES")
    assert.are.equal(6, #values)
    assert.are.same({ "NEW", 0 }, { values[1].name:string(), values[1].ordinal })
    assert.are.same({ "N", "E", "W" }, values[1].name.value:elements())
  end)

  it("reads every Android root kind of the synthetic dump, and its hprof-conv twin the same", function()
    local a = open("synthetic-android/synthetic_android.hprof")
    local b = open("synthetic-android/synthetic_android.hprof-conv.hprof")
    if not a then return end
    local ia, ib = a:info(), b:info()
    assert.are.same({ sticky_class = 2, interned_string = 1, finalizing = 1, debugger = 1,
      reference_cleanup = 1, vm_internal = 1, jni_monitor = 1, unreachable = 1 }, ia.roots)
    assert.are.same({ sticky_class = 2, unknown = 7 }, ib.roots)
    local function describe_all(heap)
      local out = {}
      for obj in heap:objects() do
        local fields = {}
        for name, v in obj:fields() do fields[#fields + 1] = name .. "=" .. tostring(v) end
        out[#out + 1] = { tostring(obj), obj:kind(), table.concat(fields, ","), obj:size() }
      end
      return out
    end
    assert.are.same(describe_all(a), describe_all(b))
    local leaky = a:class("com.example.Leaky"):instances()()
    assert.are.equal("abc", leaky:field("field"):bytes())
    assert.are.same({ "zygote", "app", "zygote" },
      { a:class("java.lang.Object").object:heap(), leaky:heap(), a:class("java.lang.Object[]").object:heap() })
    assert.are.same({ zygote = { classes = 2 }, app = { classes = 1, instances = 1, object_arrays = 1,
      primitive_arrays = 1 } }, ia.heaps)
    assert.is_nil(ib.heaps)  -- hprof-conv drops the heap tags
  end)
end)

describe("sift.heap on LeakCanary 1.x dumps (Dalvik)", function()
  -- the KeyedWeakReference whose key the test passes, and what it watches
  local function watched(heap, key)
    for ref in heap:class("com.squareup.leakcanary.KeyedWeakReference"):instances() do
      if ref.key:string() == key then return ref end
    end
  end

  it("finds the watched LeakyService and the path its MANIFEST gives", function()
    local heap = open("android/leakcanary-1.x/leak_service_binder.hprof")
    if not heap then return end
    local ref = watched(heap, "b3abfae6-2c53-42e1-b8c1-96b0558dbeae")
    assert.are.same({ "", "com.example.leakcanary.LeakyService", 0xb0fa7cb0, "app" },
      { ref.name:string(), ref.referent:class_name(), ref.referent:id(), ref.referent:heap() })
    local binders = heap:class("com.example.leakcanary.LeakyService"):static("leakAllTheBinders")
    local binder = binders.array[2]
    assert.are.equal("com.example.leakcanary.LeakyService$MyBinder", binder:class_name())
    assert.are.equal(ref.referent, binder.service)
    assert.are.equal(36, ref.referent:size())
  end)

  it("finds the other watched service in the 'ignored' dump", function()
    local heap = open("android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not heap then return end
    local ref = watched(heap, "6e524414-9581-4ce7-8690-e8ddf8b82454")
    assert.are.equal(0xb0f84720, ref.referent:id())
    local from_jni = 0
    for _, root in ipairs(heap:roots("jni_global")) do
      if root.object and root.object:class_name() == "com.example.leakcanary.LeakyService$MyBinder"
        and root.object.service == ref.referent then
        from_jni = from_jni + 1
      end
    end
    assert.are.equal(1, from_jni)
  end)
end)

describe("sift.heap on files with more than one heap dump", function()
  it("indexes the last dump by default and the one asked for", function()
    local last = open("eclipse-mat/oracle_jdk7_21_hprofagent.hprof")
    local first = open("eclipse-mat/oracle_jdk7_21_hprofagent.hprof", { dump = 1 })
    if not last then return end
    assert.are.same({ 2, 2, 3236 }, { last:info().dumps, last:info().dump, last:info().objects - last:info().classes })
    assert.are.same({ 1, 3205 }, { first:info().dump, first:info().objects - first:info().classes })
    local v, msg, code = sift.open(helper.fixture("hprof/eclipse-mat/oracle_jdk7_21_hprofagent.hprof"), { dump = 3 })
    assert.is_nil(v)
    assert.are.equal("unsupported", code)
    assert.matches("no heap dump 3: the file has 2", msg)
  end)
end)

describe("sift.heap on compressed dumps", function()
  it("opens gzip files, including jcmd's multi-member gzip", function()
    local heap = open("eclipse-mat/openjdk_jdk11_04_x64.hprof.gz")
    if not heap then return end
    local info = heap:info()
    assert.are.same({ "gzip", 186037 }, { info.compressed, info.objects - info.classes })
    local live = open("generated-jdk17/leaky_jdk17_live.hprof.gz")
    assert.are.equal(11, live:class("LeakyApp$Leaked"):instance_count())
  end)
end)

describe("sift.heap names", function()
  it("normalises JVM class names to dotted names", function()
    assert.are.same({ "java.lang.String", "java.lang.Object[]", "int[][]", "byte[]", "java.lang.String[]", "Foo" },
      { hprof.normalize("java/lang/String"), hprof.normalize("[Ljava/lang/Object;"), hprof.normalize("[[I"),
        hprof.normalize("[B"), hprof.normalize("java.lang.String[]"), hprof.normalize("Foo") })
  end)

  it("reads mappings and reports a malformed one", function()
    local path = helper.tmpfile("# comment\ncom.a.Original -> a.b:\n    int count -> c\n    void run() -> d\nbroken line\n")
    local m, msg, code = hprof.read_mapping(path)
    assert.is_nil(m)
    assert.are.equal("bad_header", code)
    assert.matches(":5: not a class line", msg)
    local f = io.open(path, "w")
    f:write("com.a.Original -> a.b:\n    int count -> c\n    void run() -> d\n")
    f:close()
    m = assert(hprof.read_mapping(path))
    os.remove(path)
    assert.are.same({ classes = { ["a.b"] = "com.a.Original" }, fields = { ["a.b"] = { c = "count" } } }, m)
  end)
end)
