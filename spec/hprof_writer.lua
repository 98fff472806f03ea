--- Writes small HPROF dumps for specs: JVM 1.0.2 or Android 1.0.3, with
-- classes (fields, statics, superclasses), instances, arrays and roots,
-- described in Lua. Ids are handed out by the writer.
--
--   local w = writer.new { version = "1.0.3", id_size = 4 }
--   local obj = w:class("java.lang.Object")
--   local leak = w:class("Leaking", { super = obj })
--   local root = w:class("GcRoot", { super = obj, statics = { { "leak", "object" } } })
--   local x = w:instance(leak, {})
--   w:set_static(root, "leak", x)
--   w:root("sticky_class", root)
--   local bytes = w:bytes()
local writer = {}
writer.__index = writer

local TYPES = { object = 2, boolean = 4, char = 5, float = 6, double = 7, byte = 8, short = 9, int = 10, long = 11 }
local SIZES = { boolean = 1, char = 2, float = 4, double = 8, byte = 1, short = 2, int = 4, long = 8 }
local ROOTS = {
  unknown = 0xFF, jni_global = 0x01, jni_local = 0x02, java_frame = 0x03, native_stack = 0x04,
  sticky_class = 0x05, thread_block = 0x06, monitor_used = 0x07, thread_object = 0x08,
}

function writer.new(opts)
  opts = opts or {}
  return setmetatable({
    version = opts.version or "1.0.2", id_size = opts.id_size or 8, timestamp = opts.timestamp or 0,
    next_id = 0x1000, strings = {}, string_order = {}, classes = {}, records = {}, roots = {},
    serial = 0, heap_info = {},
  }, writer)
end

function writer:id()
  self.next_id = self.next_id + 16
  return self.next_id
end

