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

--- Open a dump for analysis.
-- No decoder is built in yet, so after detection this reports which one
-- the file needs.
-- @tparam string path
-- @tparam[opt] table opts `progress` as for `detect`
-- @return nil, message, code ("unsupported" for a recognised format)
function M.open(path, opts)
  if type(path) ~= "string" then
    error(("bad argument #1 to 'open' (string expected, got %s)"):format(type(path)), 2)
  end
  local info, msg, code = detect.detect(path, {
    bytes = false, progress = opts and opts.progress,
  })
  if not info then return nil, msg, code end
  return nil, ("%s: no decoder for %s yet (%s)"):format(
    path, detect.names[info.format], info.description), "unsupported"
end

return M
