--- The fleet commands of `sift`: `worker` (analyse queued dumps) and
-- `fleet` (groups, status, fix).
-- @module sift.cli.fleet

local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

local function data_option(cmd)
  cmd:option("--data", "The data directory (sift serve --ingest's --data).", (os.getenv("TMPDIR") or "/tmp") .. "/sift-serve")
end

function M.define.worker(parser)
  local w = parser:command("worker", "Analyse the dumps and traces queued by sift serve --ingest.")
    :description("Take jobs from the queue in --data (the embedded SQLite default), analyse each file (leaks "
      .. "with signatures and retained sizes, a histogram summary; for traces the top methods) and write the "
      .. "results. Any number of workers may share a data directory. A job a killed worker left is taken "
      .. "again once its lease runs out; a bad file is recorded as failed with its message.")
  data_option(w)
  w:flag("--once", "Stop when the queue is empty.")
  w:option("--lease", "Seconds a job stays this worker's before another may take it.", "600"):convert(tonumber)
  w:option("--parent", "Stop when the process with this pid is gone."):convert(tonumber)
  w:flag("-q --quiet", "Say nothing per job."):target("quiet_here")
end

function M.commands.worker(args, out, err)
  local fleet, msg = require("sift.fleet").open(args.data)
  if not fleet then
    err:write("sift: ", common.printable(msg), "\n")
    return common.EXIT_BAD_INPUT
  end
  fleet:work { once = args.once, lease = args.lease, parent = args.parent,
    log = not (args.quiet or args.quiet_here) and function(line) out:write(line, "\n") out:flush() end or nil }
  fleet:close()
  return common.EXIT_OK
end

function M.define.fleet(parser)
  local f = parser:command("fleet", "The leak groups of a fleet's dumps: list them, the queue's status, mark one fixed.")
    :description("groups: leak groups, most dumps first, with first and last seen, versions, devices, retained "
      .. "bytes and a representative trace. status: jobs by state and the failed ones. fix SIGNATURE VERSION: "
      .. "mark a group fixed in a version (it reopens when a later version has it).")
  f:argument("action", "groups, status or fix."):choices { "groups", "status", "fix" }
  f:argument("what", "For fix: the group's signature and the version."):args("*")
  data_option(f)
  f:flag("--all", "groups: also those marked fixed and not seen since.")
  f:flag("--json", "Print JSON.")
end

function M.commands.fleet(args, out, err)
  local fleet, msg = require("sift.fleet").open(args.data)
  if not fleet then
    err:write("sift: ", common.printable(msg), "\n")
    return common.EXIT_BAD_INPUT
  end
  local status = common.EXIT_OK
  if args.action == "fix" then
    if #args.what ~= 2 then
      err:write("sift: fleet fix takes a signature and a version\n")
      status = common.EXIT_USAGE
    else
      fleet:mark_fixed(args.what[1], args.what[2])
    end
  elseif args.action == "status" then
    local st = fleet:status()
    st.failures = fleet:failures()
    if args.json then out:write(json.encode(st), "\n")
    else
      out:write(("%d uploads; files: %d queued, %d running, %d done, %d failed\n"):format(st.uploads, st.queued,
        st.running, st.done, st.failed))
      for _, f in ipairs(st.failures) do out:write("  failed ", f.sha256:sub(1, 12), ": ", common.printable(f.error), "\n") end
    end
  else
    local groups = fleet:groups { all = args.all }
    if args.json then out:write(json.encode(groups), "\n")
    else
      for _, g in ipairs(groups) do
        out:write(("%5d dumps  %s  %s%s\n"):format(g.dumps, g.signature:sub(1, 12), common.printable(g.description or "?"),
          g.reopened and " (reopened)" or ""))
        out:write(("             %s .. %s; versions %s; %d device(s); retained %s in all, median %s\n"):format(
          g.first_seen, g.last_seen, table.concat(g.versions, ", "), #g.devices, common.group_digits(g.retained_total),
          common.group_digits(g.retained_median or 0)))
      end
      if #groups == 0 then out:write("no leak groups\n") end
    end
  end
  fleet:close()
  return status
end

return M
