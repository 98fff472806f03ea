--- An interactive Lua prompt over an open dump (`sift repl FILE`).
-- Each line is run as Lua with `heap` bound; expressions print their value
-- readably (objects as `com.example.Foo@0x12f4a8`, tables one level deep).
-- On a terminal with Debian's lua-readline installed, lines can be edited
-- and are kept in ~/.sift_history.
-- @module sift.repl

local core = require "sift.core"

local M = {}

local format, concat = string.format, table.concat

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ({ ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r", ['"'] = '\\"', ["\\"] = "\\\\" })[c]
      or format("\\%d", c:byte())
  end) .. '"'
end

--- A readable one-line form of a value: strings quoted, tables shown to
-- `depth` levels (default 2) and at most 12 entries a level.
function M.pretty(v, depth)
  depth = depth or 2
  local t = type(v)
  if t == "string" then return quote(v) end
  if t == "userdata" and (getmetatable(v) or {}).__name == "sift.Object" then
    local text = require("sift.hprof").Object.string(v, 60)  -- strings show their text
    return text and tostring(v) .. " " .. quote(text) or tostring(v)
  end
  if t ~= "table" then return tostring(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  if depth == 0 then return "{...}" end
  local parts, n = {}, 0
  for i, x in ipairs(v) do
    n = n + 1
    if n > 12 then parts[#parts + 1] = format("... (%d in all)", #v) break end
    parts[#parts + 1] = M.pretty(x, depth - 1)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #v) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for i, k in ipairs(keys) do
    if i > 12 then parts[#parts + 1] = format("... (%d keys)", #keys) break end
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. M.pretty(k, 0) .. "]"
    parts[#parts + 1] = key .. " = " .. M.pretty(v[k], depth - 1)
  end
  return "{ " .. concat(parts, ", ") .. " }"
end

-- a line reader: readline on a terminal when available, else plain lines
local function reader(input, out)
  if input == io.stdin and core.isatty(0) then
    local ok, readline = pcall(require, "readline")
    if ok then
      readline.set_options { histfile = "~/.sift_history", completion = false }
      return function(prompt)
        local line = readline.readline(prompt)
        if line and line:match("%S") then readline.add_history(line) end
        return line
      end, true
    end
    return function(prompt) out:write(prompt) out:flush() return input:read("l") end, true
  end
  return function() return input:read("l") end, false
end

--- Run the prompt until end of input.
-- @param heap the opened dump, bound as `heap`
-- @tparam table opts `input` (default io.stdin), `out`, `err`
-- @treturn integer exit status
function M.run(heap, opts)
  local out, err = opts.out or io.stdout, opts.err or io.stderr
  local read, interactive = reader(opts.input or io.stdin, out)
  local env = setmetatable({ heap = heap, sift = require "sift" }, { __index = _G })
  env.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    out:write(concat(parts, "\t"), "\n")
  end
  --- show(obj): an object's fields, one a line
  env.show = function(obj)
    out:write(tostring(obj), "\n")
    if type(obj) == "userdata" and obj.fields then
      for name, value, class in obj:fields() do
        out:write(format("  %-24s %s  (%s)\n", name, M.pretty(value, 1), class.name))
      end
    end
  end
  if interactive then
    local info = heap:info()
    out:write(format("sift %s: %s, %d objects, %d classes. 'heap' is bound; show(obj) lists fields; "
      .. "Ctrl-D quits.\n", require("sift")._VERSION, heap.path, info.objects, info.classes))
  end
  local chunk = nil
  while true do
    local line = read(chunk and ">> " or "> ")
    if line == nil then break end
    chunk = chunk and chunk .. "\n" .. line or line
    local fn, msg = load("return " .. chunk, "=repl", "t", env)
    if not fn then fn, msg = load(chunk, "=repl", "t", env) end
    if not fn and msg:match("<eof>$") then
      -- an unfinished statement: keep reading
    else
      chunk = nil
      if not fn then
        err:write("syntax error: ", msg, "\n")
      else
        local results = table.pack(xpcall(fn, function(e) return tostring(e) end))
        if not results[1] then
          err:write("error: ", results[2], "\n")
        elseif results.n > 1 then
          local parts = {}
          for i = 2, results.n do parts[#parts + 1] = M.pretty(results[i]) end
          out:write(concat(parts, "\t"), "\n")
        end
      end
    end
  end
  if interactive then out:write("\n") end
  heap:close()
  return 0
end

return M
