--- The heap over the C index (`sift.core.hprof`): opening an HPROF file,
-- ProGuard/R8 mappings, and the Heap's own facts: classes, objects, roots,
-- threads. The other parts of `sift.heap` (graph, retained, object) add
-- their methods to the Heap, Class and Object defined here; this module
-- gives them what they share. Users require `sift.heap`.
-- @module sift.heap.index

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
    -- (comments and blank lines are skipped)
    if line:match("^[^#%s]") then
      local original, obfuscated = line:match("^(%S+) %-> (%S+):$")
      if not original then
        f:close()
        return nil, format("%s:%d: not a class line of a mapping: %s", path, n, line), "bad_header"
      end
      mapping.classes[obfuscated] = original
      current = {}
      mapping.fields[obfuscated] = current
    elseif current and line:match("^%s+[^#%s]") and not line:find("(", 1, true) then
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
Heap.__index = Heap
Heap.__name = "sift.heap.Heap"
M.Heap, M.Class, M.Object = Heap, Class, Object

--- {======================================================
-- Opening
-- =======================================================

--- Open an HPROF file (plain, gzip or bzip2).
-- @tparam string path
-- @tparam[opt] table opts `dump` (1-based heap dump when the file holds
--   several; default the last), `mapping` (path of a ProGuard/R8 mapping, or
--   a table from `read_mapping`), `progress` (function(done, total)),
--   `threads` (1: read the heap records in this thread only; 2: in two
--   threads; by default a dump of several megabytes is read by two; the
--   reference graph's arrays follow it too, built by default on two
--   threads from 16,384 objects on)
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
-- `sift.heap.bmd` does with a decrunched dump). `fields` go into the heap
-- (`format`, `compressed`, ...). On failure the source is closed.
-- @return heap, or nil, message, code
function M.open_source(source, path, opts, fields)
  opts = opts or {}
  local mapping, err, code = opts.mapping
  if type(mapping) == "string" then
    mapping, err, code = M.read_mapping(mapping)
    if not mapping then return nil, err, code end
  end
  local index
  index, err, code = core.hprof(source, opts.dump, opts.progress, opts.threads)
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
  return format("sift.heap.Heap (%s)", self.path)
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
  if self:roots_inferred() and next(info.roots) then  -- (the kinds sift infers, as heap:roots gives them)
    info.roots, info.roots_inferred = {}, true
    for _, r in ipairs(self:roots()) do info.roots[r.kind] = (info.roots[r.kind] or 0) + 1 end
  end
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

--- {======================================================
-- Usage errors
-- =======================================================

-- what a value is, for a usage error: a userdata's or table's __name, a
-- Class as "class", else its Lua type
local function typename(v)
  if getmetatable(v) == Class then return "class" end
  local mt = getmetatable(v)
  return type(mt) == "table" and type(rawget(mt, "__name")) == "string" and mt.__name or type(v)
end

-- raise "bad argument #n to 'fname' (what expected, got TYPE)" at the
-- caller of the public function (level: 3 when that function calls this,
-- 4 when it calls a check that does)
local function bad_argument(n, fname, what, v, level)
  error(format("bad argument #%d to '%s' (%s expected, got %s)", n, fname, what, typename(v)), level or 4)
end

--- The heap and object number of argument n of the function fname: an
-- Object, or a Class (its class object); else a usage error naming it.
local function check_object(v, fname, n)
  if getmetatable(v) == Class then
    local obj = v.object
    if not obj then
      error(format("bad argument #%d to '%s' (%s has no class object in the dump)", n or 1, fname, tostring(v)), 3)
    end
    v = obj
  end
  local heap, num = object_parts(v)
  if not num then bad_argument(n or 1, fname, "object or class", v) end
  return heap, num
end

-- argument n of fname must be of Lua type t (or nil when optional)
local function check_type(v, t, fname, n, optional)
  if type(v) ~= t and not (optional and v == nil) then bad_argument(n, fname, t, v) end
  return v
end

local MODELS = { shark = true, jvm = true, visualvm = true }

-- argument n of fname, a size model or nil
local function check_model(model, fname, n)
  if model ~= nil and not MODELS[model] then
    error(format("bad argument #%d to '%s' (model expected: shark, jvm or visualvm, got %s)", n, fname,
      type(model) == "string" and "'" .. model .. "'" or typename(model)), 3)
  end
  return model
end

-- }======================================================


