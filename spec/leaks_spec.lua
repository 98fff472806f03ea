-- Leak analysis: the scenarios Shark's tests check (leakcanary/EXPECTED.md)
-- on dumps written by spec/hprof_writer.lua, and the LeakCanary 1.x dumps.
local sift = require "sift"
local leaks = require "sift.heap.leaks"
local helper = require "spec.helper"
local writer = dofile("spec/hprof_writer.lua")

local KEY = "39efcc1a-67bf-2040-e7ab-3fc9f94731dc"

-- a JVM-style dump with java.lang.String, Reference and LeakCanary's
-- KeyedWeakReference, as Shark's HprofWriterHelper writes them
local function base()
  local w = writer.new { version = "1.0.2", id_size = 8 }
  local t = { w = w }
  t.object = w:class("java.lang.Object")
  t.char_array = w:class("char[]", { super = t.object })
  t.string = w:class("java.lang.String", { super = t.object, fields = { { "value", "object" }, { "hash", "int" } } })
  t.reference = w:class("java.lang.ref.Reference", { super = t.object, fields = { { "referent", "object" } } })
  t.weak = w:class("java.lang.ref.WeakReference", { super = t.reference })
  t.keyed = w:class("leakcanary.KeyedWeakReference", { super = t.weak,
    fields = { { "key", "object" }, { "name", "object" }, { "watchUptimeMillis", "long" },
               { "retainedUptimeMillis", "long" } },
    statics = { { "heapDumpUptimeMillis", "long", 30000 } } })
  t.leaking = w:class("Leaking", { super = t.object })
  function t.str(s)
    local chars = {}
    for _, c in utf8.codes(s) do chars[#chars + 1] = utf8.char(c) end
    return w:instance(t.string, { value = w:primitive_array("char", chars), hash = 0 })
  end
  function t.watch(obj)
    return w:instance(t.keyed, { [t.keyed] = { key = t.str(KEY), name = t.str("its lifecycle has ended"),
      watchUptimeMillis = 5000, retainedUptimeMillis = 20000 }, [t.reference] = { referent = obj } })
  end
  function t.open(opts)
    local path = helper.tmpfile(w:bytes())
    local heap = assert(sift.open(path))
    local report = leaks.analyze(heap, opts)
    return report, heap
  end
  return t
end

local KEYED_ONLY = { leaks.inspectors.keyed_weak_reference }

describe("leak analysis on Shark's synthetic scenarios", function()
  it("renders a static-field leak byte for byte as LeakCanary does", function()
    local t = base()
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "leak", "object" } } })
    local leak = t.w:instance(t.leaking, {})
    t.w:set_static(root, "leak", leak)
    t.w:root("sticky_class", root)
    t.watch(leak)
    local report = t.open { finder = "keyed", inspectors = KEYED_ONLY }
    assert.are.equal(1, #report.application_leaks)
    assert.are.equal(table.concat({
      "┬───",
      "│ GC Root: System class",
      "│",
      "├─ GcRoot class",
      "│    Leaking: UNKNOWN",
      -- (what it retains: itself, the leak, and the classes only they reach, Leaking and Object: no root
      -- holds those in this synthetic dump)
      "│    Retaining 8 B in 4 objects",
      "│    ↓ static GcRoot.leak",
      "│                    ~~~~",
      "╰→ Leaking instance",
      "\u{200B}     Leaking: YES (ObjectWatcher was watching this because its lifecycle has ended)",
      "\u{200B}     Retaining 0 B in 2 objects",
      "\u{200B}     key = " .. KEY,
      "\u{200B}     watchDurationMillis = 25000",
      "\u{200B}     retainedDurationMillis = 10000",
    }, "\n"), leaks.render_trace(report.application_leaks[1].traces[1]))
    assert.are.equal(require("sift.sha1").hex("GcRootleak"), report.application_leaks[1].signature)
  end)

  it("takes the shortest of two paths", function()
    local t = base()
    local holder = t.w:class("Holder", { super = t.object, fields = { { "leak", "object" } } })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "shortPath", "object" }, { "longPath", "object" } } })
    local leak = t.w:instance(t.leaking, {})
    t.w:set_static(root, "longPath", t.w:instance(holder, { leak = leak }))
    t.w:set_static(root, "shortPath", leak)
    t.w:root("sticky_class", root)
    t.watch(leak)
    local report = t.open { finder = "keyed" }
    local trace = report.application_leaks[1].traces[1]
    assert.are.equal(2, #trace.elements)
    assert.are.equal("shortPath", trace.elements[1].ref_name)
  end)

  it("finds no leak without a path, or when the weak reference was cleared", function()
    local t = base()
    t.watch(t.w:instance(t.leaking, {}))   -- nothing points at it
    local report = t.open { finder = "keyed" }
    assert.are.same({ 0, 1 }, { #report.application_leaks, #report.unreachable })
    local t2 = base()
    t2.watch(0)                              -- cleared: referent null
    report = t2.open { finder = "keyed" }
    assert.are.same({ 0, 0 }, { #report.application_leaks, #report.unreachable })
  end)

  it("groups five identical leaks into one with five traces", function()
    local t = base()
    local holder = t.w:class("Holder", { super = t.object, fields = { { "leak", "object" } } })
    local items = {}
    for i = 1, 5 do
      local leak = t.w:instance(t.leaking, {})
      items[i] = t.w:instance(holder, { leak = leak })
      t.watch(leak)
    end
    local arr_class = t.w:class("Holder[]", { super = t.object })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "holders", "object" } } })
    t.w:set_static(root, "holders", t.w:object_array(arr_class, items))
    t.w:root("sticky_class", root)
    local report = t.open { finder = "keyed", inspectors = KEYED_ONLY }
    assert.are.equal(1, #report.application_leaks)
    assert.are.equal(5, #report.application_leaks[1].traces)
  end)

  it("takes a Java-local path only when there is no other", function()
    local t = base()
    local thread_class = t.w:class("java.lang.Thread", { super = t.object, fields = { { "name", "object" } } })
    local thread = t.w:instance(thread_class, { name = t.str("worker") })
    t.w:root("thread_object", thread, 1, 0)
    local leak = t.w:instance(t.leaking, {})
    t.w:root("java_frame", leak, 1, 0)
    local holder = t.w:class("Holder", { super = t.object, fields = { { "leak", "object" } } })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "holder", "object" } } })
    t.w:set_static(root, "holder", t.w:instance(holder, { leak = leak }))
    t.w:root("sticky_class", root)
    t.watch(leak)
    local report = t.open { finder = "keyed" }
    local trace = report.application_leaks[1].traces[1]
    assert.are.equal("sticky_class", trace.root)       -- the 2-hop static path wins
    assert.are.equal(3, #trace.elements)
  end)

  it("shows the thread first when only a local variable holds the leak", function()
    local t = base()
    local thread_class = t.w:class("java.lang.Thread", { super = t.object, fields = { { "name", "object" } } })
    local thread = t.w:instance(thread_class, { name = t.str("worker") })
    t.w:root("thread_object", thread, 7, 0)
    local leak = t.w:instance(t.leaking, {})
    t.w:root("java_frame", leak, 7, 0)
    t.watch(leak)
    local report = t.open { finder = "keyed" }
    local trace = report.application_leaks[1].traces[1]
    assert.are.equal("java_frame", trace.root)
    local first = trace.elements[1]
    assert.are.same({ "java.lang.Thread", "thread", "local" }, { first.class, first.type, first.ref_type })
    local text = leaks.render_trace(trace)
    assert.matches("│ GC Root: Java local variable\n│\n├─ java.lang.Thread thread\n", text)
    assert.matches("│    Thread name: 'worker'\n│    ↓ Thread.<Java Local>\n", text)
  end)

  it("reports a leak held by a JNI global root", function()
    local t = base()
    local leak = t.w:instance(t.leaking, {})
    t.w:root("jni_global", leak)
    t.watch(leak)
    local report = t.open { finder = "keyed" }
    assert.are.equal(1, #report.application_leaks)
    assert.matches("│ GC Root: Global variable in native code", leaks.render_trace(report.application_leaks[1].traces[1]))
  end)

  it("separates library leaks by their pattern", function()
    local t = base()
    local root = t.w:class("android.os.Looper", { super = t.object, statics = { { "sThreadLocal", "object" } } })
    local leak = t.w:instance(t.leaking, {})
    t.w:set_static(root, "sThreadLocal", leak)
    t.w:root("sticky_class", root)
    t.watch(leak)
    local report = t.open { finder = "keyed", library = {
      { class = "android.os.Looper", static = "sThreadLocal", description = "A known Looper leak" } } }
    assert.are.same({ 0, 1 }, { #report.application_leaks, #report.library_leaks })
    assert.are.same({ "android.os.Looper#sThreadLocal", "A known Looper leak" },
      { report.library_leaks[1].pattern, report.library_leaks[1].description })
  end)

  -- an Android dump from `maker` at `sdk`, where Samsung's AudioManager
  -- static mContext_static holds the watched object
  local function android(maker, sdk)
    local t = base()
    local build = t.w:class("android.os.Build", { super = t.object, statics = { { "MANUFACTURER", "object" } } })
    t.w:set_static(build, "MANUFACTURER", t.str(maker))
    t.w:class("android.os.Build$VERSION", { super = t.object, statics = { { "SDK_INT", "int", sdk } } })
    local lc = t.w:class("leakcanary.internal.InternalLeakCanary", { super = t.object,
      statics = { { "version", "object" } } })
    t.w:set_static(lc, "version", t.str("2.14"))
    local audio = t.w:class("android.media.AudioManager", { super = t.object,
      statics = { { "mContext_static", "object" } } })
    local leak = t.w:instance(t.leaking, {})
    t.w:set_static(audio, "mContext_static", leak)
    t.w:root("sticky_class", audio)
    t.watch(leak)
    return t, leak
  end

  it("knows Android's library leaks by manufacturer and version", function()
    local function counts(maker, sdk, opts)
      local report = android(maker, sdk).open(opts or { finder = "keyed" })
      return { #report.application_leaks, #report.library_leaks, report.metadata.sdk_int }, report
    end
    local c, report = counts("samsung", 19)
    assert.are.same({ 0, 1, 19 }, c)
    assert.are.same({ "android.media.AudioManager#mContext_static", "samsung" },
      { report.library_leaks[1].pattern, report.metadata.manufacturer })
    assert.matches("Samsung's AudioManager", report.library_leaks[1].description)
    assert.are.same({ true, "2.14" }, { report.metadata.android, report.metadata.leakcanary_version })
    assert.are.same({ 1, 0, 23 }, (counts("samsung", 23)))   -- outside the version range
    assert.are.same({ 1, 0, 19 }, (counts("Google", 19)))    -- another manufacturer
    assert.are.same({ 1, 0, 19 }, (counts("samsung", 19, { finder = "keyed", known = false })))
  end)

  it("ignores the main thread's locals on Android, not on the JVM", function()
    local function held_by_main(t)
      local thread_class = t.w:class("java.lang.Thread", { super = t.object, fields = { { "name", "object" } } })
      t.w:root("thread_object", t.w:instance(thread_class, { name = t.str("main") }), 1, 0)
      local leak = t.w:instance(t.leaking, {})
      t.w:root("java_frame", leak, 1, 0)
      t.watch(leak)
      return t.open { finder = "keyed" }
    end
    local on_android = held_by_main((android("Google", 30)))  -- its AudioManager leak stays
    assert.are.same({ 1, 0, 1 }, { #on_android.application_leaks, #on_android.library_leaks, #on_android.unreachable })
    local on_jvm = held_by_main(base())
    assert.are.same({ 1, 0 }, { #on_jvm.application_leaks, #on_jvm.unreachable })
  end)

  it("propagates statuses: nothing leaks before the last NOT_LEAKING object", function()
    local t = base()
    local app = t.w:class("android.app.Application", { super = t.object, fields = { { "cache", "object" } } })
    local box = t.w:class("Box", { super = t.object, fields = { { "item", "object" } } })
    local leak = t.w:instance(t.leaking, {})
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "app", "object" } } })
    t.w:set_static(root, "app", t.w:instance(app, { cache = t.w:instance(box, { item = leak }) }))
    t.w:root("sticky_class", root)
    t.watch(leak)
    local trace = t.open { finder = "keyed" }.application_leaks[1].traces[1]
    local statuses, suspects = {}, {}
    for i, e in ipairs(trace.elements) do statuses[i], suspects[i] = e.status, e.suspect or false end
    assert.are.same({ "NOT_LEAKING", "NOT_LEAKING", "UNKNOWN", "LEAKING" }, statuses)
    assert.are.same({ false, true, true, false }, suspects)
    assert.are.equal("a class is never leaking", trace.elements[1].reason)
    assert.are.equal("Application is a singleton", trace.elements[2].reason)
  end)
end)

describe("leak analysis on odd dumps", function()
  it("chooses the sticky class among duplicate (unloaded) classes of one name", function()
    local t = base()
    local unloaded = t.w:class("android.widget.Toast$TN", { super = t.object, statics = { { "leak", "object" } } })
    local live = t.w:class("android.widget.Toast$TN", { super = t.object, statics = { { "leak", "object" } } })
    t.w:root("sticky_class", live)
    local _, heap = t.open { finder = "keyed" }
    assert.are.equal(2, #heap:classes_named("android.widget.Toast$TN"))
    assert.are.equal(live.id, heap:class("android.widget.Toast$TN").id)
    assert.are_not.equal(unloaded.id, heap:class("android.widget.Toast$TN").id)
  end)

  it("skips a GC root that points at an object missing from the dump", function()
    local t = base()
    t.w:root("jni_global", 0xDEAD0)           -- no such object
    local leak = t.w:instance(t.leaking, {})
    t.w:root("jni_global", leak)
    t.watch(leak)
    local report = t.open { finder = "keyed" }
    assert.are.equal(1, #report.application_leaks)
  end)

  it("honours roots written after a HEAP_DUMP_INFO switch to another heap", function()
    local t = base()
    t.w.version = "1.0.3"
    t.w:heap("Z", "zygote")
    local leak = t.w:instance(t.leaking, {})
    t.w:heap("A", "app")
    t.w:root_here("jni_global", leak)
    t.watch(leak)
    local report, heap = t.open { finder = "keyed" }
    assert.are.equal(1, #report.application_leaks)
    assert.are.equal("zygote", report.application_leaks[1].traces[1].leaking.object:heap())
    assert.are.equal(1, heap:info().roots.jni_global)
  end)
end)

describe("leak analysis on LeakCanary 1.x dumps", function()
  it("finds the LeakyService from its KeyedWeakReference key, through the static field", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local heap = assert(sift.open(path))
    local report = leaks.analyze(heap, { finder = "keyed",
      rules = { { class = "android.os.Binder", field = "mObject", rule = "normal" } } })
    local found
    for _, leak in ipairs(report.application_leaks) do
      for _, trace in ipairs(leak.traces) do
        if trace.leaking.object:id() == 0xb0fa7cb0 then found = trace end
      end
    end
    assert.truthy(found, "LeakyService@b0fa7cb0 not reported")
    assert.are.equal("com.example.leakcanary.LeakyService", found.leaking.class)
    assert.matches("key = b3abfae6%-2c53%-42e1%-b8c1%-96b0558dbeae", table.concat(found.leaking.labels, "\n"))
  end)
end)

describe("leak analysis's memory", function()
  it("gives back the grouping by class it made for itself, and keeps a caller's", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local function run(group_first)
      local heap = assert(sift.open(path))
      if group_first then heap.index:group_size(1) end
      local report = leaks.analyze(heap, { finder = "all", suspects = true })
      local retained = {}
      for _, leak in ipairs(report.application_leaks) do retained[#retained + 1] = leak.retained end
      return heap.index:grouped(), #report.application_leaks, #report.library_leaks, retained
    end
    local grouped, apps, libs, retained = run(false)
    assert.is_false(grouped)
    local kept, apps2, libs2, retained2 = run(true)
    assert.is_true(kept)
    assert.are.same({ apps, libs, retained }, { apps2, libs2, retained2 })
    assert.is_true(apps > 0)
  end)
end)

describe("leak analysis with LeakCanary 1.x's Binder exclusion", function()
  local BINDER = { root_class = "android.os.Binder" }

  it("goes around Binder roots when always excluded, and finds the static path (378 bytes)", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local heap = assert(sift.open(path))
    local report = leaks.analyze(heap, { finder = "keyed",
      rules = { { root_class = BINDER.root_class, rule = "skip" } } })
    local leak = report.application_leaks[1]
    assert.are.same({ 1, 0, 378 }, { #report.application_leaks, #report.library_leaks, leak.retained })
    local first = leak.traces[1].elements[1]
    assert.are.same({ "com.example.leakcanary.LeakyService", "class", "static", "leakAllTheBinders" },
      { first.class, first.type, first.ref_type, first.ref_name })
  end)

  it("reports the 'ignored' dump as a library leak when Binders are low priority, and no leak when excluded", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not path then return end
    local report = leaks.analyze(assert(sift.open(path)), { finder = "keyed",
      library = { { root_class = BINDER.root_class, description = "Binder roots" } } })
    assert.are.same({ 0, 1, 378 }, { #report.application_leaks, #report.library_leaks, report.library_leaks[1].retained })
    local first = report.library_leaks[1].traces[1].elements[1]
    assert.are.same({ "com.example.leakcanary.LeakyService$MyBinder", "instance", "field", "service" },
      { first.class, first.type, first.ref_type, first.ref_name })
    report = leaks.analyze(assert(sift.open(path)), { finder = "keyed",
      rules = { { root_class = BINDER.root_class, rule = "skip" } } })
    assert.are.same({ 0, 0, 1 }, { #report.application_leaks, #report.library_leaks, #report.unreachable })
  end)

  it("takes the same exclusion as the user's matchers, from a file given to sift leaks --matchers", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder_ignored.hprof")
    if not path then return end
    local cjson = require "cjson"
    local ignored = helper.tmpfile('return { ignored = { { root_class = "android.os.Binder" } } }')
    local library = helper.tmpfile('return { library = { { root_class = "android.os.Binder", '
      .. 'description = "Binder stubs live as long as the remote side" } } }')
    local out, err, code = helper.sift { "leaks", path, "--finder", "keyed", "--json", "--matchers", ignored }
    assert.are.equal(0, code, err)
    local t = cjson.decode(out)
    assert.are.same({ 0, 0, 1 }, { #t.application_leaks, #t.library_leaks, #t.unreachable })
    out = helper.sift { "leaks", path, "--finder", "keyed", "--json", "--matchers", library }
    t = cjson.decode(out)
    local leak = t.library_leaks[1]
    assert.are.same({ 0, 1, 378, "root android.os.Binder", "Binder stubs live as long as the remote side",
      "com.example.leakcanary.LeakyService$MyBinder" }, { #t.application_leaks, #t.library_leaks, leak.retained,
      leak.pattern, leak.description, leak.traces[1].elements[1].class })
    local bad = helper.tmpfile('return { ignored = { { class = "A" } } }')
    local _, bad_err, bad_code = helper.sift { "leaks", path, "--matchers", bad }
    assert.are.equal(2, bad_code)
    assert.matches("ignored%[1%]: one of { class, field }, { class, static }, { thread } or { root_class } expected",
      bad_err)
    local hostile = helper.tmpfile('os.execute("touch /tmp/sift-owned") return {}')
    _, bad_err, bad_code = helper.sift { "leaks", path, "--matchers", hostile }
    assert.are.equal(2, bad_code)
    assert.matches("attempt to index a nil value %(global 'os'%)", bad_err)
    for _, f in ipairs { ignored, library, bad, hostile } do os.remove(f) end
  end)
end)

describe("the Android finder on real dumps", function()
  -- the steps of a trace as "Class.reference" lines
  local function steps(trace)
    local out = {}
    for k = 1, #trace.elements - 1 do
      local e = trace.elements[k]
      out[k] = e.class:match("[^.]+$") .. "." .. e.ref_name
    end
    return out
  end

  it("finds the Dialer's finished service kept by a singleton's context (perflib dump)", function()
    local path = helper.fixture("hprof/android/perflib/dialer.android-hprof")
    if not path then return end
    local report = leaks.analyze(assert(sift.open(path)), { finder = "android" })
    assert.are.same({ 1, 0, 836 }, { #report.application_leaks, #report.library_leaks,
      report.application_leaks[1].retained })
    local trace = report.application_leaks[1].traces[1]
    assert.are.same({ "DefaultVoicemailNotifier.sInstance", "DefaultVoicemailNotifier.mContext" }, steps(trace))
    assert.are.same({ "com.android.dialer.calllog.CallLogNotificationsService", "LEAKING",
      "Service not held by ActivityThread" }, { trace.leaking.class, trace.leaking.status, trace.leaking.reason })
  end)

  it("finds both stopped LeakyServices, one through Android's ArrayList as an entry [0]", function()
    local path = helper.fixture("hprof/android/leakcanary-1.x/leak_service_binder.hprof")
    if not path then return end
    local report = leaks.analyze(assert(sift.open(path)), { finder = "android" })
    assert.are.equal(2, #report.application_leaks)
    local all = {}
    for _, leak in ipairs(report.application_leaks) do all[#all + 1] = table.concat(steps(leak.traces[1]), " ") end
    table.sort(all)
    assert.are.same({ "LeakyService$MyBinder.service",
      "LeakyService.leakAllTheBinders ArrayList.[0] LeakyService$MyBinder.service" }, all)
  end)
end)

describe("leak analysis: sha1", function()
  it("matches the standard test vectors", function()
    assert.are.equal("da39a3ee5e6b4b0d3255bfef95601890afd80709", require("sift.sha1").hex(""))
    assert.are.equal("a9993e364706816aba3e25717850c26c9cd0d89d", require("sift.sha1").hex("abc"))
    assert.are.equal("84983e441c3bd26ebaae4aa1f95129e5e54670f1",
      require("sift.sha1").hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
  end)
end)

describe("leak analysis shows collections as entries", function()
  -- java.util classes as JDK 8 lays them out, enough for the folding
  local function jdk(t)
    local w = t.w
    t.list = w:class("java.util.ArrayList", { super = t.object, fields = { { "elementData", "object" }, { "size", "int" } } })
    t.objects = w:class("java.lang.Object[]", { super = t.object })
    t.map = w:class("java.util.HashMap", { super = t.object, fields = { { "table", "object" }, { "size", "int" } } })
    t.node = w:class("java.util.HashMap$Node", { super = t.object,
      fields = { { "key", "object" }, { "value", "object" }, { "next", "object" } } })
    t.nodes = w:class("java.util.HashMap$Node[]", { super = t.object })
  end

  local function trace_of(t)
    local report = t.open { finder = "keyed" }
    return report.application_leaks[1].traces[1], report
  end

  it("folds ArrayList.elementData[i] into the list's entry [i]", function()
    local t = base()
    jdk(t)
    local leak = t.w:instance(t.leaking, {})
    local list = t.w:instance(t.list, { elementData = t.w:object_array(t.objects, { 0, 0, leak }), size = 3 })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "list", "object" } } })
    t.w:set_static(root, "list", list)
    t.w:root("sticky_class", root)
    t.watch(leak)
    local trace = trace_of(t)
    assert.are.equal(3, #trace.elements)
    assert.matches("│    ↓ ArrayList.%[2%]\n", require("sift.heap.leaks").render_trace(trace))
  end)

  it("names a HashMap value by its String key, and a key as key()", function()
    local t = base()
    jdk(t)
    local leak, other = t.w:instance(t.leaking, {}), t.w:instance(t.leaking, {})
    local inner = t.w:instance(t.node, { key = t.str("leaking"), value = leak })
    local chained = t.w:instance(t.node, { key = other, value = 0, next = inner })
    local map = t.w:instance(t.map, { table = t.w:object_array(t.nodes, { 0, chained }), size = 2 })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "map", "object" } } })
    t.w:set_static(root, "map", map)
    t.w:root("sticky_class", root)
    t.watch(leak)
    t.watch(other)
    local report = t.open { finder = "keyed" }
    assert.are.equal(1, #report.application_leaks)  -- entries are "[x]" in signatures: one leak
    local names = {}
    for _, trace in ipairs(report.application_leaks[1].traces) do
      names[#names + 1] = trace.elements[#trace.elements - 1].entry
    end
    table.sort(names)
    assert.are.same({ '"leaking"', "key()" }, names)
    local json = require("sift.heap.leaks").to_json(report)
    local refs = {}
    for _, t2 in ipairs(json.application_leaks[1].traces) do refs[#refs + 1] = t2.elements[2].ref end
    table.sort(refs)
    assert.are.same({ '"leaking"', "key()" }, refs)
  end)
end)

describe("leak inspectors", function()
  it("number at least 25 and label Android objects as Shark's do", function()
    assert.is_true(#leaks.inspectors >= 25)
    local t = base()
    local app = t.w:class("com.example.ExampleApplication", { super = t.w:class("android.app.Application",
      { super = t.object }) })
    local toast = t.w:class("android.widget.Toast", { super = t.object, fields = { { "mContext", "object" } } })
    local activity = t.w:class("android.app.Activity", { super = t.object, fields = { { "mDestroyed", "boolean" } } })
    local dialog = t.w:class("android.app.Dialog", { super = t.object,
      fields = { { "mDecor", "object" }, { "mContext", "object" } } })
    local live = t.w:instance(activity, { mDestroyed = false })
    local leak = t.w:instance(dialog, { mDecor = 0, mContext = live })
    local holder = t.w:class("Holder", { super = t.object, fields = { { "toast", "object" }, { "activity", "object" } } })
    local root = t.w:class("GcRoot", { super = t.object, statics = { { "h", "object" } } })
    local h = t.w:instance(holder, { toast = t.w:instance(toast, { mContext = t.w:instance(app, {}) }), activity = live })
    t.w:set_static(root, "h", h)
    t.w:root("sticky_class", root)
    t.w:root("jni_global", leak)
    t.watch(leak)
    local report, heap = t.open { finder = "keyed" }
    local trace = report.application_leaks[1].traces[1]
    assert.are.same({ "LEAKING", "ObjectWatcher was watching this because its lifecycle has ended and Dialog.mDecor is null" },
      { trace.leaking.status, trace.leaking.reason })
    assert.matches("mContext instance of android.app.Activity", table.concat(trace.leaking.labels, "\n"))
    -- inspect any object directly
    local toast_obj = heap:class("GcRoot"):static("h").toast
    local labels = {}
    for _, ins in ipairs(leaks.inspectors) do
      local r = { labels = {}, leaking = {}, not_leaking = {} }
      if not ins.class or toast_obj:is_instance_of(ins.class) then ins.fn(toast_obj, r, heap) end
      for _, l in ipairs(r.labels) do labels[#labels + 1] = l end
    end
    assert.are.same({ "mContext instance of com.example.ExampleApplication" }, labels)
  end)
end)

describe("leak analysis on a planted JVM leak (spec/java/LeakySample.java, jcmd)", function()
  local heap

  setup(function()
    local path, why = helper.jvm_dump("LeakySample")
    if path then heap = assert(sift.open(path)) else print("leaks_spec: skipped: " .. why) end
  end)

  it("finds the closed sessions with a predicate, as one leak through the map", function()
    if not heap then return pending("no JDK") end
    local report = leaks.analyze(heap, { finder = leaks.where(function(obj) return obj.closed end, "LeakySample$Session") })
    assert.are.equal(1, #report.application_leaks)
    local leak = report.application_leaks[1]
    assert.are.equal(2000, #leak.traces)
    assert.are.equal(2000 * (17 + 4096), leak.retained)     -- Session fields + its buffer; the key is shared
    local trace = leak.traces[1]
    local labels = {}
    for i, e in ipairs(trace.elements) do labels[i] = e.ref_name or "" end
    assert.are.same({ "appClass", "SESSIONS" }, { labels[1], labels[2] })
    assert.matches('^%["user%-%d+"%]$', labels[3])              -- the HashMap entry, by its String key
    assert.are.equal("LeakySample$Session", trace.leaking.class)
    -- LeakCanary's retained line: a Session retains itself and its buffer (2 objects, 17 + 4096 bytes); the
    -- map's table and nodes above it hold all 2,000 of them
    local last = trace.elements[#trace.elements]
    assert.are.same({ 17 + 4096, 2 }, { last.retained, last.retained_count })
    assert.matches("\n\u{200B}     Retaining 4.1 kB in 2 objects$", leaks.render_trace(trace))
    local map = trace.elements[3]
    assert.are.equal("java.util.HashMap", map.class)
    assert.is_true(map.retained_count > 2000 * 2 and map.retained > leak.retained)
  end)

  it("names the method whose local variable holds an object (main's args)", function()
    if not heap then return pending("no JDK") end
    local args
    for _, r in ipairs(heap.index:roots()) do
      local o = r.kind == "java_frame" and heap:object(r.id)
      if o and o:class_name() == "java.lang.String[]" then args = o end
    end
    local report = leaks.analyze(heap, { finder = function() return { args } end, retained = false })
    local text = leaks.render_trace(report.application_leaks[1].traces[1])
    assert.matches("│    Thread name: 'main'\n│    Local variable in LeakySample.main%(LeakySample.java:31%)\n"
      .. "│    ↓ Thread.<Java Local>\n", text)
  end)

  it("names the map as the leak suspect, with the memory in its table", function()
    if not heap then return pending("no JDK") end
    local suspects, total = leaks.suspects(heap)
    local top = suspects[1]
    assert.are.same({ "object", "java.util.HashMap" }, { top.kind, top.class })
    assert.is_true(top.share > 0.5)
    assert.are.equal("java.util.HashMap$Node[]", top.accumulation.object:class_name())
    assert.are.equal("static LeakySample.SESSIONS", top.path[#top.path].label)
    assert.is_true(total > top.retained)
  end)
end)

describe("reachability on ahat's test dump (its tests' expectations)", function()
  local heap, stuff

  setup(function()
    local path = helper.fixtures() and helper.fixtures() .. "/hprof/android/ahat/test-dump.hprof"
    if path then
      heap = assert(sift.open(path, { mapping = path:gsub("hprof$", "map") }))
      stuff = heap:class("Main"):static("stuff")
    end
  end)

  it("grades the reference chain strong, strong, soft, soft, weak, weak, phantom", function()
    if not heap then return pending("no fixtures") end
    local node, grades = stuff.reachabilityReferenceChain, {}
    for i = 1, 7 do
      grades[i] = heap:reachability(node)
      node = node.referent
    end
    assert.are.same({ "strong", "strong", "soft", "soft", "weak", "weak", "phantom" }, grades)
    assert.are.same({ "strong", "soft" }, { heap:reachability(stuff.anObject), heap:reachability(stuff.aSoftReference.referent) })
    assert.is_nil(heap:path_to_root(stuff.aSoftReference.referent))  -- the rules are back in place
  end)

  it("prefers the longer strong path to the sample object over a weak one", function()
    if not heap then return pending("no fixtures") end
    local r = stuff.aLongStrongPathToSamplePathObject
    local sample = r.referent.referent.referent
    local path = heap:path_to_root(sample)
    local labels = {}
    for i = #path - 3, #path do labels[#labels + 1] = path[i].label end
    assert.are.same({ "DumpedStuff.aLongStrongPathToSamplePathObject", "DumpedStuff$Reference.referent",
      "DumpedStuff$Reference.referent", "DumpedStuff$Reference.referent" }, labels)
    assert.are.equal(r.referent.referent, path[#path - 1].object)   -- "strong3" holds it
  end)
end)
