--- An interactive Lua prompt over an open dump (`sift repl FILE`).
-- Each line is run as Lua with `heap` bound; expressions print their value
-- readably (objects as `com.example.Foo@0x12f4a8`, tables one level deep,
-- an object's id in hex: `obj:id()` is an integer, shown as `0x12f4a8`).
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
-- `depth` levels (default 2) and at most 12 entries a level. With
-- `is_id` (integer -> boolean), the integers it says are object ids are
-- shown in hex, as everything else shows ids (0xfd5c0300 is the same
-- integer to Lua).
function M.pretty(v, depth, is_id)
  depth = depth or 2
  local t = type(v)
  if t == "string" then return quote(v) end
  if math.type(v) == "integer" and is_id and is_id(v) then return format("0x%x", v) end
  if t == "userdata" and (getmetatable(v) or {}).__name == "sift.Object" then
    local text = require("sift.heap").Object.string(v, 60)  -- strings show their text
    return text and tostring(v) .. " " .. quote(text) or tostring(v)
  end
  if t ~= "table" then return tostring(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  if depth == 0 then return "{...}" end
  local parts, n = {}, 0
  for _, x in ipairs(v) do
    n = n + 1
    if n > 12 then parts[#parts + 1] = format("... (%d in all)", #v) break end
    parts[#parts + 1] = M.pretty(x, depth - 1, is_id)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #v) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for i, k in ipairs(keys) do
    if i > 12 then parts[#parts + 1] = format("... (%d keys)", #keys) break end
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. M.pretty(k, 0) .. "]"
    parts[#parts + 1] = key .. " = " .. M.pretty(v[k], depth - 1, is_id)
  end
  return "{ " .. concat(parts, ", ") .. " }"
end

--- {======================================================
-- Help and completion
-- =======================================================

local hprof = require "sift.heap"

local function sorted_functions(t)
  local out = {}
  for k, v in pairs(t) do
    if type(k) == "string" and type(v) == "function" and not k:match("^_") then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function is_object(v)
  return type(v) == "userdata" and (getmetatable(v) or {}).__name == "sift.Object"
end

-- the names a value offers after `.` or `:`: methods, and an instance's
-- field names after `.` (those that no method hides)
local function members(v, sep)
  local names = {}
  if is_object(v) then
    names = hprof.method_names()
    if sep == "." and v:kind() == "instance" then
      local methods = {}
      for _, m in ipairs(names) do methods[m] = true end
      for name in v:fields() do
        if not methods[name] and name:match("^[%a_][%w_]*$") then names[#names + 1] = name end
      end
    end
  elseif getmetatable(v) == hprof.Heap then
    names = sorted_functions(hprof.Heap)
  elseif getmetatable(v) == hprof.Class then
    names = sorted_functions(hprof.Class)
    if sep == "." then
      for _, f in ipairs { "name", "id", "super", "loader", "instance_size", "object", "fields" } do names[#names + 1] = f end
    end
  elseif type(v) == "table" then
    for k in pairs(v) do
      if type(k) == "string" and k:match("^[%a_][%w_]*$") then names[#names + 1] = k end
    end
  end
  return names
end

--- Completions of `word` (the text before the cursor, up to a space or a
-- bracket) in `env`: globals, or after `a.b.` / `a:` the members of that
-- value. Only chains of names are looked up, so completing runs nothing.
function M.complete(env, word)
  local out = {}
  local base, sep, partial = word:match("^([%a_][%w_%.]*)([%.:])([%w_]*)$")
  local candidates
  if base then
    local v = env
    for part in base:gmatch("[^.]+") do
      local ok, x = pcall(function() return v[part] end)
      if not ok or x == nil then return out end
      v = x
    end
    candidates = members(v, sep)
  else
    partial = word:match("^([%a_][%w_]*)$")
    if not partial then return out end
    base, sep, candidates = nil, "", {}
    for k in pairs(env) do if type(k) == "string" then candidates[#candidates + 1] = k end end
    for k in pairs(_G) do if type(k) == "string" then candidates[#candidates + 1] = k end end
  end
  local seen = {}
  for _, name in ipairs(candidates) do
    if name:sub(1, #partial) == partial and not seen[name] then
      seen[name] = true
      out[#out + 1] = (base or "") .. sep .. name
    end
  end
  table.sort(out)
  return out
end

local HELP = [[
heap      the dump: heap:info(), heap:histogram([model]), heap:class(name), heap:classes(),
          heap:object(id), heap:objects(), heap:roots([kind]), heap:threads(),
          heap:path_to_root(obj), heap:paths(list), heap:referrers(obj), heap:references(obj),
          heap:dominators{model=}, heap:retained(obj), heap:idom(obj), heap:dominated(obj),
          heap:top(n), heap:jvm_layout()
          A class stands for its class object (heap:retained(cls), heap:path_to_root(cls));
          heap:class(name) is nil and the near names when no class has that name.
a class   cls.name, cls.super, cls.loader, cls.fields, cls:instances(), cls:instance_count(),
          cls:statics(), cls:static(name), cls:subclasses(), cls:is_subclass_of(c)
an object obj:id(), obj:kind(), obj:class(), obj:class_name(), obj:size(), obj:string(),
          obj:fields(), obj:field(name), obj:has_field(name), obj:is_instance_of(c),
          arrays: arr[i], #arr, arr:elements(), arr:bytes()
ids       obj:id() is an integer; the prompt shows ids in hex (0x12f4a8 is the same integer);
          in your own text, ("0x%x"):format(obj:id()).
the rule  sift's methods come first: obj.size is the method size even when the Java class has a
          field named size; obj:field("size") reads any field, whatever its name; obj.mName
          reads a field no method hides.
show(obj) lists an object's fields; help(x) lists what x offers; Tab completes names.]]

--- Text that says what `v` offers (or, without v, what the prompt offers).
function M.help(v)
  if v == nil then return HELP end
  local lines = {}
  if is_object(v) then
    lines[1] = tostring(v) .. ": methods " .. concat(hprof.method_names(), ", ")
    if v:kind() == "instance" then
      local methods, fields = {}, {}
      for _, m in ipairs(hprof.method_names()) do methods[m] = true end
      for name in v:fields() do
        local like_a_method = methods[name] or hprof.Object[name] ~= nil
        fields[#fields + 1] = like_a_method and format('%s (named like a method: obj:field("%s"))', name, name) or name
      end
      lines[2] = "fields: " .. (#fields > 0 and concat(fields, ", ") or "none")
    end
  else
    local names = members(v, ".")
    lines[1] = (type(v) == "table" or type(v) == "userdata") and (tostring(v) .. ": " .. concat(names, ", "))
      or (type(v) .. " " .. tostring(v))
  end
  return concat(lines, "\n")
end

-- }======================================================


-- a line reader: readline on a terminal when available, else plain lines
local function reader(input, out, env)
  if input == io.stdin and core.isatty(0) then
    local ok, readline = pcall(require, "readline")
    if ok then
      readline.set_options { histfile = "~/.sift_history", completion = true }
      readline.set_complete_function(function(text, from, to)
        return M.complete(env, text:sub(from, to))
      end)
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
  local env = setmetatable({ heap = heap, sift = require "sift" }, { __index = _G })
  local read, interactive = reader(opts.input or io.stdin, out, env)
  --- help(), help(x): what the prompt, or x, offers
  env.help = function(...)
    out:write(M.help(...), "\n")
  end
  -- ids print in hex: an integer that is the id of an object of this dump
  local function is_id(n) return n > 0 and heap.index:find(n) ~= nil end
  env.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do
      local v = select(i, ...)
      parts[i] = math.type(v) == "integer" and is_id(v) and format("0x%x", v) or tostring(v)
    end
    out:write(concat(parts, "\t"), "\n")
  end
  --- show(obj): an object's fields, one a line
  env.show = function(obj)
    out:write(tostring(obj), "\n")
    if type(obj) == "userdata" and obj.fields then
      for name, value, class in obj:fields() do
        out:write(format("  %-24s %s  (%s)\n", name, M.pretty(value, 1, is_id), class.name))
      end
    end
  end
  if interactive then
    local info = heap:info()
    out:write(format("sift %s: %s, %d objects, %d classes. 'heap' is bound; help() says what it offers; "
      .. "Ctrl-D quits.\n", require("sift")._VERSION, heap.path, info.objects, info.classes))
  end
  local chunk = nil
  while true do
    local line = read(chunk and ">> " or "> ")
    if line == nil then break end
    chunk = chunk and chunk .. "\n" .. line or line
    local fn, msg = load("return " .. chunk, "=repl", "t", env)
    if not fn then fn, msg = load(chunk, "=repl", "t", env) end
    if fn or not msg:match("<eof>$") then  -- (else an unfinished statement: keep reading)
      chunk = nil
      if not fn then
        err:write("syntax error: ", msg, "\n")
      else
        local results = table.pack(xpcall(fn, function(e) return tostring(e) end))
        if not results[1] then
          err:write("error: ", results[2], "\n")
        elseif results.n > 1 then
          local parts = {}
          for i = 2, results.n do parts[#parts + 1] = M.pretty(results[i], nil, is_id) end
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
