--- Leak analysis in the manner of LeakCanary's Shark, on sift's heap graph.
--
--     local leaks = require "sift.leaks"
--     local report = leaks.analyze(heap)          -- { application_leaks, library_leaks, metadata }
--     print(leaks.render(report))                 -- LeakCanary's text
--
-- Finders say which objects should be dead (KeyedWeakReference referents,
-- destroyed Activities and Fragments, or any Lua predicate). For each, the
-- shortest strong path from a GC root is found (one search for all), every
-- object on it is inspected (LEAKING / NOT_LEAKING / UNKNOWN with reasons),
-- statuses are propagated along the trace, the references between the last
-- NOT_LEAKING and the first LEAKING object are the suspects, and traces with
-- the same suspects (SHA-1 signature) are one leak.
-- @module sift.leaks

local known_leaks = require "sift.known_leaks"

local M = {}

local format, concat = string.format, table.concat

--- {======================================================
-- SHA-1 (signatures of leaks)
-- =======================================================

--- The SHA-1 of a string, as 40 lowercase hex digits.
function M.sha1(msg)
  local function rol(x, n) return ((x << n) | (x >> (32 - n))) & 0xffffffff end
  local h0, h1, h2, h3, h4 = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0
  local len = #msg
  msg = msg .. "\128" .. ("\0"):rep((55 - len) % 64) .. string.pack(">I8", len * 8)
  for chunk = 1, #msg, 64 do
    local w = { string.unpack((">I4"):rep(16), msg, chunk) }
    w[17] = nil
    for i = 17, 80 do w[i] = rol(w[i - 3] ~ w[i - 8] ~ w[i - 14] ~ w[i - 16], 1) end
    local a, b, c, d, e = h0, h1, h2, h3, h4
    for i = 1, 80 do
      local f, k
      if i <= 20 then f, k = (b & c) | (~b & d), 0x5A827999
      elseif i <= 40 then f, k = b ~ c ~ d, 0x6ED9EBA1
      elseif i <= 60 then f, k = (b & c) | (b & d) | (c & d), 0x8F1BBCDC
      else f, k = b ~ c ~ d, 0xCA62C1D6 end
      local t = (rol(a, 5) + (f & 0xffffffff) + e + k + w[i]) & 0xffffffff
      a, b, c, d, e = t, a, rol(b, 30), c, d
    end
    h0, h1, h2, h3, h4 = (h0 + a) & 0xffffffff, (h1 + b) & 0xffffffff, (h2 + c) & 0xffffffff,
      (h3 + d) & 0xffffffff, (h4 + e) & 0xffffffff
  end
  return format("%08x%08x%08x%08x%08x", h0, h1, h2, h3, h4)
end

-- }======================================================


--- {======================================================
-- Finders: the objects that should be dead
-- =======================================================

local KEYED = { "leakcanary.KeyedWeakReference", "com.squareup.leakcanary.KeyedWeakReference" }

-- a Java field's value, nil when the object has no such field (fields are
-- always read through obj:field, so no Java name can be taken for a method)
local function field_or_nil(obj, name)
  if obj:has_field(name) then return obj:field(name) end
end

local function text(v)
  if type(v) == "userdata" then return v:string() end
  return v
end

-- KeyedWeakReferences whose referent is still there and that were
-- retained (retainedUptimeMillis != -1, where the field exists)
local function keyed_refs(heap)
  local out = {}
  for _, name in ipairs(KEYED) do
    for _, cls in ipairs(heap:classes_named(name)) do
      local uptime = cls:statics().heapDumpUptimeMillis
      for ref in cls:instances { subclasses = true } do
        local referent = field_or_nil(ref, "referent")
        local retained_at = field_or_nil(ref, "retainedUptimeMillis")
        if referent and retained_at ~= -1 then
          out[#out + 1] = { ref = ref, object = referent, key = text(field_or_nil(ref, "key")),
            name = text(field_or_nil(ref, "name")), watched_at = field_or_nil(ref, "watchUptimeMillis"),
            retained_at = retained_at, dump_uptime = uptime }
        end
      end
    end
  end
  return out
end

--- Finders by name: each returns a list of objects.
M.finders = {}

function M.finders.keyed(heap)
  local out = {}
  for i, k in ipairs(keyed_refs(heap)) do out[i] = k.object end
  return out
end

local FRAGMENTS = { "android.app.Fragment", "android.support.v4.app.Fragment", "androidx.fragment.app.Fragment" }

-- the Services ActivityThread still runs (ActivityThread.mServices, an
-- ArrayMap of token -> Service), as a set of ids; nil when the dump has none
local function running_services(heap)
  local at = heap:class("android.app.ActivityThread")
  local current = at and at:statics().sCurrentActivityThread
  local map = type(current) == "userdata" and field_or_nil(current, "mServices")
  local array = type(map) == "userdata" and field_or_nil(map, "mArray")
  if type(array) ~= "userdata" then return nil end
  local running = {}
  for _, v in ipairs(array:elements()) do
    if v then running[v:id()] = true end
  end
  return running
end

-- the Activity behind a context, unwrapping ContextWrappers
local function activity_of(ctx)
  for _ = 1, 10 do
    if type(ctx) ~= "userdata" or ctx:kind() ~= "instance" then return nil end
    if ctx:is_instance_of("android.app.Activity") then return ctx end
    ctx = field_or_nil(ctx, "mBase")
  end
end

local function destroyed_activity(ctx)
  local a = activity_of(ctx)
  return a ~= nil and field_or_nil(a, "mDestroyed") == true
end

