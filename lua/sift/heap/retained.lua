--- Sizes of a heap: the JVM's object layout inferred from the dump, the
-- class histogram under a size model, the dominator tree, retained sizes,
-- top retainers and what no root reaches. Methods of `sift.heap`'s Heap.
-- @module sift.heap.retained

local core = require "sift.core"
require "sift.heap.graph"
local shared = require "sift.heap.index"

local Heap, Object = shared.Heap, shared.Object
local raw, object_at, graph = shared.raw, shared.object_at, shared.graph
local object_parts = core.object_parts

--- The JVM's object layout behind this dump, inferred from the distances
-- between object addresses (see sift.heap.jvm_layout): `{ header, oop,
-- algorithm, array_base, class_size, matched, sampled, inferred }`.
-- `inferred` is false when no candidate explains at least half of the
-- sampled distances (ids that are not addresses, as in BMD); JDK 17's
-- default layout is then assumed. Set once, and used by the "jvm" model.
function Heap:jvm_layout()
  if self._jvm_layout then return self._jvm_layout end
  local layout = require "sift.heap.jvm_layout"
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
  local function fields_of(name)
    local cls = self:class(name)
    if not cls then return nil end
    local r, names = raw(cls), {}
    for i = 1, r.declared do names[r.fields[i].name] = true end
    return names
  end
  for _, params in ipairs(layout.candidates(self.index:info().id_size, fields_of)) do
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
    local without, kept, grouped = layout.instance_sizer(best, describe, {}), {}, index:grouped()
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
    -- the instances were grouped by class for these few classes only: the
    -- grouping's 4 bytes an object would stay beside the dominator tree
    if not grouped then index:ungroup() end
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
  -- class mirrors followed by bytes no dumped object fills: with class
  -- data sharing, G1's archived heap holds the mirrors of archived classes
  -- not loaded yet among the others; GC.class_histogram counts them, a
  -- dump leaves them out (none when the layout is not inferred)
  local mirror_gaps = inferred and 0 or nil
  for c = 1, inferred and nclasses or 0 do
    local _, num = object_parts(self:class_at(c).object)
    if num < total and index:object(num + 1) - index:object(num) > mirror[c] then mirror_gaps = mirror_gaps + 1 end
  end
  self._jvm_layout = {
    header = best.header, oop = best.oop, algorithm = best.algorithm, jdk = best.jdk,
    array_base = layout.array_base(best, false), class_size = class_size,
    matched = math.max(best_score, 0), sampled = #samples, inferred = inferred, mirror_gaps = mirror_gaps,
  }
  return self._jvm_layout
end

-- whether the dump's System properties (System.props: a Properties, its
-- entries in a map's table, JDK 9 on, or its own, JDK 8) have `key`
local function has_property(heap, key)
  local system = heap:class("java.lang.System")
  local props = system and (system:static("props") or system:static("systemProperties"))
  if type(props) ~= "table" and type(props) ~= "userdata" then return false end
  local map = props:has_field("map") and props.map or props
  local buckets = map:has_field("table") and map.table
  for i = 1, buckets and #buckets or 0 do
    local e = buckets[i]
    while e do
      local k = e:has_field("key") and e.key
      if k and Object.string(k) == key then return true end
      e = e:has_field("next") and e.next or nil
    end
  end
  return false
end

--- VisualVM's layout (its ObjectSizeSettings) for the "visualvm" model:
-- `{ oop }`, the reference size its heap library guesses on a dump with
-- 8-byte ids: the distance between two offsets that
-- `java.lang.Class$Atomic` (JDK 8) or `FutureTask` (JDK 7) keep as statics,
-- else 4 when the system properties name a compressed oops mode, else 8.
-- (When java.lang.Object's class record states an instance size, as
-- Android's do, the sizes are the dump's and the guess is not used.)
function Heap:visualvm_layout()
  if self._visualvm_layout then return self._visualvm_layout end
  local oop = self.index:info().id_size
  if oop == 8 then
    local function distance(name, a, b)
      local cls = self:class(name)
      local x, y = cls and cls:static(a), cls and cls:static(b)
      local d = math.type(x) == "integer" and math.type(y) == "integer" and y - x
      return (d == 4 or d == 8) and d or nil
    end
    oop = distance("java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset")
      or distance("java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset")
      or (has_property(self, "java.vm.compressedOopsMode") and 4) or 8
  end
  local object, class = self:class("java.lang.Object"), self:class("java.lang.Class")
  graph(self):set_visualvm_layout(oop, object and object.number, class and class.number)
  self._visualvm_layout = { oop = oop }
  return self._visualvm_layout
