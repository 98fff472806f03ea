--- Sizes as people write them on the command line (`512M`, `4G`, `2.5g`,
-- `100KB`) and as messages show them (`3MB`, `1.5GB`); numbers as the CLI
-- and the pages of `sift serve` write them (`3,356,758`), and sizes as
-- their summaries do (`3.4 MB`).
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

--- A number with its thousands separated by commas, as the CLI and the
-- pages write every count and size (`3,356,758`; `-1,024`; `1,234.5`).
-- Anything else is its tostring.
function M.grouped(n)
  local s = tostring(math.tointeger(n) or n)
  local sign, digits, rest = s:match("^(-?)(%d+)(.*)$")
  if not digits or (rest ~= "" and not rest:match("^%.%d+$")) then return s end
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "") .. rest
end

--- Bytes in SI units with one decimal, as LeakCanary writes them and the
-- summaries of `sift serve` show them: `512 B`, `4.1 kB`, `3.4 MB`.
function M.si(n)
  if n < 1000 then return ("%d B"):format(n) end
  local exp = math.min(math.floor(math.log(n) / math.log(1000)), 6)
  return ("%.1f %sB"):format(n / 1000 ^ exp, ("kMGTPE"):sub(exp, exp))
end

return M
