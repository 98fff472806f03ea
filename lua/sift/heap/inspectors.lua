--- The inspectors of leak traces: what each object on a trace says about
-- itself (LEAKING, NOT_LEAKING, labels), LeakCanary's catalogue for the
-- JDK, Android and AndroidX. The module is the list; each entry is also
-- reachable by its name.
-- @module sift.heap.inspectors

local fields = require "sift.heap.fields"

local field_or_nil, text = fields.field_or_nil, fields.text
local running_services, destroyed_activity, FRAGMENTS = fields.running_services, fields.destroyed_activity, fields.FRAGMENTS
local format = string.format

--- {======================================================
-- Inspectors: what each object on a trace says about itself
-- =======================================================

--- The catalogue: each inspector is `{ name, class = name?, fn(obj, report,
-- heap) }`; `class` limits it to instances of that class and its
-- subclasses. `report` has `labels`, `leaking` and `not_leaking` lists.
local inspectors = {}

local function add(name, class, fn)
  inspectors[#inspectors + 1] = { name = name, class = class, fn = fn }
  inspectors[name] = inspectors[#inspectors]
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

return inspectors
