--- The trace commands of `sift`: profile, fold, calls, export, flame and
-- diff over Android method traces.
-- @module sift.cli.trace

local sift = require "sift"
local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }
local commands = M.commands

local EXIT_OK, EXIT_BAD_INPUT, printable, with_progress, say_failure, group_digits, try, open_output, budget_option =
  common.EXIT_OK, common.EXIT_BAD_INPUT, common.printable, common.with_progress, common.say_failure, common.group_digits,
  common.try, common.open_output, common.budget_option

local function trace_options(cmd)
  cmd:argument("file", "An Android method trace (regular or streaming .trace).")
  cmd:option("--clock", "Which clock: cpu (thread CPU time) or wall.", "cpu"):choices { "cpu", "wall" }
  cmd:option("--thread", "Only this thread (a name or a tid); repeat for several."):count("*")
  budget_option(cmd)
end

local function flame_options(cmd)
  cmd:option("-o --output", "The SVG file to write.", "flame.svg")
  cmd:option("--title", "Title at the top.")
  cmd:option("--width", "Width in pixels.", "1200"):convert(tonumber)
  cmd:option("--minwidth", "Leave out frames narrower than this many pixels.", "0.1"):convert(tonumber)
  cmd:option("--countname", "What the counts are.", "µs")
  cmd:option("--colors", "Palette: java (app green, framework blue, JDK orange) or hot.", "java")
    :choices { "java", "hot" }
  cmd:flag("--hash", "Colour by a hash of the name (the same colours from run to run).")
end

function M.define.profile(parser)
  local prof = parser:command("profile", "Per-method times of an Android method trace, as dmtracedump's table.")
  trace_options(prof)
  prof:option("-n --top", "Methods to list (0: all).", "30"):convert(tonumber)
  prof:flag("--json", "Print JSON: {clock, threads, records, methods: [{name, calls, recursive_calls, "
    .. "inclusive, exclusive}]} in µs, largest exclusive time first.")
end

function M.define.fold(parser)
  local fold = parser:command("fold", "Folded stacks of an Android method trace (flamegraph.pl's input).")
  trace_options(fold)
  fold:option("--exclude", "Fold frames whose class.method matches this Lua pattern into their caller; "
    .. "repeat for several."):count("*")
  fold:option("--include", "Keep only frames that match this Lua pattern; repeat for several."):count("*")
  fold:flag("--merge", "Merge the threads into one graph (default: each thread is its own first frame).")
  fold:flag("--collapse-recursion", "Show recursion once: a frame that calls its own method folds into it.")
  fold:option("--max-depth", "End a stack deeper than N frames in one frame '[… M frames]' holding the M "
    .. "calls below and their time (0: no cap).", "1024"):convert(tonumber)
  fold:option("-o --output", "Write to this file instead of standard output.")
end

function M.define.calls(parser)
  local calls = parser:command("calls", "A thread's calls in order, indented, with loops shown once "
    .. "and counted (×250).")
  calls:argument("file", "An Android method trace.")
  calls:option("--thread", "The thread (a name or a tid; default: the first with records).")
  calls:option("--depth", "Levels to show."):convert(tonumber)
  calls:option("--exclude", "Fold calls whose class.method matches this Lua pattern into their caller; "
    .. "repeat for several."):count("*")
  calls:option("--include", "Show only calls that match this Lua pattern; repeat for several."):count("*")
end

function M.define.export(parser)
  local export = parser:command("export", "Write an Android method trace as speedscope or Chrome "
    .. "trace-event JSON (Perfetto UI).")
  trace_options(export)
  export:option("--format", "speedscope or chrome.", "speedscope"):choices { "speedscope", "chrome" }
  export:option("-o --output", "The file to write (default: standard output).")
end

function M.define.flame(parser)
  local flame = parser:command("flame", "An interactive SVG flame graph of an Android method trace "
    .. "(or of folded stacks).")
  trace_options(flame)
  flame_options(flame)
  flame:flag("--inverted", "Icicle graph: roots at the top.")
  flame:option("--max-depth", "End a stack deeper than N frames in one frame '[… deeper calls]' (0: no cap).",
    "1024"):convert(tonumber)
  flame:flag("--merge", "Merge the threads into one graph (default: one tower per thread).")
  flame:flag("--flamechart", "A flame chart: one thread's calls at their time, left to right "
    .. "(--thread, default the busiest).")
