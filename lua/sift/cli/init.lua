--- The `sift` command line: subcommands over the library.
-- Exit status: 0 ok, 1 bad input, 2 bad usage. Errors are one line on
-- stderr; progress bars appear only when stderr is a terminal.
-- @module sift.cli

local argparse = require "argparse"
local sift = require "sift"
local json = require "sift.json"
local csv = require "sift.csv"
local progress = require "sift.progress"
local size = require "sift.size"
local finance_cli = require "sift.cli.finance"

local M = {}

local EXIT_OK, EXIT_BAD_INPUT, EXIT_USAGE = 0, 1, 2

local function build_parser()
  local parser = argparse("sift")
    :description("Decode and analyse heap dumps (HPROF, BMD), Android method "
      .. "traces and OFX bank statements.")
    :epilog("Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
      .. "Run 'sift <command> --help' for the options of a command.")
    :command_target("command")
  parser:flag("--version", "Print the version and exit.")
    :action(function()
      io.stdout:write("sift ", sift._VERSION, "\n")
      os.exit(EXIT_OK)
    end)
  parser:flag("-q --quiet", "Draw no progress bars.")

  local info = parser:command("info", "Detect the format of each FILE and print the facts of its header.")
    :description("Detect the format of each FILE (HPROF, BMD, Android method trace, OFX; "
      .. "gzip or bzip2 compressed) and print the facts of its header.\n"
      .. "Exits 1 when a file is unreadable, unrecognised or damaged.")
  info:argument("file", "A dump, trace or statement."):args("+")
  info:flag("--json", "Print JSON: an object for one FILE, an array for several.")
  info:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  info:flag("--header", "Only detect the format and read the header; do not index heap dumps.")
  info:option("--source", "For a BMD file: the HPROF it was crunched from, to show the size ratio.")

  -- the memory budget, on every command that reads a big file (the
  -- others run under the default one)
  local function budget_option(cmd)
    cmd:option("--max-memory", "Fail with a message, rather than be killed, when the work needs more "
      .. "than SIZE of memory besides the mapped file (e.g. 512M, 4G; 0: no budget). Default: 3/4 of the "
      .. "machine's (or the cgroup's) memory.")
  end

  local function heap_options(cmd)
    cmd:argument("file", "A heap dump: HPROF (plain, .gz or .bz2) or BMD.")
    cmd:option("--mapping", "A ProGuard/R8 mapping file to deobfuscate class and field names.")
    cmd:option("--strings", "For a BMD dump: a jar, apk, dex or class file to recover hashed names "
      .. "from; repeat for several."):count("*")
    cmd:option("--dump", "Which heap dump to use when the file holds several (1-based; default the last).")
      :convert(tonumber)
    cmd:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
    budget_option(cmd)
  end

  local histogram = parser:command("histogram", "Count instances and shallow bytes per class of a heap dump.")
  heap_options(histogram)
  histogram:option("--top", "Show only the N largest rows (0: all).", "20"):convert(tonumber)
  histogram:flag("--json", "Print JSON (format, counts, roots by kind, rows).")
  histogram:option("--model", "Sizes: shark (the dump's), jvm (what the JVM allocated, as its "
    .. "GC.class_histogram counts; class mirrors in a java.lang.Class row) or visualvm.", "shark")
    :choices { "shark", "jvm", "visualvm" }

  local repl = parser:command("repl", "Explore a heap dump at an interactive Lua prompt, with 'heap' bound.")
  heap_options(repl)

  local function model_option(cmd)
    cmd:option("--model", "Size model: shark (the dump's sizes), jvm (what the JVM allocated: headers, "
      .. "compressed references, field layout, as GC.class_histogram) or visualvm (VisualVM's rule).",
      "shark"):choices { "shark", "jvm", "visualvm" }
  end

  local path = parser:command("path", "Show the shortest strong path from a GC root to each instance of a class.")
  heap_options(path)
  path:option("--class", "The class whose instances to explain (dotted name)."):count(1)
  path:option("--limit", "At most this many instances (0: all).", "20"):convert(tonumber)
  path:flag("--retained", "Also compute retained sizes (builds the dominator tree).")
  model_option(path)
  path:flag("--json", "Print JSON: a list of {id, class, shallow, retained?, root, path}.")
  path:flag("--full", "Show every step; by default a run of objects of one class held by the same "
    .. "reference (a linked list's next) is one step with its count.")
  path:flag("--merge", "Merge the paths where they share a prefix, as MAT's 'merge shortest paths to "
    .. "GC roots': a tree with how many of the instances lie below each step.")

  local top = parser:command("top", "List the objects that retain the most memory.")
  heap_options(top)
  top:option("-n --n", "How many objects.", "20"):convert(tonumber)
  model_option(top)
  top:flag("--json", "Print JSON: a list of {id, class, shallow, retained, inside}.")
  top:flag("--flat", "List the largest retainers as they come, even when one holds another (a dominator "
    .. "chain then fills several rows); by default each row is an object only the GC roots dominate, with "
    .. "the chain of large objects inside it folded into its row.")

  local leaks = parser:command("leaks", "Find leaking objects and explain them as LeakCanary does.")
  heap_options(leaks)
  leaks:option("--finder", "Which objects should be dead: keyed (KeyedWeakReference), android (destroyed "
    .. "Activities, Fragments, ViewModels) or all.", "all"):choices { "keyed", "android", "all" }
  leaks:option("--where", "Treat instances for which this Lua expression is true as leaking; 'obj' is the "
    .. "object (e.g. \"obj.mDestroyed\"). With --class, only that class's instances are tested.")
  leaks:option("--class", "With --where: the class whose instances to test.")
  leaks:flag("--json", "Print JSON (application_leaks, library_leaks, unreachable, suspects, metadata).")
  leaks:option("--html", "Also write a self-contained HTML report to this file.")
  leaks:flag("--suspects", "Also report MAT-style leak suspects: what holds more than a tenth of the heap.")
  leaks:option("--matchers", "A Lua file returning { ignored = {...}, library = {...} }: references of "
    .. "your own to leave off leak traces or to report as library leaks ({ class, field }, { class, static }, "
    .. "{ thread }, { root_class }; see docs/leaks.md).")
  leaks:flag("--no-known", "Leave out the catalogue of known Android and vendor leaks (sift.heap.known_leaks): "
    .. "their traces then count as application leaks.")

  local crunch = parser:command("crunch", "Crunch an HPROF heap dump into a BMD (Badoo Memory Dump): "
    .. "ids renumbered, strings hashed, primitive data dropped.")
  crunch:argument("input", "The HPROF heap dump (4- or 8-byte ids; 1.0.1 to 1.0.3).")
  crunch:argument("output", "The BMD file to write.")
  crunch:option("--keep", "Keep strings that start with this prefix as text (beyond java.lang and the "
    .. "primitive type names); repeat for several."):count("*")
  crunch:flag("--keep-primitives", "Keep the primitive fields of every class (BMD keeps them only for "
    .. "classes whose names stay text).")
  crunch:flag("--json", "Print the counts as JSON.")
  crunch:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  budget_option(crunch)

  local decrunch = parser:command("decrunch", "Turn a BMD back into an HPROF other analysers open.")
  decrunch:argument("input", "The BMD file.")
  decrunch:argument("output", "The HPROF file to write (4-byte ids).")
  decrunch:option("--strings", "A jar, apk, dex or class file to recover hashed names from; repeat "
    .. "for several."):count("*")
  decrunch:flag("--json", "Print the counts as JSON.")
  decrunch:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  budget_option(decrunch)
  decrunch:option("--max-output", "Refuse, before writing, an HPROF bigger than SIZE (e.g. 8G; 0: no cap). "
    .. "Default: 256M plus 1000 times the BMD's size (BMD drops primitive arrays, written back as zeros).")

  local ofxcmd = parser:command("ofx", "Read OFX/QFX bank statements: a summary per statement, or the "
    .. "transactions as JSON or CSV.")
  ofxcmd:argument("file", "An OFX or QFX file (v1 SGML, v2 XML, or no header)."):args("+")
  ofxcmd:flag("--json", "Print JSON: {version, statements, signon, status, warnings} per file "
    .. "(an array for several files); amounts are exact decimal strings, dates ISO 8601.")
  ofxcmd:flag("--csv", "Print the transactions as CSV (one header row for all files).")
  ofxcmd:flag("--strict", "Fail on the first problem (line and column) instead of reading on with warnings.")
  budget_option(ofxcmd)

  local function trace_options(cmd)
    cmd:argument("file", "An Android method trace (regular or streaming .trace).")
    cmd:option("--clock", "Which clock: cpu (thread CPU time) or wall.", "cpu"):choices { "cpu", "wall" }
    cmd:option("--thread", "Only this thread (a name or a tid); repeat for several."):count("*")
    budget_option(cmd)
  end
  local prof = parser:command("profile", "Per-method times of an Android method trace, as dmtracedump's table.")
  trace_options(prof)
  prof:option("-n --top", "Methods to list (0: all).", "30"):convert(tonumber)
  prof:flag("--json", "Print JSON: {clock, threads, records, methods: [{name, calls, recursive_calls, "
    .. "inclusive, exclusive}]} in µs, largest exclusive time first.")

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

  local calls = parser:command("calls", "A thread's calls in order, indented, with loops shown once "
    .. "and counted (×250).")
  calls:argument("file", "An Android method trace.")
  calls:option("--thread", "The thread (a name or a tid; default: the first with records).")
  calls:option("--depth", "Levels to show."):convert(tonumber)
  calls:option("--exclude", "Fold calls whose class.method matches this Lua pattern into their caller; "
    .. "repeat for several."):count("*")
  calls:option("--include", "Show only calls that match this Lua pattern; repeat for several."):count("*")

  local export = parser:command("export", "Write an Android method trace as speedscope or Chrome "
    .. "trace-event JSON (Perfetto UI).")
  trace_options(export)
  export:option("--format", "speedscope or chrome.", "speedscope"):choices { "speedscope", "chrome" }
  export:option("-o --output", "The file to write (default: standard output).")

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

  local diff = parser:command("diff", "A differential flame graph: red grew from A to B, blue shrank.")
  diff:argument("before", "The trace (or folded stacks) before.")
  diff:argument("after", "The trace (or folded stacks) after.")
  diff:option("--clock", "Which clock: cpu or wall.", "cpu"):choices { "cpu", "wall" }
  diff:option("--thread", "Only this thread (a name or a tid); repeat for several."):count("*")
  flame_options(diff)

  local doms = parser:command("dominators", "Print the dominator tree: what holds the memory, indented.")
  heap_options(doms)
  doms:option("--depth", "Levels to show.", "3"):convert(tonumber)
  doms:option("--min", "Hide subtrees under this percentage of the reachable heap.", "1"):convert(tonumber)
  model_option(doms)
  finance_cli.add(parser)
  return parser
