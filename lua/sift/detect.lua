--- Format detection: which kind of dump a file or string holds, and the
-- facts its header gives. The byte-level work is `sift.core.sniff` (C);
-- this module names the results for people.
-- @module sift.detect

local core = require "sift.core"

local M = {}

local format = string.format

--- What each format is called in messages.
M.names = {
  hprof = "HPROF heap dump",
  bmd = "BMD heap dump (Badoo Memory Dump)",
  trace = "Android method trace",
  ofx = "OFX statement",
}

-- a string is taken as bytes, not a path, when no path could look like it
local function looks_like_bytes(s)
  return #s > 4096 or s:find("%c") ~= nil or s:sub(1, 1) == "<"
end

-- "102" -> "1.0.2", "211" -> "2.1.1"
local function ofx_version(v)
  if v == nil then return "?" end  -- (a header cut before its VERSION)
  local s = tostring(v)
  return s:match("^%d%d%d$") and s:gsub("(%d)(%d)(%d)", "%1.%2.%3") or s
end

--- One line that says what was found, e.g.
-- "HPROF 1.0.2 heap dump, 8-byte ids, dumped 2019-10-16 13:45:47 UTC".
-- @tparam table info a detection result
-- @treturn string
function M.describe(info)
  local s
  if info.format == "hprof" then
    s = format("HPROF %s heap dump", info.version or "?")
    if info.id_size then s = s .. format(", %d-byte ids", info.id_size) end
    if info.time then s = s .. ", dumped " .. info.time:gsub("T", " "):gsub("Z", " UTC") end
  elseif info.format == "bmd" then
    s = format("BMD version %d heap dump (Badoo Memory Dump)", info.version)
    if info.hprof_version then s = s .. " of an HPROF " .. info.hprof_version .. " dump" end
  elseif info.format == "trace" then
    s = format("Android method trace (%s, version %s)", info.variant, info.version or "?")
    if info.clock then s = s .. ", clock " .. info.clock end
    if info.threads then s = s .. format(", %d threads", info.threads) end
    if info.methods then s = s .. format(", %d methods", info.methods) end
  elseif info.format == "ofx" then
    if info.header == "v1" then
      s = format("OFX %s statement (SGML, v1 header)", ofx_version(info.version))
      if info.charset then s = s .. ", charset " .. info.charset end
      if info.encoding then s = s .. ", encoding " .. info.encoding end
    elseif info.header == "v2" then
      s = format("OFX %s statement (XML, v2 header)", ofx_version(info.version))
      if info.encoding then s = s .. ", encoding " .. info.encoding end
    else
      s = "OFX statement without a header (body starts with <OFX>"
        .. (info.body_offset and format(" at byte %d", info.body_offset) or "") .. ")"
    end
  else
    s = tostring(info.format)
  end
  if info.compressed then s = s .. ", " .. info.compressed .. "-compressed" end
  return s
end

-- facts derived in Lua from the raw ones
local function complete(info)
  if info.timestamp_ms and info.timestamp_ms > 0 then  -- 0: not recorded
    info.time = os.date("!%Y-%m-%dT%H:%M:%SZ", info.timestamp_ms // 1000)
  end
  info.description = M.describe(info)
  return info
end

--- Detect the format of a file or of bytes in memory.
-- @tparam string source a path, or the bytes themselves. A string is taken
--   as bytes when it holds a control character (NUL, LF, ...), starts
--   with "<", or is longer than 4096 bytes; `opts.bytes` decides explicitly.
-- @tparam[opt] table opts `bytes` (true: source is bytes; false: a path),
--   `progress` (function(done, total), may return false to cancel)
-- @return a table (`format`, `variant`, `compressed`, header facts,
--   `description`, `size`, `path`; `problem` and `problem_code` when the
--   header is damaged or unsupported), or nil, message, code
function M.detect(source, opts)
  if type(source) ~= "string" then
    error(format("bad argument #1 to 'detect' (string expected, got %s)", type(source)), 2)
  end
  opts = opts or {}
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    error("bad option 'progress' to 'detect' (function expected)", 2)
  end
  local as_bytes = opts.bytes
  if as_bytes == nil then as_bytes = looks_like_bytes(source) end
  if as_bytes then
    local info, msg, code = core.sniff(source, opts.progress)
    if not info then return nil, msg, code end
    info.size = #source
    return complete(info)
  end
  local map <close>, err, code = core.map(source)
  if not map then return nil, err, code end
  local info, msg
  info, msg, code = core.sniff(map, opts.progress)
  if not info then return nil, source .. ": " .. msg, code end
  info.path = source
  info.size = map:size()
  return complete(info)
end

return M
