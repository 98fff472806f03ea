--- Android method traces: call trees, profiles and folded stacks.
--
--     local trace = assert(require("sift").open("startup.trace"))
--     for _, m in ipairs(trace:profile { clock = "cpu" }) do print(m.name, m.exclusive) end
--     io.write(trace:fold { clock = "wall", thread = "main" })
--
-- The decoder and the call trees are C (`sift.core.trace`); the rules the
-- trees follow are in docs/traces.md.
-- @module sift.trace

local core = require "sift.core"

local M = {}

local Trace = {}
Trace.__index = Trace
M.Trace = Trace

local function key_values(text)
  local facts = {}
  for line in text:gmatch("[^\r\n]+") do
    local k, v = line:match("^([%w%-]+)=(.*)$")
    if k then facts[k] = tonumber(v) or v end
  end
  return facts
end

--- Open a trace file.
-- @tparam string path
-- @tparam[opt] table opts `progress` (function(done, total))
-- @return a Trace, or nil, message, code
function M.open(path, opts)
  opts = opts or {}
  local map, err, code = core.map(path)
  if not map then return nil, err, code end
  local t
  t, err, code = core.trace(map, opts.progress)
  if not t then return nil, path .. ": " .. err, code end
  return setmetatable({ core = t, path = path }, Trace)
end

--- Facts: the binary layout, the counts, and the text header's keys
-- (`vm`, `pid`, `elapsed-time-usec`, ...).
function Trace:info()
  local info = self.core:info()
  info.header = key_values(self.core:header())
  info.vm = info.header.vm
  return info
end

-- a method's display name: "com.example.Foo.bar (I)V" (slashes as dots)
local function method_name(m)
  if not m.class then return ("unknown@%#x"):format(m.id) end
  local cls = m.class:gsub("/", ".")
  return cls .. "." .. (m.name or "?") .. (m.signature and (" " .. m.signature) or "")
end
M.method_name = method_name

--- The methods, each with `name` (class.method signature), `class`,
-- `calls`, `recursive_calls`, and `cpu_incl`, `cpu_excl`, `wall_incl`,
-- `wall_excl` in µs. Cached.
function Trace:methods()
  if not self._methods then
    local list = self.core:methods()
    for _, m in ipairs(list) do m.full_name = method_name(m) end
    self._methods = list
  end
  return self._methods
end

--- The threads: `tid`, `name`, `records`, `root` (its call-tree node),
-- `cpu` and `wall` (µs from its first to its last event). Cached.
function Trace:threads()
  if not self._threads then self._threads = self.core:threads() end
  return self._threads
end

-- clock option -> "cpu" | "wall", checked against what the file has
local function clock_of(self, clock)
  clock = clock or "cpu"
  if clock == "thread-cpu" then clock = "cpu" end
  if clock ~= "cpu" and clock ~= "wall" then error(("bad clock '%s' (cpu or wall)"):format(clock), 3) end
  local has = self.core:info().clock
  if has ~= "dual" and (has == "wall") ~= (clock == "wall") then
    error(("this trace has only the %s clock"):format(has), 3)
  end
  return clock
end

--- The per-method profile, largest exclusive time first:
-- `{ name, calls, recursive_calls, inclusive, exclusive }` in µs of the
-- chosen clock. Methods that never ran are left out.
-- @tparam[opt] table opts `clock` ("cpu", default, or "wall")
function Trace:profile(opts)
  opts = opts or {}
  local clock = clock_of(self, opts.clock)
  local out = {}
  for _, m in ipairs(self:methods()) do
    if m.calls + m.recursive_calls > 0 then
      out[#out + 1] = { name = m.full_name, calls = m.calls, recursive_calls = m.recursive_calls,
        inclusive = m[clock .. "_incl"], exclusive = m[clock .. "_excl"] }
    end
  end
  table.sort(out, function(a, b)
    if a.exclusive ~= b.exclusive then return a.exclusive > b.exclusive end
    return a.name < b.name
  end)
  return out
end

--- Time with no method on a thread's stack, summed over the threads
-- (dmtracedump's "(toplevel)").
function Trace:toplevel(opts)
  local clock = clock_of(self, (opts or {}).clock)
  local sum = 0
  for _, th in ipairs(self:threads()) do sum = sum + self.core:node(th.root)[clock .. "_excl"] end
  return sum
end

-- the threads an option names (all when none): a name, a tid, or a list
local function chosen_threads(self, want)
  local all = self:threads()
  if want == nil then return all end
  if type(want) ~= "table" then want = { want } end
  local out = {}
  for _, th in ipairs(all) do
    for _, w in ipairs(want) do
      if th.name == w or th.tid == tonumber(w) then out[#out + 1] = th break end
    end
  end
  return out
end
M.chosen_threads = chosen_threads

--- Folded stacks (Brendan Gregg's format: `a;b;c 123`), self time per
-- stack in µs of the chosen clock.
-- @tparam[opt] table opts `clock` ("cpu" or "wall"), `thread` (a name, a
--   tid or a list of them; default all), `merge` (true: threads share one
--   graph; default: each thread is its own first frame), `exclude` (Lua
--   patterns over "class.method"; those frames fold into their caller),
--   `include` (patterns: keep only frames that match, and the thread)
-- @treturn string
function Trace:fold(opts)
  opts = opts or {}
  local clock = clock_of(self, opts.clock)
  local skip
  if opts.exclude or opts.include then
    skip = {}
    for i, m in ipairs(self:methods()) do
      local name = (m.class or ""):gsub("/", ".") .. "." .. (m.name or "")
      local hide = false
      for _, pat in ipairs(opts.exclude or {}) do
        if name:find(pat) then hide = true end
      end
      if opts.include and not hide then
        hide = true
        for _, pat in ipairs(opts.include) do
          if name:find(pat) then hide = false end
        end
      end
      skip[i] = hide or nil
    end
  end
  local parts = {}
  for _, th in ipairs(chosen_threads(self, opts.thread)) do
    local label = not opts.merge and (th.name or ("thread " .. th.tid)) or nil
    parts[#parts + 1] = self.core:fold(th.root, clock, label, skip)
  end
  local text = table.concat(parts)
  if opts.merge or skip then text = M.merge_folded(text) end
  return text
end

--- Sum the counts of identical stacks in folded text (sorted output).
function M.merge_folded(text)
  local sums, order = {}, {}
  for stack, n in text:gmatch("([^\n]*) (%d+)\n") do
    if not sums[stack] then order[#order + 1] = stack end
    sums[stack] = (sums[stack] or 0) + tonumber(n)
  end
  table.sort(order)
  local out = {}
  for i, stack in ipairs(order) do out[i] = stack .. " " .. sums[stack] end
  return #out > 0 and table.concat(out, "\n") .. "\n" or ""
end

function Trace:close() self.core:close() end
Trace.__close = Trace.close

return M
