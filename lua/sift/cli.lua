--- The `sift` command line: subcommands over the library.
-- Exit status: 0 ok, 1 bad input, 2 bad usage. Errors are one line on
-- stderr; progress bars appear only when stderr is a terminal.
-- @module sift.cli

local argparse = require "argparse"
local sift = require "sift"
local json = require "sift.json"
local progress = require "sift.progress"

local M = {}

local EXIT_OK, EXIT_BAD_INPUT, EXIT_USAGE = 0, 1, 2

local function build_parser()
  local parser = argparse("sift")
    :description("Decode and analyse heap dumps (HPROF, BMD), Android method "
      .. "traces and OFX bank statements.")
    :epilog("Exit status: 0 ok, 1 bad input, 2 bad usage.\n"
      .. "Run 'sift <command> --help' for the options of a command.")
    :command_target("command")
  parser:flag("--version", "Print the version and exit.")
    :action(function()
      io.stdout:write("sift ", sift._VERSION, "\n")
      os.exit(EXIT_OK)
    end)
  parser:flag("-q --quiet", "Draw no progress bars.")

  local info = parser:command("info", "Detect the format of each FILE and print the facts of its header.")
    :description("Detect the format of each FILE (HPROF, BMD, Android method trace, OFX; "
      .. "gzip or bzip2 compressed) and print the facts of its header.\n"
      .. "Exits 1 when a file is unreadable, unrecognised or damaged.")
  info:argument("file", "A dump, trace or statement."):args("+")
  info:flag("--json", "Print JSON: an object for one FILE, an array for several.")
  info:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
  return parser
end

-- the order facts are listed in; others follow alphabetically
local FACT_ORDER = {
  "format", "variant", "compressed", "version", "id_size", "time", "timestamp_ms",
  "hprof_header", "clock", "vm", "pid", "threads", "methods", "records",
  "num_method_calls", "record_size", "data_offset", "elapsed_time_us",
  "start_time_us", "header", "encoding", "charset", "security", "data",
  "body_offset", "header_size", "size",
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

-- text copied from a file: control bytes shown as escapes
local function printable(v)
  return (tostring(v):gsub("%c", function(c) return ("\\x%02x"):format(c:byte()) end))
end

local function print_info(out, path, info)
  out:write(printable(path), ": ", printable(info.description), "\n")
  for _, k in ipairs(ordered_facts(info)) do
    out:write(("  %-22s %s\n"):format(k, printable(info[k])))
  end
  if info.problem then
    out:write(("  %-22s %s\n"):format("problem", printable(info.problem)))
  end
end

local commands = {}

function commands.info(args, out, err)
  local status = EXIT_OK
  local results = {}
  for _, path in ipairs(args.file) do
    local bar = progress.bar { label = path, quiet = args.quiet or args.quiet_here }
    local info, msg, code = sift.detect(path, { bytes = false, progress = bar and bar.update })
    if bar then bar.finish() end
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
    out:write(json.encode(#results == 1 and results[1] or results), "\n")
  end
  return status
end

--- Run the command line.
-- @tparam table argv the arguments (without the program name)
-- @tparam[opt] table io_ `out` and `err` streams (default stdout, stderr)
-- @treturn integer exit status
function M.main(argv, io_)
  local out = io_ and io_.out or io.stdout
  local err = io_ and io_.err or io.stderr
  local parser = build_parser()
  local ok, args = parser:pparse(argv)
  if not ok then
    err:write("sift: ", args, " (try 'sift --help')\n")
    return EXIT_USAGE
  end
  local run_ok, status = xpcall(commands[args.command], debug.traceback, args, out, err)
  if not run_ok then  -- a bug in sift, not bad input
    if os.getenv("SIFT_DEBUG") then err:write(status, "\n")
    else err:write("sift: internal error: ", (tostring(status):match("^[^\n]*")),
      " (set SIFT_DEBUG=1 for a traceback)\n")
    end
    return EXIT_BAD_INPUT
  end
  return status
end

return M
