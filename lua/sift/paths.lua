--- Where sift finds the Lua modules Debian ships for older Lua versions.
-- Debian 12 packages lua-http and its pure-Lua dependencies (lua-fifo,
-- lua-basexx, lua-lpeg-patterns, lua-binaryheap, lua-compat53) for Lua
-- 5.1-5.3 only; they run under 5.4 when those versions' share
-- directories come after sift's own on `package.path`. This is the one
-- place that does it (docs/direct.md).
-- @module sift.paths

local M = {}

local OLDER = { "/usr/share/lua/5.3", "/usr/share/lua/5.2", "/usr/share/lua/5.1" }

--- Append the 5.3, 5.2 and 5.1 share directories to `package.path`
-- (once; directories already there are not added again).
function M.older_lua()
  for _, dir in ipairs(OLDER) do
    local entry = dir .. "/?.lua;" .. dir .. "/?/init.lua"
    if not package.path:find(dir .. "/?.lua", 1, true) then
      package.path = package.path .. ";" .. entry
    end
  end
end

return M
