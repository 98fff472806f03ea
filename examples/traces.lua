-- A tour of an Android method trace: where the time goes, the main
-- thread's stacks, a flame graph, and the calls in order with loops folded.
--
--   sift run examples/traces.lua startup.trace [out.svg]
local sift = require "sift"
local flame = require "sift.trace.flame"

local path, svg_path = arg[1], arg[2] or "trace-flame.svg"
assert(path, "usage: sift run examples/traces.lua TRACE [OUT.svg]")
local trace <close> = assert(sift.open(path))
local info = trace:info()
print(("%s: version %d%s, %s clock, %d records, %d threads, %d methods"):format(path, info.version,
  info.streaming and " (streaming)" or "", info.clock, info.records, info.threads, info.methods))

-- the five methods with the most time of their own
local clock = info.clock == "wall" and "wall" or "cpu"
print("\nself time, " .. clock .. " clock:")
for i, m in ipairs(trace:profile { clock = clock }) do
  if i > 5 then break end
  print(("%10d µs  %6d calls  %s"):format(m.exclusive, m.calls + m.recursive_calls, m.name))
end

-- the busiest thread's heaviest stacks, without the JDK's frames
local busiest
for _, th in ipairs(trace:threads()) do
  if not busiest or th.records > busiest.records then busiest = th end
end
local stacks = {}
for stack, n in trace:fold { clock = clock, thread = busiest.tid, exclude = { "^java%." } }
    :gmatch("([^\n]*) (%d+)\n") do
  stacks[#stacks + 1] = { stack = stack, n = tonumber(n) }
end
table.sort(stacks, function(a, b) return a.n > b.n end)
print(("\nheaviest stacks of thread %s (JDK frames folded into their callers):"):format(busiest.name or busiest.tid))
for i = 1, math.min(3, #stacks) do
  print(("%10d µs  %s"):format(stacks[i].n, stacks[i].stack:match("[^;]+;[^;]+$") or stacks[i].stack))
end

-- a flame graph from the same call tree
local tree = flame.from_trace(trace, { clock = clock, min_fraction = 0.0001 })
local out = assert(io.open(svg_path, "w"))
out:write(flame.svg(tree, { title = path:match("[^/]+$"), subtitle = clock .. " clock" }))
out:close()
print("\nflame graph: " .. svg_path)

-- what the thread executed, in order, four levels deep
local lines, stats = trace:calls { thread = busiest.tid, depth = 4 }
print(("\n%s's calls, %d of %d lines (loops folded, 4 levels):"):format(busiest.name or busiest.tid,
  math.min(8, #lines), stats.lines))
for i = 1, math.min(8, #lines) do print(lines[i]) end
