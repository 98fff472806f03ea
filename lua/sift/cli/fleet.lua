--- The fleet commands of `sift`: `worker` (analyse queued dumps) and
-- `fleet` (groups, status, fix).
-- @module sift.cli.fleet

local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

local function data_option(cmd)
  cmd:option("--data", "The data directory (sift serve --ingest's --data). Default: $XDG_DATA_HOME/sift/serve, "
    .. "else ~/.local/share/sift/serve.")
  cmd:option("--group", "Let this group read what is written (files 0640, directories 0750); by default only "
    .. "this user (0600, 0700).")
end

--- The engines' options (sift serve has them too): a Redis URL and a
-- PostgreSQL URL, by default from SIFT_REDIS and SIFT_POSTGRES (a password
-- is better in the environment than on a command line).
function M.engine_options(cmd)
  cmd:option("--redis", "Jobs on this Redis (redis://[:password@]host:port[/db]); with --postgres. "
    .. "Default: $SIFT_REDIS.")
  cmd:option("--postgres", "Results in this PostgreSQL (postgresql://user[:password]@host:port/database); "
    .. "with --redis. Default: $SIFT_POSTGRES.")
end

--- The engines' URLs of parsed arguments, or nil (the embedded default).
function M.engines(args)
  local redis, postgres = args.redis or os.getenv("SIFT_REDIS"), args.postgres or os.getenv("SIFT_POSTGRES")
  if redis == "" then redis = nil end
  if postgres == "" then postgres = nil end
  return redis, postgres
end

local function open(args, err, extra)
  -- what the fleet writes (its database, the WAL) is private
  local private = require "sift.private"
  local ok, why = private.restrict(args.group)
  if ok and not args.data then args.data, why = private.data_dir() end
  if ok and args.data then ok, why = private.directory(args.data, args.group) end
  if not ok or not args.data then
    err:write("sift: ", common.printable(why), "\n")
    return nil, common.EXIT_USAGE
  end
  local redis, postgres = M.engines(args)
  local opts = { redis = redis, postgres = postgres, log = function(line) err:write("sift: ", line, "\n") end }
  for k, v in pairs(extra or {}) do opts[k] = v end
  local fleet, msg, code = require("sift.fleet").open(args.data, opts)
  if not fleet then
    err:write("sift: ", common.printable(msg), "\n")
    return nil, code == "usage" and common.EXIT_USAGE or common.EXIT_BAD_INPUT
  end
  return fleet
end

function M.define.worker(parser)
  local w = parser:command("worker", "Analyse the dumps and traces queued by sift serve --ingest.")
    :description("Take jobs from the queue in --data (the embedded SQLite default) or, with --redis and "
      .. "--postgres, from the Redis Stream with results in PostgreSQL; analyse each file (leaks with signatures "
      .. "and retained sizes, a histogram summary; for traces the top methods and folded stacks) and write the "
      .. "results. Any number of workers may share a queue (on the engines, from any machine that mounts the "
      .. "files: --files). A job a killed worker left is taken again once it has been held past --lease; a bad "
      .. "file is recorded as failed with its message; an engine that goes away is waited for (5 minutes).")
  data_option(w)
  M.engine_options(w)
  w:option("--files", "Where this machine sees the stored files: a directory (the server's --data, mounted), "
    .. "or a template with {sha256} and {name}. Default: the path the server wrote.")
  w:flag("--once", "Stop when the queue is empty.")
  w:option("--lease", "Seconds a job stays this worker's before another may take it.", "600"):convert(tonumber)
  w:option("--parent", "Stop when the process with this pid is gone."):convert(tonumber)
  w:flag("-q --quiet", "Say nothing per job."):target("quiet_here")
end

function M.commands.worker(args, out, err)
  local fleet <close>, status = open(args, err)
  if not fleet then return status end
  local ok, why = pcall(fleet.work, fleet, { once = args.once, lease = args.lease, parent = args.parent,
    files = args.files,
    log = not (args.quiet or args.quiet_here) and function(line) out:write(line, "\n") out:flush() end or nil })
  if not ok then  -- (an engine away for longer than its retries)
    err:write("sift: worker: ", common.printable(tostring(why)), "\n")
    return common.EXIT_BAD_INPUT
  end
  return common.EXIT_OK
end

function M.define.fleet(parser)
  local f = parser:command("fleet", "The leak groups of a fleet's dumps: list them, the queue's status, mark one fixed.")
    :description("groups: leak groups, most dumps first, with first and last seen, versions, devices, retained "
      .. "bytes and a representative trace. status: jobs by state, the failed ones and those done with warnings (a cut "
      .. "or damaged dump: its leaks are counted, as damaged). fix SIGNATURE VERSION: "
      .. "mark a group fixed in a version (it reopens when a later version has it). symbols --app APP --version V "
      .. "FILE...: the app version's apk, jar or dex (the names a BMD hashes) and its R8/ProGuard mapping, so that "
      .. "workers recover the names of its dumps (those analysed before are analysed again); --platform NAME FILE...: "
      .. "a platform's jars for every BMD; --list: what is recorded. migrate: create or update "
      .. "the PostgreSQL schema (--redis, --postgres); the embedded SQLite file is brought up to date when opened, "
      .. "and migrate says how many migrations that took.")
  f:argument("action", "groups, status, fix, migrate or symbols."):choices { "groups", "status", "fix", "migrate",
    "symbols" }
  f:argument("what", "For fix: the group's signature and the version. For symbols: the files (apk, jar, dex or "
    .. "class files, R8/ProGuard mappings)."):args("*")
  f:option("--app", "symbols: the app the files are of (as uploads name it: X-Sift-App).")
  f:option("--version", "symbols: the app's version the files are of (X-Sift-Version).")
  f:option("--platform", "symbols: the files are a platform's, for every BMD (its jars or dex: android.jar of "
    .. "an API level), registered once under this name (android-34).")
  f:flag("--list", "symbols: list the symbol files recorded.")
  data_option(f)
  M.engine_options(f)
  f:flag("--all", "groups: also those marked fixed and not seen since.")
  f:option("--limit", "groups: at most this many, a page (0: all).", "50"):convert(tonumber)
  f:option("--offset", "groups: after the first this many (the next page: --offset plus --limit).", "0")
    :convert(tonumber)
  f:flag("--json", "Print JSON.")
