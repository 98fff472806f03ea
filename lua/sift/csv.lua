--- CSV as RFC 4180 has it: a field with a comma, quote or line break is
-- quoted, its quotes doubled; nil is an empty field.
-- @module sift.csv

local M = {}

--- One field's text.
function M.field(v)
  v = v == nil and "" or tostring(v)
  if v:find('[",\r\n]') then v = '"' .. v:gsub('"', '""') .. '"' end
  return v
end

--- A line (without its line break) of the values of row under columns:
-- `row[columns[1]], row[columns[2]], ...`.
function M.line(row, columns)
  local out = {}
  for i, c in ipairs(columns) do out[i] = M.field(row[c]) end
  return table.concat(out, ",")
end

return M
