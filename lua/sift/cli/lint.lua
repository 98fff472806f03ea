--- `sift lint`: resource rules over bytecode (`sift.lint`).
-- @module sift.cli.lint

local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

function M.define.lint(parser)
  local c = parser:command("lint", "Find resources (Cursors by default) that code can leak: class and dex files, directories, jars, apks.")
    :description("In each method that opens a resource: operations on it outside any try block "
      .. "(op-outside-try), try blocks around them whose cleanup does not release it (try-without-close), and "
      .. "resources released nowhere (never-closed). A resource returned or stored in a field changes owner; a "
      .. "helper that closes what it is given counts. Rules: cursor (default), closeable, typedarray, "
      .. "parcelfiledescriptor. Exit status 1 when something is found.")
  c:argument("file", "Class files, dex files, directories of them, jars, apks."):args("+")
  c:option("--rules", "Rules to run, by name (cursor,closeable,...).")
  c:flag("--json", "Print the findings as JSON.")
  c:flag("--sarif", "Print SARIF 2.1.0 (for code review tools).")
end

function M.commands.lint(args, out, err)
  local lint = require "sift.lint"
  local rules, why = lint.select(args.rules)
  if not rules then
    err:write("sift: --rules: ", why, "\n")
    return common.EXIT_USAGE
  end
  local classes, problems = lint.load(args.file)
  if not classes then
    err:write("sift: ", common.printable(problems), "\n")
    return common.EXIT_BAD_INPUT
  end
  for _, p in ipairs(problems) do  -- (said in every output format, on stderr)
    err:write("sift: skipped ", common.printable(p.file), ": ", common.printable(p.message), "\n")
  end
  local findings = lint.check(classes, rules)
  if args.sarif then
    out:write(json.encode(require("sift.lint.sarif").log(findings, rules, require("sift")._VERSION)), "\n")
  elseif args.json then
    out:write(json.encode({ classes = #classes, skipped = json.array(problems), findings = json.array(findings) }), "\n")
  else
    for _, f in ipairs(findings) do
      out:write(("%s:%s: %s.%s [%s/%s] %s\n      at pc %d: %s\n"):format(f.source or f.file, f.line or "?",
        f.class, f.method, f.rule, f.criterion, f.message, f.pc, f.instruction))
    end
    out:write(("%d finding%s in %d class%s\n"):format(#findings, #findings == 1 and "" or "s", #classes,
      #classes == 1 and "" or "es"))
  end
  return #findings > 0 and common.EXIT_BAD_INPUT or common.EXIT_OK
end

return M
