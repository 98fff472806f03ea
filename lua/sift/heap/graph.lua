--- The reference graph of a heap: Shark's reference rules and a user's,
-- shortest strong paths from the GC roots (runs folded, merged), how
-- strongly an object is reachable, referrers and references. Methods of
-- `sift.heap`'s Heap.
-- @module sift.heap.graph

local core = require "sift.core"
local shared = require "sift.heap.index"

local M, Heap, Object = shared.M, shared.Heap, shared.Object
local raw, object_at = shared.raw, shared.object_at
local object_parts = core.object_parts

--- {======================================================
-- The reference graph: rules, paths, dominators
-- =======================================================

local FLAGS = { never = 1, skip = 2, low = 4 }
M.reference_flags = FLAGS

--- Shark's rules, applied when the graph is first used: a
-- `java.lang.ref.Reference`'s `referent` is never followed (also not by the
-- dominator tree); finalizer and cleaner links are not followed by path
-- finding; roots of these kinds are visited last.
M.default_rules = {
  { class = "java.lang.ref.Reference", field = "referent", rule = "never" },
  { class = "java.lang.ref.Finalizer", field = "next", rule = "skip" },
  { class = "java.lang.ref.Finalizer", field = "prev", rule = "skip" },
  { class = "java.lang.ref.FinalizerReference", field = "next", rule = "skip" },
  { class = "java.lang.ref.FinalizerReference", field = "prev", rule = "skip" },
  { class = "java.lang.ref.FinalizerReference", field = "zombie", rule = "skip" },
  { class = "sun.misc.Cleaner", field = "next", rule = "skip" },
  { class = "sun.misc.Cleaner", field = "prev", rule = "skip" },
  { class = "jdk.internal.ref.Cleaner", field = "next", rule = "skip" },
  { class = "jdk.internal.ref.Cleaner", field = "prev", rule = "skip" },
  { root = "unknown", rule = "low" }, { root = "java_frame", rule = "low" },
  { root = "interned_string", rule = "low" }, { root = "finalizing", rule = "low" },
  { root = "debugger", rule = "low" }, { root = "reference_cleanup", rule = "low" },
  { root = "vm_internal", rule = "low" }, { root = "unreachable", rule = "low" },
}

