--- Heap dumps (HPROF): classes, instances, fields, strings, arrays, roots.
--
--     local sift = require "sift"
--     local heap = assert(sift.open("app.hprof"))
--     local cls = heap:class("com.example.MainActivity")
--     for obj in cls:instances() do print(obj, obj.mDestroyed) end
--
-- The index lives in C (`sift.core.hprof`); this module gives it names:
-- dotted class names (from JVM `java/lang/String` and `[Ljava/lang/Object;`
-- forms), deobfuscation with a ProGuard/R8 mapping, objects whose fields
-- read by name, and Java strings decoded from every JDK and Android layout.
-- @module sift.hprof

local core = require "sift.core"

local M = {}

local format, concat = string.format, table.concat
local object_parts, new_object = core.object_parts, core.object

local PRIMITIVE_CODES = {
  Z = "boolean", C = "char", F = "float", D = "double", B = "byte", S = "short", I = "int", J = "long",
}

--- A class name as people write it: `java/lang/String` -> `java.lang.String`,
-- `[Ljava/lang/Object;` -> `java.lang.Object[]`, `[[I` -> `int[][]`.
-- Android's dotted names and `int[]` forms pass through.
-- @tparam string raw
-- @treturn string
function M.normalize(raw)
  local dims, s = raw:match("^(%[*)(.*)$")
  if #dims > 0 then
    if PRIMITIVE_CODES[s] then s = PRIMITIVE_CODES[s]
    else s = s:match("^L(.*);$") or s end
  end
  return (s:gsub("/", ".")) .. ("[]"):rep(#dims)
end


--- {======================================================
-- ProGuard / R8 mappings
-- =======================================================

--- Read a ProGuard or R8 mapping file.
-- @tparam string path
-- @return { classes = { [obfuscated] = original }, fields = { [obfuscated
--   class] = { [obfuscated field] = original } } }, or nil, message, code
function M.read_mapping(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err, "io" end
  local mapping = { classes = {}, fields = {} }
  local current, n = nil, 0
  for line in f:lines() do
    n = n + 1
    if line:match("^%s*#") or line:match("^%s*$") then -- comment or blank
    elseif not line:match("^%s") then
      local original, obfuscated = line:match("^(%S+) %-> (%S+):$")
      if not original then
        f:close()
        return nil, format("%s:%d: not a class line of a mapping: %s", path, n, line), "bad_header"
      end
      mapping.classes[obfuscated] = original
      current = {}
      mapping.fields[obfuscated] = current
    elseif current and not line:find("(", 1, true) then
      local original, obfuscated = line:match("^%s+%S+ (%S+) %-> (%S+)$")
      if original then current[obfuscated] = original end
    end
  end
  f:close()
  return mapping
end

-- the original name of a class (arrays map their element type)
local function deobfuscate_class(mapping, name)
  local element, dims = name:match("^(.-)([%[%]]*)$")
  local original = mapping.classes[element]
  return original and original .. dims or name
end

-- }======================================================


local Heap, Class, Object = {}, {}, {}
local graph, sized  -- the index with reference rules (and sizes) in force; below
Heap.__index = Heap
Heap.__name = "sift.hprof.Heap"
M.Heap, M.Class, M.Object = Heap, Class, Object

--- {======================================================
-- Opening
-- =======================================================

--- Open an HPROF file (plain, gzip or bzip2).
-- @tparam string path
-- @tparam[opt] table opts `dump` (1-based heap dump when the file holds
--   several; default the last), `mapping` (path of a ProGuard/R8 mapping, or
--   a table from `read_mapping`), `progress` (function(done, total))
-- @return heap, or nil, message, code
function M.open(path, opts)
  opts = opts or {}
  local map, err, code = core.map(path)
  if not map then return nil, err, code end
  local source, compressed = map, nil
  local first = map:read(0, 4)
  if first:sub(1, 2) == "\31\139" or first:sub(1, 3) == "BZh" then
    compressed = first:sub(1, 2) == "\31\139" and "gzip" or "bzip2"
    source, err, code = core.inflate(map, opts.progress)
    map:close()
    if not source then return nil, path .. ": " .. err, code end
  end
  return M.open_source(source, path, opts, { compressed = compressed })
end

--- Index HPROF bytes already at hand: a sift.Map or a string (what
-- `sift.bmd` does with a decrunched dump). `fields` go into the heap
-- (`format`, `compressed`, ...). On failure the source is closed.
-- @return heap, or nil, message, code
function M.open_source(source, path, opts, fields)
  opts = opts or {}
  local mapping, err, code = opts.mapping, nil, nil
  if type(mapping) == "string" then
    mapping, err, code = M.read_mapping(mapping)
    if not mapping then return nil, err, code end
  end
  local index
  index, err, code = core.hprof(source, opts.dump, opts.progress)
  if not index then
    if type(source) ~= "string" then source:close() end
    return nil, path .. ": " .. err, code
  end
  local heap = {
    index = index, source = source, path = path, format = "hprof",
    mapping = mapping, _classes = {}, _objects = setmetatable({}, { __mode = "v" }),
  }
  for k, v in pairs(fields or {}) do heap[k] = v end
  return setmetatable(heap, Heap)
end

--- Release the index and the mapping at once (also on `<close>` and GC).
function Heap:close()
  self.index:close()
  if type(self.source) ~= "string" then self.source:close() end
end
Heap.__close = Heap.close

function Heap:__tostring()
  return format("sift.hprof.Heap (%s)", self.path)
end

-- }======================================================


--- {======================================================
-- The heap
-- =======================================================

--- Facts and counts: `format`, `version`, `id_size`, `timestamp_ms`,
-- `time`, `objects`, `classes`, `instances`, `object_arrays`,
-- `primitive_arrays`, `strings`, `roots` (by kind), `dumps`, `dump`,
-- `heaps` (Android: counts per app/zygote/image heap), `warnings`, and the
-- oddities counted (`duplicates`, `missing_classes`, `truncated_at`).
function Heap:info()
  local info = self.index:info()
  info.format = self.format
  info.path = self.path
  info.compressed = self.compressed
  info.bmd = self.bmd
  if info.timestamp_ms > 0 then
    info.time = os.date("!%Y-%m-%dT%H:%M:%SZ", info.timestamp_ms // 1000)
  end
  local heaps = self.index:heaps()
  if heaps.app or heaps.zygote or heaps.image then info.heaps = heaps end
  return info
end

--- The Class with number n (1-based, in id order).
function Heap:class_at(n)
  local cls = self._classes[n]
  if cls == nil then
    cls = setmetatable({ heap = self, number = n }, Class)
    self._classes[n] = cls
  end
  return cls
end

-- name -> list of class numbers, built once. When a name repeats (classes
-- unloaded and loaded again), a class held by a sticky-class root comes
-- first: that is the live one.
local function names(heap)
  if not heap._names then
    local by_name, repeated = {}, false
    for n = 1, heap.index:nclasses() do
      local name = heap:class_at(n).name
      local list = by_name[name]
      if not list then list = {} by_name[name] = list
      else repeated = true end
      list[#list + 1] = n
    end
    if repeated then
      local sticky = {}
      for _, root in ipairs(heap.index:roots()) do
        if root.kind == "sticky_class" then sticky[root.id] = true end
      end
      for _, list in pairs(by_name) do
        if #list > 1 then
          table.sort(list, function(a, b)
            local sa, sb = sticky[heap:class_at(a).id] or false, sticky[heap:class_at(b).id] or false
            if sa ~= sb then return sa end
            return a < b
          end)
        end
      end
    end
    heap._names = by_name
  end
  return heap._names
end

--- The class with this name (dotted; deobfuscated when a mapping was
-- given), or nil. When several classes share the name (several loaders),
-- the first; `classes_named` gives all.
-- @tparam string name
function Heap:class(name)
  local list = names(self)[name]
  return list and self:class_at(list[1]) or nil
end

--- Every class with this name.
function Heap:classes_named(name)
  local out = {}
  for i, n in ipairs(names(self)[name] or {}) do out[i] = self:class_at(n) end
  return out
end

--- Iterate over every class.
function Heap:classes()
  local n, total = 0, self.index:nclasses()
  return function()
    n = n + 1
    if n <= total then return self:class_at(n) end
  end
end

-- the Object for object number num
local function object_at(heap, num)
  local obj = heap._objects[num]
  if obj == nil then
    obj = new_object(heap, num)
    heap._objects[num] = obj
  end
  return obj
end

--- The object with this id, or nil.
-- @tparam integer id
function Heap:object(id)
  local num = self.index:find(id)
  return num and object_at(self, num) or nil
end

--- Iterate over every object (classes, instances, arrays) in id order.
-- Each step makes one small userdata; nothing else is allocated.
function Heap:objects()
  local num, total = 0, self.index:count()
  return function()
    num = num + 1
    if num <= total then return new_object(self, num) end
  end
end

--- GC roots, in file order: `{ kind, id, object, thread, frame }` (object
-- is nil when the root points at an id that is not in the dump).
-- @tparam[opt] string kind only roots of this kind (`sticky_class`, ...)
function Heap:roots(kind)
  local out = {}
  for _, root in ipairs(self.index:roots()) do
    if kind == nil or root.kind == kind then
      root.object = self:object(root.id)
      out[#out + 1] = root
    end
  end
  return out
end

--- The class histogram: rows `{ class, count, shallow }`, largest shallow
-- size first. Classes that share a name are one row; primitive arrays are
-- rows named `int[]` and so on. Shallow sizes follow the dump (instance:
-- the class's instance size; array: length x element size), or a `model`:
-- "jvm" (what the JVM allocated, as its GC.class_histogram counts; class
-- mirrors are then a java.lang.Class row) or "visualvm".
function Heap:histogram(model)
  local by_name, rows = {}, {}
  local counted
  if model and model ~= "shark" then
    local class_class = self:class("java.lang.Class")
    counted = sized(self, model):model_histogram(model, class_class and class_class.number)
  else
    counted = self.index:histogram()
  end
  for _, r in ipairs(counted) do
    local name = r.class and self:class_at(r.class).name or r.elem and r.elem .. "[]" or "(class not in the dump)"
    local row = by_name[name]
    if not row then
      row = { class = name, count = 0, shallow = 0 }
      by_name[name] = row
      rows[#rows + 1] = row
    end
    row.count = row.count + r.count
    row.shallow = row.shallow + r.shallow
  end
  table.sort(rows, function(a, b)
    if a.shallow ~= b.shallow then return a.shallow > b.shallow end
    if a.count ~= b.count then return a.count > b.count end
    return a.class < b.class
  end)
  return rows
end

--- Threads: `{ serial, name, object, frames }` from the thread roots and
-- START_THREAD records; frames `{ method, class, source, line }` when the
-- dump has stack traces.
function Heap:threads()
  local by_serial, out = {}, {}
  local function get(serial)
    local t = by_serial[serial]
    if not t then
      t = { serial = serial }
      by_serial[serial] = t
      out[#out + 1] = t
    end
    return t
  end
  for _, root in ipairs(self.index:roots()) do
    if root.kind == "thread_object" then
      local t = get(root.thread)
      t.object, t.trace = self:object(root.id), root.trace
    end
  end
  for _, st in ipairs(self.index:threads()) do
    local t = get(st.serial)
    t.object = t.object or self:object(st.object)
    t.trace = t.trace or st.trace
    t.name = t.name or st.name
  end
  for _, t in ipairs(out) do
    if not t.name and t.object then
      local name = t.object:has_field("name") and t.object:field("name")
      if type(name) == "userdata" then t.name = name:string() end
    end
    local trace = t.trace and self.index:trace(t.trace)
    t.frames = {}
    for i, f in ipairs(trace and trace.frames or {}) do
      local cls = f.class_serial and self.index:class_by_serial(f.class_serial)
      t.frames[i] = {
        method = f.method, signature = f.signature, source = f.source, line = f.line,
        class = cls and self:class_at(cls).name or nil,
      }
    end
  end
  table.sort(out, function(a, b) return a.serial < b.serial end)
  return out
end

-- }======================================================


-- the raw facts of a class, fetched once
local function raw(cls)
  local r = rawget(cls, "_raw")
  if not r then
    r = cls.heap.index:class(cls.number)
    rawset(cls, "_raw", r)
  end
  return r
end

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
      local cls = self:class(r.root_class)
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
function graph(heap)
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

local function objects_of(list)
  local nums = {}
  for i, obj in ipairs(list) do
    local _, num = object_parts(obj)
    if not num then error(("bad object #%d (a sift.Object expected)"):format(i), 3) end
    nums[i] = num
  end
  return nums
end

--- The shortest strong path from a GC root to an object (or to each of a
-- list of objects, found by one search). A path is a list of steps from
-- the root object down to the object: `{ object, root, thread, frame }`
-- first, then `{ object, ref = "field" | "static" | "element", name,
-- class, index, label, low }` where ref/name/label say how the step before
-- holds this one. nil (or false in a list) when no strong path exists.
-- @param obj an Object or a list of Objects
-- @tparam[opt] table opts `rules` (see `reference_rules`)
function Heap:path_to_root(obj, opts)
  local list = type(obj) == "table" and obj or { obj }
  self:path_search(list, opts)
  local out = {}
  for i, o in ipairs(list) do out[i] = self:path_segments(o) or false end
  if type(obj) == "table" then return out end
  return out[1] or nil, out[1] == false and "no strong path from a GC root" or nil
end

--- Find the shortest strong paths to a list of objects (one search);
-- `path_segments` then gives each path, one at a time, so that paths are
-- only ever as big as the one at hand. Returns how many have a path.
function Heap:path_search(list, opts)
  if opts and opts.rules then self:reference_rules(opts.rules) end
  return graph(self):path_search(objects_of(list))
end

--- The path the last `path_search` found to obj, as `path_to_root` gives
-- it, or nil when there is none. With `collapse`, consecutive steps of one
-- class reached by the same reference (a linked list's `next`) are one
-- step with `count` (how many objects) and `last` (the last of them).
function Heap:path_segments(obj, collapse)
  local _, num = object_parts(obj)
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
  self:path_search(list, opts)
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
  if self:path_to_root(obj) then return "strong" end
  local answer, opened = "unreachable", {}
  for _, kind in ipairs(REFERENCE_KINDS) do
    if self:class(kind[2]) then
      self:reference_rules { { class = kind[2], field = "referent", rule = "normal" } }
      opened[#opened + 1] = kind[2]
      if self:path_to_root(obj) then answer = kind[1] break end
    end
  end
  for _, class in ipairs(opened) do  -- back to never following referents
    self:reference_rules { { class = class, field = "referent", rule = "never" } }
  end
  return answer
end

--- Objects that hold a reference to obj ("who points at this?"); the
-- incoming references of every object are built the first time.
function Heap:referrers(obj)
  local _, num = object_parts(obj)
  local out = {}
  for i, r in ipairs(self.index:referrers(num)) do out[i] = object_at(self, r) end
  return out
end

--- The references obj holds: `{ object, ref, index, label }`.
function Heap:references(obj)
  local _, num = object_parts(obj)
  local out = {}
  for i, r in ipairs(graph(self):refs(num)) do
    out[i] = step(self, { object = r.target, ref = r.kind, index = r.index }, obj)
  end
  return out
end

--- The JVM's object layout behind this dump, inferred from the distances
-- between object addresses (see sift.jvm_layout): `{ header, oop,
-- algorithm, array_base, class_size, matched, sampled, inferred }`.
-- `inferred` is false when no candidate explains at least half of the
-- sampled distances (ids that are not addresses, as in BMD); JDK 17's
-- default layout is then assumed. Set once, and used by the "jvm" model.
function Heap:jvm_layout()
  if self._jvm_layout then return self._jvm_layout end
  local layout = require "sift.jvm_layout"
  local index, nclasses = self.index, self.index:nclasses()
  local function describe(c)
    local r, fields = raw(self:class_at(c)), {}
    for i = 1, r.declared do fields[i] = r.fields[i] end
    return { name = self:class_at(c).name, boot = r.loader_id == 0, fields = fields, super = r.super }
  end
  local function real_statics(c)
    local out = {}
    for _, st in ipairs(raw(self:class_at(c)).statics) do
      if not (st.name or "<"):match("^<") then out[#out + 1] = st end
    end
    return out
  end
  -- (object facts, distance to the next address) for a sample of objects
  local total, samples, mirrors = index:count(), {}, {}
  local stride = math.max(1, total // 40000)
  local class_class = self:class("java.lang.Class")
  for num = 1, total - 1, stride do
    local id, kind, cls, _, length, elem = index:object(num)
    local delta = index:object(num + 1) - id
    if delta > 0 and delta <= 1 << 20 then
      if kind == "class" then
        if cls and #real_statics(cls) == 0 then mirrors[#mirrors + 1] = delta end
      elseif not (cls and class_class and cls == class_class.number) then
        samples[#samples + 1] = { kind = kind, cls = cls, length = length, elem = elem, delta = delta }
      end
    end
  end
  local function predict(params, sizer, o)
    if o.kind == "instance" then return o.cls and sizer(o.cls) end
    return layout.array_size(params, o.elem, o.length)
  end
  local best, best_score, best_sizer = layout.DEFAULT, -1, nil
  for _, params in ipairs(layout.candidates(self.index:info().id_size)) do
    local sizer, score = layout.instance_sizer(params, describe), 0
    for _, o in ipairs(samples) do
      if predict(params, sizer, o) == o.delta then score = score + 1 end
    end
    if score > best_score then best, best_score, best_sizer = params, score, sizer end
  end
  local inferred = #samples > 0 and best_score * 2 >= #samples
  if not inferred then best, best_sizer = layout.DEFAULT, nil end
  best_sizer = best_sizer or layout.instance_sizer(best, describe)
  if inferred then  -- the injected fields this JVM had: the distances decide
    local without, kept = layout.instance_sizer(best, describe, {}), {}
    for name in pairs(layout.injected) do
      local votes, cls = 0, self:class(name)
      for obj in (cls and cls:instances { subclasses = true } or function() end) do
        local _, num = object_parts(obj)
        if num < total then
          local _, _, c = index:object(num)
          local delta = index:object(num + 1) - obj:id()
          if delta == best_sizer(c) then votes = votes + 1 elseif delta == without(c) then votes = votes - 1 end
        end
      end
      kept[name] = votes >= 0 or nil
    end
    best_sizer = layout.instance_sizer(best, describe, kept)
  end
  -- java.lang.Class's own size: the commonest size of mirrors without statics
  local votes, class_size = {}, nil
  for _, d in ipairs(mirrors) do votes[d] = (votes[d] or 0) + 1 end
  for d, n in pairs(votes) do
    if not class_size or n > votes[class_size] or (n == votes[class_size] and d < class_size) then class_size = d end
  end
  if not inferred or not class_size then  -- Class's declared fields, as the layout places them
    class_size = class_class and best_sizer(class_class.number) or best.header
  end
  local instance, mirror = {}, {}
  for c = 1, nclasses do
    instance[c] = best_sizer(c)
    mirror[c] = layout.mirror_size(best, class_size, real_statics(c))
  end
  if class_class then instance[class_class.number] = class_size end  -- primitive mirrors
  index:set_jvm_layout(instance, mirror, layout.array_base(best, false), layout.array_base(best, true), best.oop)
  self._jvm_layout = {
    header = best.header, oop = best.oop, algorithm = best.algorithm,
    array_base = layout.array_base(best, false), class_size = class_size,
    matched = math.max(best_score, 0), sampled = #samples, inferred = inferred,
  }
  return self._jvm_layout
end

-- the index, ready for sizes under `model`
function sized(heap, model)
  if model == "jvm" then heap:jvm_layout() end
  return graph(heap)
end

--- Compute the dominator tree and retained sizes (once per model; later
-- calls return the cached result).
-- @tparam[opt] table opts `model` ("shark", the default: dump sizes; "jvm":
--   a header and alignment as VisualVM counts them), `progress`
-- @return `{ model, reachable, unreachable, unreachable_bytes }`
function Heap:dominators(opts)
  local model = opts and opts.model or "shark"
  if self._model ~= model or not self.index:graph_info().tree then
    local reachable, err = sized(self, model):dominators(model, opts and opts.progress)
    if not reachable then return nil, err end
    self._model = model
    local count, bytes = self.index:unreachable()
    self._dominators = { model = model, reachable = reachable, unreachable = count, unreachable_bytes = bytes }
  end
  return self._dominators
end

local function dominators(heap)
  if not heap._model or not heap.index:graph_info().tree then heap:dominators { model = heap._model } end
  return heap.index
end

--- Retained size of obj: the bytes that would be freed with it (under the
-- model of the last `dominators` call). nil when no root reaches obj.
function Heap:retained(obj)
  local _, num = object_parts(obj)
  return dominators(self):retained(num)
end

--- Shallow size of obj under a model ("shark" or "jvm").
function Heap:shallow(obj, model)
  local _, num = object_parts(obj)
  model = model or self._model or "shark"
  return sized(self, model):shallow(num, model)
end

--- The immediate dominator of obj: an Object, or nil and "roots" when only
-- the GC roots dominate it, or nil and "unreachable".
function Heap:idom(obj)
  local _, num = object_parts(obj)
  local d = dominators(self):idom(num)
  if d == nil then return nil, "unreachable" end
  if d == 0 then return nil, "roots" end
  return object_at(self, d)
end

--- The objects obj immediately dominates (nil: those only the roots
-- dominate), largest retained size first.
function Heap:dominated(obj)
  local index, num = dominators(self), 0
  if obj ~= nil then _, num = object_parts(obj) end
  local nums = index:dominated(num)
  table.sort(nums, function(a, b) return index:retained(a) > index:retained(b) end)
  local out = {}
  for i, n in ipairs(nums) do out[i] = object_at(self, n) end
  return out
end

--- Everything obj retains (its dominator subtree, obj first).
function Heap:retained_set(obj)
  local index, out = dominators(self), {}
  local _, num = object_parts(obj)
  local stack = { num }
  while #stack > 0 do
    local n = table.remove(stack)
    out[#out + 1] = object_at(self, n)
    for _, c in ipairs(index:dominated(n)) do stack[#stack + 1] = c end
  end
  return out
end

--- The n objects with the largest retained sizes: `{ object, class,
-- shallow, retained }`, largest first.
function Heap:top(n)
  local index = dominators(self)
  local out = {}
  for i, num in ipairs(index:top(n or 10)) do
    local obj = object_at(self, num)
    out[i] = { object = obj, class = Object.class_name(obj), shallow = self:shallow(obj),
               retained = index:retained(num) }
  end
  return out
end

--- Objects no GC root reaches: `{ count, bytes }`.
function Heap:unreachable()
  local count, bytes = dominators(self):unreachable()
  return { count = count, bytes = bytes }
end

--- Retained bytes per class, each object counted once (an instance that
-- another instance of its class dominates is inside that one's size):
-- rows `{ class, retained }`, largest first.
function Heap:retained_by_class()
  local rows = {}
  for key, bytes in pairs(dominators(self):retained_by_class()) do
    local name = type(key) == "number" and self:class_at(key).name or key .. "[]"
    rows[#rows + 1] = { class = name, retained = bytes }
  end
  table.sort(rows, function(a, b) return a.retained > b.retained end)
  return rows
end

-- }======================================================


--- {======================================================
-- Classes
-- =======================================================

local class_getters = {}


function class_getters.name(cls)
  local name = cls.heap.index:class_name(cls.number)
  name = name and M.normalize(name) or format("(unnamed class 0x%x)", raw(cls).id)
  if cls.heap.mapping then name = deobfuscate_class(cls.heap.mapping, name) end
  return name
end

function class_getters.id(cls) return raw(cls).id end
function class_getters.instance_size(cls) return raw(cls).instance_size end
function class_getters.super(cls)
  local s = raw(cls).super
  return s and cls.heap:class_at(s) or false
end
function class_getters.loader(cls) return cls.heap:object(raw(cls).loader_id) or false end
function class_getters.object(cls) return cls.heap:object(raw(cls).id) or false end

-- the flattened instance fields: { name, type, offset, class }; this
-- class's own first, then its superclass's
function class_getters.fields(cls)
  local heap, out = cls.heap, {}
  for i, f in ipairs(raw(cls).fields) do
    local owner = heap:class_at(f.owner)
    local name = f.name or format("(field %d)", i)
    local mapping = heap.mapping and heap.mapping.fields[heap.index:class_name(f.owner) and M.normalize(heap.index:class_name(f.owner)) or ""]
    if mapping and mapping[name] then name = mapping[name] end
    out[i] = { name = name, type = f.type, offset = f.offset, class = owner }
  end
  return out
end

-- field name -> the most-derived field of that name
function class_getters.field_index(cls)
  local index = {}
  for _, f in ipairs(cls.fields) do
    if index[f.name] == nil then index[f.name] = f end
  end
  return index
end

function Class.__index(cls, key)
  local method = Class[key]
  if method ~= nil then return method end
  local getter = class_getters[key]
  if getter then
    local v = getter(cls)
    rawset(cls, key, v)
    if v == false then return nil end
    return v
  end
end

function Class:__tostring()
  return "class " .. self.name
end

--- The fields this class declares itself (not inherited).
function Class:declared_fields()
  local out = {}
  for i = 1, raw(self).declared do out[i] = self.fields[i] end
  return out
end

--- Static fields as a table name -> value (objects as Objects).
function Class:statics()
  local out = {}
  local mapping = self.heap.mapping and self.heap.mapping.fields[M.normalize(self.heap.index:class_name(self.number) or "")]
  for _, s in ipairs(raw(self).statics) do
    local name = s.name and (mapping and mapping[s.name] or s.name)
    if name then
      local v = s.value
      if s.type == "object" then v = self.heap:object(v) end
      out[name] = v
    end
  end
  return out
end

--- One static field's value.
function Class:static(name)
  return self:statics()[name]
end

--- Whether this class is `other` or one of its subclasses.
-- @param other a Class or a class name
function Class:is_subclass_of(other)
  local c = self
  while c do
    if c == other or c.name == other then return true end
    c = c.super
  end
  return false
end

--- The direct subclasses.
function Class:subclasses()
  local out = {}
  for c in self.heap:classes() do
    if c.super == self then out[#out + 1] = c end
  end
  return out
end

local PRIMITIVE_ARRAYS = {
  ["boolean[]"] = "boolean", ["char[]"] = "char", ["float[]"] = "float", ["double[]"] = "double",
  ["byte[]"] = "byte", ["short[]"] = "short", ["int[]"] = "int", ["long[]"] = "long",
}

--- How many instances the class has (not counting subclasses).
function Class:instance_count()
  local n = self.heap.index:group_size(self.number)
  local elem = PRIMITIVE_ARRAYS[self.name]
  if elem then n = n + self.heap.index:group_size(elem) end
  return n
end

--- Iterate over the instances (for array classes, the arrays).
-- @tparam[opt] table opts `subclasses = true` to include instances of
--   every subclass
function Class:instances(opts)
  local heap, index = self.heap, self.heap.index
  local groups = { self.number }
  if opts and opts.subclasses then
    for c in heap:classes() do
      if c ~= self and c:is_subclass_of(self) then groups[#groups + 1] = c.number end
    end
  end
  local elem = PRIMITIVE_ARRAYS[self.name]
  if elem then groups[#groups + 1] = elem end
  local g, k = 1, 0
  return function()
    while groups[g] do
      k = k + 1
      local num = index:group(groups[g], k)
      if num then return object_at(heap, num) end
      g, k = g + 1, 0
    end
  end
end

-- }======================================================


--- {======================================================
-- Objects
-- =======================================================

-- facts of an object: id, kind, class number, shallow, length, elem, heap
local function facts(obj)
  local heap, num = object_parts(obj)
  return heap, num, heap.index:object(num)
end

local function wrap(heap, v, type_)
  if type_ == "object" then
    if v == 0 then return nil end
    return heap:object(v)
  end
  return v
end

--- The object's id (as in the dump).
function Object.id(obj)
  local _, _, id = facts(obj)
  return id
end

--- "class", "instance", "object_array" or "primitive_array".
function Object.kind(obj)
  local _, _, _, kind = facts(obj)
  return kind
end

--- The object's Class (for a class object: java.lang.Class if present).
function Object.class(obj)
  local heap, _, _, kind, cls, _, _, elem = facts(obj)
  if kind == "class" then return heap:class("java.lang.Class") end
  if cls then return heap:class_at(cls) end
  if elem then return heap:class(elem .. "[]") end
  return nil
end

--- The class this object is, when it is a class object.
function Object.as_class(obj)
  local heap, _, _, kind, cls = facts(obj)
  if kind == "class" and cls then return heap:class_at(cls) end
  return nil
end

--- Name of the object's class, also for arrays whose class is not dumped.
function Object.class_name(obj)
  local heap, num, _, kind, cls, _, _, elem = facts(obj)
  if kind == "class" then return "java.lang.Class" end
  if cls then return heap:class_at(cls).name end
  if elem then return elem .. "[]" end
  local id = heap.index:class_id_of(num)
  return id and format("(class 0x%x not in the dump)", id) or "?"
end

--- Shallow size in bytes (instance: class instance size; array: length x
-- element size; class: its static values).
function Object.size(obj)
  local _, _, _, _, _, shallow = facts(obj)
  return shallow
end

--- The Android heap of the object: "app", "zygote", "image" or "default".
function Object.heap(obj)
  local _, _, _, _, _, _, _, _, heapname = facts(obj)
  return heapname
end

--- Length of an array (nil for other objects).
function Object.length(obj)
  local _, _, _, _, _, _, length = facts(obj)
  return length
end

--- Element i (1-based) of an array: a value, or an Object.
function Object.get(obj, i)
  local heap, num, _, _, _, _, _, elem = facts(obj)
  if not elem then return nil end
  return wrap(heap, heap.index:element(num, i), elem)
end

--- All elements of an array as a table (Objects for object arrays).
function Object.elements(obj)
  local heap, num, _, _, _, _, _, elem = facts(obj)
  local t = heap.index:elements(num)
  if elem == "object" then
    for i, v in ipairs(t) do t[i] = wrap(heap, v, "object") or false end
  end
  return t
end

--- The raw bytes of a primitive array (big-endian, as in the dump).
function Object.bytes(obj)
  local heap, num = object_parts(obj)
  return heap.index:bytes(num)
end

-- the field description for a name, or "Class.name" / "pkg.Class.name" /
-- "Outer$Inner.name" for a field that a subclass shadows
local function find_field(cls, key)
  local f = cls.field_index[key]
  if f then return f end
  local owner, name = key:match("^(.+)%.([^.]+)$")
  if owner then
    for _, g in ipairs(cls.fields) do
      local cname = g.class.name  -- full, without package, or nested name
      if g.name == name and (cname == owner or cname:match("[^.]+$") == owner
                             or cname:match("[^.$]+$") == owner) then
        return g
      end
    end
  end
end

--- Whether the object is an instance with a field of this name (`Class.name`
-- forms included).
function Object.has_field(obj, name)
  local heap, _, _, kind, cls = facts(obj)
  return kind == "instance" and cls ~= nil and find_field(heap:class_at(cls), name) ~= nil
end

--- A field's value by name, whatever the name (`size`, `id`...); `class`
-- picks the declaring class when the name is shadowed. Raises if the object
-- has no such field.
function Object.field(obj, name, class)
  local heap, num, _, kind, cls = facts(obj)
  if kind ~= "instance" or not cls then
    error(format("%s has no fields", tostring(obj)), 2)
  end
  local f = find_field(heap:class_at(cls), class and class .. "." .. name or name)
  if not f then error(format("%s has no field '%s'", tostring(obj), name), 2) end
  return wrap(heap, heap.index:field(num, f.offset, f.type), f.type)
end

--- Iterate over the instance fields: name, value, declaring Class (most
-- derived class first, as the dump lays them out).
function Object.fields(obj)
  local heap, num, _, kind, cls = facts(obj)
  local list = (kind == "instance" and cls) and heap:class_at(cls).fields or {}
  local i = 0
  return function()
    i = i + 1
    local f = list[i]
    if f then return f.name, wrap(heap, heap.index:field(num, f.offset, f.type), f.type), f.class end
  end
end

--- Whether the object is an instance of the class (or a subclass of it).
-- @param class a Class or a class name
function Object.is_instance_of(obj, class)
  local cls = Object.class(obj)
  return cls ~= nil and cls:is_subclass_of(class)
end

-- the text of a char[] or byte[] value
local function array_text(heap, arr, encoding, first, count)
  local _, num = object_parts(arr)
  return heap.index:text(num, encoding, first, count)
end

--- The text of a java.lang.String (every JDK layout: char[] value with or
-- without offset/count; JDK 9+ byte[] value with a LATIN1/UTF16 coder;
-- Android's count with a byte[] or char[] value), or of a char[]. nil for
-- anything else.
-- @tparam[opt] integer max cut to at most this many characters
function Object.string(obj, max)
  local heap, num, _, kind, cls, _, _, elem = facts(obj)
  local text
  if kind == "primitive_array" and elem == "char" then
    text = heap.index:text(num, "utf16be")
  elseif kind == "instance" and cls then
    local c = heap:class_at(cls)
    if c.name ~= "java.lang.String" then return nil end
    local fi = c.field_index
    local function get(name)
      local f = fi[name]
      return f and heap.index:field(num, f.offset, f.type)
    end
    local value = get("value")
    local arr = value and value ~= 0 and heap:object(value)
    if not arr then
      return (get("count") == 0) and "" or nil
    end
    local _, _, _, _, _, _, length, aelem = facts(arr)
    local count, offset, coder = get("count"), get("offset") or 0, get("coder")
    if aelem == "char" then
      text = array_text(heap, arr, "utf16be", offset, count or length)
    elseif aelem == "byte" then
      if coder == 1 then text = array_text(heap, arr, "utf16le", 0, length // 2)
      else text = array_text(heap, arr, "latin1", 0, count and math.min(count, length) or length) end
    end
  end
  if text and max and max >= 0 and utf8.len(text) and utf8.len(text) > max then
    text = text:sub(1, (utf8.offset(text, max + 1) or #text + 1) - 1)
  end
  return text
end

-- The namespace rule: sift's methods come first, then the Java fields.
-- `obj.key` is the method `key` when Object has one (`id`, `size`, `kind`,
-- `string`, `field`...), else the instance field named `key`, else nil;
-- `arr[i]` is an element. No Java name can hide a method, and every field,
-- whatever its name, is `obj:field(name)`.
function Object.__index(obj, key)
  local method = Object[key]
  if method ~= nil then return method end
  local heap, num, _, kind, cls, _, _, elem = facts(obj)
  if type(key) == "number" then
    if elem then return wrap(heap, heap.index:element(num, key), elem) end
    return nil
  end
  if kind == "instance" and cls and type(key) == "string" then
    local f = find_field(heap:class_at(cls), key)
    if f then return wrap(heap, heap.index:field(num, f.offset, f.type), f.type) end
  end
  return nil
end

--- The names `obj.key` resolves to a method rather than a Java field, sorted.
function M.method_names()
  local out = {}
  for k, v in pairs(Object) do
    if type(v) == "function" and not k:match("^__") then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

function Object.__tostring(obj)
  local heap, num, id, kind, cls, _, length, elem = facts(obj)
  if kind == "class" then
    return format("class %s@0x%x", cls and heap:class_at(cls).name or "?", id)
  end
  local name = Object.class_name(obj)
  if length then name = name:gsub("%[%]", "[" .. length .. "]", 1) end  -- int[2][]
  return format("%s@0x%x", name, id)
end

function Object.__eq(a, b)
  local ha, na = object_parts(a)
  local hb, nb = object_parts(b)
  return ha == hb and na == nb
end

function Object.__len(obj)
  local _, _, _, _, _, _, length = facts(obj)
  return length or 0
end

Object.__name = "sift.Object"

local mt = core.object_metatable()
for _, k in ipairs { "__index", "__tostring", "__eq", "__len", "__name" } do mt[k] = Object[k] end

-- }======================================================

return M
