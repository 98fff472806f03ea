--- `sift run SCRIPT [ARG...]`: run a Lua script with the module paths the
-- `sift` command already has, so `require "sift"` and `sift.core` are found
-- from a checkout (bin/sift puts the checkout's lua/ and build/ first) as
-- well as from an install. The script runs in this process, as `lua5.4
-- SCRIPT ARG...` would run it: `arg[0]` is SCRIPT, `arg[1..]` and `...` its
-- arguments, and what comes before SCRIPT on the command line has the
-- negative indices.
-- @module sift.cli.run

local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

local command  -- the parsed command, for its help

function M.define.run(parser)
  local summary = "Run a Lua script with sift's modules on the path (from a checkout too), as lua5.4 would run it."
  command = parser:command("run", summary)
    :summary(summary)
    :description(summary .. "\n"
      .. "arg[0] is SCRIPT, arg[1..] and ... its arguments; every argument after SCRIPT is the script's, "
      .. "options too (sift run examples/why_alive.lua app.hprof Foo --model jvm).\n"
      .. "Exit status: the script's (os.exit), 0 when it ends; 1 when it raises an error (the message on stderr, "
      .. "a traceback with SIFT_DEBUG=1) or cannot be loaded.")
    :handle_options(false)  -- (options after SCRIPT are the script's; so --help is looked at by hand)
  command:argument("script", "A Lua file, or - for standard input.")
  command:argument("args", "The script's arguments."):args("*")
end

-- the message of an error value, as lua.c shows one
local function message(e)
  if type(e) == "string" then return e end
  local mt = getmetatable(e)
  if mt and mt.__tostring then return tostring(e) end
  return ("(error object is a %s value)"):format(type(e))
end

function M.commands.run(args, out, err)
  if args.script == "-h" or args.script == "--help" then
    out:write(command:get_help(), "\n")
    return common.EXIT_OK
  end
  local chunk, why = loadfile(args.script ~= "-" and args.script or nil)
  if not chunk then
    err:write("sift: ", common.printable(why), "\n")
    return common.EXIT_BAD_INPUT
  end
  local before = arg
  local script_arg = { [0] = args.script, table.unpack(args.args) }
  if before then  -- the interpreter, bin/sift and "run", as lua.c numbers them
    script_arg[-1], script_arg[-2], script_arg[-3] = "run", before[0], before[-1]
  end
  arg = script_arg
  local ok, e = xpcall(chunk, function(x)
    return os.getenv("SIFT_DEBUG") and debug.traceback(message(x), 2) or message(x)
  end, table.unpack(args.args))
  arg = before
  if not ok then
    err:write("sift: ", e, "\n")
    return common.EXIT_BAD_INPUT
  end
  return common.EXIT_OK
end

return M
