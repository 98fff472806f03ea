--- The heap commands of `sift`: histogram, repl, path, top, dominators,
-- leaks, and crunch/decrunch between HPROF and BMD.
-- @module sift.cli.heap

local json = require "sift.json"
local size = require "sift.size"
local views = require "sift.heap.views"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }
local commands = M.commands

local EXIT_OK, EXIT_BAD_INPUT, EXIT_USAGE, printable, with_progress, say_failure, open_heap, group_digits, budget_option =
  common.EXIT_OK, common.EXIT_BAD_INPUT, common.EXIT_USAGE, common.printable, common.with_progress, common.say_failure,
  common.open_heap, common.group_digits, common.budget_option

local object_text, short, ref_label, root_text, merged_json, top_rows =
  views.object_text, views.short, views.ref_label, views.root_text, views.merged_json, views.top_rows

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

local function model_option(cmd)
  cmd:option("--model", "Size model: shark (the dump's sizes), jvm (what the JVM allocated: headers, "
    .. "compressed references, field layout, as GC.class_histogram) or visualvm (VisualVM's rule).",
    "shark"):choices { "shark", "jvm", "visualvm" }
end

function M.define.histogram(parser)
  local histogram = parser:command("histogram", "Count instances and shallow bytes per class of a heap dump.")
  heap_options(histogram)
  histogram:option("--top", "Show only the N largest rows (0: all).", "20"):convert(tonumber)
  histogram:flag("--json", "Print JSON (format, counts, roots by kind, rows).")
  histogram:option("--model", "Sizes: shark (the dump's), jvm (what the JVM allocated, as its "
    .. "GC.class_histogram counts; class mirrors in a java.lang.Class row) or visualvm.", "shark")
    :choices { "shark", "jvm", "visualvm" }
  histogram:option("--heap", "Only the objects of this Android heap (app, zygote, image, default: what "
    .. "'sift info' lists under heaps): its rows and total.")
end

function M.define.repl(parser)
  local repl = parser:command("repl", "Explore a heap dump at an interactive Lua prompt, with 'heap' bound.")
  heap_options(repl)
end

function M.define.path(parser)
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
end

function M.define.top(parser)
  local top = parser:command("top", "List the objects that retain the most memory.")
  heap_options(top)
  top:option("-n --n", "How many objects.", "20"):convert(tonumber)
  model_option(top)
  top:flag("--json", "Print JSON: a list of {id, class, shallow, retained, inside}.")
  top:flag("--flat", "List the largest retainers as they come, even when one holds another (a dominator "
    .. "chain then fills several rows); by default each row is an object only the GC roots dominate, with "
    .. "the chain of large objects inside it folded into its row.")
end

function M.define.waste(parser)
  local waste = parser:command("waste", "Report wasted memory, as its fix would free it: duplicate strings and "
    .. "primitive arrays, duplicate Android bitmaps, half-empty collections, "
    .. "all-zero arrays, boxed primitives (Eclipse MAT's Java Basics and Collections reports).")
  heap_options(waste)
  model_option(waste)
  waste:option("--top", "Rows per report.", "20"):convert(tonumber)
  waste:flag("--json", "Print JSON: {model, rules, totals, duplicate_strings, duplicate_arrays, duplicate_bitmaps, "
    .. "collections, zero_arrays, boxed}.")
end

function M.define.threads(parser)
  local threads = parser:command("threads", "List threads with their stacks, the locals each frame holds "
    .. "and what those retain.")
  heap_options(threads)
  model_option(threads)
  threads:flag("--json", "Print JSON: a list of {serial, name, id, retained, held, frames, locals}.")
end

function M.define.loaders(parser)
  local loaders = parser:command("loaders", "List class loaders: classes defined, instances, retained size, "
    .. "parent, classes loaded twice, Android's dex path.")
  heap_options(loaders)
  model_option(loaders)
  loaders:flag("--json", "Print JSON: {loaders, duplicates}.")
end

