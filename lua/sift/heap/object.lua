--- Classes and objects of a heap: a Class's names, fields, statics,
-- subclasses and instances; an Object's kind, class, size, fields (the
-- namespace rule: sift's methods win over Java fields), array elements and
-- Java strings decoded from every JDK and Android layout.
-- @module sift.heap.object

local core = require "sift.core"
local shared = require "sift.heap.index"

local M, Class, Object = shared.M, shared.Class, shared.Object
local raw, object_at, deobfuscate_class = shared.raw, shared.object_at, shared.deobfuscate_class
local class_named, check_type = shared.class_named, shared.check_type
local format = string.format
local object_parts = core.object_parts

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
    if heap.mapping then  -- (an obfuscated dump: the field's original name)
      local owner_name = heap.index:class_name(f.owner)
      local renames = heap.mapping.fields[owner_name and M.normalize(owner_name) or ""]
      if renames and renames[name] then name = renames[name] end
    end
    out[i] = { name = name, type = f.type, offset = f.offset, class = owner }
  end
  return out
end

-- Whether the dump lists each class's instance fields in reverse
-- declaration order. HotSpot's dumper up to JDK 21 writes a CLASS_DUMP's
-- field descriptors (and the values of an INSTANCE_DUMP) with its
-- FieldStream, which streams "fields in reverse order" (reflectionUtils.hpp);
-- newer dumpers (JavaFieldStream) list them forward. java.lang.String
-- tells which: `value` is its first declared instance field in every JDK
-- (6 to 25). Android's dumps (JAVA PROFILE 1.0.3; HotSpot writes 1.0.2)
-- are left as they are: Dalvik lists fields forward, ART by name (its
-- String: count, hash, value), which no rule can turn back.
local function reversed_fields(heap)
  if heap._fields_reversed == nil then
    local s, reversed = class_named(heap, "java.lang.String"), false
    if s and heap.index:info().version == "1.0.2" then
      local r = raw(s)
      reversed = r.declared > 1 and r.fields[r.declared].name == "value" and r.fields[1].name ~= "value"
    end
    heap._fields_reversed = reversed
  end
  return heap._fields_reversed
end

-- the instance fields as people read them, in ahat's order (its
-- InstanceFieldIterator; MAT's inspector too): the class's own, then its
-- superclass's, and so on up; each class's in declaration order where the
-- dump allows (see reversed_fields). `fields` keeps the dump's order, which
-- the C layer's field numbers (path steps) index.
function class_getters.ordered_fields(cls)
  local list = cls.fields
  if not reversed_fields(cls.heap) then return list end
  local out, i = {}, 1
  while list[i] do
    local j = i
    while list[j + 1] and list[j + 1].class == list[i].class do j = j + 1 end
    for k = j, i, -1 do out[#out + 1] = list[k] end
    i = j + 1
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

--- The fields this class declares itself (not inherited), in declaration
-- order where the dump allows (see Object.fields).
function Class:declared_fields()
  local out = {}
  for i = 1, raw(self).declared do out[i] = self.ordered_fields[i] end
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

--- Static fields in declaration order where the dump allows (reversed
-- back, like instance fields, when HotSpot wrote them in reverse; see
-- reversed_fields), as a list of `{ name, type, value }` (type as in
-- `cls.fields`: "object", "int", ...; objects as Objects, null as nil).
-- The VM's pseudo-statics come last: HotSpot's `<resolved_references>`
-- and such, Android's `$staticOverhead`, `$classOverhead`, `$class$…`.
function Class:static_fields()
  local mapping = self.heap.mapping and self.heap.mapping.fields[M.normalize(self.heap.index:class_name(self.number) or "")]
  local real, pseudo = {}, {}
  for _, s in ipairs(raw(self).statics) do
    local name = s.name and (mapping and mapping[s.name] or s.name)
    if name then
      local v = s.value
      if s.type == "object" then v = self.heap:object(v) end
      local list = (name:match("^<") or name:match("^%$class%$") or name == "$staticOverhead"
        or name == "$classOverhead") and pseudo or real
      list[#list + 1] = { name = name, type = s.type, value = v }
    end
  end
  local out, n = {}, #real
  for i = 1, n do out[i] = real[reversed_fields(self.heap) and n + 1 - i or i] end
  for _, p in ipairs(pseudo) do out[#out + 1] = p end
  return out
end

--- One static field's value.
function Class:static(name)
  return self:statics()[name]
end

-- a class argument: a Class, a class name, or a class object (its Class)
local function class_arg(v, fname)
  if select(2, object_parts(v)) then
    local cls = Object.as_class(v)
    if cls then return cls end
  end
  if type(v) == "string" or getmetatable(v) == Class then return v end
  shared.bad_argument(1, fname, "class or class name", v)
end

--- Whether this class is `other` or one of its subclasses.
-- @param other a Class, a class name or a class object
function Class:is_subclass_of(other)
  other = class_arg(other, "is_subclass_of")
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
  if kind == "class" then return class_named(heap, "java.lang.Class") end
  if cls then return heap:class_at(cls) end
  if elem then return class_named(heap, elem .. "[]") end
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
  if math.type(i) ~= "integer" then shared.bad_argument(1, "get", "integer", i, 3) end
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
  check_type(name, "string", "has_field", 1)
  local heap, _, _, kind, cls = facts(obj)
  return kind == "instance" and cls ~= nil and find_field(heap:class_at(cls), name) ~= nil
end

--- A field's value by name, whatever the name (`size`, `id`...); `class`
-- picks the declaring class when the name is shadowed. Raises if the object
-- has no such field.
function Object.field(obj, name, class)
  check_type(name, "string", "field", 1)
  check_type(class, "string", "field", 2, true)
  local heap, num, _, kind, cls = facts(obj)
  if kind ~= "instance" or not cls then
    error(format("%s has no fields", tostring(obj)), 2)
  end
  local f = find_field(heap:class_at(cls), class and class .. "." .. name or name)
  if not f then error(format("%s has no field '%s'", tostring(obj), name), 2) end
  return wrap(heap, heap.index:field(num, f.offset, f.type), f.type)
end

--- Iterate over the instance fields: name, value, declaring Class, type
-- ("object", "int", "boolean"...). The object's class's own fields come
-- first, then its superclass's, and so on up, as ahat and MAT list them;
-- each class's in declaration order, also in HotSpot dumps up to JDK 21,
-- which list them in reverse (ART's dumps list them by name, which the
-- dump alone cannot undo).
function Object.fields(obj)
  local heap, num, _, kind, cls = facts(obj)
  local list = (kind == "instance" and cls) and heap:class_at(cls).ordered_fields or {}
  local i = 0
  return function()
    i = i + 1
    local f = list[i]
    if f then return f.name, wrap(heap, heap.index:field(num, f.offset, f.type), f.type), f.class, f.type end
  end
end

--- Whether the object is an instance of the class (or a subclass of it).
-- @param class a Class, a class name or a class object
function Object.is_instance_of(obj, class)
  class = class_arg(class, "is_instance_of")
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
    text = heap.index:text(num, "utf16be", 0, (max and max >= 0) and 2 * max or nil)
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
    -- with max, decode no more code units than max characters can take
    local function upto(units) return (max and max >= 0) and math.min(units, 2 * max) or units end
    if aelem == "char" then
      text = array_text(heap, arr, "utf16be", offset, upto(count or length))
    elseif aelem == "byte" then
      if coder == 1 then text = array_text(heap, arr, "utf16le", 0, upto(length // 2))
      else text = array_text(heap, arr, "latin1", 0, upto(count and math.min(count, length) or length)) end
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
  local heap, _, id, kind, cls, _, length = facts(obj)
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
