-- What the benchmark sections share: running a shell command, timing it
-- (best of several runs), file sizes.
local M = {}

--- QUICK=1: each section on its small inputs only (the same ratios)
M.QUICK = (os.getenv("QUICK") or "") ~= "" and os.getenv("QUICK") ~= "0"

--- The sizes a section runs: from the environment variable `name`, else
-- `quick` with QUICK=1, else `full` (strings of numbers).
function M.sizes(name, full, quick)
  local out = {}
  for n in (os.getenv(name) or (M.QUICK and quick or full)):gmatch("%d+") do out[#out + 1] = tonumber(n) end
  return out
end

--- ok, output (stdout and stderr) of a shell command.
function M.sh(cmd)
  local p = io.popen("{ " .. cmd .. "; } 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

function M.exists(path)
  local f = io.open(path)
  if f then f:close() return true end
end

function M.size(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n
end

--- Best wall-clock seconds of `runs` runs and the fastest run's output;
-- nil and the output when a run fails. quiet: the command's output goes
-- to /dev/null.
function M.best(cmd, runs, quiet)
  local t, output = math.huge, nil
  if quiet then cmd = "{ " .. cmd .. "; } >/dev/null 2>&1" end
  for _ = 1, runs or 1 do
    local ok, out = M.sh(("s=$(date +%%s%%N); %s; echo \"wall_ns=$(( $(date +%%s%%N) - s ))\""):format(cmd))
    local ns = tonumber(out:match("wall_ns=(%d+)"))
    if not ok or not ns then return nil, out end
    if ns / 1e9 < t then t, output = ns / 1e9, out end
  end
  return t, output
end

return M