end

function M.define.diff(parser)
  local diff = parser:command("diff", "A differential flame graph: red grew from A to B, blue shrank.")
  diff:argument("before", "The trace (or folded stacks) before.")
  diff:argument("after", "The trace (or folded stacks) after.")
  diff:option("--clock", "Which clock: cpu or wall.", "cpu"):choices { "cpu", "wall" }
  diff:option("--thread", "Only this thread (a name or a tid); repeat for several."):count("*")
  flame_options(diff)
end

local function trace_or_report(args, err)
  local t, msg, code = with_progress(args, args.file, function(update)
    return sift.open(args.file, { progress = update })
  end)
  if t and getmetatable(t) ~= require("sift.trace").Trace then
    t:close()
    t, msg = nil, args.file .. ": not an Android method trace"
  end
  if not t then say_failure(err, args.file, msg, code) return nil end
  for _, w in ipairs(t:info().warnings) do err:write("sift: ", printable(args.file), ": warning: ", w, "\n") end
  return t
end

local function threads_option(args)
  return #args.thread > 0 and args.thread or nil
end

-- fn(...), with a Lua error in it (a bad option, such as a clock the trace
-- lacks) said on err as "sift: PATH: message"; nil then

local function min_fraction(args)
  return (args.minwidth or 0) / math.max(1, (args.width or 1200) - 20)
end

