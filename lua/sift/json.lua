--- A small JSON encoder for sift's machine-readable output.
-- Debian's lua-cjson 2.1.0 prints integers with 14 significant digits, which
-- rounds 64-bit values (timestamps, offsets, ids); this encoder writes Lua
-- integers exactly, sorts object keys so output is stable, and turns bytes
-- that are not UTF-8 (text copied from a dump) into their Latin-1 code
-- points so the result is always valid JSON.
-- @module sift.json

local M = {}

local format, concat, sort = string.format, table.concat, table.sort
local math_type = math.type

local escapes = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

local function latin1_to_utf8(s)
  return (s:gsub("[\128-\255]", function(c) return utf8.char(c:byte()) end))
end

local function quote(s)
  if not utf8.len(s) then s = latin1_to_utf8(s) end
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or format("\\u%04x", c:byte())
  end) .. '"'
end

local ARRAY = { __name = "sift.json.array" }

--- Mark a table as a JSON array, so that it is written `[]` when empty (an
-- unmarked empty table is an object, `{}`). Returns the table.
function M.array(t)
  return setmetatable(t or {}, ARRAY)
end

local function is_array(t)
  if getmetatable(t) == ARRAY then return true end
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local encode

local function encode_table(t, out, depth, arrays, key)
  if depth > 100 then error("sift.json: nesting too deep (a cycle?)", 0) end
  if is_array(t) or (arrays and arrays[key] and next(t) == nil) then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode(t[i], out, depth + 1, arrays)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      error("sift.json: object keys must be strings, got " .. type(k), 0)
    end
    keys[#keys + 1] = k
  end
  sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = quote(k)
    out[#out + 1] = ":"
    encode(t[k], out, depth + 1, arrays, k)
  end
  out[#out + 1] = "}"
end

function encode(v, out, depth, arrays, key)
  local tv = type(v)
  if tv == "string" then
    out[#out + 1] = quote(v)
  elseif tv == "number" then
    if math_type(v) == "integer" then
      out[#out + 1] = format("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then
      out[#out + 1] = "null"  -- JSON has no NaN or infinity
    else
      out[#out + 1] = format("%.17g", v)
    end
  elseif tv == "boolean" then
    out[#out + 1] = tostring(v)
  elseif tv == "nil" then
    out[#out + 1] = "null"
  elseif tv == "table" then
    encode_table(v, out, depth, arrays, key)
  else
    error("sift.json: cannot encode a " .. tv, 0)
  end
end

--- Encode a Lua value (tables, strings, numbers, booleans) as JSON text.
-- An empty table is `[]` when marked with `M.array`, or when it is the
-- value of a key named in `opts.arrays` (a set: the keys a document's
-- schema says are arrays), and `{}` otherwise.
-- @param v the value
-- @tparam[opt] table opts `arrays`
-- @treturn string
function M.encode(v, opts)
  local out = {}
  encode(v, out, 0, opts and opts.arrays)
  return concat(out)
end

return M
