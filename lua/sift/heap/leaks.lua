--- Leak analysis in the manner of LeakCanary's Shark, on sift's heap graph.
--
--     local leaks = require "sift.heap.leaks"
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
-- @module sift.heap.leaks

local fields = require "sift.heap.fields"
local known_leaks = require "sift.heap.known_leaks"
local leak_report = require "sift.heap.leak_report"
local sha1 = require "sift.sha1"
local class_named = require("sift.heap.index").class_named
local suspects = require "sift.heap.suspects"
local unseen = require("sift.progress").unseen

local M = {}

local format, concat = string.format, table.concat
local field_or_nil, text, FRAGMENTS = fields.field_or_nil, fields.text, fields.FRAGMENTS
local running_services, destroyed_activity = fields.running_services, fields.destroyed_activity
local simple = fields.simple

--- The inspectors (sift.heap.inspectors), the suspects (sift.heap.suspects)
-- and the report's renderings (sift.heap.leak_report), as parts of this API.
M.inspectors = require "sift.heap.inspectors"
M.root_descriptions = fields.ROOT_DESCRIPTIONS
M.suspects, M.suspect_text = suspects.suspects, suspects.text
M.render_trace, M.render, M.to_json, M.html =
  leak_report.render_trace, leak_report.render, leak_report.to_json, leak_report.html