--- {======================================================
-- Class names: exact, and the near ones a miss suggests
-- =======================================================

-- the edit distance between a and b, or nil when it is over k (a band
-- of width k around the diagonal is all that is computed)
local function distance(a, b, k)
  local la, lb = #a, #b
  if math.abs(la - lb) > k then return nil end
  local prev, cur = {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    local low, ca = i, a:byte(i)
    for j = 1, lb do
      local v = prev[j - 1] + (ca == b:byte(j) and 0 or 1)
      if prev[j] + 1 < v then v = prev[j] + 1 end
      if cur[j - 1] + 1 < v then v = cur[j - 1] + 1 end
      cur[j] = v
      if v < low then low = v end
    end
    if low > k then return nil end
    prev, cur = cur, prev
  end
  return prev[lb] <= k and prev[lb] or nil
end

-- a class name's simple name: after the last '.' and the last '$'
local function simple_name(name)
  return name:match("([^.$]*)$")
end

--- Class names near `name`, best first (at most 5): the same name in
-- another case, a nested or unqualified class whose simple name it is
-- (`Session` -> `Leaky$Session`), then names within a small edit distance
-- (a typo), compared in lower case: whole names when `name` is qualified,
-- else simple names. Kept per name, since the heap's own lookups miss too.
function Heap:near_class_names(name)
  self._near = self._near or {}
  if self._near[name] then return self._near[name] end
  local want = name:lower()
  local qualified = want:find("[.$]") ~= nil
  local k = math.min(3, math.max(1, #want // 6))
  local found = {}
  for full in pairs(names(self)) do
    local low = full:lower()
    local simple = simple_name(low)
    local rank
    if low == want then rank = 0
    elseif low:sub(-#want - 1) == "$" .. want or low:sub(-#want - 1) == "." .. want then rank = 1
    else
      local d = distance(want, qualified and low or simple, k)
      if d then rank = 1 + d end
    end
    if rank then found[#found + 1] = { full, rank } end
  end
  table.sort(found, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[1] < b[1]
  end)
  local out = {}
  for i = 1, math.min(5, #found) do out[i] = found[i][1] end
  self._near[name] = out
  return out
end

-- the class with this name, or nil: Heap:class without the near names,
-- for sift's own lookups of classes a dump may well not have
local function class_named(heap, name)
  local list = names(heap)[name]
  return list and heap:class_at(list[1]) or nil
end

--- The class with this name (dotted; deobfuscated when a mapping was
-- given). When several classes share the name (several loaders), the
-- first; `classes_named` gives all. When none has it: nil and a message
-- naming the near names (`near_class_names`): "no class named 'Session'
-- (did you mean 'Leaky$Session'?)".
-- @tparam string name
function Heap:class(name)
  check_type(name, "string", "class", 1)
  local list = names(self)[name]
  if list then return self:class_at(list[1]) end
  local near = self:near_class_names(name)
  if #near == 0 then return nil, format("no class named '%s'", name) end
  return nil, format("no class named '%s' (did you mean '%s'?)", name, concat(near, "', '"))
end

--- Every class with this name.
function Heap:classes_named(name)
  check_type(name, "string", "classes_named", 1)
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
  if math.type(id) ~= "integer" then bad_argument(1, "object", "integer id", id, 3) end
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
  check_type(kind, "string", "roots", 1, true)
  local out = {}
  local infer = self:roots_inferred()
  for _, root in ipairs(self.index:roots()) do
    root.object = self:object(root.id)
    if infer and root.kind == "unknown" and root.object then root.kind, root.inferred = self:infer_root(root.object) end
    if kind == nil or root.kind == kind then out[#out + 1] = root end
  end
  return out
end

--- Whether this heap's root kinds are inferred: a BMD written without
-- sift's record of them (Badoo's cruncher merges every root into one list
-- and loses its kind).
function Heap:roots_inferred()
  return self.format == "bmd" and (self.bmd and self.bmd.kinds or 0) == 0
end

--- The kind a root of unknown kind most likely had, from what it is: a
-- class object "sticky_class", a Thread "thread_object", else "unknown";
-- and true (inferred).
function Heap:infer_root(obj) -- luacheck: no unused args (a method of the heap that needs only the object)
  if obj:as_class() then return "sticky_class", true end
  if obj:kind() == "instance" and obj:is_instance_of("java.lang.Thread") then return "thread_object", true end
  return "unknown", true
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

-- what the other parts of sift.heap share
return {
  M = M, Heap = Heap, Class = Class, Object = Object,
  raw = raw, object_at = object_at, names = names, deobfuscate_class = deobfuscate_class,
  check_object = check_object, check_type = check_type, bad_argument = bad_argument, class_named = class_named,
  check_model = check_model,
}
