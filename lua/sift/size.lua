--- Sizes as people write them on the command line (`512M`, `4G`, `2.5g`,
-- `100KB`) and as messages show them (`3MB`, `1.5GB`).
-- @module sift.size

local M = {}

local SCALE = { [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30, T = 1 << 40 }

--- Bytes of a size text, or nil when it is not one.
function M.parse(text)
  local n, unit = tostring(text):upper():match("^(%d+%.?%d*)%s*([KMGT]?)I?B?$")
  return n and math.floor(tonumber(n) * SCALE[unit]) or nil
end

--- A size for a message: `3MB`, `1.5GB`, `512 bytes`.
function M.format(bytes)
  for _, unit in ipairs { "G", "M", "K" } do
    if bytes >= SCALE[unit] then return ("%.3g%sB"):format(bytes / SCALE[unit], unit) end
  end
  return bytes .. " bytes"
end

return M
