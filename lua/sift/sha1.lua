--- SHA-1 (FIPS 180-4) of a string, as 40 lowercase hex digits. Leak
-- signatures are SHA-1s, as LeakCanary makes them, so that a leak's
-- signature is the same in sift and in LeakCanary.
--
--     require("sift.sha1").hex("abc") --> "a9993e36..."
-- @module sift.sha1

local M = {}

local format = string.format

--- The SHA-1 of a string, as 40 lowercase hex digits.
function M.hex(msg)
  local function rol(x, n) return ((x << n) | (x >> (32 - n))) & 0xffffffff end
  local h0, h1, h2, h3, h4 = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0
  local len = #msg
  msg = msg .. "\128" .. ("\0"):rep((55 - len) % 64) .. string.pack(">I8", len * 8)
  for chunk = 1, #msg, 64 do
    local w = { string.unpack((">I4"):rep(16), msg, chunk) }
    w[17] = nil
    for i = 17, 80 do w[i] = rol(w[i - 3] ~ w[i - 8] ~ w[i - 14] ~ w[i - 16], 1) end
    local a, b, c, d, e = h0, h1, h2, h3, h4
    for i = 1, 80 do
      local f, k
      if i <= 20 then f, k = (b & c) | (~b & d), 0x5A827999
      elseif i <= 40 then f, k = b ~ c ~ d, 0x6ED9EBA1
      elseif i <= 60 then f, k = (b & c) | (b & d) | (c & d), 0x8F1BBCDC
      else f, k = b ~ c ~ d, 0xCA62C1D6 end
      local t = (rol(a, 5) + (f & 0xffffffff) + e + k + w[i]) & 0xffffffff
      a, b, c, d, e = t, a, rol(b, 30), c, d
    end
    h0, h1, h2, h3, h4 = (h0 + a) & 0xffffffff, (h1 + b) & 0xffffffff, (h2 + c) & 0xffffffff,
      (h3 + d) & 0xffffffff, (h4 + e) & 0xffffffff
  end
  return format("%08x%08x%08x%08x%08x", h0, h1, h2, h3, h4)
end

return M
