-- The floor under `sift ofx`, for bench/ofx.lua: how long LPeg takes to
-- match a statement's runs of elements with the grammar's own pattern
-- (sift.ofx.grammar.runs) and hand their positions to a function that
-- does nothing, and then to make one Lua string per element, with no tree
-- and no statements. Usage: lua5.4 bench/ofx_floor.lua FILE
local lpeg = require "lpeg"
local grammar = require "sift.ofx.grammar"

local f = assert(io.open(arg[1], "rb"))
local text = f:read("a")
f:close()
local start = assert(text:find("<OFX>", 1, true), "no <OFX>")
local other = lpeg.P"<" * (1 - lpeg.P">")^0 * lpeg.P">" + (1 - lpeg.P"<")^1

local function time(fn)
  collectgarbage()
  collectgarbage("stop")
  local body = (lpeg.Cmt(grammar.runs, fn) + other)^0
  local t = os.clock()
  body:match(text, start)
  t = os.clock() - t
  collectgarbage("restart")
  return t
end

local kept, sub = {}, string.sub
local matched = time(function() return true end)
-- (each element: its start tag's '<' and its end tag or false; the value
-- runs to the next '<')
local find = string.find
local strings = time(function(s, _, ...)
  for i = 1, select("#", ...) - 1, 2 do
    local at = select(i, ...)
    kept[#kept + 1] = sub(s, at, find(s, "<", at + 1, true) - 1)
  end
  return true
end)
print(("%.2f %.2f %d"):format(matched, strings, #kept))