end

function M.commands.fleet(args, out, err)
  local fleet <close>, status = open(args, err, { migrating = args.action == "migrate" })
  if not fleet then return status end
  status = common.EXIT_OK
  if args.action == "migrate" then
    local applied = fleet:migrate()
    out:write(("schema up to date (%d migration%s applied)\n"):format(applied, applied == 1 and "" or "s"))
  elseif args.action == "fix" then
    if #args.what ~= 2 then
      err:write("sift: fleet fix takes a signature and a version\n")
      status = common.EXIT_USAGE
    else
      fleet:mark_fixed(args.what[1], args.what[2])
    end
  elseif args.action == "symbols" then
    status = M.symbols(fleet, args, out, err)
  elseif args.action == "status" then
    local st = fleet:status()
    st.failures, st.warnings = fleet:failures(), fleet:warned()
    if args.json then out:write(json.encode(st), "\n")
    else
      out:write(("%d uploads; files: %d queued, %d running, %d done%s, %d failed\n"):format(st.uploads, st.queued,
        st.running, st.done, st.done_with_warnings > 0 and (" (%d with warnings)"):format(st.done_with_warnings) or "",
        st.failed))
      for _, f in ipairs(st.warnings) do
        for _, w in ipairs(f.warnings) do
          out:write("  warning ", f.sha256:sub(1, 12), ": ", common.printable(w), "\n")
        end
      end
      for _, f in ipairs(st.failures) do out:write("  failed ", f.sha256:sub(1, 12), ": ", common.printable(f.error), "\n") end
      for _, n in ipairs(st.no_symbols) do
        out:write(("  %s: %d file%s analysed without names\n"):format(common.printable(n.nameless), n.files,
          n.files == 1 and "" or "s"))
      end
    end
  else
    if not (math.tointeger(args.limit) and args.limit >= 0 and math.tointeger(args.offset) and args.offset >= 0) then
      err:write("sift: --limit and --offset take a whole number, 0 or more\n")
      return common.EXIT_USAGE
    end
    local groups, total = fleet:groups { all = args.all, limit = args.limit, offset = args.offset }
    if args.json then out:write(json.encode(groups), "\n")
    else
      for _, g in ipairs(groups) do
        out:write(("%5d dumps  %s  %s%s\n"):format(g.dumps, g.signature:sub(1, 12), common.printable(g.description or "?"),
          g.reopened and " (reopened)" or ""))
        out:write(("             %s .. %s; versions %s; %d device(s); retained %s in all, median %s%s\n"):format(
          g.first_seen, g.last_seen, table.concat(g.versions, ", "), #g.devices, common.group_digits(g.retained_total),
          common.group_digits(g.retained_median or 0),
          g.damaged_dumps > 0 and ("; %d of the dumps damaged (cut, bad records)"):format(g.damaged_dumps) or ""))
        for _, n in ipairs(g.no_symbols or {}) do out:write("             ", common.printable(n), "\n") end
      end
      if total == 0 then out:write("no leak groups\n")
      elseif #groups == 0 then out:write(("no leak groups after the first %d (%d in all)\n"):format(args.offset, total))
      elseif #groups < total then
        out:write(("groups %d-%d of %s%s\n"):format(args.offset + 1, args.offset + #groups, common.group_digits(total),
          args.offset + #groups < total and ("; the next: --offset %d"):format(args.offset + #groups) or ""))
      end
    end
  end
  return status
end

-- sift fleet symbols: add symbol files (--app and --version, or
-- --platform), or --list them
function M.symbols(fleet, args, out, err)
  if args.list then
    if #args.what > 0 or args.app or args.version or args.platform then
      err:write("sift: fleet symbols --list takes no files, --app, --version or --platform\n")
      return common.EXIT_USAGE
    end
    local list = fleet:symbols()
    if args.json then out:write(json.encode(list), "\n") return common.EXIT_OK end
    if #list == 0 then out:write("no symbols\n") end
    for _, s in ipairs(list) do
      out:write(("%s  %-7s  %s  %s  (%s)\n"):format(s.platform ~= "" and ("platform " .. s.platform)
        or (s.app .. " " .. s.version), s.kind, s.sha256:sub(1, 12), common.printable(s.name or "?"), s.added_at))
    end
    return common.EXIT_OK
  end
  if not args.platform and not (args.app and args.version) then
    err:write("sift: fleet symbols takes --app and --version (or --platform) and the files, or --list\n")
    return common.EXIT_USAGE
  end
  local added, why = fleet:add_symbols({ app = args.app, version = args.version, platform = args.platform }, args.what)
  if not added then
    err:write("sift: ", common.printable(why), "\n")
    return common.EXIT_BAD_INPUT
  end
  if args.json then out:write(json.encode(added), "\n") return common.EXIT_OK end
  for _, s in ipairs(added) do
    out:write(("%s %s (%s, %s): %s\n"):format(s.new and "added" or "known", common.printable(s.name), s.what,
      s.sha256:sub(1, 12), s.requeued > 0 and ("%d dump%s queued again"):format(s.requeued,
        s.requeued == 1 and "" or "s") or "no dump to analyse again"))
  end
  return common.EXIT_OK
end

return M
