-- What sift.heap.census says of class loaders, counted again in Lua one
-- object at a time, for spec/census_spec.lua: each loader's classes and
-- the instances of those classes (every instance and object array by its
-- class's loader; every primitive array by the loader of its array class,
-- as the histogram names it), and the class names more than one loader
-- defines. It loops over every object in Lua: for specs only.
local M = {}

local function hex(id) return ("0x%x"):format(id) end

--- { [loader id as census writes it, "<bootstrap>" for none] = {classes,
-- instances, duplicates (sorted names)} }, and the duplicated names, sorted.
function M.loaders(heap)
  local index = heap.index
  local rows, loader_of, by_name = {}, {}, {}
  for cls in heap:classes() do
    local key = cls.loader and hex(cls.loader:id()) or "<bootstrap>"
    loader_of[cls.number] = key
    rows[key] = rows[key] or { classes = 0, instances = 0, duplicates = {} }
    rows[key].classes = rows[key].classes + 1
    by_name[cls.name] = by_name[cls.name] or {}
    by_name[cls.name][key] = true
  end
  local array_class = {}  -- "byte" -> the loaders of the classes named byte[]
  for n = 1, index:count() do
    local _, kind, cls, _, _, elem = index:object(n)
    if kind == "instance" or kind == "object_array" then
      if cls then rows[loader_of[cls]].instances = rows[loader_of[cls]].instances + 1 end
    elseif kind == "primitive_array" then
      local keys = array_class[elem]
      if not keys then
        keys = {}
        for _, c in ipairs(heap:classes_named(elem .. "[]")) do keys[#keys + 1] = loader_of[c.number] end
        array_class[elem] = keys
      end
      for _, key in ipairs(keys) do rows[key].instances = rows[key].instances + 1 end
    end
  end
  local duplicates = {}
  for name, keys in pairs(by_name) do
    local list = {}
    for key in pairs(keys) do list[#list + 1] = key end
    if #list > 1 then
      duplicates[#duplicates + 1] = name
      for _, key in ipairs(list) do table.insert(rows[key].duplicates, name) end
    end
  end
  table.sort(duplicates)
  for _, row in pairs(rows) do table.sort(row.duplicates) end
  return rows, duplicates
end

return M
