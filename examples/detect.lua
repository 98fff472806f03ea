-- What is this file? Detect the format of each file named on the command
-- line and print what sift found, or why it could not tell.
--
--   sift run examples/detect.lua dump.hprof onCreate.trace bank.qfx
local sift = require "sift"

local status = 0
for _, path in ipairs(arg) do
  local info, err, code = sift.detect(path)
  if not info then
    print(("%-40s %s [%s]"):format(path, err, code))
    status = 1
  else
    print(("%-40s %s"):format(path, info.description))
    if info.problem then print(("%-40s problem: %s"):format("", info.problem)) end
  end
end
os.exit(status)