-- classes a rule names: an exact name, or a Lua pattern with pattern = true
local function rule_classes(heap, rule)
  if not rule.pattern then return heap:classes_named(rule.class) end
  local out = {}
  for c in heap:classes() do
    if c.name:match(rule.class) then out[#out + 1] = c end
  end
  return out
end

--- Add reference rules for path finding (and, with "never", for the
-- dominator tree). Each rule is `{ class = name, field = name | static =
-- name, rule = "never" | "skip" | "low" | "normal", pattern = true? }` or
-- `{ root = kind, rule = ... }` or `{ root_class = name, rule = ... }`
-- (the roots that hold an instance of that class) or `{ thread = name,
-- rule = ... }` (the local variables of that thread). A field rule covers the subclasses that
-- inherit the field. This is how leak catalogues say which references to
-- ignore or to follow last.
-- @tparam table rules
function Heap:reference_rules(rules)
  local index = self.index
  if not self._rules_applied then
    self._rules_applied = true
    self:reference_rules(M.default_rules)
  end
  for _, r in ipairs(rules) do
    local flags = r.rule == "normal" and 0 or FLAGS[r.rule]
    if not flags then error(("bad rule '%s' (never, skip, low or normal)"):format(tostring(r.rule)), 2) end
    if r.root then
      index:flag("root", r.root, flags)
    elseif r.root_class then  -- roots that hold an instance of the class
      local cls = shared.class_named(self, r.root_class)
      if cls then
        for _, root in ipairs(index:roots()) do
          local num = index:find(root.id)
          if num then
            local obj = object_at(self, num)
            if obj:kind() == "instance" and obj:is_instance_of(cls) then index:flag("root_object", num, flags) end
          end
        end
      end
    elseif r.thread then  -- the local variables of the threads so named
      for _, t in ipairs(self:threads()) do
        if t.name == r.thread then index:flag("thread", t.serial, flags) end
      end
    elseif r.static then
      for _, c in ipairs(rule_classes(self, r)) do
        for i, st in ipairs(raw(c).statics) do
          if st.name == r.static then index:flag("static", c.number, i, flags) end
        end
      end
    elseif r.field then  -- the field, as the class and its subclasses see it
      for _, owner in ipairs(rule_classes(self, r)) do
        for c in self:classes() do
          if c:is_subclass_of(owner) then
            for i, f in ipairs(raw(c).fields) do
              if f.name == r.field and self:class_at(f.owner):is_subclass_of(owner) == false then
                -- declared above the named class (Reference.referent seen from SoftReference)
                index:flag("field", c.number, i, flags)
              elseif f.name == r.field and f.owner == owner.number then
                index:flag("field", c.number, i, flags)
              end
            end
          end
        end
      end
    else
      error("a rule needs 'field', 'static', 'root', 'root_class' or 'thread'", 2)
    end
  end
end

-- the index, with the default rules in force
local function graph(heap)
  if not heap._rules_applied then heap:reference_rules {} end
  return heap.index
end

-- thread serial -> thread (name, frames)
local function threads_by_serial(heap)
  if not heap._threads_by_serial then
    local by = {}
    for _, t in ipairs(heap:threads()) do by[t.serial] = t end
    heap._threads_by_serial = by
  end
  return heap._threads_by_serial
end

-- the references the JVM keeps without a field, as paths label them
local JVM_EDGES = {
  class = "<class>", super = "<super>", loader = "<loader>", signers = "<signers>",
  protection_domain = "<protection domain>", defined_class = "<defined class>",
}
M.jvm_edges = JVM_EDGES

-- a path step from the C layer, named
local function step(heap, raw_step, from)
  local obj = object_at(heap, raw_step.object)
  local s = { object = obj, root = raw_step.root, frame = raw_step.frame }
  if s.root == "unknown" and heap:roots_inferred() then s.root, s.root_inferred = heap:infer_root(obj) end
  if raw_step.thread then  -- a thread's root; a local variable's frame too
    local t = threads_by_serial(heap)[raw_step.thread]
    s.thread_serial, s.thread = raw_step.thread, t and t.name
    local f = t and raw_step.frame and raw_step.frame >= 0 and t.frames[raw_step.frame + 1]
    if f then s.frame_info = { method = f.method, class = f.class, source = f.source, line = f.line } end
  end
  if raw_step.ref and from then
    s.ref, s.index, s.low = raw_step.ref, raw_step.index, raw_step.low or nil
    if s.ref == "field" then
      local f = Object.class(from).fields[s.index]
      s.name, s.class = f.name, f.class.name
      s.label = f.class.name:match("[^.]+$") .. "." .. f.name
    elseif s.ref == "static" then
      local c = Object.as_class(from)
      local st = raw(c).statics[s.index]
      local mapping = heap.mapping and heap.mapping.fields[M.normalize(heap.index:class_name(c.number) or "")]
      s.name = mapping and mapping[st.name] or st.name
      s.class = c.name
      s.label = "static " .. c.name:match("[^.]+$") .. "." .. s.name
    elseif s.ref == "element" then
      s.label = ("[%d]"):format(s.index - 1)  -- Java's 0-based index
    elseif JVM_EDGES[s.ref] then  -- kept by the JVM, not by a field
      s.name = JVM_EDGES[s.ref]
      s.class = Object.as_class(from) and Object.as_class(from).name or Object.class_name(from)
      s.label = s.name
    end
  elseif s.root then
    s.label = "root " .. s.root .. (s.thread and (" (thread " .. s.thread .. ")") or "")
  end
  return s
end

-- the object numbers of a list of Objects or Classes (a Class: its class
-- object), argument 1 of fname; else a usage error naming the argument
-- and the entry, at the caller of fname
local function objects_of(list, fname)
  local nums = {}
  if type(list) ~= "table" or getmetatable(list) ~= nil then shared.bad_argument(1, fname, "list", list) end
  for i, obj in ipairs(list) do
    if getmetatable(obj) == shared.Class then obj = obj.object end
    local _, num = object_parts(obj)
    if not num then
      error(("bad argument #1 to '%s' (objects or classes expected, [%d] is a %s)"):format(fname, i,
        (getmetatable(obj) or {}).__name or type(obj)), 3)
    end
    nums[i] = num
  end
  return nums
end

-- an Object or a Class alone, rather than a list of them
local function single(v)
  return getmetatable(v) == shared.Class or type(v) == "userdata"
end

--- The shortest strong path from a GC root to an object (or to each of a
-- list of objects, found by one search). A path is a list of steps from
-- the root object down to the object: `{ object, root, thread, frame }`
-- first, then `{ object, ref = "field" | "static" | "element", name,
-- class, index, label, low }` where ref/name/label say how the step before
-- holds this one. nil (or false in a list) when no strong path exists.
-- A Class stands for its class object.
-- @param obj an Object or a Class, or a list of them
-- @tparam[opt] table opts `rules` (see `reference_rules`), `progress` (a
--   function `(done, total)` called as the search goes on; false from it
--   stops it: nil, "cancelled")
function Heap:path_to_root(obj, opts)
  if not single(obj) and type(obj) ~= "table" then shared.bad_argument(1, "path_to_root", "object, class or list", obj, 3) end
  local list = single(obj) and { obj } or obj
  if opts and opts.rules then self:reference_rules(opts.rules) end
  local searched, why = graph(self):path_search(objects_of(list, "path_to_root"), opts and opts.progress)
  if not searched then return nil, why end
  local out = {}
  for i, o in ipairs(list) do out[i] = self:path_segments(o) or false end
  if not single(obj) then return out end
  return out[1] or nil, out[1] == false and "no strong path from a GC root" or nil
end

--- Find the shortest strong paths to a list of objects (one search);
-- `path_segments` then gives each path, one at a time, so that paths are
-- only ever as big as the one at hand. Returns how many have a path.
-- opts: `rules`, `progress` (as `path_to_root` takes them).
function Heap:path_search(list, opts)
  if opts and opts.rules then self:reference_rules(opts.rules) end
  return graph(self):path_search(objects_of(list, "path_search"), opts and opts.progress)
end

--- The path the last `path_search` found to obj, as `path_to_root` gives
-- it, or nil when there is none. With `collapse`, consecutive steps of one
-- class reached by the same reference (a linked list's `next`) are one
-- step with `count` (how many objects) and `last` (the last of them).
function Heap:path_segments(obj, collapse)
  local _, num = shared.check_object(obj, "path_segments")
  local raw_steps = self.index:path_segments(num, collapse)
  if not raw_steps then return nil end
  local path, prev = {}, nil
  for k, st in ipairs(raw_steps) do
    local s = step(self, st, prev)
    s.count, s.last = st.count, object_at(self, st.last)
    if s.count > 1 and s.ref == "element" then s.label = "[…]" end
    path[k] = s
    prev = s.last
  end
  return path
end

--- Shortest paths to several objects merged where they share a prefix
-- (MAT's "merge shortest paths"): a list of trees `{ step, count, children }`
-- where count is how many of the objects lie below. Runs of one class held
-- the same way are one step (see `path_segments`) unless `opts.full`.
function Heap:paths(list, opts)
  if opts and opts.rules then self:reference_rules(opts.rules) end
  local searched, why = graph(self):path_search(objects_of(list, "paths"), opts and opts.progress)
  if not searched then return nil, why end
  local roots = {}
  for _, obj in ipairs(list) do
    local path = self:path_segments(obj, not (opts and opts.full))
    local level = roots
    for _, st in ipairs(path or {}) do
      local node
      for _, n in ipairs(level) do
        if n.step.object == st.object and n.step.label == st.label and n.step.last == st.last then
          node = n
          break
        end
      end
      if not node then
        node = { step = st, count = 0, children = {} }
        level[#level + 1] = node
      end
      node.count = node.count + 1
      level = node.children
    end
  end
  return roots
end

local REFERENCE_KINDS = {
  { "soft", "java.lang.ref.SoftReference" },
  { "weak", "java.lang.ref.WeakReference" },
  { "phantom", "java.lang.ref.PhantomReference" },
  { "phantom", "java.lang.ref.FinalReference" },
}

--- How strongly obj is reachable: "strong" (a strong path from a root),
-- "soft", "weak" or "phantom" (only through referents of such references,
-- the weakest on the best path counting), or "unreachable". Each level is
-- a search that also follows the referents of the previous kinds.
function Heap:reachability(obj)
  shared.check_object(obj, "reachability")
  if self:path_to_root(obj) then return "strong" end
  local answer, flags = "unreachable", graph(self):flags_state()
  for _, kind in ipairs(REFERENCE_KINDS) do
    if shared.class_named(self, kind[2]) then
      self:reference_rules { { class = kind[2], field = "referent", rule = "normal" } }
      if self:path_to_root(obj) then answer = kind[1] break end
    end
  end
  self.index:set_flags_state(flags)  -- the referents' rules back as they were
  return answer
end

--- Objects that hold a reference to obj ("who points at this?"); the
-- incoming references of every object are built the first time.
function Heap:referrers(obj)
  local _, num = shared.check_object(obj, "referrers")
  local out = {}
  for i, r in ipairs(self.index:referrers(num)) do out[i] = object_at(self, r) end
  return out
end

--- The references obj holds: `{ object, ref, index, label }`.
function Heap:references(obj)
  local _, num = shared.check_object(obj, "references")
  local holder, out = object_at(self, num), {}
  for i, r in ipairs(graph(self):refs(num)) do
    out[i] = step(self, { object = r.target, ref = r.kind, index = r.index }, holder)
  end
  return out
end


shared.graph = graph  -- the index with the reference rules in force (for sift.heap.retained)