function M.define.growth(parser)
  local growth = parser:command("growth", "Find what grows at every step across dumps of one process (taken "
    .. "after the same scenario each time), and the path to what holds it.")
  growth:argument("file", "The dumps, oldest first (HPROF or BMD; two at least)."):args("2+")
  growth:option("--top", "How many growing classes.", "20"):convert(tonumber)
  growth:option("--min-step", "The least growth in instances at every step (run the scenario 5 times between "
    .. "dumps, as Shark does, so that a leak of one object per run shows).", "5"):convert(tonumber)
  model_option(growth)
  growth:flag("--json", "Print JSON: {dumps, classes, holders}.")
  growth:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
end

function M.define.leaks(parser)
  local leaks = parser:command("leaks", "Find leaking objects and explain them as LeakCanary does.")
  heap_options(leaks)
  leaks:option("--finder", "Which objects should be dead: keyed (KeyedWeakReference), android (destroyed "
    .. "Activities, Fragments, ViewModels) or all.", "all"):choices { "keyed", "android", "all" }
  leaks:option("--where", "Treat instances for which this Lua expression is true as leaking; 'obj' is the "
    .. "object (e.g. \"obj.mDestroyed\"). With --class, only that class's instances are tested. An expression "
    .. "that raises an error (a misspelt method) stops the run with the object it raised on (exit status 2).")
  leaks:option("--class", "With --where: the class whose instances to test.")
  leaks:flag("--json", "Print JSON (application_leaks, library_leaks, unreachable, suspects, metadata).")
  leaks:option("--html", "Also write a self-contained HTML report to this file.")
  leaks:flag("--suspects", "Also report MAT-style leak suspects: what holds more than a tenth of the heap.")
  leaks:option("--matchers", "A Lua file returning { ignored = {...}, library = {...} }: references of "
    .. "your own to leave off leak traces or to report as library leaks ({ class, field }, { class, static }, "
    .. "{ thread }, { root_class }; see docs/leaks.md).")
  leaks:flag("--no-known", "Leave out the catalogue of known Android and vendor leaks (sift.heap.known_leaks): "
    .. "their traces then count as application leaks.")
end

function M.define.crunch(parser)
  local crunch = parser:command("crunch", "Crunch an HPROF heap dump into a BMD (Badoo Memory Dump): "
    .. "ids renumbered, strings hashed, primitive data dropped.")
  crunch:argument("input", "The HPROF heap dump (4- or 8-byte ids; 1.0.1 to 1.0.3).")
  crunch:argument("output", "The BMD file to write.")
  crunch:option("--keep", "Keep strings that start with this prefix as text (beyond java.lang and the "
    .. "primitive type names); repeat for several."):count("*")
  crunch:flag("--keep-primitives", "Keep the primitive fields of every class (BMD keeps them only for "
    .. "classes whose names stay text).")
  crunch:flag("--badoo", "Write exactly what Badoo's cruncher writes: without sift's record of the GC roots' "
    .. "kinds (which any BMD reader accepts, and which Badoo's format otherwise loses).")
  crunch:flag("--json", "Print the counts as JSON.")
  crunch:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  budget_option(crunch)
end

function M.define.decrunch(parser)
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
end

M.define["diff-heap"] = function(parser)
  local diff = parser:command("diff-heap", "Compare a heap dump with a baseline dump of the same process.")
    :description("Compare FILE with BASE, a dump of the same process taken earlier (ahat's baseline): "
      .. "per class, the change in instances and shallow bytes, largest first; and the objects new since "
      .. "BASE (ids BASE does not have: an object the GC moved counts as new).")
  diff:argument("base", "The baseline dump.")
  heap_options(diff)
  model_option(diff)
  diff:option("--top", "Show only the N largest changes (0: all).", "20"):convert(tonumber)
  diff:flag("--json", "Print JSON: {model, base_instances, instances, classes, new_objects}.")
end

function M.define.dominators(parser)
  local doms = parser:command("dominators", "Print the dominator tree: what holds the memory, indented.")
  heap_options(doms)
  doms:option("--depth", "Levels to show.", "3"):convert(tonumber)
  doms:option("--min", "Hide subtrees under this percentage of the reachable heap.", "1"):convert(tonumber)
  model_option(doms)
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

