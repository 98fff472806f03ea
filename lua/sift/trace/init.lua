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
  -- a regular trace cut at a record boundary reads cleanly: its header's
  -- count of method calls is what tells
  info.warnings = {}
  local expected = tonumber(info.header["num-method-calls"])
  if expected and info.records < expected then
    info.warnings[1] = ("the header counts %d method calls, the file holds %d: it was cut short")
      :format(expected, info.records)
  end
  return info
end

-- a frame's name: class.method with dots (flame graphs, listings, patterns)
local function frame_name(m)
  if not m.class then return ("unknown@%#x"):format(m.id) end
  return m.class:gsub("/", ".") .. "." .. (m.name or "?")
end

-- a method's display name: "com.example.Foo.bar (I)V"
local function method_name(m)
  return frame_name(m) .. (m.class and m.signature and (" " .. m.signature) or "")
end

-- does a frame pass the include/exclude patterns (Lua patterns over its name)?
local function shown(name, opts)
  for _, pat in ipairs(opts.exclude or {}) do
    if name:find(pat) then return false end
  end
  if opts.include then
    for _, pat in ipairs(opts.include) do
      if name:find(pat) then return true end
    end
    return false
  end
  return true
end

--- The methods, each with `full_name` (class.method signature), `frame`
-- (class.method), `class`, `name`, `signature`,
-- `calls`, `recursive_calls`, and `cpu_incl`, `cpu_excl`, `wall_incl`,
-- `wall_excl` in µs. Cached.
function Trace:methods()
  if not self._methods then
    local list = self.core:methods()
    for _, m in ipairs(list) do m.full_name, m.frame = method_name(m), frame_name(m) end
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

--- Stacks deeper than this many frames end in one frame when folded.
M.MAX_DEPTH = 1024