--- {======================================================
-- Finders: the objects that should be dead
-- =======================================================

local KEYED = { "leakcanary.KeyedWeakReference", "com.squareup.leakcanary.KeyedWeakReference" }


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


-- instances of the class and its subclasses for which test(obj) is true
local function instances_where(heap, class_name, test, out)
  local cls = class_named(heap, class_name)
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

--- {======================================================
-- Resources never closed (the heap side of `sift lint`)
-- =======================================================

-- the file descriptor number of a JDK stream, when its fields say it
local function fd_number(stream)
  local fd = field_or_nil(stream, "fd")
  if type(fd) ~= "userdata" then return nil end
  local n = field_or_nil(fd, "fd")
  if n == nil then n = field_or_nil(fd, "descriptor") end  -- (Android's FileDescriptor)
  return n
end

-- streams the JDK keeps open on purpose: /dev/random and /dev/urandom,
-- which sun.security.provider.NativePRNG holds for the process's life
local KEPT_OPEN = { ["sun.security.provider.FileInputStreamPool$UnclosableInputStream"] = true }

local function kept_open(heap, stream)
  for _, r in ipairs(heap:referrers(stream)) do
    if KEPT_OPEN[r:class_name()] then return true end
  end
  return false
end

-- the object a CloseGuard guards: what refers to it (not another guard)
local function guarded(heap, guard)
  for _, r in ipairs(heap:referrers(guard)) do
    if not r:as_class() and r:class_name() ~= "dalvik.system.CloseGuard" then return r end
  end
  return guard
end

--- Resources that were never closed: `{object, reason}` each. Android's
-- `dalvik.system.CloseGuard`s still armed (the object holding each, with
-- the allocation site when StrictMode recorded one, or the method to call),
-- `SQLiteCursor`s not closed, `CursorWindow`s not disposed, and JDK file
-- streams still open (not the standard input, output and error).
function M.unclosed(heap)
  local out, seen = {}, {}
  local function add(obj, reason)
    if seen[obj:id()] then return end
    seen[obj:id()] = true
    out[#out + 1] = { object = obj, reason = reason }
  end
  local guard = class_named(heap, "dalvik.system.CloseGuard")
  if guard then
    for g in guard:instances() do
      local site = field_or_nil(g, "closerNameOrAllocationInfo")
      if site == nil then site = field_or_nil(g, "allocationSite") end
      if site ~= nil then
        local detail
        if type(site) == "userdata" and site:is_instance_of("java.lang.Throwable") then
          detail = "allocated at: " .. (text(field_or_nil(site, "detailMessage")) or site:class_name())
        else
          detail = ("%s() was never called"):format(text(site) or "close")
        end
        add(guarded(heap, g), "its CloseGuard is armed: " .. detail)
      end
    end
  end
  local cursor = class_named(heap, "android.database.AbstractCursor")
  if cursor then
    for c in cursor:instances { subclasses = true } do
      local closed = field_or_nil(c, "mClosed")
      if closed == nil then closed = field_or_nil(c, "mWindow") == nil end  -- (no mClosed: a window means open)
      if closed == false then add(c, ("a %s that was never closed"):format(c:class_name())) end
    end
  end
  local window = class_named(heap, "android.database.CursorWindow")
  if window then
    for w in window:instances() do
      local ptr = field_or_nil(w, "mWindowPtr")
      if ptr ~= nil and ptr ~= 0 then add(w, "a CursorWindow that was never closed (its native window is held)") end
    end
  end
  for _, name in ipairs { "java.io.FileInputStream", "java.io.FileOutputStream", "java.io.RandomAccessFile" } do
    local cls = class_named(heap, name)
    if cls then
      for stream in cls:instances { subclasses = true } do
        local fd = fd_number(stream)
        if field_or_nil(stream, "closed") == false and fd and fd > 2 and not kept_open(heap, stream) then
          add(stream, ("a %s that was never closed (file descriptor %d)"):format(stream:class_name(), fd))
        end
      end
    end
  end
  return out
end

-- }======================================================

-- what each UNKNOWN and LEAKING object of a trace retains, as LeakCanary
-- says it ("Retaining 1.2 kB in 34 objects"): bytes and objects
local function retaining(heap, trace)
  for _, e in ipairs(trace.elements) do
    if e.status ~= "NOT_LEAKING" then
      e.retained, e.retained_count = heap:retained(e.object), heap:retained_count(e.object)
    end
  end
end

--- A finder from a predicate over objects: every instance (of `class`,
-- when given) for which `fn(obj)` is true.
function M.where(fn, class)
  return function(heap)
    local out = {}
    local iter
    if class then
      local c = class_named(heap, class)
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
-- Traces
-- =======================================================


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
    root = path[1].root, root_inferred = path[1].root_inferred, thread = path[1].thread, frame = path[1].frame_info,
    elements = elements,
    signature = sha1.hex(concat(signature)), leaking = elements[n],
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
  local source = f:read("a")
  f:close()
  local chunk, msg = load(source, "@" .. path, "t", {})
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
--   as a library leak; added to those of `sift.heap.known_leaks` that apply to
--   the dump), `known` (false: leave out the known-leak catalogue),
--   `matchers` (the user's own, as `M.matchers` takes them)
--   `unclosed` (false: leave out the resources never closed, M.unclosed),
--   `with_progress(label, work)` (called around the dominator tree, the
--   analysis's longest step; returns what `work(progress)` returns, progress
--   being a function `(done, total)` or nil, as the CLI draws its bars)
-- The rules it adds hold for this analysis only: the heap's reference
-- flags are put back as they were when it returns (or fails), so what ran
-- before on a heap never changes an answer.
-- @return `{ application_leaks, library_leaks, unclosed_resources, unreachable, metadata }`
function M.analyze(heap, opts)
  if getmetatable(heap) ~= require("sift.heap").Heap then
    error(format("bad argument #1 to 'analyze' (heap expected, got %s)", type(heap)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(format("bad argument #2 to 'analyze' (table expected, got %s)", type(opts)), 2)
  end
  opts = opts or {}
  local finder = opts.finder or "all"
  if type(finder) == "string" then
    finder = M.finders[finder] or error(format("unknown finder '%s' (keyed, android, all)", finder), 2)
  end
  local inspectors = opts.inspectors or M.inspectors
  local with_progress = opts.with_progress or unseen
  local function dominators()
    return with_progress("dominators", function(progress) return heap:dominators { progress = progress } end)
  end
  local grouped = heap.index:grouped()  -- (the caller's grouping by class, kept)
  heap:reference_rules {}  -- (Shark's defaults, once: they stay)
  local flags, watched = heap.index:flags_state(), heap._watched
  local _ <close> = setmetatable({}, { __close = function()
    heap.index:set_flags_state(flags)
    heap._watched = watched
  end })
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
  local found_unclosed = opts.unclosed ~= false and M.unclosed(heap) or nil
  -- the dominator tree is the analysis's peak: the objects' grouping by
  -- class, made above for the finders only (4 bytes an object), is given
  -- back before it
  if not grouped then heap.index:ungroup() end
  local paths = heap:path_to_root(objects)
  if opts.retained ~= false and #objects > 0 then dominators() end
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
      if opts.retained ~= false then retaining(heap, trace) end
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
                   metadata = metadata, unclosed_resources = {} }
  if found_unclosed then  -- resources never closed: a leak kind of their own
    local objs = {}
    for i, u in ipairs(found_unclosed) do objs[i] = u.object end
    local upaths = heap:path_to_root(objs)
    if opts.retained ~= false and #objs > 0 then dominators() end
    local by_sig = {}
    for i, u in ipairs(found_unclosed) do
      if upaths[i] then
        local trace = make_trace(heap, upaths[i], inspectors, u.reason)
        trace.retained = opts.retained ~= false and heap:retained(u.object) or nil
        if opts.retained ~= false then retaining(heap, trace) end
        local key = trace.signature .. " " .. trace.leaking.class  -- (one group per resource class)
        local group = by_sig[key]
        if not group then
          group = { signature = trace.signature, traces = {}, retained = 0,
                    description = format("%s never closed", trace.leaking.class) }
          by_sig[key] = group
          report.unclosed_resources[#report.unclosed_resources + 1] = group
        end
        group.traces[#group.traces + 1] = trace
        group.retained = group.retained + (trace.retained or 0)
      end
    end
  end
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


--- What the dump says about where it comes from: Android's build, the
-- LeakCanary version when present, the dump's own facts.
function M.metadata(heap)
  local info = heap:info()
  local meta = { hprof_version = info.version, id_size = info.id_size, time = info.time }
  local build = class_named(heap, "android.os.Build")
  if build then
    local s = build:statics()
    meta.android, meta.manufacturer = true, text(s.MANUFACTURER)
    local version = class_named(heap, "android.os.Build$VERSION")
    if version then meta.sdk_int = version:statics().SDK_INT end
  end
  local activity_thread = class_named(heap, "android.app.ActivityThread")
  local current = activity_thread and activity_thread:statics().sCurrentActivityThread
  local bound = type(current) == "userdata" and field_or_nil(current, "mBoundApplication")
  if type(bound) == "userdata" then meta.process = text(field_or_nil(bound, "processName")) end
  local lc = class_named(heap, "leakcanary.internal.InternalLeakCanary")
  if lc then meta.leakcanary_version = text(lc:statics().version) end
  return meta
end

return M
