--- `sift info`: what a file is, for every format sift reads, and the facts
-- of its header (with the index's counts for a heap dump).
-- @module sift.cli.info

local sift = require "sift"
local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }
local commands = M.commands

local EXIT_OK, EXIT_BAD_INPUT = common.EXIT_OK, common.EXIT_BAD_INPUT
local printable, with_progress, open_heap = common.printable, common.with_progress, common.open_heap

function M.define.info(parser)
  local info = parser:command("info", "Detect the format of each FILE and print the facts of its header.")
    :description("Detect the format of each FILE (HPROF, BMD, Android method trace, OFX; "
      .. "gzip or bzip2 compressed) and print the facts of its header.\n"
      .. "An OFX file is checked for a cut (its body's <OFX> start and </OFX> end: cheap, also with --header).\n"
      .. "Exits 1 when a file is unreadable, unrecognised or damaged (cut short).")
    :epilog("Facts (one a line; a fact a file does not have is left out):\n"
      .. "  every file: format, compressed (gzip, bzip2), size (bytes on disk), problem (when damaged); "
      .. "the first line describes the file\n"
      .. "  HPROF: version, id_size, time (UTC; none when the dump records 0), timestamp_ms, header_size; "
      .. "unless --header, from the index: objects, classes, instances, object_arrays, primitive_arrays, "
      .. "names (UTF8 records: class, field, method and thread names; not java.lang.String objects, which "
      .. "are among the instances), roots (by kind), heaps (Android), dumps (in the file), dump (the one "
      .. "read), duplicates, missing_classes, truncated_at (where a cut dump ends), warnings\n"
      .. "  BMD: version, hprof_header, hprof_version, header_size; unless --header, from every record: "
      .. "classes, instances, object_arrays, primitive_arrays, names (UTF8 records kept as text), "
      .. "hashed_names, legacy (HPROF records copied as they were), legacy_tags, roots; with --source: "
      .. "source_bytes, ratio\n"
      .. "  trace: variant (regular, streaming), version, clock, vm, pid, threads, methods, records, "
      .. "num_method_calls, record_size, data_offset, elapsed_time_us, start_time_us, "
      .. "clock_call_overhead_ns, data_file_overflow; unless --header, from decoding: records (decoded), "
      .. "longest_thread_us (not on a thread-cpu clock), thread_records (records per thread), "
      .. "unknown_methods, orphan_exits, mismatched_exits, warnings\n"
      .. "  OFX: variant (sgml, xml, headerless), version, header (v1, v2, none), encoding, charset, "
      .. "security, data, compression, oldfileuid, newfileuid, ofxheader (the header's keys the file has), "
      .. "body_offset (when text precedes <OFX>)\n"
      .. "--json prints the same facts with path and description (and problem_code).")
  info:argument("file", "A dump, trace or statement."):args("+")
  info:flag("--json", "Print JSON: an object for one FILE, an array for several.")
  info:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  info:flag("--header", "Only detect the format and read the header; do not index heap dumps.")
  info:option("--source", "For a BMD file: the HPROF it was crunched from, to show the size ratio.")
end