--- Folded stacks (Brendan Gregg's format: `a;b;c 123`), self time per
-- stack in µs of the chosen clock.
-- @tparam[opt] table opts `clock` ("cpu" or "wall"), `thread` (a name, a
--   tid or a list of them; default all), `merge` (true: threads share one
--   graph; default: each thread is its own first frame), `exclude` (Lua
--   patterns over "class.method"; those frames fold into their caller),
--   `include` (patterns: keep only frames that match, and the thread),
--   `collapse_recursion` (a frame calling its own method folds into it),
--   `max_depth` (frames; default 1024, 0: none: a deeper stack ends in one
--   frame `[… N frames]` holding the N calls below and their time),
--   `file` (an open file: write there, and return true)
-- @treturn string
function Trace:fold(opts)
  opts = opts or {}
  local clock = clock_of(self, opts.clock)
  local skip
  if opts.exclude or opts.include then
    skip = {}
    for i, m in ipairs(self:methods()) do skip[i] = not shown(m.frame, opts) or nil end
  end
  local direct = opts.file and not opts.merge and not skip and not opts.collapse_recursion
  -- (otherwise equal stacks must be summed first)
  local parts = {}
  for _, th in ipairs(chosen_threads(self, opts.thread)) do
    local label = not opts.merge and (th.name or ("thread " .. th.tid)) or nil
    parts[#parts + 1] = self.core:fold(th.root, clock, label, skip, direct and opts.file or nil,
      opts.collapse_recursion, opts.max_depth or M.MAX_DEPTH)
  end
  if direct then return true end
  local text = table.concat(parts)
  if opts.merge or skip or opts.collapse_recursion then text = M.merge_folded(text) end
  if opts.file then
    opts.file:write(text)
    return true
  end
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

--- {======================================================
-- Loop-collapsed call listings
-- =======================================================

-- runs at one level: { start, length, times } covering a list of calls
-- by their shapes
local function runs(shapes, max_period)
  local out, i, n = {}, 1, #shapes
  while i <= n do
    local best_len, best_times = 1, 1
    for len = 1, math.min(max_period, (n - i + 1) // 2) do
      local times = 1
      while i + (times + 1) * len - 1 <= n do
        local same = true
        for k = 0, len - 1 do
          if shapes[i + times * len + k] ~= shapes[i + k] then same = false break end
        end
        if not same then break end
        times = times + 1
      end
      if times >= 2 and times * len > best_times * best_len then best_len, best_times = len, times end
    end
    out[#out + 1] = { start = i, length = best_len, times = best_times }
    i = i + best_len * best_times
  end
  return out
end

-- The calls a thread made, in order, as steps: `{ call = name, depth,
-- times }` (a call, made times times in a row), `{ loop = times, depth }`
-- and `{ loop_end = true, depth }` around a repeated sequence of calls (a
-- loop) shown once. Returns the steps, the thread and C's call tree (to
-- be closed).
local function call_steps(self, opts)
  local th = chosen_threads(self, opts.thread)[1]
  if opts.thread == nil then
    for _, t in ipairs(self:threads()) do
      if t.records > 0 then th = t break end
    end
  end
  if not th then error(("no thread '%s' in this trace"):format(tostring(opts.thread)), 3) end
  local depth_limit = opts.depth or math.huge
  -- the call instances, in C: hidden frames give their calls to their caller
  local names, hidden = {}, {}
  for i, m in ipairs(self:methods()) do
    names[i] = m.frame
    hidden[i] = not shown(m.frame, opts) or nil
  end
  local tree = self.core:call_tree(th.tid, (opts.include or opts.exclude) and hidden or nil, opts.depth)
  -- what to do next, last first: a step, or lay out a list of calls
  local steps = {}
  local todo = { { node = 0, depth = 1 } }
  while #todo > 0 do
    local a = table.remove(todo)
    if a.step then
      steps[#steps + 1] = a.step
    elseif a.depth <= depth_limit then
      local nodes, ms, shapes = tree:children(a.node)
      local acts = {}
      for _, run in ipairs(runs(shapes, opts.period or 8)) do
        local times = run.times
        if run.length == 1 then
          local k = run.start
          acts[#acts + 1] = { step = { call = names[ms[k]], depth = a.depth, times = times } }
          acts[#acts + 1] = { node = nodes[k], depth = a.depth + 1 }
        else
          acts[#acts + 1] = { step = { loop = times, depth = a.depth } }
          for k = run.start, run.start + run.length - 1 do
            acts[#acts + 1] = { step = { call = names[ms[k]], depth = a.depth, times = 1, in_loop = true } }
            acts[#acts + 1] = { node = nodes[k], depth = a.depth + 1 }
          end
          acts[#acts + 1] = { step = { loop_end = true, depth = a.depth } }
        end
      end
      for k = #acts, 1, -1 do todo[#todo + 1] = acts[k] end
    end
  end
  return steps, th, tree
end

--- The calls a thread made, in order, as an indented listing in which a
-- repeated sequence of calls at one level (a loop) is shown once with its
-- count (`×250`).
-- @tparam table opts `thread` (a name or tid; default the first with
--   records), `depth` (levels to show; default all), `include` /
--   `exclude` (Lua patterns over class.method), `period` (longest loop
--   body, in calls, to look for; 8)
-- @return lines (a list of strings), and `{ calls, lines, shown_calls }`
function Trace:calls(opts)
  opts = opts or {}
  local steps, th, tree <close> = call_steps(self, opts)
  local lines, shown_calls = {}, 0
  for _, st in ipairs(steps) do
    -- past 64 levels the depth is written, not drawn: lines stay short
    local indent = ("  "):rep(math.min(st.depth, 65) - 1)
    if st.depth > 65 then indent = indent .. ("[%d] "):format(st.depth) end
    if st.loop then
      lines[#lines + 1] = indent .. "┌ ×" .. st.loop
    elseif st.loop_end then
      lines[#lines + 1] = indent .. "└"
    else
      lines[#lines + 1] = indent .. (st.in_loop and "│ " or "") .. st.call .. (st.times > 1 and (" ×" .. st.times) or "")
      shown_calls = shown_calls + 1
    end
  end
  return lines, { thread = th.name or th.tid, calls = tree:calls(), lines = #lines, shown_calls = shown_calls }
end

--- The same calls as steps, for replaying them (the Control Flow Tracer's
-- play mode): `{ call, depth, times, in_loop }`, `{ loop, depth }` and
-- `{ loop_end, depth }` in order (see `calls` for opts), and the thread.
function Trace:call_steps(opts)
  opts = opts or {}
  local steps, th, tree <close> = call_steps(self, opts)
  return steps, { tid = th.tid, name = th.name, calls = tree:calls() }
end

--- How many calls each thread made (its call instances, as `calls`
-- counts them): `{ [tid] = n }`, threads without records left out. Cached.
function Trace:thread_calls()
  if not self._thread_calls then
    local out = {}
    for _, th in ipairs(self:threads()) do
      if th.records > 0 then
        local tree <close> = self.core:call_tree(th.tid)
        out[th.tid] = tree:calls()
      end
    end
    self._thread_calls = out
  end
  return self._thread_calls
end

-- }======================================================

--- {======================================================
-- Exports: speedscope and Chrome trace events
-- =======================================================

-- a thread's records as balanced open/close events: exits with no entry
-- are dropped, an exit closes the frames above its entry, frames still
-- open close at the last time. fn(kind "O"|"C", method, time)
local function balanced(self, tid, clock, fn)
  local events, times = self.core:events(tid, 0, clock)
  local stack, last = {}, nil
  for i, e in ipairs(events) do
    local t = times[i]
    if last and t < last then t = last end  -- times never go back
    last = t
    if e > 0 then
      stack[#stack + 1] = e
      fn("O", e, t)
    else
      local d = #stack
      while d > 0 and stack[d] ~= -e do d = d - 1 end
      if d > 0 then
        for k = #stack, d, -1 do
          fn("C", stack[k], t)
          stack[k] = nil
        end
      end
    end
  end
  for k = #stack, 1, -1 do fn("C", stack[k], last) end
end

--- One thread's calls on its time axis, for flame charts: a tree of call
-- instances in time order, each with `start` (from the thread's first
-- event) and `value` (its duration); calls shorter than `min_fraction` of
-- the thread's span are left in their caller.
-- @tparam table opts `clock`, `thread` (default: the one with most records),
--   `min_fraction`
function Trace:timeline(opts)
  opts = opts or {}
  local clock = clock_of(self, opts.clock)
  local th = opts.thread and chosen_threads(self, opts.thread)[1]
  if not th then
    for _, t in ipairs(self:threads()) do
      if not th or t.records > th.records then th = t end
    end
  end
  if opts.thread and not th then error(("no thread '%s' in this trace"):format(tostring(opts.thread)), 2) end
  local methods = self:methods()
  local root = { name = th.name or ("thread " .. th.tid), start = 0, value = 0, children = {}, thread = true }
  local open, t0, t1 = { root }, nil, 0
  balanced(self, th.tid, clock, function(kind, m, t)
    t0 = t0 or t
    t1 = t
    if kind == "O" then
      local node = { name = methods[m].frame, start = t - t0, children = {} }
      open[#open + 1] = node
    else
      local node = table.remove(open)
      node.value = t - t0 - node.start
      local parent = open[#open]
      parent.children[#parent.children + 1] = node
    end
  end)
  root.value = t1 - (t0 or 0)
  local min = (opts.min_fraction or 0) * root.value
  local todo = { root }  -- no recursion: call trees can be deeper than Lua's stack
  while #todo > 0 do
    local node, kept = table.remove(todo), {}
    for _, c in ipairs(node.children) do
      if c.value > 0 and c.value >= min then
        kept[#kept + 1] = c
        todo[#todo + 1] = c
      end
    end
    node.children = kept
  end
  return root
end

-- where an export's events go: a list (returned in a table), or JSON
-- text written to a file as they come, so that a big trace's export never
-- holds its events in memory
local function event_sink(file)
  if not file then
    local list = {}
    return function(ev) list[#list + 1] = ev end, list
  end
  local json, first = require "sift.json", true
  return function(ev)
    file:write(first and "" or ",", json.encode(ev))
    first = false
  end
end

--- The trace as a speedscope file (one evented profile per thread).
-- @tparam[opt] table opts `clock`, `thread`
-- @param[opt] file an open file: the JSON is written there as it is made
--   (and true returned)
-- @return a table to encode as JSON (or true)
function Trace:speedscope(opts, file)
  opts = opts or {}
  local json = require "sift.json"
  local clock = clock_of(self, opts.clock)
  local frames, index = {}, {}
  local methods = self:methods()
  local profiles = {}
  if file then  -- (object members in any order: the frames, known at the end, come last)
    file:write('{"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"sift",',
      '"activeProfileIndex":0,"name":', json.encode(self.path), ',"profiles":[')
  end
  local nprofiles = 0
  for _, th in ipairs(chosen_threads(self, opts.thread)) do
    if th.records > 0 then
      local name = th.name or ("thread " .. th.tid)
      local emit, events, first, last
      balanced(self, th.tid, clock, function(kind, m, t)
        if not index[m] then
          local meth = methods[m]
          frames[#frames + 1] = { name = meth.full_name, file = meth.source, line = tonumber(meth.line) }
          index[m] = #frames - 1
        end
        if not emit then  -- the profile starts with its first event
          emit, events = event_sink(file)
          if file then
            file:write(nprofiles > 0 and "," or "", '{"type":"evented","unit":"microseconds","name":',
              json.encode(name), ',"events":[')
          end
          nprofiles = nprofiles + 1
        end
        first = first or t
        last = t
        emit { type = kind, frame = index[m], at = t }
      end)
      if file and emit then
        file:write(('],"startValue":%d,"endValue":%d}'):format(first, last))
      elseif emit then
        profiles[#profiles + 1] = { type = "evented", name = name, unit = "microseconds",
          startValue = first, endValue = last, events = events }
      end
    end
  end
  if file then
    file:write('],"shared":{"frames":', json.encode(json.array(frames)), "}}\n")
    return true
  end
  return { ["$schema"] = "https://www.speedscope.app/file-format-schema.json", shared = { frames = frames },
    profiles = profiles, name = self.path, exporter = "sift", activeProfileIndex = 0 }
end

--- The trace as Chrome trace-event JSON (B/E events in µs), which
-- Perfetto UI and chrome://tracing load.
-- @param[opt] file an open file: the JSON is written there as it is made
--   (and true returned)
function Trace:chrome(opts, file)
  opts = opts or {}
  local clock = clock_of(self, opts.clock)
  local methods = self:methods()
  local pid = tonumber(self:info().header.pid) or 1
  local emit, out = event_sink(file)
  if file then file:write('{"displayTimeUnit":"ms","traceEvents":[') end
  for _, th in ipairs(chosen_threads(self, opts.thread)) do
    if th.records > 0 then
      emit { name = "thread_name", ph = "M", pid = pid, tid = th.tid, args = { name = th.name } }
      balanced(self, th.tid, clock, function(kind, m, t)
        emit { name = methods[m].full_name, ph = kind == "O" and "B" or "E", ts = t, pid = pid, tid = th.tid }
      end)
    end
  end
  if file then
    file:write("]}\n")
    return true
  end
  return { traceEvents = out, displayTimeUnit = "ms" }
end

-- }======================================================

function Trace:close() self.core:close() end
Trace.__close = Trace.close

return M