end

-- the order facts are listed in; others follow alphabetically
local FACT_ORDER = {
  "format", "variant", "compressed", "version", "id_size", "time", "timestamp_ms",
  "hprof_header", "clock", "vm", "pid", "threads", "methods", "records",
  "num_method_calls", "record_size", "data_offset", "elapsed_time_us",
  "start_time_us", "header", "encoding", "charset", "security", "data",
  "body_offset", "header_size", "size", "source_bytes", "ratio", "objects", "classes", "instances",
  "object_arrays", "primitive_arrays", "strings", "hashed_strings", "legacy", "legacy_tags", "roots", "heaps", "dumps", "dump",
  "duplicates", "missing_classes", "truncated_at", "warnings",
}
local HIDDEN = { path = true, description = true, problem = true, problem_code = true }

local function ordered_facts(info)
  local rank, keys = {}, {}
  for i, k in ipairs(FACT_ORDER) do rank[k] = i end
  for k in pairs(info) do
    if not HIDDEN[k] then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ra, rb = rank[a] or math.huge, rank[b] or math.huge
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  return keys
end

-- text copied from a file: control bytes shown as escapes
local function printable(v)
  return (tostring(v):gsub("%c", function(c) return ("\\x%02x"):format(c:byte()) end))
end

-- a table fact on one line: "a=1, b=2" (keys sorted), or a list
local function inline(v, nested)
  if type(v) ~= "table" then return printable(v) end
  if nested then return "{" .. inline(v) .. "}" end
  if #v > 0 then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = inline(x, true) end
    return table.concat(parts, "; ")
  end
  local keys, parts = {}, {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = k .. "=" .. inline(v[k], true) end
  return table.concat(parts, ", ")
end

local function print_info(out, path, info)
  out:write(printable(path), ": ", printable(info.description), "\n")
  for _, k in ipairs(ordered_facts(info)) do
    out:write(("  %-22s %s\n"):format(k, inline(info[k])))
  end
  if info.problem then
    out:write(("  %-22s %s\n"):format("problem", printable(info.problem)))
  end
end

local commands = {}

-- run fn(progress) with a progress bar labelled `label` when allowed
local function with_progress(args, label, fn)
  local bar = progress.bar { label = label, quiet = args.quiet or args.quiet_here }
  local a, b, c = fn(bar and bar.update)
  if bar then bar.finish() end
  return a, b, c
end

-- the budget in force (bytes), for the message when it is exceeded
local budget

local function over_budget()
  return ("needs more memory than the budget of %s (--max-memory)"):format(size.format(budget))
end

-- say why a file could not be read: its message, or, when memory ran out
-- under a budget, that
local function say_failure(err, path, msg, code)
  if code == "no_memory" and budget then
    err:write("sift: ", printable(path), ": ", over_budget(), "\n")
  else
    err:write("sift: ", printable(msg), "\n")
  end
end

-- the budget of this run: --max-memory, or the machine's default; false
-- when none can be set (AddressSanitizer); nil and why when SIZE is bad
local function apply_budget(args)
  local core = require "sift.core"
  local bytes = core.memory_default()
  if args.max_memory then
    bytes = size.parse(args.max_memory)
    if not bytes then return nil, ("--max-memory: cannot read '%s' (say 512M or 4G)"):format(args.max_memory) end
  end
  budget = core.memory_budget(bytes) and bytes > 0 and bytes or false
  return true
end

local function open_heap(args, path)
  return with_progress(args, path, function(update)
    return sift.open(path, { mapping = args.mapping, dump = args.dump, progress = update,
      strings = args.strings })
  end)
end

-- the index's counts, added to what detection found
local HEAP_FACTS = { "objects", "classes", "instances", "object_arrays", "primitive_arrays",
  "strings", "dumps", "dump", "duplicates", "missing_classes", "truncated_at", "roots", "heaps", "warnings" }

local function add_heap_facts(args, path, info)
  local heap, msg, code = open_heap(args, path)
  if not heap then return nil, msg, code end
  local facts = heap:info()
  heap:close()
  for _, k in ipairs(HEAP_FACTS) do info[k] = facts[k] end
  if #info.warnings == 0 then info.warnings = nil end
  if info.duplicates == 0 then info.duplicates = nil end
  if info.missing_classes == 0 then info.missing_classes = nil end
  return info
end

-- what reading every record of a BMD adds: counts, and the size ratio
local function add_bmd_facts(args, path, info)
  local facts, msg, code = with_progress(args, path, function(update)
    return require("sift.heap.bmd").info(path, { source = args.source, progress = update })
  end)
  if not facts then return nil, msg, code end
  for _, k in ipairs { "strings", "hashed_strings", "classes", "instances", "object_arrays",
      "primitive_arrays", "legacy", "roots", "source_bytes" } do
    info[k] = facts[k]
  end
  if next(facts.legacy_tags) then
    info.legacy_tags = {}
    for tag, n in pairs(facts.legacy_tags) do info.legacy_tags[("0x%02X"):format(tag)] = n end
  end
  info.ratio = facts.ratio and ("%.1f%%"):format(100 * facts.ratio)
  return info
end

-- what decoding a trace adds: records per thread, durations, odd exits
local function add_trace_facts(args, path, info)
  local trace, msg, code = with_progress(args, path, function(update)
    return sift.open(path, { progress = update })
  end)
  if not trace then return nil, msg, code end
  local facts = trace:info()
  local busy, wall = {}, 0
  for _, th in ipairs(trace:threads()) do
    if th.records > 0 then busy[#busy + 1] = ("%s %d"):format(th.name or th.tid, th.records) end
    if th.wall > wall then wall = th.wall end
  end
  trace:close()
  info.records = facts.records
  info.thread_records = table.concat(busy, ", ")
  info.longest_thread_us = facts.clock ~= "thread-cpu" and wall or nil
  for _, k in ipairs { "unknown_methods", "orphan_exits", "mismatched_exits" } do
    if facts[k] > 0 then info[k] = facts[k] end
  end
  if #facts.warnings > 0 then info.warnings = facts.warnings end
  return info
end

function commands.info(args, out, err)
  local status = EXIT_OK
  local results = {}
  for _, path in ipairs(args.file) do
    local info, msg, code = with_progress(args, path, function(update)
      return sift.detect(path, { bytes = false, progress = update })
    end)
    if info and info.format == "hprof" and not info.problem and not args.header then
      info, msg, code = add_heap_facts(args, path, info)
    elseif info and info.format == "trace" and not info.problem and not args.header then
      info, msg, code = add_trace_facts(args, path, info)
    elseif info and info.format == "bmd" and not info.problem and not args.header then
      info, msg, code = add_bmd_facts(args, path, info)
    end
    if not info then
      err:write("sift: ", printable(msg), "\n")
      results[#results + 1] = { path = path, error = msg, code = code }
      status = EXIT_BAD_INPUT
    else
      if info.problem then
        err:write("sift: ", printable(path), ": ", printable(info.problem), "\n")
        status = EXIT_BAD_INPUT
      end
      results[#results + 1] = info
      if not args.json then print_info(out, path, info) end
    end
  end
  if args.json then
    out:write(json.encode(#results == 1 and results[1] or json.array(results), { arrays = { warnings = true } }), "\n")
  end
  return status
end

local function group_digits(n)
  local s = tostring(n)
  local head, digits = s:match("^(%-?)(%d+)$")
  if not digits then return s end
  return head .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

-- the heap of args.file, or nil after saying why on err. What indexing
-- warned about (a dump cut short, records skipped) is said here, once, for
-- every heap command; for an analysis, a file with no heap dump in it is an
-- error, not an empty report.
local function heap_or_report(args, err, analysis)
  local heap, msg, code = open_heap(args, args.file)
  if not heap then
    say_failure(err, args.file, msg, code)
    return nil
  end
  local info = heap:info()
  local empty = analysis and info.dumps == 0
  for _, w in ipairs(info.warnings) do
    if not (empty and w:match("holds no heap dump")) then  -- (said below, as the error)
      err:write("sift: ", printable(args.file), ": warning: ", printable(w), "\n")
    end
  end
  if empty then
    err:write("sift: ", printable(args.file), ": holds no heap dump (no HEAP_DUMP record): nothing to analyse\n")
    heap:close()
    return nil
  end
  return heap
end

function commands.histogram(args, out, err)
  local heap = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local info, all = heap:info(), heap:histogram(args.model)
  heap:close()
  local rows, top = {}, args.top
  for i, r in ipairs(all) do
    if top and top > 0 and i > top then break end
    rows[i] = r
  end
  if args.json then
    out:write(json.encode {
      format = info.format, version = info.version, id_size = info.id_size,
      instances = info.instances, classes = info.classes,
      object_arrays = info.object_arrays, primitive_arrays = info.primitive_arrays,
      roots = info.roots, rows = json.array(rows), model = args.model,
    }, "\n")
  else
    local total_count, total_shallow = 0, 0
    for _, r in ipairs(all) do
      total_count, total_shallow = total_count + r.count, total_shallow + r.shallow
    end
    out:write(("%14s %12s  %s\n"):format("shallow bytes", "instances", "class"))
    for _, r in ipairs(rows) do
      out:write(("%14s %12s  %s\n"):format(group_digits(r.shallow), group_digits(r.count), printable(r.class)))
    end
    out:write(("%14s %12s  %s\n"):format(group_digits(total_shallow), group_digits(total_count),
      ("total: %d rows (%d shown), %d classes"):format(#all, #rows, info.classes)))
  end
  return EXIT_OK
end

function commands.repl(args, out, err)
  local heap = heap_or_report(args, err)
  if not heap then return EXIT_BAD_INPUT end
  return require("sift.repl").run(heap, { input = io.stdin, out = out, err = err })
end

local function hex(id) return ("0x%x"):format(id) end

-- how a path step is written in text and JSON: "static CACHE", "field
-- elementData", "[3]"
local function ref_text(st)
  if st.ref == "static" then return "static " .. st.name end
  if st.ref == "field" then return "field " .. st.name end
  if st.ref == "element" then return st.label end
  return st.name  -- what the JVM keeps without a field: <class>, <loader>...
end

local function object_text(obj)
  local cls = obj:as_class()
  if cls then return "class " .. cls.name end
  return tostring(obj)
end

-- a path the way LeakCanary draws leak traces
-- a short name for a path step: "class Foo", "ArrayList", "Object[]"
local function short(obj)
  local cls = obj:as_class()
  if cls then return "class " .. cls.name:match("[^.]+$") end
  return (obj:class_name():match("[^.]+$"))
end

-- how a step's reference from `holder` reads: "ArrayList.elementData",
-- "static LeakyApp.CACHE", "Object[][3]", "class Plugin.<loader>"
local function ref_label(holder, st)
  if st.ref == "element" then return short(holder) .. st.label end
  if st.ref == "static" then return "static " .. holder:as_class().name:match("[^.]+$") .. "." .. st.name end
  if st.ref == "field" then return holder:class_name():match("[^.]+$") .. "." .. (st.name or "?") end
  return short(holder) .. "." .. (st.name or st.ref or "?")
end

-- the root of a path, as Shark writes it, with the thread and frame
local function root_text(first)
  local text = "GC Root: " .. (first.root and first.root:gsub("_", " ") or "?")
  if first.thread then text = text .. " (thread " .. first.thread .. ")" end
  local f = first.frame_info
  if f then
    text = text .. (" in %s.%s(%s)"):format(f.class or "?", f.method or "?",
      f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line) or (f.source or "unknown source"))
  end
  return text
end

-- a path the way LeakCanary draws leak traces; a run of objects held the
-- same way is drawn as its first and last with the count between
local function draw_path(out, path)
  out:write("┬───\n│ ", printable(root_text(path[1])), "\n│\n")
  for k, st in ipairs(path) do
    local last = k == #path
    if (st.count or 1) > 1 then
      out:write("├─ ", printable(object_text(st.object)), "\n")
      out:write("│    ↓ ", printable(ref_label(st.object, st)), (" … %s more %s the same way\n"):format(
        group_digits(st.count - 1), printable(short(st.object))))
    end
    local shown = (st.count or 1) > 1 and st.last or st.object
    out:write(last and "╰→ " or "├─ ", printable(object_text(shown)), "\n")
    local nxt = path[k + 1]
    if nxt then
      out:write("│    ↓ ", printable(ref_label(shown, nxt)), nxt.low and " (low priority)" or "", "\n")
    end
  end
end

-- a path as JSON: steps { id, class, ref?, count?, last_id? }, the root's
-- kind, thread and frame
local function path_json(path)
  local steps = json.array {}
  for k, st in ipairs(path) do
    local nxt = path[k + 1]
    local cls = st.object:as_class()
    steps[k] = { id = hex(st.object:id()), class = cls and cls.name or st.object:class_name(),
                 ref = nxt and ref_text(nxt) or nil }
    if (st.count or 1) > 1 then  -- a run: count objects, each holding the next by run_ref
      steps[k].count, steps[k].last_id, steps[k].run_ref = st.count, hex(st.last:id()), ref_text(st)
    end
  end
  return steps
end

-- the root of a path in JSON: its kind, and for a thread's roots the
-- thread's name and (a local variable's) frame
local function root_json(r, first)
  r.root, r.thread = first.root, first.thread
  local f = first.frame_info
  if f then r.frame = { method = f.method, class = f.class, source = f.source, line = f.line } end
end

-- the merged paths (MAT's "merge shortest paths to GC roots") as text
local function draw_merged(out, trees, depth)
  for _, node in ipairs(trees) do
    local st = node.step
    local what = depth == 0 and root_text(st) .. " → " or (st.label and ("↓ " .. st.label .. " → ") or "")
    out:write(("%s%s%s  (%s)\n"):format(("  "):rep(depth), printable(what), printable(object_text(st.object)),
      group_digits(node.count)))
    draw_merged(out, node.children, depth + 1)
  end
end

local function merged_json(trees)
  local out = json.array {}
  for i, node in ipairs(trees) do
    local st = node.step
    out[i] = { id = hex(st.object:id()), class = st.object:as_class() and st.object:as_class().name
               or st.object:class_name(), ref = ref_text(st), root = st.root, count = node.count,
               children = merged_json(node.children) }
  end
  return out
end

function commands.path(args, out, err)
  local heap = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local cls = heap:class(args.class)
  if not cls then
    err:write("sift: ", printable(args.file), ": no class named '", printable(args.class), "'\n")
    heap:close()
    return EXIT_BAD_INPUT
  end
  local objs = {}
  for obj in cls:instances() do
    if args.limit > 0 and #objs >= args.limit then break end
    objs[#objs + 1] = obj
  end
  if args.retained then
    with_progress(args, "dominators", function(update) return heap:dominators { model = args.model, progress = update } end)
  end
  if args.merge then
    local trees = heap:paths(objs)
    if args.json then out:write(json.encode(merged_json(trees)), "\n")
    else draw_merged(out, trees, 0) end
    heap:close()
    return EXIT_OK
  end
  heap:path_search(objs)
  if args.json then out:write("[") end
  for i, obj in ipairs(objs) do  -- one path at a time: printed, then dropped
    local r = { id = hex(obj:id()), class = obj:class_name(), shallow = heap:shallow(obj, args.model) }
    if args.retained then r.retained = heap:retained(obj) end
    local path = heap:path_segments(obj, not args.full)
    if path then
      r.path = path_json(path)
      root_json(r, path[1])
    end
    if args.json then
      out:write(i > 1 and "," or "", json.encode(r))
    else
      out:write(printable(object_text(obj)), ": shallow ", group_digits(r.shallow),
        r.retained and (", retained " .. group_digits(r.retained)) or "", "\n")
      if path then draw_path(out, path) else out:write("  no strong path from a GC root\n") end
      out:write("\n")
    end
  end
  if args.json then out:write("]\n") end
  if not args.json and #objs == 0 then out:write(("no instances of %s\n"):format(cls.name)) end
  heap:close()
  return EXIT_OK
end

-- the rows of `sift top`: the n largest retainers. Unless flat, each row is
-- an object only the GC roots dominate (so no row holds another: the top
-- of MAT's dominator tree), and `inside` is its chain folded: its largest
-- dominated object, that one's, and so on while they keep at least half of
-- the row's bytes (at most 6 steps)
local function top_rows(heap, n, flat)
  if flat then return heap:top(n) end
  local tops = heap:dominated(nil)  -- largest first
  local rows = {}
  for i = 1, math.min(n, #tops) do
    local obj = tops[i]
    local row = { object = obj, class = obj:class_name(), shallow = heap:shallow(obj),
                  retained = heap:retained(obj), inside = {} }
    local v = obj
    while #row.inside < 6 do
      local child = heap:dominated(v)[1]
      if not child or heap:retained(child) * 2 < row.retained then break end
      row.inside[#row.inside + 1] = { object = child, class = child:class_name(), shallow = heap:shallow(child),
                                      retained = heap:retained(child) }
      v = child
    end
    rows[i] = row
  end
  return rows
end

function commands.top(args, out, err)
  local heap = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local summary = with_progress(args, "dominators", function(update)
    return heap:dominators { model = args.model, progress = update }
  end)
  local rows = top_rows(heap, args.n, args.flat)
  if args.json then
    local list = json.array {}
    for i, r in ipairs(rows) do
      list[i] = { id = hex(r.object:id()), class = r.class, shallow = r.shallow, retained = r.retained }
      if r.inside then
        list[i].inside = json.array {}
        for j, x in ipairs(r.inside) do
          list[i].inside[j] = { id = hex(x.object:id()), class = x.class, shallow = x.shallow, retained = x.retained }
        end
      end
    end
    out:write(json.encode(list), "\n")
  else
    local objs = {}
    for i, r in ipairs(rows) do objs[i] = r.object end
    local paths = heap:path_to_root(objs)
    out:write(("%14s %10s  %s\n"):format("retained", "shallow", "object (path from a GC root)"))
    for i, r in ipairs(rows) do
      out:write(("%14s %10s  %s\n"):format(group_digits(r.retained), group_digits(r.shallow),
        printable(object_text(r.object))))
      local path = paths[i]
      if path and #path > 1 then
        local parts = {}
        for k = 1, #path - 1 do parts[k] = short(path[k].object) end
        out:write(("%26s  via %s\n"):format("", printable(path[1].root .. ": " .. table.concat(parts, " → "))))
      end
      if r.inside and #r.inside > 0 then
        local parts, last, same = {}, nil, 0
        for _, x in ipairs(r.inside) do  -- a run of one class (a list's nodes) reads as one step
          local name = short(x.object)
          if name == last then
            same = same + 1
            parts[#parts] = ("%s × %d (%s)"):format(name, same, group_digits(x.retained))
          else
            last, same = name, 1
            parts[#parts + 1] = ("%s (%s)"):format(name, group_digits(x.retained))
          end
        end
        out:write(("%26s  holds %s%s\n"):format("", printable(table.concat(parts, " → ")),
          #r.inside == 6 and " → …" or ""))
      end
    end
    out:write(("%14s %10s  reachable objects: %s; unreachable: %s objects, %s bytes (model %s)\n"):format("", "",
      group_digits(summary.reachable), group_digits(summary.unreachable), group_digits(summary.unreachable_bytes),
      summary.model))
  end
  heap:close()
  return EXIT_OK
end

function commands.dominators(args, out, err)
  local heap = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  with_progress(args, "dominators", function(update)
    return heap:dominators { model = args.model, progress = update }
  end)
  local total = 0
  for _, obj in ipairs(heap:dominated(nil)) do total = total + heap:retained(obj) end
  out:write(("%7s %14s  %s\n"):format("%", "retained", "object"))
  local hidden = 0
  local function walk(list, depth)
    for _, obj in ipairs(list) do
      local retained = heap:retained(obj)
      local pct = total > 0 and 100 * retained / total or 0
      if pct < args.min then
        hidden = hidden + 1
      else
        out:write(("%6.2f%% %14s  %s%s\n"):format(pct, group_digits(retained), ("  "):rep(depth),
          printable(object_text(obj))))
        if depth + 1 < args.depth then walk(heap:dominated(obj), depth + 1) end
      end
    end
  end
  walk(heap:dominated(nil), 0)
  out:write(("%7s %14s  total reachable (%d smaller subtrees hidden; --min %g%%)\n"):format(
    "100%", group_digits(total), hidden, args.min))
  heap:close()
  return EXIT_OK
end

function commands.leaks(args, out, err)
  local leaks = require "sift.heap.leaks"
  local finder = args.finder
  if args.where then
    local fn, msg = load("local obj = ...; return " .. args.where, "=--where", "t", setmetatable({}, { __index = _G }))
    if not fn then
      err:write("sift: --where: ", msg, "\n")
      return EXIT_USAGE
    end
    finder = leaks.where(function(obj)
      local ok, v = pcall(fn, obj)
      return ok and v and true or false
    end, args.class)
  end
  local matchers
  if args.matchers then
    local m, why = leaks.read_matchers(args.matchers)
    if not m then
      err:write("sift: --matchers: ", printable(why), "\n")
      return EXIT_USAGE
    end
    matchers = m
  end
  local heap = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local report = leaks.analyze(heap, { finder = finder, suspects = args.suspects, known = not args.no_known,
    reason = args.where and ("--where " .. args.where) or nil, rules = matchers and matchers.rules,
    library = matchers and matchers.library })
  if args.html then
    local f, msg = io.open(args.html, "w")
    if not f then
      err:write("sift: ", msg, "\n")
      heap:close()
      return EXIT_BAD_INPUT
    end
    f:write(leaks.html(report, "sift leaks: " .. args.file))
    f:close()
  end
  if args.json then out:write(json.encode(leaks.to_json(report)), "\n")
  else out:write(leaks.render(report), "\n") end
  heap:close()
  return EXIT_OK
end

-- the trace of args.file, or nil after saying why on err
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
local function try(err, path, fn, ...)
  local r = table.pack(pcall(fn, ...))
  if not r[1] then
    err:write("sift: ", path, ": ", (tostring(r[2]):gsub("^.-:%d+: ", "")), "\n")
    return nil
  end
  return table.unpack(r, 2, r.n)
end

-- where output goes: args.output opened for writing, or out; nil after
-- saying why on err
local function open_output(args, out, err)
  if not args.output then return out end
  local f, msg = io.open(args.output, "wb")
  if not f then err:write("sift: ", msg, "\n") end
  return f
end

-- --minwidth pixels as a share of the graph's width
local function min_fraction(args)
  return (args.minwidth or 0) / math.max(1, (args.width or 1200) - 20)
end

function commands.profile(args, out, err)
  local trace = trace_or_report(args, err)
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

local function percent_of(part, whole)
  return whole > 0 and ("%.1f%%"):format(100 * part / whole) or "-"
end

-- a BMD conversion of args.input with a progress bar: its counts (printed
-- as JSON with --json, and then done), or nil after saying why
local function convert(args, out, err, fn)
  local counts, msg, code = with_progress(args, args.input, fn)
  if not counts then say_failure(err, args.input, msg, code) end
  if counts and args.json then
    local view = {}
    for k, v in pairs(counts) do view[k] = v end
    if counts.legacy_tags then  -- JSON keys are strings: "0x04"
      view.legacy_tags = {}
      for tag, n in pairs(counts.legacy_tags) do view.legacy_tags[("0x%02X"):format(tag)] = n end
    end
    out:write(json.encode(view), "\n")
  end
  return counts
end

function commands.crunch(args, out, err)
  local counts = convert(args, out, err, function(update)
    return require("sift.heap.bmd").crunch(args.input, args.output, { keep = args.keep,
      keep_primitives = args.keep_primitives, progress = update })
  end)
  if not counts then return EXIT_BAD_INPUT end
  if args.json then return EXIT_OK end
  out:write(("%s -> %s: %s -> %s bytes (%s)\n"):format(args.input, args.output, group_digits(counts.bytes_in),
    group_digits(counts.bytes_out), percent_of(counts.bytes_out, counts.bytes_in)))
  out:write(("  strings                %s as text, %s hashed\n"):format(group_digits(counts.strings),
    group_digits(counts.hashed_strings)))
  for _, k in ipairs { "classes", "instances", "object_arrays", "primitive_arrays", "legacy", "roots", "dropped" } do
    if counts[k] > 0 or k ~= "dropped" then out:write(("  %-22s %s\n"):format(k, group_digits(counts[k]))) end
  end
  return EXIT_OK
end

function commands.decrunch(args, out, err)
  if args.max_output then
    args.max_output_bytes = size.parse(args.max_output)
    if not args.max_output_bytes then
      err:write(("sift: --max-output: cannot read '%s' (say 2G; 0: no cap)\n"):format(args.max_output))
      return EXIT_USAGE
    end
  end
  local stats = convert(args, out, err, function(update)
    return require("sift.heap.bmd").decrunch(args.input, args.output, { strings = args.strings, progress = update,
      max_output = args.max_output_bytes })
  end)
  if not stats then return EXIT_BAD_INPUT end
  if args.json then return EXIT_OK end
  out:write(("%s -> %s: %s bytes\n"):format(args.input, args.output, group_digits(stats.bytes_out)))
  out:write(("  names recovered        %s of %s hashed strings (the rest are Hash$<hash>)\n"):format(
    group_digits(stats.recovered), group_digits(stats.recovered + stats.placeholders)))
  if stats.legacy_dropped > 0 then
    out:write(("  legacy records dropped %s (their ids are not 4 bytes wide)\n"):format(group_digits(stats.legacy_dropped)))
  end
  return EXIT_OK
end

local CSV_COLUMNS = { "file", "statement", "account", "currency", "fitid", "type", "posted", "amount",
  "name", "memo", "payee", "checknum", "refnum" }

-- a statement's summary, as a person reads it
local function print_statement(out, st)
  local a = st.account
  local id = table.concat({ a.bank_id or a.broker_id or "", a.branch_id or "", a.id or "?" }, "/")
    :gsub("^/+", ""):gsub("//+", "/")
  out:write(("  %s %s%s (%s)\n"):format(st.kind, a.type and (a.type .. " ") or "", id, st.currency or "no currency"))
  if st.start or st["end"] then
    out:write(("    %-18s %s .. %s\n"):format("period", st.start or "?", st["end"] or "?"))
  end
  for _, b in ipairs { { "ledger balance", st.ledger_balance }, { "available balance", st.available_balance } } do
    if b[2] then out:write(("    %-18s %s at %s\n"):format(b[1], b[2].amount, b[2].date or "?")) end
  end
  local n, first, last = #st.transactions, nil, nil
  for _, t in ipairs(st.transactions) do
    if not first or t.posted < first then first = t.posted end
    if not last or t.posted > last then last = t.posted end
  end
  out:write(("    %-18s %d%s\n"):format("transactions", n, n > 0 and (" (" .. first .. " .. " .. last .. ")") or ""))
  if st.investment_transactions then
    out:write(("    %-18s %d\n"):format("investment trades", #st.investment_transactions))
  end
  if st.positions then out:write(("    %-18s %d\n"):format("positions", #st.positions)) end
  if st.status and st.status.code and st.status.code ~= 0 then
    out:write(("    %-18s %d %s: %s\n"):format("status", st.status.code, st.status.severity or "",
      st.status.message or st.status.meaning or ""))
  end
end

function commands.ofx(args, out, err)
  local ofx = require "sift.ofx"
  local status, views, rows = EXIT_OK, {}, {}
  for _, path in ipairs(args.file) do
    local doc, msg, code = ofx.read(path, { strict = args.strict })
    if doc and not doc.tree:child("OFX") then  -- nothing of a statement: an error in every mode
      doc, msg, code = nil, path .. ": no <OFX> element: not an OFX file, or one cut before its body", "corrupt"
    end
    if doc then  -- what was skipped or is missing, on stderr whatever the output
      for _, w in ipairs(doc.warnings) do
        err:write(("sift: %s: warning%s: %s\n"):format(printable(path), w.line and (" (line " .. w.line .. ")") or "",
          printable(w.message)))
      end
      if doc.discarded > 0 then
        err:write(("sift: %s: warning: %d transaction(s) left out\n"):format(printable(path), doc.discarded))
      end
    end
    if not doc then
      say_failure(err, path, msg, code)
      status = EXIT_BAD_INPUT
      views[#views + 1] = { path = path, error = msg }
    elseif args.json then
      local v = ofx.view(doc)
      v.path = #args.file > 1 and path or nil
      views[#views + 1] = v
    elseif args.csv then
      for i, st in ipairs(doc.statements) do
        for _, t in ipairs(st.transactions) do
          rows[#rows + 1] = { file = path, statement = i, account = st.account.id, currency = t.currency or st.currency,
            fitid = t.fitid, type = t.type, posted = t.posted, amount = t.amount, name = t.name, memo = t.memo,
            payee = t.payee, checknum = t.checknum, refnum = t.refnum }
        end
      end
    else
      out:write(("%s: OFX %s (%s)"):format(path, doc.version or "?", doc.header_kind == "v1" and "SGML"
        or doc.header_kind == "v2" and "XML" or "no header"))
      if doc.signon then
        out:write((", signon %s %s%s"):format(tostring(doc.signon.code), doc.signon.severity or "",
          doc.signon.code ~= 0 and (": " .. (doc.signon.message or doc.signon.meaning or "")) or ""))
      end
      out:write("\n")
      for _, st in ipairs(doc.statements) do print_statement(out, st) end
      for _, s in ipairs(doc.status) do
        if s.code and s.code ~= 0 then
          out:write(("  %s response: status %d %s: %s\n"):format(s.kind, s.code, s.severity or "",
            s.message or s.meaning or ""))
        end
      end
      if doc.accounts then
        for _, a in ipairs(doc.accounts) do
          out:write(("  account %s %s %s%s\n"):format(a.kind or "?", a.type or "", a.id or "?",
            a.description and (" (" .. a.description .. ")") or ""))
        end
      end
    end
  end
  if args.json then
    out:write(json.encode(#views == 1 and views[1] or json.array(views), { arrays = ofx.view_arrays }), "\n")
  elseif args.csv and (status == EXIT_OK or #rows > 0 or #args.file > 1) then  -- no header for nothing read
    out:write(table.concat(CSV_COLUMNS, ","), "\n")
    for _, r in ipairs(rows) do out:write(csv.line(r, CSV_COLUMNS), "\n") end
  end
  return status
end

function commands.fold(args, out, err)
  local trace = trace_or_report(args, err)
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
  local trace = trace_or_report(args, err)
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
  local trace = trace_or_report(args, err)
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
    local trace = trace_or_report({ file = path, quiet = args.quiet }, err)
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
    local trace = trace_or_report(args, err)
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
function M.main(argv, io_)
  local out = io_ and io_.out or io.stdout
  local err = io_ and io_.err or io.stderr
  local parser = build_parser()
  local ok, args = parser:pparse(argv)
  if not ok then
    err:write("sift: ", args, " (try 'sift --help')\n")
    return EXIT_USAGE
  end
  local command = commands[args.command] or finance_cli.commands[args.command]
  local budget_ok, why = apply_budget(args)
  if not budget_ok then
    err:write("sift: ", why, "\n")
    return EXIT_USAGE
  end
  local run_ok, status = xpcall(command, debug.traceback, args, out, err, io_ and io_.input)
  if not run_ok and tostring(status):match("not enough memory") then  -- over the budget
    local file = type(args.file) == "string" and args.file or args.input
      or (type(args.file) == "table" and #args.file == 1 and args.file[1]) or nil
    err:write("sift: ", file and printable(file) .. ": " or "", budget and over_budget() or "not enough memory", "\n")
    return EXIT_BAD_INPUT
  end
  if not run_ok then  -- a bug in sift, not bad input
    if os.getenv("SIFT_DEBUG") then err:write(status, "\n")
    else err:write("sift: internal error: ", (tostring(status):match("^[^\n]*")),
      " (set SIFT_DEBUG=1 for a traceback)\n")
    end
    return EXIT_BAD_INPUT
  end
  return status
end

return M
