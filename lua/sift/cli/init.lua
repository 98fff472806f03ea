--- The `sift` command line: subcommands over the library.
-- Exit status: 0 ok, 1 bad input, 2 bad usage; sift lint: 1 findings, 3
-- an input could not be read. Errors are one line on
-- stderr; progress bars appear only when stderr is a terminal.
-- @module sift.cli

local argparse = require "argparse"
local sift = require "sift"
local common = require "sift.cli.common"

local M = {}

local EXIT_USAGE, EXIT_BAD_INPUT = common.EXIT_USAGE, common.EXIT_BAD_INPUT

-- the commands as `sift --help` lists them, each with its module
local COMMANDS = {}
for _, part in ipairs {
  { "sift.cli.info", "info" },
  { "sift.cli.heap", "histogram", "repl", "path", "top", "leaks", "crunch", "decrunch" },
  { "sift.cli.ofx", "ofx" },
  { "sift.cli.trace", "profile", "fold", "calls", "export", "flame", "diff" },
  { "sift.cli.heap", "dominators", "diff-heap", "waste", "threads", "loaders", "growth" },
  { "sift.cli.bitmaps", "bitmaps" },
  { "sift.cli.finance", "import", "add", "edit", "delete", "categorize", "transactions", "transfers", "duplicates",
    "statements", "report", "fetch", "journal" },
  { "sift.cli.serve", "serve" },
  { "sift.cli.fleet", "worker", "fleet" },
  { "sift.cli.lint", "lint" },
  { "sift.cli.run", "run" },
} do
  local module = require(part[1])
  for i = 2, #part do COMMANDS[#COMMANDS + 1] = { name = part[i], module = module } end
end

local function build_parser()
  local parser = argparse("sift")
    :description("Decode and analyse heap dumps (HPROF, BMD), Android method "
      .. "traces and OFX bank statements.")
    :epilog("Exit status: 0 ok, 1 bad input, 2 bad usage; sift lint: 1 findings, 3 an input could not be read.\n"
      .. "Run 'sift <command> --help' for the options of a command.")
    :command_target("command")
  parser:flag("--version", "Print the version and exit.")
    :action(function()
      io.stdout:write("sift ", sift._VERSION, "\n")
      os.exit(common.EXIT_OK)
    end)
  parser:flag("-q --quiet", "Draw no progress bars.")

  for _, c in ipairs(COMMANDS) do c.module.define[c.name](parser) end
  return parser
end

-- a stream whose writes never show the password of a URL
-- (scheme://user:password@host: redis://:pw@..., postgresql://u:pw@...):
-- it becomes ***, whichever command or module wrote the message
local function masking(stream)
  return { write = function(self, ...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    stream:write((table.concat(parts, "", 1, parts.n):gsub("(%a[%w+.-]*://[^/@%s:]*):[^/%s]*@", "%1:***@")))
    return self
  end, flush = function() return stream:flush() end }
end

-- a long option followed by a negative number takes it as its value
-- (`--amount -4.20`): argparse would read "-4.20" as an option of its own
local function negatives(argv)
  local out = {}
  for i = 1, #argv do
    local a, prev = argv[i], out[#out]
    if type(prev) == "string" and prev:match("^%-%-[%w-]+$") and a:match("^%-%d") then out[#out] = prev .. "=" .. a
    else out[#out + 1] = a end
  end
  return out
end

--- Run the command line.
-- @tparam table argv the arguments (without the program name)
-- @tparam[opt] table io_ `out` and `err` streams (default stdout, stderr),
--   `input` (default stdin)
-- @treturn integer exit status
function M.main(argv, io_)
  local out = io_ and io_.out or io.stdout
  local err = masking(io_ and io_.err or io.stderr)
  local parser = build_parser()
  local ok, args = parser:pparse(negatives(argv))
  if not ok then
    err:write("sift: ", args, " (try 'sift --help')\n")
    return EXIT_USAGE
  end
  local command
  for _, c in ipairs(COMMANDS) do
    if c.name == args.command then command = c.module.commands[c.name] end
  end
  local budget_ok, why = common.apply_budget(args)
  if not budget_ok then
    err:write("sift: ", why, "\n")
    return EXIT_USAGE
  end
  local run_ok, status = xpcall(command, debug.traceback, args, out, err, io_ and io_.input)
  if not run_ok and tostring(status):match("not enough memory") then  -- over the budget
    local file = type(args.file) == "string" and args.file or args.input
      or (type(args.file) == "table" and #args.file == 1 and args.file[1]) or nil
    err:write("sift: ", file and common.printable(file) .. ": " or "", common.out_of_memory(), "\n")
    return EXIT_BAD_INPUT
  end
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

