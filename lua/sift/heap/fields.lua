--- What leak rules read from objects, shared by the finders, inspectors,
-- suspects and leak reports of sift.heap: a field that may be absent,
-- a value as text, Android's activities, fragments and services, and how
-- LeakCanary names GC roots and classes.
-- @module sift.heap.fields

local M = {}

-- a Java field's value, nil when the object has no such field (fields are
-- always read through obj:field, so no Java name can be taken for a method)
local function field_or_nil(obj, name)
  if obj:has_field(name) then return obj:field(name) end
end

local function text(v)
  if type(v) == "userdata" then return v:string() end
  return v
end

local FRAGMENTS = { "android.app.Fragment", "android.support.v4.app.Fragment", "androidx.fragment.app.Fragment" }

-- the Services ActivityThread still runs (ActivityThread.mServices, an
-- ArrayMap of token -> Service), as a set of ids; nil when the dump has none
local function running_services(heap)
  local at = require("sift.heap.index").class_named(heap, "android.app.ActivityThread")
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

local ROOT_DESCRIPTIONS = {
  jni_global = "Global variable in native code", jni_local = "Local variable in native code",
  java_frame = "Java local variable", native_stack = "Input or output parameters in native code",
  sticky_class = "System class", thread_block = "Thread block",
  monitor_used = "Monitor (anything that called the wait() or notify() methods, or that is synchronized.)",
  thread_object = "Thread object", jni_monitor = "Root JNI monitor", unknown = "Unknown",
  interned_string = "Interned string", finalizing = "Finalizing", debugger = "Debugger",
  reference_cleanup = "Reference cleanup", vm_internal = "VM internal", unreachable = "Unreachable",
}

-- a root kind ("jni_global") as every text of sift writes it: LeakCanary's words
local function root_description(kind)
  if kind == nil then return "?" end
  return ROOT_DESCRIPTIONS[kind] or (kind:gsub("_", " "))
end

local function simple(name) return (name:match("[^.]+$")) end

M.field_or_nil, M.text, M.FRAGMENTS = field_or_nil, text, FRAGMENTS
M.running_services, M.activity_of, M.destroyed_activity = running_services, activity_of, destroyed_activity
M.ROOT_DESCRIPTIONS, M.root_description, M.simple = ROOT_DESCRIPTIONS, root_description, simple

return M