-- instances of the class and its subclasses for which test(obj) is true
local function instances_where(heap, class_name, test, out)
  local cls = heap:class(class_name)
  if not cls then return end
  for obj in cls:instances { subclasses = true } do
    if test(obj) then out[#out + 1] = obj end
  end
end

--- Android objects whose lifecycle has ended: destroyed Activities and
-- Windows, Fragments without a FragmentManager, cleared ViewModels,
-- Services ActivityThread no longer runs, root Views of destroyed
-- Activities, disposed Compositions.
function M.finders.android(heap)
  local out = {}
  instances_where(heap, "android.app.Activity", function(a) return field_or_nil(a, "mDestroyed") == true end, out)
  for _, name in ipairs(FRAGMENTS) do
    instances_where(heap, name, function(f)
      return field_or_nil(f, "mFragmentManager") == nil and field_or_nil(f, "mCalled") ~= nil
    end, out)
  end
  instances_where(heap, "androidx.lifecycle.ViewModel", function(m) return field_or_nil(m, "mCleared") == true end, out)
  instances_where(heap, "android.view.Window", function(w) return field_or_nil(w, "mDestroyed") == true end, out)
  local running = running_services(heap)
  if running then
    instances_where(heap, "android.app.Service", function(svc) return not running[svc:id()] end, out)
  end
  -- one View per hierarchy: the root (no parent, or a ViewRootImpl parent)
  instances_where(heap, "android.view.View", function(v)
    local parent = field_or_nil(v, "mParent")
    local is_root = parent == nil or (type(parent) == "userdata" and not parent:is_instance_of("android.view.View"))
    return is_root and destroyed_activity(field_or_nil(v, "mContext"))
  end, out)
  instances_where(heap, "androidx.compose.runtime.CompositionImpl",
    function(c) return field_or_nil(c, "disposed") == true end, out)
  return out
end

function M.finders.all(heap)
  local seen, out = {}, {}
  for _, finder in ipairs { M.finders.keyed, M.finders.android } do
    for _, obj in ipairs(finder(heap)) do
      if not seen[obj:id()] then
        seen[obj:id()] = true
        out[#out + 1] = obj
      end
    end
  end
  return out
end

--- A finder from a predicate over objects: every instance (of `class`,
-- when given) for which `fn(obj)` is true.
function M.where(fn, class)
  return function(heap)
    local out = {}
    local iter
    if class then
      local c = heap:class(class)
      if not c then return out end
      iter = c:instances { subclasses = true }
    else
      iter = heap:objects()
    end
    for obj in iter do
      if obj:kind() ~= "class" and fn(obj) then out[#out + 1] = obj end
    end
    return out
  end
end

-- }======================================================


--- {======================================================
-- Inspectors: what each object on a trace says about itself
-- =======================================================

--- The catalogue: each inspector is `{ name, class = name?, fn(obj, report,
-- heap) }`; `class` limits it to instances of that class and its
-- subclasses. `report` has `labels`, `leaking` and `not_leaking` lists.
M.inspectors = {}

local function add(name, class, fn)
  M.inspectors[#M.inspectors + 1] = { name = name, class = class, fn = fn }
  M.inspectors[name] = M.inspectors[#M.inspectors]
end

add("keyed_weak_reference", nil, function(obj, report, heap)
  for _, k in ipairs(heap._watched or {}) do
    if k.object == obj then
      local because = k.name and k.name ~= "" and (" because " .. k.name) or ""
      report.leaking[#report.leaking + 1] = "ObjectWatcher was watching this" .. because
      if k.key then report.labels[#report.labels + 1] = "key = " .. k.key end
      if k.dump_uptime and k.watched_at then
        report.labels[#report.labels + 1] = "watchDurationMillis = " .. (k.dump_uptime - k.watched_at)
      end
      if k.dump_uptime and k.retained_at then
        report.labels[#report.labels + 1] = "retainedDurationMillis = " .. (k.dump_uptime - k.retained_at)
      end
    end
  end
end)

add("class", nil, function(obj, report)
  if obj:kind() == "class" then report.not_leaking[#report.not_leaking + 1] = "a class is never leaking" end
end)

add("class_loader", "java.lang.ClassLoader", function(_, report)
  report.not_leaking[#report.not_leaking + 1] = "A ClassLoader is never leaking"
end)

add("thread", "java.lang.Thread", function(obj, report)
  local name = text(field_or_nil(obj, "name"))
  if name then report.labels[#report.labels + 1] = format("Thread name: '%s'", name) end
end)

add("application", "android.app.Application", function(_, report)
  report.not_leaking[#report.not_leaking + 1] = "Application is a singleton"
end)

add("activity", "android.app.Activity", function(obj, report)
  local destroyed = field_or_nil(obj, "mDestroyed")
  if destroyed == true then report.leaking[#report.leaking + 1] = "Activity#mDestroyed is true"
  elseif destroyed == false then report.not_leaking[#report.not_leaking + 1] = "Activity#mDestroyed is false" end
end)

for _, fragment in ipairs(FRAGMENTS) do
  add(fragment, fragment, function(obj, report)
    local manager = field_or_nil(obj, "mFragmentManager")
    if manager == nil then report.leaking[#report.leaking + 1] = "Fragment.mFragmentManager is null"
    else report.not_leaking[#report.not_leaking + 1] = "Fragment.mFragmentManager is not null" end
    local tag = text(field_or_nil(obj, "mTag"))
    if tag and tag ~= "" then report.labels[#report.labels + 1] = "Fragment.mTag=" .. tag end
  end)
end

add("view_model", "androidx.lifecycle.ViewModel", function(obj, report)
  if field_or_nil(obj, "mCleared") == true then report.leaking[#report.leaking + 1] = "ViewModel#mCleared is true"
  elseif field_or_nil(obj, "mCleared") == false then
    report.not_leaking[#report.not_leaking + 1] = "ViewModel#mCleared is false"
  end
end)

add("message_queue", "android.os.MessageQueue", function(obj, report)
  local quitting = field_or_nil(obj, "mQuitting")
  if quitting == true then report.leaking[#report.leaking + 1] = "MessageQueue#mQuitting is true"
  elseif quitting == false then report.not_leaking[#report.not_leaking + 1] = "MessageQueue#mQuitting is false" end
end)

add("anonymous_class", nil, function(obj, report)
  if obj:kind() ~= "instance" then return end
  local cls = obj:class()
  if cls and cls.name:match("%$%d+$") and cls.super then
    report.labels[#report.labels + 1] = "Anonymous subclass of " .. cls.super.name
  end
end)

add("context_field", nil, function(obj, report)
  if obj:kind() ~= "instance" then return end
  local ctx = field_or_nil(obj, "mContext")
  if type(ctx) == "userdata" then
    report.labels[#report.labels + 1] = "mContext instance of " .. ctx:class_name()
  end
end)

-- singletons of the Android framework
for name, why in pairs {
  ["android.app.ActivityThread"] = "ActivityThread is a singleton",
  ["android.view.inputmethod.InputMethodManager"] = "InputMethodManager is a singleton",
  ["android.view.WindowManagerGlobal"] = "WindowManagerGlobal is a singleton",
  ["android.view.Choreographer"] = "Choreographer is a per-thread singleton",
} do
  add(name, name, function(_, report) report.not_leaking[#report.not_leaking + 1] = why end)
end

add("context_wrapper", "android.content.ContextWrapper", function(obj, report)
  local base = field_or_nil(obj, "mBase")
  if type(base) == "userdata" then report.labels[#report.labels + 1] = "mBase instance of " .. base:class_name() end
end)

add("context_impl", "android.app.ContextImpl", function(obj, report)
  local outer = field_or_nil(obj, "mOuterContext")
  if type(outer) == "userdata" then
    report.labels[#report.labels + 1] = "mOuterContext instance of " .. outer:class_name()
    if outer:is_instance_of("android.app.Activity") then
      local destroyed = field_or_nil(outer, "mDestroyed")
      if destroyed == true then report.leaking[#report.leaking + 1] = "ContextImpl.mOuterContext is a destroyed Activity"
      elseif destroyed == false then
        report.not_leaking[#report.not_leaking + 1] = "ContextImpl.mOuterContext is an Activity not destroyed"
      end
    end
  end
end)

add("view", "android.view.View", function(obj, report)
  local attach = field_or_nil(obj, "mAttachInfo")
  if attach ~= nil then report.not_leaking[#report.not_leaking + 1] = "View attached"
  elseif field_or_nil(obj, "mParent") == nil and field_or_nil(obj, "mAttachInfo") == nil
         and field_or_nil(obj, "mWindowAttachCount") and field_or_nil(obj, "mWindowAttachCount") > 0 then
    report.leaking[#report.leaking + 1] = "View detached and has no parent"
  end
  if destroyed_activity(field_or_nil(obj, "mContext")) then
    report.leaking[#report.leaking + 1] = "View.mContext references a destroyed activity"
  end
  local count = field_or_nil(obj, "mWindowAttachCount")
  if count then report.labels[#report.labels + 1] = "View.mWindowAttachCount = " .. count end
end)

add("view_root_impl", "android.view.ViewRootImpl", function(obj, report)
  if field_or_nil(obj, "mView") == nil then report.leaking[#report.leaking + 1] = "ViewRootImpl#mView is null"
  else report.not_leaking[#report.not_leaking + 1] = "ViewRootImpl#mView is not null" end
end)

add("window", "android.view.Window", function(obj, report)
  local destroyed = field_or_nil(obj, "mDestroyed")
  if destroyed == true then report.leaking[#report.leaking + 1] = "Window#mDestroyed is true"
  elseif destroyed == false then report.not_leaking[#report.not_leaking + 1] = "Window#mDestroyed is false" end
end)

add("dialog", "android.app.Dialog", function(obj, report)
  if field_or_nil(obj, "mDecor") == nil then report.leaking[#report.leaking + 1] = "Dialog.mDecor is null"
  else report.not_leaking[#report.not_leaking + 1] = "Dialog.mDecor is not null" end
end)

add("toast", "android.widget.Toast", function(obj, report)
  local tn = field_or_nil(obj, "mTN")
  local view = tn and field_or_nil(tn, "mView")
  if tn and view == nil then report.leaking[#report.leaking + 1] = "Toast.mTN.mView is null" end
end)

add("message", "android.os.Message", function(obj, report)
  for _, f in ipairs { "what", "when", "arg1", "arg2" } do
    local v = field_or_nil(obj, f)
    if v ~= nil then report.labels[#report.labels + 1] = format("Message.%s = %s", f, tostring(v)) end
  end
  for _, f in ipairs { "obj", "callback", "target" } do
    local v = field_or_nil(obj, f)
    if type(v) == "userdata" then report.labels[#report.labels + 1] = format("Message.%s = %s", f, tostring(v)) end
  end
end)

add("lifecycle_registry", "androidx.lifecycle.LifecycleRegistry", function(obj, report)
  local state = field_or_nil(obj, "mState") or field_or_nil(obj, "state")
  local name = type(state) == "userdata" and text(field_or_nil(state, "name"))
  if name == "DESTROYED" then report.leaking[#report.leaking + 1] = "LifecycleRegistry state is DESTROYED"
  elseif name then report.not_leaking[#report.not_leaking + 1] = "LifecycleRegistry state is " .. name end
end)

add("recomposer", "androidx.compose.runtime.Recomposer", function(obj, report)
  local flow = field_or_nil(obj, "_state")
  local state = type(flow) == "userdata" and field_or_nil(flow, "_state")
  local name = type(state) == "userdata" and text(field_or_nil(state, "name"))
  if name == "ShutDown" or name == "ShuttingDown" then
    report.leaking[#report.leaking + 1] = "Recomposer is in state " .. name
  elseif name then
    report.not_leaking[#report.not_leaking + 1] = "Recomposer is in state " .. name
  end
end)

add("composition", "androidx.compose.runtime.CompositionImpl", function(obj, report)
  local disposed = field_or_nil(obj, "disposed")
  if disposed == true then report.leaking[#report.leaking + 1] = "Composition disposed"
  elseif disposed == false then report.not_leaking[#report.not_leaking + 1] = "Composition not disposed" end
end)

add("android_compose_view", "androidx.compose.ui.platform.AndroidComposeView", function(obj, report)
  if field_or_nil(obj, "mAttachInfo") == nil then
    report.leaking[#report.leaking + 1] = "AndroidComposeView detached"
  end
end)

add("service", "android.app.Service", function(obj, report, heap)
  local app = field_or_nil(obj, "mApplication")
  if type(app) == "userdata" then report.labels[#report.labels + 1] = "mApplication instance of " .. app:class_name() end
  local running = heap._running_services
  if running == nil then
    running = running_services(heap) or false
    heap._running_services = running
  end
  if running and running[obj:id()] then
    report.not_leaking[#report.not_leaking + 1] = "Service held by ActivityThread"
  elseif running then
    report.leaking[#report.leaking + 1] = "Service not held by ActivityThread"
  end
end)

add("main_thread", "java.lang.Thread", function(obj, report)
  if text(field_or_nil(obj, "name")) == "main" then
    report.not_leaking[#report.not_leaking + 1] = "the main thread always runs"
  end
end)

-- }======================================================


--- {======================================================
-- Traces
-- =======================================================

local ROOT_DESCRIPTIONS = {
  jni_global = "Global variable in native code", jni_local = "Local variable in native code",
  java_frame = "Java local variable", native_stack = "Input or output parameters in native code",
  sticky_class = "System class", thread_block = "Thread block",
  monitor_used = "Monitor (anything that called the wait() or notify() methods, or that is synchronized.)",
  thread_object = "Thread object", jni_monitor = "Root JNI monitor",
}
M.root_descriptions = ROOT_DESCRIPTIONS

local function simple(name) return (name:match("[^.]+$")) end

-- what a trace shows for an object: its class name and type
local function describe(obj)
  local cls = obj:as_class()
  if cls then return cls.name, "class" end
  local kind = obj:kind()
  return obj:class_name(), (kind == "object_array" or kind == "primitive_array") and "array" or "instance"
end

-- run the inspectors on one object
local function inspect(heap, obj, inspectors)
  local report = { labels = {}, leaking = {}, not_leaking = {} }
  for _, ins in ipairs(inspectors) do
    if not ins.class or obj:is_instance_of(ins.class) then ins.fn(obj, report, heap) end
  end
  local status, reason = "UNKNOWN", nil
  if #report.not_leaking > 0 then
    status, reason = "NOT_LEAKING", concat(report.not_leaking, " and ")
    if #report.leaking > 0 then reason = reason .. ". Conflicts with " .. concat(report.leaking, " and ") end
  elseif #report.leaking > 0 then
    status, reason = "LEAKING", concat(report.leaking, " and ")
  end
  return status, reason, report.labels
end

--- {======================================================
-- Collections as people think of them
-- =======================================================

local function is(obj, names)
  local name = obj:class_name()
  for _, n in ipairs(names) do if name == n then return true end end
  return false
end

local function quoted_or(obj, default)
  local s = type(obj) == "userdata" and obj:string()
  if s then return '"' .. s .. '"' end
  return default
end

-- a virtual step: `owner` holds `target` through an entry named `name`
local function virtual(target_step, name, display)
  return { object = target_step.object, ref = "entry", name = name, label = display or ("[" .. name .. "]"),
           low = target_step.low, virtual = true }
end

local LISTS = { "java.util.ArrayList", "java.util.Vector", "java.util.concurrent.CopyOnWriteArrayList" }
local MAPS = { "java.util.HashMap", "java.util.LinkedHashMap", "java.util.HashSet", "java.util.LinkedHashSet" }
local MAP_NODES = { "java.util.HashMap$Node", "java.util.HashMap$TreeNode", "java.util.LinkedHashMap$Entry",
                    "java.util.HashMap$HashMapEntry", "java.util.LinkedHashMap$LinkedHashMapEntry" }
local SAFE_MAPS = { "androidx.arch.core.internal.FastSafeIterableMap", "androidx.arch.core.internal.SafeIterableMap",
                    "android.arch.core.internal.FastSafeIterableMap", "android.arch.core.internal.SafeIterableMap" }

-- try to read, from path[k] (a collection), the steps an entry takes; return
-- the virtual step and the index of the path step it replaces up to
local function collapse(path, k)
  local owner, a, b = path[k].object, path[k + 1], path[k + 2]
  if not a then return nil end
  -- OpenJDK's lists keep elementData; Android's libcore ArrayList, like
  -- CopyOnWriteArrayList, keeps array
  if (is(owner, LISTS) or is(owner, { "java.util.concurrent.CopyOnWriteArrayList" }))
     and (a.name == "elementData" or a.name == "array") then
    if b and b.ref == "element" then return virtual(b, tostring(b.index - 1)), k + 2 end
  elseif is(owner, { "android.util.ArraySet" }) and a.name == "mArray" and b and b.ref == "element" then
    return virtual(b, "element()"), k + 2
  elseif is(owner, { "android.util.ArrayMap" }) and a.name == "mArray" and b and b.ref == "element" then
    local i = b.index - 1
    if i % 2 == 0 then return virtual(b, "key()"), k + 2 end
    return virtual(b, quoted_or(a.object[i], "value()")), k + 2
  elseif is(owner, MAPS) and (a.name == "table" or a.name == "map") then
    -- HashSet -> map -> HashMap -> table -> [i] -> node (-> next)* -> key | value
    local j = k + 1
    if a.name == "map" then
      if not (path[j + 1] and path[j + 1].name == "table") then return nil end
      j = j + 1
    end
    if not (path[j + 1] and path[j + 1].ref == "element") then return nil end
    j = j + 2
    while path[j] and path[j].name == "next" and is(path[j].object, MAP_NODES) do j = j + 1 end
    local node_step, last = path[j - 1], path[j]
    if not last or not is(node_step.object, MAP_NODES) then return nil end
    if last.name == "key" then
      return virtual(last, a.name == "map" and "element()" or "key()"), j
    elseif last.name == "value" then
      return virtual(last, quoted_or(field_or_nil(node_step.object, "key"), "value()")), j
    end
  elseif is(owner, { "java.util.LinkedList" }) and a.name == "first" then
    local j, index = k + 2, 0
    while path[j] and path[j].name == "next" do j, index = j + 1, index + 1 end
    if path[j] and path[j].name == "item" then return virtual(path[j], tostring(index)), j end
  elseif is(owner, { "android.os.MessageQueue" }) and a.name == "mMessages" then
    local j, index = k + 2, 0
    while path[j] and path[j].name == "next" and is(path[j].object, { "android.os.Message" }) do
      j, index = j + 1, index + 1
    end
    return virtual(path[j - 1], tostring(index)), j - 1
  elseif is(owner, SAFE_MAPS) and (a.name == "mStart" or a.name == "mEnd") then
    local j = k + 2
    while path[j] and (path[j].name == "mNext" or path[j].name == "mPrevious") do j = j + 1 end
    local entry, last = path[j - 1], path[j]
    if last and last.name == "mKey" then return virtual(last, "key()"), j end
    if last and last.name == "mValue" then return virtual(last, quoted_or(field_or_nil(entry.object, "mKey"), "value()")), j end
  end
  return nil
end

--- A path with the internals of collections (ArrayList, HashMap, HashSet,
-- LinkedList, ArrayMap, ArraySet, MessageQueue, SafeIterableMap) folded
-- into entry references: `[3]`, `key()`, `"name"` (a String key),
-- `element()`.
function M.virtualize(path)
  local out, k = {}, 1
  while k <= #path do
    out[#out + 1] = path[k]
    local step, upto = collapse(path, k)
    if step then
      out[#out + 1] = step
      k = upto + 1
    else
      k = k + 1
    end
  end
  return out
end

-- }======================================================


-- a trace from a path (steps from the root object down to the leaking one)
local function make_trace(heap, path, inspectors, found_reason)
  path = M.virtualize(path)
  local elements = {}
  for k, st in ipairs(path) do
    local class_name, type_name = describe(st.object)
    local status, reason, labels = inspect(heap, st.object, inspectors)
    elements[k] = { object = st.object, class = class_name, type = type_name, status = status,
                    reason = reason, labels = labels }
    local nxt = path[k + 1]
    if nxt then  -- the reference from this object to the next
      local e = elements[k]
      if nxt.ref == "static" then
        e.ref_type, e.ref_name, e.owner = "static", nxt.name, st.object:as_class().name
      elseif nxt.ref == "field" then
        e.ref_type, e.ref_name, e.owner = "field", nxt.name, nxt.class
      elseif nxt.virtual then
        e.ref_type, e.ref_name, e.owner, e.entry = "element", nxt.label, class_name, nxt.name
      elseif nxt.ref ~= "element" then  -- kept by the JVM, not a field: <class>, <loader>...
        e.ref_type, e.ref_name, e.owner = "jvm", nxt.name, class_name
      else
        e.ref_type, e.ref_name, e.owner = "element", nxt.label, class_name
      end
      -- signatures name array slots generically, so that leaks through
      -- different slots of one array are the same leak
      e.ref_generic = e.ref_type == "element" and "[x]" or e.ref_name
    end
  end
  -- a local variable's root: the thread comes first, holding it as a local
  if path[1].root == "java_frame" and path[1].thread_serial then
    local thread, frame
    for _, t in ipairs(heap:threads()) do
      if t.serial == path[1].thread_serial then
        thread, frame = t.object, path[1].frame and t.frames[path[1].frame + 1]
      end
    end
    if thread then
      local status, reason, labels = inspect(heap, thread, inspectors)
      if frame then  -- the method whose local variable it is (frame 0 is the top)
        local line = frame.line and frame.line > 0 and (":" .. frame.line) or ""
        labels[#labels + 1] = format("Local variable in %s.%s(%s%s)", frame.class or "?", frame.method or "?",
          frame.source or "Unknown Source", line)
      end
      table.insert(elements, 1, { object = thread, class = thread:class_name(), type = "thread", status = status,
        reason = reason, labels = labels, ref_type = "local", ref_name = "<Java Local>",
        ref_generic = "<Java Local>", owner = thread:class_name() })
    end
  end
  local last = elements[#elements]  -- what the finder knows comes first
  if last.status == "NOT_LEAKING" then last.reason = found_reason .. ". Conflicts with " .. last.reason
  elseif last.status == "UNKNOWN" then last.reason = found_reason end
  last.status = "LEAKING"
  -- propagate: before the last NOT_LEAKING, nothing leaks; after the first
  -- LEAKING, everything does
  local n = #elements
  local last_not, first_leaking = 0, n
  for k = 1, n - 1 do
    if elements[k].status == "NOT_LEAKING" then last_not = k end
  end
  for k = n - 1, 1, -1 do
    if elements[k].status == "LEAKING" and k > last_not then first_leaking = k end
  end
  for k = 1, last_not - 1 do
    local e = elements[k]
    if e.status ~= "NOT_LEAKING" then
      local nxt
      for j = k + 1, last_not do
        if elements[j].status == "NOT_LEAKING" then nxt = elements[j] break end
      end
      local why = simple(nxt.class) .. "↓ is not leaking"
      e.reason = e.status == "LEAKING" and (why .. ". Conflicts with " .. e.reason) or why
      e.status = "NOT_LEAKING"
    end
  end
  for k = first_leaking + 1, n - 1 do
    local e = elements[k]
    if e.status ~= "LEAKING" then
      local prev
      for j = k - 1, first_leaking, -1 do
        if elements[j].status == "LEAKING" then prev = elements[j] break end
      end
      local why = simple(prev.class) .. "↑ is leaking"
      e.reason = e.status == "NOT_LEAKING" and (why .. ". Conflicts with " .. e.reason) or why
      e.status = "LEAKING"
    end
  end
  -- suspects: references from UNKNOWN objects, and from the last NOT_LEAKING
  -- one before a non-NOT_LEAKING one
  local signature = {}
  for k = 1, n - 1 do
    local e, nxt = elements[k], elements[k + 1]
    e.suspect = e.status == "UNKNOWN"
      or (e.status == "NOT_LEAKING" and (k == n - 1 or nxt.status ~= "NOT_LEAKING"))
    if e.suspect then signature[#signature + 1] = e.class .. e.ref_generic end
  end
  return {
    root = path[1].root, thread = path[1].thread, frame = path[1].frame_info, elements = elements,
    signature = M.sha1(concat(signature)), leaking = elements[n],
  }
end

-- }======================================================


--- {======================================================
-- Reference matchers of the user's own
-- =======================================================

local MATCHER_KINDS = "{ class, field }, { class, static }, { thread } or { root_class }"

-- a matcher as reference_rules wants it, or nil and why
local function check_matcher(m, where)
  if type(m) ~= "table" then return nil, where .. ": a table expected" end
  local kinds = (m.field and 1 or 0) + (m.static and 1 or 0) + (m.thread and 1 or 0) + (m.root_class and 1 or 0)
  if kinds ~= 1 or ((m.field or m.static) and type(m.class) ~= "string") then
    return nil, where .. ": one of " .. MATCHER_KINDS .. " expected"
  end
  for _, k in ipairs { "class", "field", "static", "thread", "root_class", "description" } do
    if m[k] ~= nil and type(m[k]) ~= "string" then return nil, format("%s: %s must be a string", where, k) end
  end
  return m
end

--- Reference matchers as LeakCanary lets an app add them: `ignored`
-- references are never on a leak trace (an instance field `{ class, field
-- }`, a static field `{ class, static }`, the local variables of a thread
-- `{ thread }`, the native global roots holding an instance of a class `{
-- root_class }`); `library` ones, of the same shapes with a
-- `description`, are followed last and a trace through one is a library
-- leak. Checked, and turned into `analyze`'s `rules` and `library`.
-- @tparam table matchers `{ ignored = {...}, library = {...} }`
-- @return `{ rules, library }`, or nil and a message
function M.matchers(matchers)
  if type(matchers) ~= "table" then return nil, "matchers: a table { ignored = {...}, library = {...} } expected" end
  local rules, library = {}, {}
  for _, part in ipairs { "ignored", "library" } do
    for i, m in ipairs(matchers[part] or {}) do
      local ok, err = check_matcher(m, format("%s[%d]", part, i))
      if not ok then return nil, err end
      if part == "ignored" then
        rules[#rules + 1] = { class = m.class, field = m.field, static = m.static, thread = m.thread,
                              root_class = m.root_class, rule = "skip" }
      else
        library[#library + 1] = m
      end
    end
  end
  return { rules = rules, library = library }
end

--- Read matchers from a file: Lua text returning the table `matchers`
-- takes, run with nothing in reach (no functions of the standard library).
-- @return `{ rules, library }`, or nil and a message
function M.read_matchers(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  local chunk, msg = load(text, "@" .. path, "t", {})
  if not chunk then return nil, msg end
  local ok, value = pcall(chunk)
  if not ok then return nil, tostring(value) end
  local out, why = M.matchers(value)
  if not out then return nil, path .. ": " .. why end
  return out
end

-- }======================================================


--- Analyse a heap: find the leaking objects, their traces, group them.
-- @param heap an open heap
-- @tparam[opt] table opts `finder` (a name from `finders` or a function
--   (heap) -> objects; default "all"), `inspectors` (a list; default all of
--   `inspectors`), `retained` (compute retained sizes; default true),
--   `rules` (extra reference rules, see `heap:reference_rules`),
--   `library` (library-leak rules: `{ class, field|static, description }`
--   or `{ root_class, description }`,
--   references followed last and, when a trace goes through one, reported
--   as a library leak; added to those of `sift.known_leaks` that apply to
--   the dump), `known` (false: leave out the known-leak catalogue),
--   `matchers` (the user's own, as `M.matchers` takes them)
-- @return `{ application_leaks, library_leaks, unreachable, metadata }`
function M.analyze(heap, opts)
  opts = opts or {}
  local finder = opts.finder or "all"
  if type(finder) == "string" then
    finder = M.finders[finder] or error(format("unknown finder '%s' (keyed, android, all)", finder), 2)
  end
  local inspectors = opts.inspectors or M.inspectors
  heap._watched = keyed_refs(heap)
  local metadata = M.metadata(heap)
  local library, ignored = {}, {}
  if opts.known ~= false then library, ignored = known_leaks.rules(metadata) end
  heap:reference_rules(ignored)
  if opts.rules then heap:reference_rules(opts.rules) end
  local matchers = opts.matchers and assert(M.matchers(opts.matchers))
  if matchers then heap:reference_rules(matchers.rules) end
  for _, rule in ipairs(opts.library or {}) do library[#library + 1] = rule end
  for _, rule in ipairs(matchers and matchers.library or {}) do library[#library + 1] = rule end
  for _, rule in ipairs(library) do
    heap:reference_rules { { class = rule.class, field = rule.field, static = rule.static, rule = "low",
                             pattern = rule.pattern, root_class = rule.root_class } }
  end
  local found = opts.reason or ({ keyed = "ObjectWatcher was watching this",
    android = "its lifecycle has ended" })[opts.finder or "all"] or "a finder says it should be dead"
  local objects = finder(heap)
  local paths = heap:path_to_root(objects)
  if opts.retained ~= false and #objects > 0 then heap:dominators() end
  local groups, order, unreachable = {}, {}, {}
  for i, obj in ipairs(objects) do
    local path = paths[i]
    if not path then
      unreachable[#unreachable + 1] = obj
    else
      local trace = make_trace(heap, path, inspectors, found)
      -- a trace through a library-leak reference is a library leak
      local lib
      for _, rule in ipairs(library) do  -- a root the library rule names
        if rule.root_class and path[1].object:is_instance_of(rule.root_class) then lib = rule end
      end
      for k = 2, #path do
        local st = path[k]
        for _, rule in ipairs(library) do
          if st.low and st.name == (rule.field or rule.static)
             and (st.class == rule.class or (rule.pattern and st.class:match(rule.class))) then
            lib = rule
          end
        end
      end
      trace.retained = opts.retained ~= false and heap:retained(obj) or nil
      local key = (lib and "lib:" or "app:") .. trace.signature
      local group = groups[key]
      if not group then
        group = { signature = trace.signature, traces = {}, retained = 0, library = lib }
        groups[key] = group
        order[#order + 1] = group
      end
      group.traces[#group.traces + 1] = trace
      group.retained = group.retained + (trace.retained or 0)
    end
  end
  local report = { application_leaks = {}, library_leaks = {}, unreachable = unreachable,
                   metadata = metadata }
  if opts.suspects then report.suspects, report.reachable_bytes = M.suspects(heap, opts) end
  for _, g in ipairs(order) do
    local first = g.traces[1]
    g.description = format("%s %s", first.leaking.class, first.leaking.type)
    if g.library then
      g.pattern = g.library.root_class and ("root " .. g.library.root_class)
        or (g.library.class .. "#" .. (g.library.field or g.library.static))
      g.description = g.library.description or g.description
      report.library_leaks[#report.library_leaks + 1] = g
    else
      report.application_leaks[#report.application_leaks + 1] = g
    end
  end
  return report
end

--- {======================================================
-- Leak suspects (beyond Shark): where the memory accumulates
-- =======================================================

-- from obj, follow the dominator tree while one child holds most of the
-- memory: where that stops is where the memory accumulates
local function accumulation_point(heap, obj)
  local node = obj
  while true do
    local children = heap:dominated(node)
    local biggest = children[1]
    if not biggest or heap:retained(biggest) < 0.8 * heap:retained(node) then return node end
    node = biggest
  end
end

--- MAT-style leak suspects: single objects that retain more than
-- `threshold` (default 0.1) of the reachable heap (none nested in another),
-- and classes whose instances pile up under one holder and together retain
-- that much; each with its share, the point where the memory accumulates
-- and the shortest path to it.
-- @return list of `{ kind = "object" | "class", object, class, retained,
--   share, count, holder, accumulation = { object, retained }, path }`,
--   largest first, and the reachable bytes
function M.suspects(heap, opts)
  local threshold = opts and opts.threshold or 0.1
  heap:dominators { model = opts and opts.model }
  local total = 0
  for _, obj in ipairs(heap:dominated(nil)) do total = total + heap:retained(obj) end
  local out = {}
  if total == 0 then return out, total end
  -- candidates: big single objects, and many instances of a class under
  -- one holder; largest first, a candidate inside an earlier one (its
  -- object, or its holder, dominated by that one's) is nested under it, as
  -- MAT lists accumulation points under their suspect: shares never add
  -- up to more than the heap
  local candidates = {}
  for _, row in ipairs(heap:top(20)) do
    if row.retained >= threshold * total and row.object:kind() ~= "class" then
      local point = accumulation_point(heap, row.object)
      candidates[#candidates + 1] = { kind = "object", object = row.object, class = row.class,
        retained = row.retained, share = row.retained / total,
        accumulation = { object = point, retained = heap:retained(point) } }
    end
  end
  for _, row in ipairs(heap:retained_by_class()) do
    local cls = row.retained >= threshold * total and heap:class(row.class)
    if cls and row.class ~= "java.lang.Class" then
      local holder_num, count, sum = heap.index:holders(cls.number)
      local holder = holder_num and holder_num > 0 and heap:object((heap.index:object(holder_num))) or nil
      if holder and count > 1 and sum >= threshold * total then  -- many instances under one holder
        candidates[#candidates + 1] = { kind = "class", class = row.class, retained = sum, share = sum / total,
          count = count, object = holder, holder = holder,
          accumulation = { object = holder, retained = heap:retained(holder) } }
      end
    end
  end
  table.sort(candidates, function(x, y) return x.retained > y.retained end)
  local by_id = {}  -- accepted suspects by the id of their object
  local function enclosing(obj)
    local d = obj
    while d do
      if by_id[d:id()] then return by_id[d:id()] end
      d = heap:idom(d)
    end
  end
  local function within(obj, holder)  -- holder dominates obj (or is it)
    local d = obj
    while d do
      if d == holder then return true end
      d = heap:idom(d)
    end
    return false
  end
  for _, c in ipairs(candidates) do
    local outer = enclosing(c.object)
    if outer then  -- a point inside a suspect; one per dominator chain
      local deeper = false
      for _, n in ipairs(outer.nested) do deeper = deeper or within(c.object, n.object) end
      if not deeper then outer.nested[#outer.nested + 1] = c end
    else
      c.nested = {}
      by_id[c.object:id()] = c
      out[#out + 1] = c
    end
  end
  table.sort(out, function(x, y) return x.retained > y.retained end)
  local targets = {}
  for i, sus in ipairs(out) do targets[i] = sus.object end
  for i, path in ipairs(heap:path_to_root(targets)) do out[i].path = path or nil end
  return out, total
end

local function suspect_text(sus, total)
  local lines = {}
  if sus.kind == "object" then
    lines[1] = format("One %s (%s) retains %d bytes (%.1f%% of %d reachable bytes).", sus.class,
      tostring(sus.object), sus.retained, 100 * sus.share, total)
  else
    lines[1] = format("%d instances of %s, all held by %s, retain %d bytes (%.1f%% of %d reachable bytes).",
      sus.count, sus.class, tostring(sus.holder), sus.retained, 100 * sus.share, total)
  end
  for _, inner in ipairs(sus.nested or {}) do
    if inner.kind == "object" then
      lines[#lines + 1] = format("  inside it: %s retains %d bytes (%.1f%%).", tostring(inner.object), inner.retained,
        100 * inner.share)
    else
      lines[#lines + 1] = format("  inside it: %d instances of %s held by %s retain %d bytes (%.1f%%).", inner.count,
        inner.class, tostring(inner.holder), inner.retained, 100 * inner.share)
    end
  end
  if sus.accumulation.object ~= sus.object then
    lines[#lines + 1] = format("The memory accumulates in %s (%d bytes).", tostring(sus.accumulation.object),
      sus.accumulation.retained)
  end
  if sus.path then
    local parts = {}
    for k, st in ipairs(sus.path) do parts[k] = k == 1 and ("root " .. tostring(st.root)) or st.label end
    lines[#lines + 1] = "Path: " .. concat(parts, " → ")
  end
  return concat(lines, "\n")
end
M.suspect_text = suspect_text

-- }======================================================


--- What the dump says about where it comes from: Android's build, the
-- LeakCanary version when present, the dump's own facts.
function M.metadata(heap)
  local info = heap:info()
  local meta = { hprof_version = info.version, id_size = info.id_size, time = info.time }
  local build = heap:class("android.os.Build")
  if build then
    local s = build:statics()
    meta.android, meta.manufacturer = true, text(s.MANUFACTURER)
    local version = heap:class("android.os.Build$VERSION")
    if version then meta.sdk_int = version:statics().SDK_INT end
  end
  local activity_thread = heap:class("android.app.ActivityThread")
  local current = activity_thread and activity_thread:statics().sCurrentActivityThread
  local bound = type(current) == "userdata" and field_or_nil(current, "mBoundApplication")
  if type(bound) == "userdata" then meta.process = text(field_or_nil(bound, "processName")) end
  local lc = heap:class("leakcanary.internal.InternalLeakCanary")
  if lc then meta.leakcanary_version = text(lc:statics().version) end
  return meta
end

--- {======================================================
-- Rendering
-- =======================================================

local ZWSP = "\u{200B}"

local function node_text(e, first_prefix, prefix, type_name)
  local status = e.status == "UNKNOWN" and "UNKNOWN"
    or format("%s (%s)", e.status == "LEAKING" and "YES" or "NO", e.reason)
  local lines = { first_prefix .. e.class .. " " .. (type_name or e.type), prefix .. "Leaking: " .. status }
  for _, label in ipairs(e.labels) do lines[#lines + 1] = prefix .. label end
  return concat(lines, "\n")
end

--- One trace as LeakCanary draws it.
function M.render_trace(trace)
  local out = { "┬───", "│ GC Root: " .. (ROOT_DESCRIPTIONS[trace.root] or trace.root or "?"), "│" }
  local n = #trace.elements
  for k = 1, n - 1 do
    local e = trace.elements[k]
    out[#out + 1] = node_text(e, "├─ ", "│    ")
    local line = format("    ↓%s %s.%s", e.ref_type == "static" and " static" or "", simple(e.owner), e.ref_name)
    out[#out + 1] = "│" .. line
    if e.suspect then
      local before = utf8.len(line:match("^(.*%.)"))
      out[#out + 1] = "│" .. (" "):rep(before) .. ("~"):rep(utf8.len(line) - before)
    end
  end
  out[#out + 1] = node_text(trace.elements[n], "╰→ ", ZWSP .. "     ")
  return concat(out, "\n")
end

--- The whole report as text: application leaks, library leaks, objects
-- that should be dead but that no root reaches, metadata.
function M.render(report)
  local out = {}
  local function section(title, leaks)
    out[#out + 1] = "===================================="
    out[#out + 1] = format("%d %s", #leaks, title)
    out[#out + 1] = ""
    for _, leak in ipairs(leaks) do
      out[#out + 1] = format("%d bytes retained by leaking objects", leak.retained)
      if leak.pattern then out[#out + 1] = "Leak pattern: " .. leak.pattern end
      out[#out + 1] = "Description: " .. leak.description
      out[#out + 1] = "Signature: " .. leak.signature
      for _, trace in ipairs(leak.traces) do out[#out + 1] = M.render_trace(trace) end
      out[#out + 1] = ""
    end
  end
  section("APPLICATION LEAKS", report.application_leaks)
  section("LIBRARY LEAKS", report.library_leaks)
  out[#out + 1] = "===================================="
  out[#out + 1] = format("%d UNREACHABLE OBJECTS (should be dead and are: no strong path from a GC root)",
    #report.unreachable)
  for _, obj in ipairs(report.unreachable) do out[#out + 1] = tostring(obj) end
  if report.suspects then
    out[#out + 1] = "===================================="
    out[#out + 1] = format("%d LEAK SUSPECTS (what holds more than a tenth of the reachable heap)", #report.suspects)
    for i, sus in ipairs(report.suspects) do
      out[#out + 1] = ""
      out[#out + 1] = format("Suspect %d. %s", i, suspect_text(sus, report.reachable_bytes))
    end
  end
  out[#out + 1] = "===================================="
  out[#out + 1] = "METADATA"
  local keys = {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = format("%s: %s", k, tostring(report.metadata[k])) end
  out[#out + 1] = "===================================="
  return concat(out, "\n")
end

--- The report as plain tables for JSON (the `sift leaks --json` contract).
function M.to_json(report)
  local array = require("sift.json").array
  local function trace_json(t)
    local elements = array {}
    for i, e in ipairs(t.elements) do
      local ref
      if e.ref_type == "static" then ref = "static " .. e.ref_name
      elseif e.ref_type == "field" then ref = "field " .. e.ref_name
      elseif e.ref_type == "local" then ref = "local"
      elseif e.ref_type == "jvm" then ref = e.ref_name
      elseif e.entry and not e.entry:match("^%d+$") then ref = e.entry  -- key(), "name", element()
      else ref = e.ref_name end
      elements[i] = { class = e.class, id = format("0x%x", e.object:id()), ref = ref, status = e.status,
                      reason = e.reason, suspect = e.suspect or nil }
    end
    local f = t.frame  -- a local variable's root: Shark's text has the thread first; both are here
    return { root = t.root, thread = t.thread,
             frame = f and { method = f.method, class = f.class, source = f.source, line = f.line } or nil,
             leaking_class = t.leaking.class, leaking_id = format("0x%x", t.leaking.object:id()),
             retained = t.retained, elements = elements }
  end
  local function leaks_json(list)
    local out = array {}
    for i, g in ipairs(list) do
      local traces = array {}
      for j, t in ipairs(g.traces) do traces[j] = trace_json(t) end
      out[i] = { signature = g.signature, description = g.description, retained = g.retained,
                 pattern = g.pattern, traces = traces }
    end
    return out
  end
  local unreachable = array {}
  for i, obj in ipairs(report.unreachable) do
    unreachable[i] = { class = obj:class_name(), id = format("0x%x", obj:id()) }
  end
  local suspects
  if report.suspects then
    suspects = array {}
    for i, sus in ipairs(report.suspects) do
      local path = array {}
      for k, st in ipairs(sus.path or {}) do
        path[k] = { class = st.object:as_class() and st.object:as_class().name or st.object:class_name(),
                    id = format("0x%x", st.object:id()), ref = k > 1 and st.label or nil, root = st.root }
      end
      local nested = array {}
      for j, inner in ipairs(sus.nested or {}) do
        nested[j] = { kind = inner.kind, class = inner.class, id = format("0x%x", inner.object:id()),
          retained = inner.retained, share = inner.share, count = inner.count }
      end
      suspects[i] = { kind = sus.kind, class = sus.class, id = format("0x%x", sus.object:id()), nested = nested,
        retained = sus.retained, share = sus.share, count = sus.count,
        accumulation = { class = sus.accumulation.object:class_name(),
                         id = format("0x%x", sus.accumulation.object:id()), retained = sus.accumulation.retained },
        path = path }
    end
  end
  return { application_leaks = leaks_json(report.application_leaks),
           library_leaks = leaks_json(report.library_leaks), unreachable = unreachable,
           suspects = suspects, metadata = report.metadata }
end

--- The report as one self-contained HTML page: a section per leak, each
-- trace collapsible, statuses coloured, suspects underlined.
function M.html(report, title)
  local function esc(v)
    return (tostring(v):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
  end
  local out = { "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>", esc(title or "sift leaks"),
    "</title><style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}",
    "pre{background:#f6f6f6;padding:1em;overflow-x:auto}summary{cursor:pointer;font-weight:600}",
    ".LEAKING{color:#b00}.NOT_LEAKING{color:#070}.UNKNOWN{color:#555}.suspect{text-decoration:underline wavy #b00}",
    "li{margin:.3em 0}</style></head><body><h1>", esc(title or "sift leaks"), "</h1>" }
  local function section(name, list)
    out[#out + 1] = format("<h2>%d %s</h2>", #list, name)
    for _, leak in ipairs(list) do
      out[#out + 1] = format("<details open><summary>%s — %d bytes retained, %d trace%s%s</summary>",
        esc(leak.description), leak.retained, #leak.traces, #leak.traces == 1 and "" or "s",
        leak.pattern and (" — pattern " .. esc(leak.pattern)) or "")
      out[#out + 1] = "<p>Signature <code>" .. leak.signature .. "</code></p>"
      for i, trace in ipairs(leak.traces) do
        out[#out + 1] = format("<details%s><summary>Trace %d: GC root %s</summary><ol>", i == 1 and " open" or "", i,
          esc(ROOT_DESCRIPTIONS[trace.root] or trace.root))
        for _, e in ipairs(trace.elements) do
          out[#out + 1] = format("<li><b>%s</b> %s <span class=\"%s\">%s%s</span>", esc(e.class), e.type, e.status,
            e.status, e.reason and (" (" .. esc(e.reason) .. ")") or "")
          for _, label in ipairs(e.labels) do out[#out + 1] = "<br>" .. esc(label) end
          if e.ref_name then
            out[#out + 1] = format("<br>↓ %s<span%s>%s</span>", e.ref_type == "static" and "static " or "",
              e.suspect and " class=\"suspect\"" or "", esc(simple(e.owner) .. "." .. e.ref_name))
          end
          out[#out + 1] = "</li>"
        end
        out[#out + 1] = "</ol><pre>" .. esc(M.render_trace(trace)) .. "</pre></details>"
      end
      out[#out + 1] = "</details>"
    end
  end
  section("application leaks", report.application_leaks)
  section("library leaks", report.library_leaks)
  if report.suspects then
    out[#out + 1] = format("<h2>%d leak suspects</h2><ol>", #report.suspects)
    for _, sus in ipairs(report.suspects) do
      out[#out + 1] = "<li>" .. esc(suspect_text(sus, report.reachable_bytes)):gsub("\n", "<br>") .. "</li>"
    end
    out[#out + 1] = "</ol>"
  end
  out[#out + 1] = format("<h2>%d unreachable objects</h2><ul>", #report.unreachable)
  for _, obj in ipairs(report.unreachable) do out[#out + 1] = "<li>" .. esc(tostring(obj)) .. "</li>" end
  out[#out + 1] = "</ul><h2>Metadata</h2><table>"
  local keys = {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    out[#out + 1] = format("<tr><td>%s</td><td>%s</td></tr>", esc(k), esc(report.metadata[k]))
  end
  out[#out + 1] = "</table></body></html>\n"
  return concat(out)
end

-- }======================================================

return M
