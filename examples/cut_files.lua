-- What sift says about a file cut short, at a few points of its length:
-- every cut either reads with a warning naming where the file ends, or
-- fails with the byte offset; never a quiet success.
--
--   sift run examples/cut_files.lua FILE [sift command, default by format]
local sift = require "sift"
local cli = require "sift.cli"

local path = assert(arg[1], "usage: sift run examples/cut_files.lua FILE [COMMAND]")
local info = assert(sift.detect(path, { bytes = false }))
local command = arg[2] or ({ hprof = "histogram", bmd = "info", trace = "profile", ofx = "ofx" })[info.format]
local bytes = io.open(path, "rb"):read("a")

local function run(args)  -- the CLI in this process: status and stderr
  local err = {}
  local sink = { write = function(_, ...) for _, s in ipairs { ... } do err[#err + 1] = s end return true end }
  local status = cli.main(args, { out = { write = function() return true end }, err = sink })
  return status, table.concat(err):gsub("\n$", ""):gsub("\n", "\n" .. (" "):rep(26))
end

local cut = os.tmpname()
for _, at in ipairs { 10, #bytes // 4, #bytes // 2, #bytes - 3 } do
  local f = assert(io.open(cut, "wb"))
  f:write(bytes:sub(1, at))
  f:close()
  local status, said = run { command, cut, "-q" }
  print(("%8d of %d: exit %d  %s"):format(at, #bytes, status, said:gsub(cut, "(cut)")))
end
os.remove(cut)