-- the order facts are listed in; others follow alphabetically
local FACT_ORDER = {
  "format", "variant", "compressed", "version", "id_size", "time", "timestamp_ms",
  "hprof_header", "hprof_version", "clock", "vm", "pid", "threads", "methods", "records",
  "num_method_calls", "record_size", "data_offset", "elapsed_time_us",
  "start_time_us", "header", "encoding", "charset", "security", "data",
  "body_offset", "header_size", "size", "source_bytes", "ratio", "objects", "classes", "instances",
  "object_arrays", "primitive_arrays", "names", "hashed_names", "legacy", "legacy_tags", "roots", "heaps", "dumps", "dump",
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


-- the index's counts, added to what detection found
local HEAP_FACTS = { "objects", "classes", "instances", "object_arrays", "primitive_arrays",
  "dumps", "dump", "duplicates", "missing_classes", "truncated_at", "roots", "heaps", "warnings" }

local function add_heap_facts(args, path, info)
  local heap <close>, msg, code = open_heap(args, path)
  if not heap then return nil, msg, code end
  local facts = heap:info()
  for _, k in ipairs(HEAP_FACTS) do info[k] = facts[k] end
  -- (the index's `strings` are the UTF8 records: names, not java.lang.String objects)
  info.names = facts.strings
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
  for _, k in ipairs { "classes", "instances", "object_arrays", "primitive_arrays", "legacy", "roots",
      "source_bytes" } do
    info[k] = facts[k]
  end
  info.names, info.hashed_names = facts.strings, facts.hashed_strings  -- (UTF8 records kept as text, hashed)
  if next(facts.legacy_tags) then
    info.legacy_tags = {}
    for tag, n in pairs(facts.legacy_tags) do info.legacy_tags[("0x%02X"):format(tag)] = n end
  end
  info.ratio = facts.ratio and ("%.1f%%"):format(100 * facts.ratio)
  return info
end

-- what decoding a trace adds: records per thread, durations, odd exits
local function add_trace_facts(args, path, info)
  local trace <close>, msg, code = with_progress(args, path, function(update)
    return sift.open(path, { progress = update })
  end)
  if not trace then return nil, msg, code end
  local facts = trace:info()
  local busy, wall = {}, 0
  for _, th in ipairs(trace:threads()) do
    if th.records > 0 then busy[#busy + 1] = ("%s %d"):format(th.name or th.tid, th.records) end
    if th.wall > wall then wall = th.wall end
  end
  info.records = facts.records
  info.thread_records = table.concat(busy, ", ")
  info.longest_thread_us = facts.clock ~= "thread-cpu" and wall or nil
  for _, k in ipairs { "unknown_methods", "orphan_exits", "mismatched_exits" } do
    if facts[k] > 0 then info[k] = facts[k] end
  end
  if #facts.warnings > 0 then info.warnings = facts.warnings end
  return info
end

-- {======================================================
-- OFX: is the body all there?
-- =======================================================

-- where the body is looked for (from the start) and its end (before the end)
local OFX_HEAD, OFX_TAIL = 65536, 4096
-- the most a compressed OFX is inflated to, to be checked
local OFX_MAX_INFLATED = 256 * 1024 * 1024

-- why the OFX text in map is cut short (a message naming the byte where it
-- ends, and a code), or nil when its body is whole: <OFX> near the start,
-- </OFX> near the end with no <OFX> after it. Cheap: two windows are read.
-- `what` names the text: "file", or "decompressed text".
local function ofx_cut(map, info, what)
  local size = map:size()
  local head = map:read(0, math.min(size, OFX_HEAD)):upper()
  local start = head:find("<OFX>", 1, true)
  if not start then
    if size > OFX_HEAD then
      return ("no <OFX> element in the first %d bytes of the %s: not a statement"):format(OFX_HEAD, what), "corrupt"
    end
    local pi = info.header == "v2" and head:find("<?OFX", 1, true)
    local complete = info.header == "v1" and head:find("\n%s*\n") or pi and head:find("?>", pi, true)
    return ("cut short: the %s ends at byte %d, %s, before its <OFX> element"):format(what, size,
      info.header == "none" and "before the body" or complete and "after its header" or "inside its header"),
      "truncated"
  end
  local from = math.max(start + 4, size - OFX_TAIL)  -- (0-based: just past <OFX>, or the last bytes)
  local tail = map:read(from, size - from):upper()
  local last
  for at in tail:gmatch("()</OFX>") do last = at end
  if not last then
    return ("cut short: the body has no </OFX> end tag: the %s ends at byte %d"):format(what, size), "truncated"
  end
  local again = tail:find("<OFX>", last, true)
  if again then
    return ("cut short: a second <OFX> element at byte %d has no </OFX> end tag: the %s ends at byte %d"):format(
      from + again - 1, what, size), "truncated"
  end
  return nil
end

-- info with `problem` set when the OFX file at path is cut short
local function check_ofx(path, info)
  local core = require "sift.core"
  local map <close>, msg, code = core.map(path)
  if not map then
    info.problem, info.problem_code = msg, code
    return info
  end
  local text, what = map, "file"
  if info.compressed then
    local inflated
    inflated, msg, code = core.inflate(map, nil, OFX_MAX_INFLATED)
    if not inflated then
      if code ~= "too_big" then info.problem, info.problem_code = msg, code end  -- (too big to check: not damage)
      return info
    end
    text, what = inflated, "decompressed text"
  end
  info.problem, info.problem_code = ofx_cut(text, info, what)
  if text ~= map then text:close() end
  return info
end

-- }======================================================

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
    elseif info and info.format == "ofx" and not info.problem then  -- (cheap: also with --header)
      info = check_ofx(path, info)
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

return M