-- What `--model jvm` cannot count: with class data sharing, G1's archived
-- heap holds the mirrors of archived classes not loaded yet, which
-- GC.class_histogram counts in its java.lang.Class row and no dump holds.
-- Seen in a dump as class mirrors followed by bytes no object fills
-- (heap:jvm_layout().mirror_gaps; 8 or more, as region ends leave a few).
-- `state` is "archived" (seen), "unknown" (the layout could not be
-- inferred, so nothing can be seen) or "none".
local ARCHIVED_GAPS = 8
local function cds_mirrors(heap)
  local l = heap:jvm_layout()
  local state = not l.inferred and "unknown" or l.mirror_gaps >= ARCHIVED_GAPS and "archived" or "none"
  local note = ({
    archived = ("the JVM counts more: the mirrors of CDS-archived classes not loaded yet, which the dump "
      .. "leaves out (%d class mirrors here are followed by such gaps)"):format(l.mirror_gaps),
    unknown = "the JVM may count more: mirrors of CDS-archived classes, which no dump holds",
  })[state]
  return { state = state, mirror_gaps = l.mirror_gaps, note = note }
end

function commands.histogram(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  if args.heap and not views.has_heap(heap, args.heap) then
    local names = views.heap_names(heap)
    err:write("sift: --heap: ", printable(args.file), #names == 0 and " has no Android heaps (a JVM's dump)\n"
      or (" has no heap '%s': its heaps are %s\n"):format(printable(args.heap), table.concat(names, ", ")))
    return EXIT_USAGE
  end
  local view, all = views.histogram_json(heap, args.model, args.top, args.heap)
  local info, rows = heap:info(), view.rows
  if args.model == "jvm" then view.cds_mirrors = cds_mirrors(heap) end
  local mirrors_note = view.cds_mirrors and view.cds_mirrors.note
  if args.json then
    out:write(json.encode(view), "\n")
  else
    local total_count, total_shallow = 0, 0
    for _, r in ipairs(all) do
      total_count, total_shallow = total_count + r.count, total_shallow + r.shallow
    end
    out:write(("%14s %12s  %s\n"):format("shallow bytes", "instances", "class"))
    for _, r in ipairs(rows) do
      local beside = r.class == "java.lang.Class" and mirrors_note and "  (" .. mirrors_note .. ")" or ""
      if beside ~= "" then mirrors_note = nil end
      out:write(("%14s %12s  %s%s\n"):format(group_digits(r.shallow), group_digits(r.count), printable(r.class), beside))
    end
    out:write(("%14s %12s  %s\n"):format(group_digits(total_shallow), group_digits(total_count),
      ("total: %s rows (%s shown), %s classes%s"):format(group_digits(#all), group_digits(#rows),
      group_digits(info.classes), args.heap and (" (heap %s)"):format(args.heap) or "")))
    if mirrors_note then out:write("java.lang.Class: ", mirrors_note, "\n") end  -- its row not shown
  end
  return EXIT_OK
end

function commands.repl(args, out, err)
  local heap <close> = heap_or_report(args, err)
  if not heap then return EXIT_BAD_INPUT end
  return require("sift.repl").run(heap, { input = io.stdin, out = out, err = err })
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

function commands.path(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local cls, why = heap:class(args.class)
  if not cls then
    err:write("sift: ", printable(args.file), ": ", printable(why), "\n")
    return EXIT_BAD_INPUT
  end
  local objs = {}
  for obj in cls:instances() do
    if args.limit > 0 and #objs >= args.limit then break end
    objs[#objs + 1] = obj
  end
  if args.retained then
    with_progress(args, "dominators", function(update)
      return heap:dominators { model = args.model, progress = update }
    end, false)
  end
  local function searched(fn)  -- (the search drawn as it goes)
    return with_progress(args, "paths from the roots", function(update) return fn { progress = update } end, false)
  end
  if args.merge then
    local trees = searched(function(opts) return heap:paths(objs, opts) end)
    if args.json then out:write(json.encode(merged_json(trees)), "\n")
    else draw_merged(out, trees, 0) end
    return EXIT_OK
  end
  searched(function(opts) return heap:path_search(objs, opts) end)
  if args.json then out:write("[") end
  for i, obj in ipairs(objs) do  -- one path at a time: printed, then dropped
    local r, path = views.object_path(heap, obj, { model = args.model, full = args.full, retained = args.retained })
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
  return EXIT_OK
end

function commands.waste(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  heap._model = args.model
  local report = require("sift.heap.waste").report(heap, { top = args.top, model = args.model })
  if args.json then
    out:write(json.encode(report), "\n")
    return EXIT_OK
  end
  local function head(title, rows, rule)
    out:write(("\n== %s (%d) ==\nwasted: %s\n"):format(title, #rows, report.rules[rule]))
  end
  out:write(("sizes: --model %s\n"):format(report.model))
  for _, set in ipairs { { "duplicate_strings", "strings", "value" }, { "duplicate_arrays", "arrays", "value" },
    { "duplicate_bitmaps", "bitmaps", "picture" } } do
    local t = report.totals[set[1]]
    out:write(("duplicate %s: %s %s%s held more than once, %s bytes wasted in all\n"):format(set[2],
      group_digits(t.groups), set[3], t.groups == 1 and "" or "s", group_digits(t.wasted)))
  end
  head("duplicate strings: count, distinct arrays, bytes wasted, value, held by", report.duplicate_strings,
    "duplicate_strings")
  for _, d in ipairs(report.duplicate_strings) do
    out:write(("%8s %8s %12s  %q  %s\n"):format(group_digits(d.count), group_digits(d.arrays),
      group_digits(d.wasted), printable(d.value), d.holders[1] and printable(d.holders[1].class) or ""))
  end
  head("duplicate arrays: count, bytes wasted, type and length, first elements, held by", report.duplicate_arrays,
    "duplicate_arrays")
  for _, d in ipairs(report.duplicate_arrays) do
    out:write(("%8s %12s  %s %s  %s\n"):format(group_digits(d.count), group_digits(d.wasted),
      d.class:gsub("%[%]$", "[" .. d.length .. "]"), d.preview, d.holders[1] and printable(d.holders[1].class) or ""))
  end
  head("duplicate bitmaps: count, bytes wasted, width x height, config, bitmaps", report.duplicate_bitmaps,
    "duplicate_bitmaps")
  for _, d in ipairs(report.duplicate_bitmaps) do
    out:write(("%8s %12s  %dx%d %s  %s\n"):format(group_digits(d.count), group_digits(d.wasted), d.width, d.height,
      d.config or d.format, table.concat(d.bitmaps, " ")))
  end
  head("collections below capacity: instances, fill, bytes wasted, class; worst", report.collections, "collections")
  for _, c in ipairs(report.collections) do
    out:write(("%8s %5s %12s  %s\n"):format(group_digits(c.count), c.fill and ("%.0f%%"):format(100 * c.fill) or "-",
      group_digits(c.wasted), c.class))
    for _, w in ipairs(c.worst) do
      out:write(("%28s %s holds %s of %s\n"):format("", w.id, group_digits(w.size), group_digits(w.capacity)))
    end
  end
  head("arrays of zeros: count, bytes, type, commonest lengths", report.zero_arrays, "zero_arrays")
  for _, z in ipairs(report.zero_arrays) do
    local lengths = {}
    for i, l in ipairs(z.lengths) do if i <= 3 then lengths[i] = ("%s × %s"):format(group_digits(l.count), l.length) end end
    out:write(("%8s %12s  %s  %s\n"):format(group_digits(z.count), group_digits(z.wasted), z.class,
      table.concat(lengths, ", ")))
  end
  head("boxed primitives: count, distinct values, bytes wasted, class", report.boxed, "boxed")
  for _, b in ipairs(report.boxed) do
    out:write(("%8s %8s %12s  %s\n"):format(group_digits(b.count), b.distinct and group_digits(b.distinct) or "?",
      group_digits(b.wasted),
      b.class))
  end
  return EXIT_OK
end

-- a stack frame as a Java stack trace writes it
local function frame_text(f)
  local where = f.line == -3 and "Native method" or f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line)
    or (f.source or "Unknown Source")
  return ("%s.%s(%s)"):format(f.class or "?", f.method or "?", where)
end

function commands.threads(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  heap._model = args.model
  local threads = with_progress(args, "dominators", function(update)
    heap:dominators { model = args.model, progress = update }
    return require("sift.heap.census").threads(heap)
  end, false)
  if args.json then
    out:write(json.encode(threads), "\n")
    return EXIT_OK
  end
  for _, t in ipairs(threads) do
    out:write(("%q (serial %d): the thread retains %s bytes; its stack holds %s\n"):format(printable(t.name or "?"),
      t.serial, group_digits(t.retained or 0), group_digits(t.held)))
    local by_frame = {}
    for _, l in ipairs(t.locals) do
      local k = l.frame or 0
      by_frame[k] = by_frame[k] or {}
      table.insert(by_frame[k], l)
    end
    local function locals(list)
      for _, l in ipairs(list or {}) do
        out:write(("        local %s %s retains %s\n"):format(printable(l.class), l.id, group_digits(l.retained)))
      end
    end
    for i, f in ipairs(t.frames) do
      out:write("    at ", printable(frame_text(f)), "\n")
      locals(by_frame[i])
    end
    if by_frame[0] then
      out:write("    (frame unknown)\n")
      locals(by_frame[0])
    end
  end
  if #threads == 0 then out:write("no threads in this dump\n") end
  return EXIT_OK
end

function commands.loaders(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  heap._model = args.model
  local loaders, duplicates = with_progress(args, "dominators", function(update)
    heap:dominators { model = args.model, progress = update }
    return require("sift.heap.census").loaders(heap)
  end, false)
  if args.json then
    out:write(json.encode({ loaders = loaders, duplicates = duplicates }), "\n")
    return EXIT_OK
  end
  out:write(("%8s %10s %12s  %s\n"):format("classes", "instances", "retained", "loader"))
  for _, l in ipairs(loaders) do
    out:write(("%8s %10s %12s  %s%s%s\n"):format(group_digits(l.classes), group_digits(l.instances),
      l.retained and group_digits(l.retained) or "-", printable(l.name), l.id and (" " .. l.id) or "",
      l.parent and (" (parent " .. l.parent .. ")") or ""))
    for _, d in ipairs(l.dex or {}) do out:write(("%33s dex %s\n"):format("", printable(d))) end
  end
  out:write(("\n%d class%s defined by more than one loader\n"):format(#duplicates, #duplicates == 1 and "" or "es"))
  for _, d in ipairs(duplicates) do
    local names = {}
    for i, l in ipairs(d.loaders) do names[i] = l.name .. (l.id and (" " .. l.id) or "") end
    out:write("  ", printable(d.name), ": ", printable(table.concat(names, ", ")), "\n")
  end
  return EXIT_OK
end

function commands.growth(args, out, err)
  local said = false
  local report, why = require("sift.heap.growth").analyze(args.file, { top = args.top, min_step = args.min_step,
    model = args.model, with_progress = function(label, fn) return with_progress(args, label, fn, false) end,
    open = function(path)
      local heap, msg, code = open_heap(args, path)
      if not heap then
        say_failure(err, path, msg, code)
        said = true
        return nil, msg
      end
      return heap
    end })
  if not report then
    if not said then err:write("sift: growth: ", printable(why), "\n") end
    return EXIT_BAD_INPUT
  end
  if args.json then
    out:write(json.encode(report), "\n")
    return EXIT_OK
  end
  out:write(("%d dumps; %d class%s grew at every step\n"):format(#report.dumps, #report.classes,
    #report.classes == 1 and "" or "es"))
  for _, g in ipairs(report.classes) do
    local deltas = {}
    for i, d in ipairs(g.deltas) do deltas[i] = "+" .. group_digits(d) end
    out:write(("  %s: %s instances (%s per step), %s bytes more\n"):format(printable(g.class),
      table.concat(g.counts, " → "), table.concat(deltas, ", "), group_digits(g.growth)))
    if g.reason then out:write("    no holder: ", printable(g.reason), "\n") end
  end
  for _, h in ipairs(report.holders) do
    out:write("\nheld through: ", printable(h.text), "\n  growing there: ", printable(table.concat(h.classes, ", ")), "\n")
  end
  return EXIT_OK
end

function commands.top(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  local summary = with_progress(args, "dominators", function(update)
    return heap:dominators { model = args.model, progress = update }
  end, false)
  local rows = top_rows(heap, args.n, args.flat)
  if args.json then
    out:write(json.encode(views.top_json(rows)), "\n")
  else
    local objs = {}
    for i, r in ipairs(rows) do objs[i] = r.object end
    local paths = heap:path_to_root(objs)
    out:write(("%14s %10s  %s\n"):format("retained", "shallow", "object (path from a GC root)"))
    for i, r in ipairs(rows) do
      out:write(("%14s %10s  %s\n"):format(group_digits(r.retained), group_digits(r.shallow),
        printable(object_text(r.object))))
      local via, holds = views.top_via(paths[i]), views.top_holds(r)
      if via then out:write(("%26s  via %s\n"):format("", printable(via))) end
      if holds then out:write(("%26s  holds %s\n"):format("", printable(holds))) end
    end
    out:write(("%14s %10s  reachable objects: %s; unreachable: %s objects, %s bytes (model %s)\n"):format("", "",
      group_digits(summary.reachable), group_digits(summary.unreachable), group_digits(summary.unreachable_bytes),
      summary.model))
  end
  return EXIT_OK
end

commands["diff-heap"] = function(args, out, err)
  local base <close> = heap_or_report({ file = args.base, mapping = args.mapping, strings = args.strings, dump = args.dump,
    quiet_here = args.quiet_here, quiet = args.quiet }, err, true)
  if not base then return EXIT_BAD_INPUT end
  local heap <close> = heap_or_report(args, err, true)
  if not heap then
    return EXIT_BAD_INPUT
  end
  local view = views.diff_json(base, heap, args.model, 100)
  if args.top and args.top > 0 then
    for i = #view.classes, args.top + 1, -1 do view.classes[i] = nil end
  end
  if args.json then
    out:write(json.encode(view), "\n")
    return EXIT_OK
  end
  local function signed(n) return (n > 0 and "+" or "") .. group_digits(n) end
  out:write(("%s -> %s: %s -> %s instances (model %s)\n"):format(printable(args.base), printable(args.file),
    group_digits(view.base_instances), group_digits(view.instances), view.model))
  out:write(("%14s %12s  %s\n"):format("bytes", "instances", "class"))
  for _, r in ipairs(view.classes) do
    out:write(("%14s %12s  %s\n"):format(signed(r.shallow_delta), signed(r.count_delta), printable(r.class)))
  end
  local new = view.new_objects
  out:write(("new since the baseline: %s objects, %s bytes\n"):format(group_digits(new.count), group_digits(new.bytes)))
  return EXIT_OK
end

function commands.dominators(args, out, err)
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  with_progress(args, "dominators", function(update)
    return heap:dominators { model = args.model, progress = update }
  end, false)
  local total = heap:reachable_bytes()
  out:write(("%7s %14s  %s\n"):format("%", "retained", "object"))
  -- disjoint subtrees: at most 100 / --min of them hold --min % each
  local most = args.min > 0 and math.floor(100 / args.min) + 1 or nil
  local hidden = 0
  local function walk(parent, depth)
    local shown = 0
    for _, obj in ipairs(heap:dominated(parent, most)) do
      local retained = heap:retained(obj)
      local pct = total > 0 and 100 * retained / total or 0
      if pct < args.min then break end
      shown = shown + 1
      out:write(("%6.2f%% %14s  %s%s\n"):format(pct, group_digits(retained), ("  "):rep(depth),
        printable(object_text(obj))))
      if depth + 1 < args.depth then walk(obj, depth + 1) end
    end
    hidden = hidden + heap:dominated_count(parent) - shown
  end
  walk(nil, 0)
  out:write(("%7s %14s  total reachable (%s smaller subtrees hidden; --min %g%%)\n"):format(
    "100%", group_digits(total), group_digits(hidden), args.min))
  return EXIT_OK
end

function commands.leaks(args, out, err)
  local leaks = require "sift.heap.leaks"
  local finder = args.finder
  local failed  -- the --where error: { object, message }
  if args.where then
    local fn, msg = load("local obj = ...; return " .. args.where, "=--where", "t", setmetatable({}, { __index = _G }))
    if not fn then
      err:write("sift: --where: ", msg, "\n")
      return EXIT_USAGE
    end
    -- an expression that raises (a typo: a method that is not there) stops
    -- the analysis at the first object it raises on, rather than meaning false
    finder = leaks.where(function(obj)
      local ok, v = pcall(fn, obj)
      if not ok then
        failed = { object = obj, message = tostring(v):gsub("^%-%-where:%d+: ", "") }
        error(failed)
      end
      return v and true or false
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
  local heap <close> = heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  if args.class then
    local cls, why = heap:class(args.class)
    if not cls then
      err:write("sift: ", printable(args.file), ": --class: ", printable(why), "\n")
      return EXIT_BAD_INPUT
    end
  end
  local ok, report = pcall(leaks.analyze, heap, { finder = finder, suspects = args.suspects, known = not args.no_known,
    reason = args.where and ("--where " .. args.where) or nil, rules = matchers and matchers.rules,
    library = matchers and matchers.library,
    with_progress = function(label, fn) return with_progress(args, label, fn, false) end })
  if not ok and failed and report == failed then
    local obj = failed.object
    err:write(("sift: --where failed on %s (id 0x%x, class %s): %s\n"):format(printable(tostring(obj)), obj:id(),
      printable(obj:class_name()), printable(failed.message)))
    return EXIT_USAGE
  end
  if not ok then error(report, 0) end
  if args.html then
    local f, msg = io.open(args.html, "w")
    if not f then
      err:write("sift: ", msg, "\n")
      return EXIT_BAD_INPUT
    end
    f:write(leaks.html(report, "sift leaks: " .. args.file))
    f:close()
  end
  if args.json then out:write(json.encode(leaks.to_json(report)), "\n")
  else out:write(leaks.render(report), "\n") end
  return EXIT_OK
end

-- the trace of args.file, or nil after saying why on err

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
      keep_primitives = args.keep_primitives, badoo = args.badoo, progress = update })
  end)
  if not counts then return EXIT_BAD_INPUT end
  if args.json then return EXIT_OK end
  out:write(("%s -> %s: %s -> %s bytes (%s)\n"):format(args.input, args.output, group_digits(counts.bytes_in),
    group_digits(counts.bytes_out), percent_of(counts.bytes_out, counts.bytes_in)))
  out:write(("  strings                %s as text, %s hashed\n"):format(group_digits(counts.strings),
    group_digits(counts.hashed_strings)))
  for _, k in ipairs { "classes", "instances", "object_arrays", "primitive_arrays", "legacy", "roots", "dropped" } do
    if counts[k] > 0 or k ~= "dropped" then
      local note = k == "roots" and counts.roots > 0
        and (counts.kinds > 0 and " (their kinds kept)" or " (their kinds lost, as Badoo's format does)") or ""
      out:write(("  %-22s %s%s\n"):format(k, group_digits(counts[k]), note))
    end
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

-- what other command modules of heap dumps share (sift.cli.bitmaps)
M.heap_options, M.model_option, M.heap_or_report = heap_options, model_option, heap_or_report

return M