function commands.profile(args, out, err)
  local trace <close> = trace_or_report(args, err)
  if not trace then return EXIT_BAD_INPUT end
  local rows = try(err, args.file, trace.profile, trace, { clock = args.clock })
  if not rows then return EXIT_BAD_INPUT end
  local info = trace:info()
  if args.json then
    out:write(json.encode { clock = args.clock, threads = info.threads, records = info.records, methods = json.array(rows) }, "\n")
    return EXIT_OK
  end
  local toplevel = trace:toplevel { clock = args.clock }
  local total = toplevel
  for _, r in ipairs(rows) do total = total + r.exclusive end
  -- dmtracedump's "(toplevel)": time with no method on a thread's stack
  local shown = { { name = "(toplevel)", exclusive = toplevel, inclusive = total, calls = 0, recursive_calls = 0 } }
  for _, r in ipairs(rows) do shown[#shown + 1] = r end
  table.sort(shown, function(a, b)
    if a.exclusive ~= b.exclusive then return a.exclusive > b.exclusive end
    return a.name < b.name
  end)
  out:write(("%s: %s clock, %s records, %d threads, %d methods (%d unnamed), %s µs in all\n"):format(
    args.file, args.clock, group_digits(info.records), info.threads, info.methods, info.unknown_methods,
    group_digits(total)))
  if info.orphan_exits + info.mismatched_exits > 0 then
    out:write(("exits with no entry (tracing began mid-call): %d; exits that skipped frames: %d\n"):format(
      info.orphan_exits, info.mismatched_exits))
  end
  out:write(("\n%12s %7s %12s %7s %12s  %s\n"):format("excl µs", "excl %", "incl µs", "incl %", "calls+rec", "method"))
  for i, r in ipairs(shown) do
    if args.top > 0 and i > args.top then break end
    local pct = function(v) return total > 0 and ("%6.2f%%"):format(100 * v / total) or "      -" end
    out:write(("%12s %7s %12s %7s %12s  %s\n"):format(group_digits(r.exclusive), pct(r.exclusive),
      group_digits(r.inclusive), pct(r.inclusive), r.calls .. "+" .. r.recursive_calls, r.name))
  end
  return EXIT_OK
end


function commands.fold(args, out, err)
  local trace <close> = trace_or_report(args, err)
  if not trace then return EXIT_BAD_INPUT end
  local file = open_output(args, out, err)
  if not file then return EXIT_BAD_INPUT end
  local text = try(err, args.file, trace.fold, trace, { clock = args.clock, thread = threads_option(args),
    merge = args.merge, exclude = #args.exclude > 0 and args.exclude or nil,
    include = #args.include > 0 and args.include or nil, collapse_recursion = args.collapse_recursion,
    max_depth = args.max_depth, file = io.type(file) == "file" and file or nil })
  if type(text) == "string" then file:write(text) end
  if args.output then file:close() end
  return text and EXIT_OK or EXIT_BAD_INPUT
end

function commands.calls(args, out, err)
  local trace <close> = trace_or_report(args, err)
  if not trace then return EXIT_BAD_INPUT end
  local lines, stats = try(err, args.file, trace.calls, trace, { thread = args.thread, depth = args.depth,
    exclude = #args.exclude > 0 and args.exclude or nil, include = #args.include > 0 and args.include or nil })
  if not lines then return EXIT_BAD_INPUT end
  for _, line in ipairs(lines) do out:write(line, "\n") end
  err:write(("sift: thread %s: %s calls in %s lines (%.1f%% shorter)\n"):format(stats.thread,
    group_digits(stats.calls), group_digits(stats.lines),
    stats.calls > 0 and 100 * (1 - stats.lines / stats.calls) or 0))
  return EXIT_OK
end

function commands.export(args, out, err)
  local trace <close> = trace_or_report(args, err)
  if not trace then return EXIT_BAD_INPUT end
  local file = open_output(args, out, err)
  if not file then return EXIT_BAD_INPUT end
  -- written as it is made: a big trace's events are never all in memory
  local done = try(err, args.file, trace[args.format], trace, { clock = args.clock, thread = threads_option(args) },
    file)
  if args.output then file:close() end
  return done and EXIT_OK or EXIT_BAD_INPUT
end

-- a flame tree from a trace, or from a file of folded stacks
local function flame_tree(args, path, err)
  local flame = require "sift.trace.flame"
  local info = sift.detect(path, { bytes = false })
  if info and info.format == "trace" then
    local trace <close> = trace_or_report({ file = path, quiet = args.quiet }, err)
    if not trace then return nil end
    -- frames narrower than --minwidth pixels are never drawn: prune them
    -- while reading the call tree
    return try(err, path, flame.from_trace, trace, { clock = args.clock, thread = threads_option(args),
      merge = args.merge, min_fraction = min_fraction(args), max_depth = args.max_depth })
  end
  local f, msg = io.open(path, "rb")
  if not f then
    err:write("sift: ", msg, "\n")
    return nil
  end
  local text = f:read("a")
  f:close()
  if not text:match("^[^\n]- %d+%s*\n") then
    err:write("sift: ", path, ": neither an Android method trace nor folded stacks\n")
    return nil
  end
  return flame.from_folded(text)
end

local function write_svg(args, tree, default_title, out, err)
  local svg = require("sift.trace.flame").svg(tree, { title = args.title or default_title, width = args.width,
    minwidth = args.minwidth, countname = args.countname, colors = args.colors, hash = args.hash,
    inverted = args.inverted, flamechart = args.flamechart,
    subtitle = args.clock and (args.clock .. " clock") or nil })
  local f = open_output(args, nil, err)
  if not f then return EXIT_BAD_INPUT end
  f:write(svg)
  f:close()
  out:write(("%s: %d bytes, %s %s in all\n"):format(args.output, #svg, group_digits(tree.value), args.countname))
  return EXIT_OK
end

function commands.flame(args, out, err)
  if args.flamechart then
    local trace <close> = trace_or_report(args, err)
    if not trace then return EXIT_BAD_INPUT end
    local tree = try(err, args.file, trace.timeline, trace, { clock = args.clock, thread = args.thread[1],
      min_fraction = min_fraction(args) })
    if not tree then return EXIT_BAD_INPUT end
    return write_svg(args, tree, "Flame Chart", out, err)
  end
  local tree = flame_tree(args, args.file, err)
  if not tree then return EXIT_BAD_INPUT end
  return write_svg(args, tree, args.inverted and "Icicle Graph" or "Flame Graph", out, err)
end

function commands.diff(args, out, err)
  local before = flame_tree(args, args.before, err)
  local after = before and flame_tree(args, args.after, err)
  if not after then return EXIT_BAD_INPUT end
  return write_svg(args, require("sift.trace.flame").diff(before, after), "Differential Flame Graph", out, err)
end

--- Run the command line.
-- @tparam table argv the arguments (without the program name)
-- @tparam[opt] table io_ `out` and `err` streams (default stdout, stderr),
--   `input` (default stdin)
-- @treturn integer exit status

return M
