--- A small JSON encoder for sift's machine-readable output.
-- Debian's lua-cjson 2.1.0 prints integers with 14 significant digits, which
-- rounds 64-bit values (timestamps, offsets, ids); this encoder writes Lua
-- integers exactly, sorts object keys so output is stable, and turns bytes
-- that are not UTF-8 (text copied from a dump) into their Latin-1 code
-- points so the result is always valid JSON.
-- @module sift.json

local core = require "sift.core"

local M = {}

local ARRAY = { __name = "sift.json.array" }

--- Mark a table as a JSON array, so that it is written `[]` when empty (an
-- unmarked empty table is an object, `{}`). Returns the table.
function M.array(t)
  return setmetatable(t or {}, ARRAY)
end

--- Encode a Lua value (tables, strings, numbers, booleans) as JSON text
-- (in C: csrc/core/ljson.c). A table is an array when marked with
-- `M.array` or when its keys are exactly 1..#t; an empty table is `[]`
-- when marked, or when it is the value of a key named in `opts.arrays` (a
-- set: the keys a document's schema says are arrays), and `{}` otherwise.
-- Object keys must be strings; a nesting deeper than 100 is an error.
-- @param v the value
-- @tparam[opt] table opts `arrays`
-- @treturn string
function M.encode(v, opts)
  return core.json_encode(v, opts and opts.arrays, ARRAY)
end

return M
