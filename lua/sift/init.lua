--- sift: decode the dumps that software and banks leave behind.
-- Heap dumps (HPROF, BMD), Android method traces and OFX statements.
--
--     local sift = require "sift"
--     local info = assert(sift.detect("app.hprof"))
--     print(info.description)
--
-- Errors follow one rule: misuse raises, bad input returns
-- `nil, message, code` (docs/errors.md).
-- @module sift

local core = require "sift.core"
local detect = require "sift.detect"

local M = {
  _VERSION = core._VERSION,
  detect = detect.detect,
  describe = detect.describe,
}

-- the modules that open each format
local openers = {
  hprof = function(path, opts) return require("sift.heap").open(path, opts) end,
  trace = function(path, opts) return require("sift.trace").open(path, opts) end,
  bmd = function(path, opts) return require("sift.heap.bmd").open(path, opts) end,
  ofx = function(path, opts) return require("sift.ofx").read(path, opts) end,
}

--- Open a dump for analysis: a heap for an HPROF or BMD file (see
-- `sift.heap`, `sift.heap.bmd`), a trace for an Android method trace (see
-- `sift.trace`), the parsed statements of an OFX/QFX file (what
-- `sift.ofx.read` returns; a compressed one gives `nil, message,
-- "unsupported"`).
-- @tparam string path
-- @tparam[opt] table opts `progress` (function(done, total)), and the
--   format's own options (HPROF: `dump`, `mapping`; BMD: also `strings`;
--   OFX: `strict`, `lazy`)
-- @return the opened dump, or nil, message, code
function M.open(path, opts)
  if type(path) ~= "string" then
    error(("bad argument #1 to 'open' (string expected, got %s)"):format(type(path)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(("bad argument #2 to 'open' (table expected, got %s)"):format(type(opts)), 2)
  end
  local info, msg, code = detect.detect(path, { bytes = false })
  if not info then return nil, msg, code end
  if info.problem then return nil, path .. ": " .. info.problem, info.problem_code end
  if info.format == "ofx" and info.compressed then  -- (sift.ofx reads the text itself, as sift ofx does)
    return nil, ("%s: a %s-compressed OFX statement: decompress it first"):format(path, info.compressed),
      "unsupported"
  end
  return openers[info.format](path, opts)
end

return M
