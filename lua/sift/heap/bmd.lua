--- BMD (Badoo Memory Dump): the compact varint heap-dump format. Crunch an
-- HPROF into a BMD (as Badoo's cruncher does, byte for byte), decrunch a
-- BMD back into an HPROF other analysers open, read a BMD's counts, and
-- analyse it directly: `sift.open` gives the same heap as for an HPROF.
--
--     local bmd = require "sift.heap.bmd"
--     assert(bmd.crunch("app.hprof", "app.bmd"))
--     assert(bmd.decrunch("app.bmd", "back.hprof", { strings = { "app.apk" } }))
--     local heap = assert(require("sift").open("app.bmd", { strings = { "app.apk" } }))
--
-- BMD stores most strings as their Java hashCode; names come back from a
-- dictionary: the strings of jars, apks, dex and class files, plus the
-- names sift's own analysis looks for. A string with no match is shown as
-- `Hash$<hash>`. What BMD drops and what sift does about it: docs/bmd.md.
-- @module sift.heap.bmd

local core = require "sift.core"

local M = {}

local function fail(path, err, code) return nil, path .. ": " .. err, code end

local function map(path)
  local m, err, code = core.map(path)
  if not m then return nil, err, code end
  return m
end

-- core classes and fields every Java heap has, beyond the ones the
-- analysis modules name
local CORE = {
  "java.lang.Object", "java.lang.Class", "java.lang.ClassLoader", "java.lang.Thread",
  "java.lang.ThreadGroup", "java.lang.String", "java.lang.Integer", "java.lang.Long",
  "java.util.HashMap", "java.util.HashMap$Node", "java.util.HashMap$TreeNode",
  "java.util.LinkedHashMap", "java.util.LinkedHashMap$Entry", "java.util.HashSet",
  "java.util.ArrayList", "java.util.LinkedList", "java.util.LinkedList$Node",
  "java.util.Hashtable", "java.util.Hashtable$Entry", "java.util.WeakHashMap",
  "java.util.WeakHashMap$Entry", "java.util.concurrent.ConcurrentHashMap",
  "java.util.concurrent.ConcurrentHashMap$Node", "java.util.TreeMap", "java.util.TreeMap$Entry",
  -- primitive array classes, as HotSpot names them (Android's int[] come with them)
  "[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J",
  "value", "key", "next", "prev", "table", "elementData", "size", "count", "hash", "name",
  "parent", "referent", "queue", "threads", "groups", "contextClassLoader", "target",
  "first", "last", "item", "left", "right", "coder", "offset", "classLoader", "classes",
}

--- The names sift's analysis refers to (reference rules, leak finders and
-- inspectors, the known-leak catalogue): the quoted names in those
-- modules' sources, so that a hashed dump recovers every class or field
-- name a rule could match; and the core JDK classes and fields.
function M.analysis_names()
  local names, seen = {}, {}
  for _, s in ipairs(CORE) do
    seen[s] = true
    names[#names + 1] = s
  end
  for _, mod in ipairs { "sift.heap", "sift.heap.leaks", "sift.heap.known_leaks" } do
    local path = package.searchpath(mod, package.path)
    local f = path and io.open(path)
    if f then
      for s in f:read("a"):gmatch('"([%a_$][%w_$.]*)"') do
        if not seen[s] then
          seen[s] = true
          names[#names + 1] = s
        end
      end
      f:close()
    end
  end
  return names
end

--- A dictionary for decrunching: the strings of each file (jar, apk, dex,
-- class) and, unless `opts.analysis_names` is false, `analysis_names()`.
-- @tparam {string} files
-- @return dictionary, counts (strings found per file), or nil, message, code
function M.dictionary(files, opts)
  opts = opts or {}
  local dict, found = core.dictionary(), {}
  if opts.analysis_names ~= false then dict:add_names(M.analysis_names()) end
  for _, path in ipairs(files or {}) do
    local m, err, code = map(path)
    if not m then return nil, err, code end
    local n
    n, err, code = dict:add(m)
    m:close()
    if not n then return fail(path, err, code) end
    found[path] = n
  end
  return dict, found
end

-- opts.dictionary, or one made from opts.strings
local function dictionary_of(opts)
  if opts.dictionary then return opts.dictionary end
  return M.dictionary(opts.strings, opts)
end

--- HPROF (plain, gzip or bzip2; 1.0.1 to 1.0.3; 4- or 8-byte ids) to BMD.
-- The output is written to `output .. ".part"` and renamed when complete.
-- @tparam table opts `keep` (list of string prefixes kept as text, beyond
--   `java.lang` and the primitive type names), `keep_primitives` (every
--   class keeps its primitive fields, not only the ones named as text),
--   `badoo` (write exactly Badoo's cruncher's bytes; by default sift adds
--   one STRING record keeping the GC roots' kinds, which Badoo's format
--   loses and every BMD reader accepts: core/bmd.h), `progress`
-- @return counts `{ strings, hashed_strings, classes, instances,
--   object_arrays, primitive_arrays, legacy, roots, kinds (roots whose
--   kind is kept), dropped, bytes_in, bytes_out, legacy_tags }`, or nil,
--   message, code. An HPROF with no heap dump in it (a header and strings:
--   one cut before its HEAP_DUMP record) is an error ("holds no heap dump
--   (no HEAP_DUMP record): nothing to analyse", code "empty"): no file is
--   written.
function M.crunch(input, output, opts)
  opts = opts or {}
  local m, err, code = map(input)
  if not m then return nil, err, code end
  local head = m:read(0, 3)
  if head:sub(1, 2) == "\31\139" or head == "BZh" then  -- compressed: inflate to a temporary file
    local inflated
    inflated, err, code = core.inflate(m, opts.progress)
    m:close()
    if not inflated then return fail(input, err, code) end
    m = inflated
  end
  local counts
  counts, err, code = core.bmd_crunch(m, output, opts, opts.progress)
  m:close()
  if not counts then return fail(input, err, code) end
  return counts
end

--- The default cap on a decrunched HPROF: 256 MiB plus a thousand times
-- the BMD. BMD drops primitive arrays' contents, and decrunching writes
-- them back as zeros, so a tiny hostile BMD could ask for terabytes; real
-- ones come to 5-50 times their size.
function M.default_max_output(bmd_bytes)
  return 256 * 1024 * 1024 + 1000 * bmd_bytes
end

--- BMD to HPROF (4-byte ids) for other analysers. Refused before anything
-- is written when the HPROF would pass `max_output` bytes or the free
-- space of the output's file system ("too_big").
-- @tparam table opts `strings` (jar/apk/dex/class files to recover names
--   from) or `dictionary`, `analysis_names` (default true), `progress`,
--   `max_output` (bytes; default `default_max_output`; 0: no cap)
-- @return stats `{ recovered, placeholders, legacy_dropped, bytes_out }`,
--   or nil, message, code
function M.decrunch(input, output, opts)
  opts = opts or {}
  local dict, err, code = dictionary_of(opts)
  if not dict then return nil, err, code end
  local m
  m, err, code = map(input)
  if not m then return nil, err, code end
  local stats
  stats, err, code = core.bmd_decrunch(m, output, { dictionary = dict,
    max_output = opts.max_output or M.default_max_output(m:size()) }, opts.progress)
  m:close()
  if not stats then return fail(input, err, code) end
  return stats
end

--- A BMD's header and record counts, every record checked: `header`,
-- `strings` (kept as text), `hashed_strings`, `classes`, `instances`,
-- `object_arrays`, `primitive_arrays`, `legacy` (and `legacy_tags`),
-- `roots`, `bytes`; with `opts.source` (the HPROF it came from) also
-- `source_bytes` and `ratio`.
function M.info(path, opts)
  opts = opts or {}
  local m, err, code = map(path)
  if not m then return nil, err, code end
  local info
  info, err, code = core.bmd_info(m, opts.progress)
  m:close()
  if not info then return fail(path, err, code) end
  info.bytes, info.bytes_in, info.bytes_out, info.dropped = info.bytes_in, nil, nil, nil
  if opts.source then
    local f = io.open(opts.source, "rb")
    if f then
      info.source_bytes = f:seek("end")
      info.ratio = info.bytes / info.source_bytes
      f:close()
    end
  end
  return info
end

--- Open a BMD for analysis: it is decrunched into a temporary HPROF
-- (primitive arrays without their zeros) and indexed like any dump.
-- @tparam table opts as `sift.heap.open`, plus `strings`/`dictionary`
-- @return heap (`info().format == "bmd"`), or nil, message, code
function M.open(path, opts)
  opts = opts or {}
  local dict, err, code = dictionary_of(opts)
  if not dict then return nil, err, code end
  local m
  m, err, code = map(path)
  if not m then return nil, err, code end
  local source, stats
  source, stats, code = core.bmd_decrunch(m, nil, { dictionary = dict, nodata = true, plain_names = true }, opts.progress)
  m:close()
  if not source then return fail(path, stats, code) end
  return require("sift.heap").open_source(source, path, opts, { format = "bmd", bmd = stats })
end

return M