end

-- the index, ready for sizes under `model`
local function sized(heap, model)
  if model == "jvm" then heap:jvm_layout() end
  if model == "visualvm" then heap:visualvm_layout() end
  return graph(heap)
end

-- the Android heaps' names (as obj:heap() and heap:heaps() give them)
local HEAPS = { default = true, app = true, image = true, zygote = true, jit = true, other = true }

-- argument n of fname: an Android heap's name, or nil
local function check_heap(name, fname, n)
  if name ~= nil and not HEAPS[name] then
    error(("bad argument #%d to '%s' (heap expected: app, zygote, image, default, jit or other, got %s)"):format(n,
      fname, type(name) == "string" and "'" .. name .. "'" or type(name)), 3)
  end
  return name
end

-- the counts per class number and primitive type (see Heap:class_histogram)
local function counted(heap, model, which)
  if model and model ~= "shark" then
    local class_class = heap:class("java.lang.Class")
    return sized(heap, model):model_histogram(model, class_class and class_class.number, which)
  end
  return heap.index:histogram(which)
end

--- The class histogram: rows `{ class, count, shallow }`, largest shallow
-- size first. Classes that share a name are one row; primitive arrays are
-- rows named `int[]` and so on. Shallow sizes follow the dump (instance:
-- the class's instance size; array: length x element size), or a `model`:
-- "jvm" (what the JVM allocated, as its GC.class_histogram counts; class
-- mirrors are then a java.lang.Class row) or "visualvm". With `heap` (an
-- Android heap's name, as `heap:heaps()` lists them: "app", "zygote",
-- "image", "default"), only the objects in that heap.
function Heap:histogram(model, heap)
  local by_name, rows = {}, {}
  shared.check_model(model, "histogram", 1)
  check_heap(heap, "histogram", 2)
  for _, r in ipairs(counted(self, model, heap)) do
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

--- The histogram per class, classes that share a name apart (to group
-- them by loader): rows `{ class (a Class, or nil), elem (a primitive
-- array's element type, or nil), count, shallow }` in class number order,
-- primitive arrays last; `model` and `heap` as in Heap:histogram.
function Heap:class_histogram(model, heap)
  shared.check_model(model, "class_histogram", 1)
  check_heap(heap, "class_histogram", 2)
  local rows = counted(self, model, heap)
  for _, r in ipairs(rows) do
    if r.class then r.class = self:class_at(r.class) end
  end
  return rows
end

--- Compute the dominator tree and retained sizes (once per model; later
-- calls return the cached result).
-- A computation that fails or is cancelled leaves the previous tree.
-- @tparam[opt] table opts `model` ("shark", the default: dump sizes; "jvm":
--   the JVM's allocation; "visualvm": VisualVM's sizes and its tree's rules,
--   referents and unreached referrers counted), `progress`
-- @return `{ model, reachable, unreachable, unreachable_bytes }`
function Heap:dominators(opts)
  if opts ~= nil then shared.check_model(shared.check_type(opts, "table", "dominators", 1).model, "dominators", 1) end
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
  local _, num = shared.check_object(obj, "retained")
  return dominators(self):retained(num)
end

--- How many objects obj retains (its dominator subtree, obj included);
-- nil when no root reaches obj.
function Heap:retained_count(obj)
  local _, num = shared.check_object(obj, "retained_count")
  return dominators(self):retained_count(num)
end

--- Shallow size of obj under a model ("shark", "jvm" or "visualvm").
function Heap:shallow(obj, model)
  local _, num = shared.check_object(obj, "shallow")
  shared.check_model(model, "shallow", 2)
  model = model or self._model or "shark"
  return sized(self, model):shallow(num, model)
end

--- The immediate dominator of obj: an Object, or nil and "roots" when only
-- the GC roots dominate it, or nil and "unreachable".
function Heap:idom(obj)
  local _, num = shared.check_object(obj, "idom")
  local d = dominators(self):idom(num)
  if d == nil then return nil, "unreachable" end
  if d == 0 then return nil, "roots" end
  return object_at(self, d)
end

--- The objects obj immediately dominates (nil: those only the roots
-- dominate), largest retained size first; at most `limit` of them.
function Heap:dominated(obj, limit)
  local num = obj ~= nil and select(2, shared.check_object(obj, "dominated")) or 0
  if limit ~= nil and (math.type(limit) ~= "integer" or limit < 0) then
    shared.bad_argument(2, "dominated", "a count (an integer, 0 or more)", limit, 3)
  end
  local out = {}
  for i, n in ipairs(dominators(self):dominated(num, limit)) do out[i] = object_at(self, n) end
  return out
end

--- How many objects obj immediately dominates (nil: the roots).
function Heap:dominated_count(obj)
  local num = obj ~= nil and select(2, shared.check_object(obj, "dominated_count")) or 0
  return dominators(self):dominated_count(num)
end

--- The bytes of every object the roots reach, under the tree's model: what
-- the objects only the roots dominate retain together. With `heap` (an
-- Android heap's name), those of the objects in that heap (ahat's size of
-- a heap).
function Heap:reachable_bytes(heap)
  check_heap(heap, "reachable_bytes", 1)
  return dominators(self):reachable_bytes(heap)
end

--- Everything obj retains (its dominator subtree, obj first).
function Heap:retained_set(obj)
  local _, num = shared.check_object(obj, "retained_set")
  local index, out = dominators(self), {}
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
  if n ~= nil and math.type(n) ~= "integer" then shared.bad_argument(1, "top", "integer", n, 3) end
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

local ELEMENTS = { boolean = true, char = true, float = true, double = true, byte = true, short = true, int = true,
  long = true }

--- A page of a class's instances, ranked by size, largest first, ties in
-- dump order (the order of `cls:instances()`): those ranked `skip + 1` to
-- `skip + count`. `by` is "retained" (under the model of the last
-- `dominators` call; objects no root reaches come last), "shallow" (under
-- that model too) or "id" (dump order). Ranked in C, so a page of a class
-- with millions of instances makes no Lua value per instance.
-- @param cls a Class (for `byte[]` and the other primitive array classes,
--   the arrays of that type)
-- @tparam[opt] table opts `by` ("retained", the default, "shallow" or
--   "id"), `skip` (default 0), `count` (default 100)
function Heap:ranked_instances(cls, opts)
  if getmetatable(cls) ~= shared.Class then shared.bad_argument(1, "ranked_instances", "class", cls, 3) end
  opts = opts == nil and {} or shared.check_type(opts, "table", "ranked_instances", 2)
  local by, skip, count = opts.by or "retained", opts.skip or 0, opts.count or 100
  if by ~= "retained" and by ~= "shallow" and by ~= "id" then
    shared.bad_argument(2, "ranked_instances", "by = 'retained', 'shallow' or 'id'", by, 3)
  end
  for _, v in ipairs { skip, count } do
    if math.type(v) ~= "integer" or v < 0 then
      shared.bad_argument(2, "ranked_instances", "skip and count (integers, 0 or more)", v, 3)
    end
  end
  local index = dominators(self)
  local elem = cls.name:match("^(%l+)%[%]$")
  local out = {}
  for i, num in ipairs(index:group_top(ELEMENTS[elem] and elem or cls.number, by, skip, count)) do
    out[i] = object_at(self, num)
  end
  return out
end

--- Retained bytes per class, each object counted once (an instance that
-- another instance of its class dominates is inside that one's size):
-- rows `{ class, retained, of }` (`of`: the Class, apart from others of
-- its name; nil for primitive arrays), largest first, equal sizes by
-- name (then by class number). With `heap` (an Android heap's name), of
-- the instances in that heap. opts: `progress` (a function `(done,
-- total)` called as the work goes on; false from it stops it: nil,
-- "cancelled").
function Heap:retained_by_class(heap, opts)
  check_heap(heap, "retained_by_class", 1)
  local by_class, why = dominators(self):retained_by_class(heap, opts and opts.progress)
  if not by_class then return nil, why end
  local rows = {}
  for key, bytes in pairs(by_class) do
    local cls = type(key) == "number" and self:class_at(key) or nil
    rows[#rows + 1] = { class = cls and cls.name or key .. "[]", retained = bytes, of = cls,
      number = cls and key or 0 }
  end
  table.sort(rows, function(a, b)
    if a.retained ~= b.retained then return a.retained > b.retained end
    if a.class ~= b.class then return a.class < b.class end
    return a.number < b.number
  end)
  for _, row in ipairs(rows) do row.number = nil end
  return rows
end

-- }======================================================