function writer:string_id(s)
  if not self.strings[s] then
    self.strings[s] = self:id()
    self.string_order[#self.string_order + 1] = s
  end
  return self.strings[s]
end

local function idfmt(w) return w.id_size == 4 and ">I4" or ">I8" end

local function value(w, t, v)
  if t == "object" then return string.pack(idfmt(w), v or 0) end
  if t == "boolean" then return string.pack(">B", v and 1 or 0) end
  if t == "char" then return string.pack(">I2", utf8.codepoint(v or "\0")) end
  if t == "float" then return string.pack(">f", v or 0) end
  if t == "double" then return string.pack(">d", v or 0) end
  if t == "byte" then return string.pack(">i1", v or 0) end
  if t == "short" then return string.pack(">i2", v or 0) end
  if t == "int" then return string.pack(">i4", v or 0) end
  if t == "long" then return string.pack(">i8", v or 0) end
  error("bad type " .. tostring(t))
end

--- Declare a class. opts: super (a class), fields ({ {name, type}... },
-- declared instance fields), statics ({ {name, type, value}... }), loader.
function writer:class(name, opts)
  opts = opts or {}
  self.serial = self.serial + 1
  local c = { id = opts.id or self:id(), name = name, super = opts.super, fields = opts.fields or {},
              statics = opts.statics or {}, serial = self.serial, loader = opts.loader or 0 }
  self:string_id(name)
  self.classes[#self.classes + 1] = c
  return c
end

-- (called as w:set_static like the writer's other methods; the class holds its statics)
function writer.set_static(_, c, name, v)
  for _, s in ipairs(c.statics) do
    if s[1] == name then s[3] = v return end
  end
  error("no static " .. name)
end

-- every field of a class, own first then the superclass's
local function layout(c)
  local out = {}
  while c do
    for _, f in ipairs(c.fields) do out[#out + 1] = f end
    c = c.super
  end
  return out
end

--- An instance with field values by name ({ [name] = value }); a
-- value for a shadowed name can be given as { [class] = { [name] = v } }.
function writer:instance(c, values, opts)
  local id = opts and opts.id or self:id()
  local data = {}
  local k = c
  while k do
    local own = values[k] or values
    for _, f in ipairs(k.fields) do data[#data + 1] = value(self, f[2], own[f[1]]) end
    k = k.super
  end
  data = table.concat(data)
  self.records[#self.records + 1] = string.pack(">B", 0x21) .. string.pack(idfmt(self), id)
    .. string.pack(">I4", 0) .. string.pack(idfmt(self), c.id) .. string.pack(">I4", #data) .. data
  return id
end

function writer:object_array(array_class, elements)
  local id = self:id()
  local parts = {}
  for i, e in ipairs(elements) do parts[i] = string.pack(idfmt(self), e or 0) end
  self.records[#self.records + 1] = string.pack(">B", 0x22) .. string.pack(idfmt(self), id)
    .. string.pack(">I4I4", 0, #elements) .. string.pack(idfmt(self), array_class.id) .. table.concat(parts)
  return id
end

function writer:primitive_array(t, values)
  local id = self:id()
  local parts = {}
  for i, v in ipairs(values) do parts[i] = value(self, t, v) end
  self.records[#self.records + 1] = string.pack(">B", 0x23) .. string.pack(idfmt(self), id)
    .. string.pack(">I4I4B", 0, #values, TYPES[t]) .. table.concat(parts)
  return id
end

--- A primitive array whose elements the dump leaves out (0xC3, as Android's
-- dumps may write one): `length` elements of type t, no bytes for them.
function writer:primitive_array_nodata(t, length)
  local id = self:id()
  self.records[#self.records + 1] = string.pack(">B", 0xC3) .. string.pack(idfmt(self), id)
    .. string.pack(">I4I4B", 0, length, TYPES[t])
  return id
end

--- A root of a kind; thread/frame for the kinds that have them.
function writer:root(kind, target, thread, frame)
  local tag = assert(ROOTS[kind], kind)
  local rec = string.pack(">B", tag) .. string.pack(idfmt(self), type(target) == "table" and target.id or target)
  if tag == 0x01 then rec = rec .. string.pack(idfmt(self), 0)
  elseif tag == 0x02 or tag == 0x03 or tag == 0x08 then rec = rec .. string.pack(">I4I4", thread or 0, frame or 0)
  elseif tag == 0x04 or tag == 0x06 then rec = rec .. string.pack(">I4", thread or 0) end
  self.roots[#self.roots + 1] = rec
end

--- A root written among the objects, after any heap switch so far
-- (`root` writes roots before every object).
function writer:root_here(kind, target, thread, frame)
  local before = #self.roots
  self:root(kind, target, thread, frame)
  self.records[#self.records + 1] = table.remove(self.roots, before + 1)
end

--- An Android heap switch (0xFE) before the records that follow.
function writer:heap(letter, name)
  self.records[#self.records + 1] = string.pack(">BI4", 0xFE, string.byte(letter))
    .. string.pack(idfmt(self), self:string_id(name))
end

local function record(tag, body)
  return string.pack(">BI4I4", tag, 0, #body) .. body
end

--- The dump's bytes.
function writer:bytes()
  local ids = idfmt(self)
  local out = { "JAVA PROFILE " .. self.version .. "\0", string.pack(">I4I8", self.id_size, self.timestamp) }
  -- names used by class dumps must exist before strings are written
  for _, c in ipairs(self.classes) do
    for _, f in ipairs(c.fields) do self:string_id(f[1]) end
    for _, s in ipairs(c.statics) do self:string_id(s[1]) end
  end
  for _, s in ipairs(self.string_order) do
    out[#out + 1] = record(0x01, string.pack(ids, self.strings[s]) .. s)
  end
  for _, c in ipairs(self.classes) do
    out[#out + 1] = record(0x02, string.pack(">I4", c.serial) .. string.pack(ids, c.id)
      .. string.pack(">I4", 0) .. string.pack(ids, self.strings[c.name]))
  end
  local heap = {}
  for _, c in ipairs(self.classes) do
    local parts = { string.pack(">B", 0x20), string.pack(ids, c.id), string.pack(">I4", 0),
      string.pack(ids, c.super and c.super.id or 0), string.pack(ids, c.loader), string.pack(ids, 0):rep(4) }
    local size = 0
    for _, f in ipairs(c.fields) do size = size + (f[2] == "object" and self.id_size or SIZES[f[2]]) end
    parts[#parts + 1] = string.pack(">I4I2", size, 0)
    parts[#parts + 1] = string.pack(">I2", #c.statics)
    for _, s in ipairs(c.statics) do
      parts[#parts + 1] = string.pack(ids, self.strings[s[1]]) .. string.pack(">B", TYPES[s[2]]) .. value(self, s[2], s[3])
    end
    parts[#parts + 1] = string.pack(">I2", #c.fields)
    for _, f in ipairs(c.fields) do
      parts[#parts + 1] = string.pack(ids, self.strings[f[1]]) .. string.pack(">B", TYPES[f[2]])
    end
    heap[#heap + 1] = table.concat(parts)
  end
  for _, r in ipairs(self.roots) do heap[#heap + 1] = r end
  for _, r in ipairs(self.records) do heap[#heap + 1] = r end
  out[#out + 1] = record(0x1C, table.concat(heap))
  out[#out + 1] = record(0x2C, "")
  return table.concat(out)
end

writer.layout = layout
return writer
