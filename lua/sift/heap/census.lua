--- Who owns the heap: threads with their stacks and the locals they
-- hold (MAT's "Thread Overview"), and class loaders with their classes,
-- duplicate classes and retained sizes (MAT's "Class Loader Explorer"
-- and "Duplicate Classes"). Retained sizes are the dominator tree's,
-- under the heap's size model.
--
--     local census = require "sift.heap.census"
--     for _, t in ipairs(census.threads(heap)) do print(t.name, t.retained, #t.locals) end
-- @module sift.heap.census

local json = require "sift.json"

local M = {}

local function hex(id) return ("0x%x"):format(id) end

local function class_name_of(obj)
  local cls = obj:as_class()
  return cls and ("class " .. cls.name) or obj:class_name()
end

--- Threads: `{serial, name, id, retained (by the Thread object), frames
-- ({method, class, source, line}: the dump's stack trace, innermost
-- first), locals ({frame (index into frames, 1-based, or nil), id, class,
-- retained}: what the thread's stack holds, largest first), held (the
-- locals' retained bytes, each object once)}`, largest holders first.
function M.threads(heap)
  heap:dominators()
  local list, by_serial = json.array {}, {}
  for _, t in ipairs(heap:threads()) do
    local row = { serial = t.serial, name = t.name, id = t.object and hex(t.object:id()) or nil,
      retained = t.object and heap:retained(t.object) or nil, frames = json.array {}, locals = json.array {},
      held = 0 }
    for i, f in ipairs(t.frames) do
      row.frames[i] = { method = f.method, class = f.class, source = f.source, line = f.line }
    end
    by_serial[t.serial] = row
    list[#list + 1] = row
  end
  local seen = {}
  for _, root in ipairs(heap:roots()) do
    local row = root.thread and by_serial[root.thread]
    if row and (root.kind == "java_frame" or root.kind == "jni_local") and root.object then
      local retained = heap:retained(root.object) or 0
      row.locals[#row.locals + 1] = { frame = root.frame and root.frame >= 0 and root.frame + 1 or nil,
        id = hex(root.object:id()), class = class_name_of(root.object), retained = retained, kind = root.kind }
      local key = root.thread .. ":" .. root.object:id()
      if not seen[key] then
        seen[key] = true
        row.held = row.held + retained
      end
    end
  end
  for _, row in ipairs(list) do
    table.sort(row.locals, function(a, b)
      if a.retained ~= b.retained then return a.retained > b.retained end
      return a.id < b.id
    end)
  end
  table.sort(list, function(a, b)
    local x, y = math.max(a.held, a.retained or 0), math.max(b.held, b.retained or 0)
    if x ~= y then return x > y end
    return a.serial < b.serial
  end)
  return list
end

--- A loader's display name (as `sift loaders` names it): its class, and
-- its `name` field when it has one; "<bootstrap>" for nil or false.
local function loader_name(loader)
  if not loader then return "<bootstrap>" end
  local name = loader:has_field("name") and loader:field("name")
  local text = type(name) == "userdata" and name:string()
  return loader:class_name() .. (text and (" \"" .. text .. "\"") or "")
end
M.loader_name = loader_name

--- Class loaders: `{id (nil for the bootstrap loader), name, class,
-- classes (how many it defined), instances (of those classes),
-- retained (by the loader object), parent (id), duplicates (names it
-- defined that another loader defined too)}`, most classes first; and the
-- duplicate classes `{name, loaders ({id, name}...)}`. On Android, the
-- loaders' `pathList` dex elements are listed as `dex` when present.
function M.loaders(heap)
  heap:dominators()
  local by_id, list = {}, json.array {}
  local definers = {}
  for cls in heap:classes() do
    local loader = cls.loader
    local key = loader and loader:id() or 0
    local row = by_id[key]
    if not row then
      row = { id = loader and hex(loader:id()) or nil, name = loader_name(loader or nil),
        class = loader and loader:class_name() or nil, classes = 0, instances = 0,
        retained = loader and heap:retained(loader) or nil, duplicates = json.array {}, object = loader or nil }
      local parent = loader and loader:has_field("parent") and loader:field("parent")
      if type(parent) == "userdata" then row.parent = hex(parent:id()) end
      by_id[key] = row
      list[#list + 1] = row
    end
    row.classes = row.classes + 1
    row.instances = row.instances + cls:instance_count()
    definers[cls.name] = definers[cls.name] or {}
    local d = definers[cls.name]
    if not d[key] then
      d[key] = true
      d[#d + 1] = row
    end
  end
  local duplicates = json.array {}
  for name, d in pairs(definers) do
    if #d > 1 then
      local loaders = json.array {}
      for i, row in ipairs(d) do
        loaders[i] = { id = row.id, name = row.name }
        row.duplicates[#row.duplicates + 1] = name
      end
      duplicates[#duplicates + 1] = { name = name, loaders = loaders }
    end
  end
  table.sort(duplicates, function(a, b) return a.name < b.name end)
  for _, row in ipairs(list) do
    table.sort(row.duplicates)
    local loader = row.object
    local path_list = loader and loader:has_field("pathList") and loader:field("pathList")
    local elements = type(path_list) == "userdata" and path_list:has_field("dexElements")
      and path_list:field("dexElements")
    if type(elements) == "userdata" and elements:kind() == "object_array" then  -- Android's dex path
      row.dex = json.array {}
      for _, e in ipairs(elements:elements()) do
        local file = e and e:has_field("path") and e:field("path")
        file = file or (e and e:has_field("dexFile") and e:field("dexFile"))
        if type(file) == "userdata" then
          local fname = file:has_field("mFileName") and file:field("mFileName")
            or (file:has_field("path") and file:field("path"))
          local text = type(fname) == "userdata" and fname:string() or file:string()
          if text then row.dex[#row.dex + 1] = text end
        end
      end
    end
    row.object = nil
  end
  table.sort(list, function(a, b)
    if a.classes ~= b.classes then return a.classes > b.classes end
    return (a.id or "") < (b.id or "")
  end)
  return list, duplicates
end

return M
