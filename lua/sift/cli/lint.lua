--- `sift lint`: resource rules over bytecode (`sift.lint`).
-- @module sift.cli.lint

local json = require "sift.json"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

function M.define.lint(parser)
  local summary = "Find resources (Cursors by default) that code can leak: class and dex files, directories, jars, apks."
  local c = parser:command("lint", summary)
    :summary(summary)
    :description(summary .. "\n" .. "Each resource a method opens is followed along every path, exceptions included: released nowhere "
      .. "(never-closed), left open on a path that returns (not-closed-on-path), or only when an exception leaves "
      .. "the method (not-closed-on-exception); for Cursors also operations outside any try block (op-outside-try) "
      .. "and try blocks whose cleanup does not release it (try-without-close). A resource returned, stored, "
      .. "wrapped by a wrapper that is itself closed or passed on, or given to a closing helper (of the classes "
      .. "read, of --classpath, or a known library one) is taken care of. Rules: cursor (default), closeable, "
      .. "parcelfiledescriptor, and Android Lint's Recycle rules (typedarray, velocitytracker, motionevent, parcel, "
      .. "contentproviderclient: released or escaping on some path, no try block asked for unless --strict; "
      .. "'android' names them and cursor).\n"
      .. "Exit status: 0 nothing found; 1 findings; 3 an input could not be read (a missing or unreadable path, "
      .. "a jar or apk that is not a zip, a damaged class or dex, a directory with no class files): each is named "
      .. "on stderr, the rest is still checked and its findings printed, and 3 wins over 1, since a check that "
      .. "skipped code cannot say what that code holds; 2 bad usage.")
  c:argument("file", "Class files, dex files, directories of them, jars, apks."):args("+")
  c:option("--rules", "Rules to run, by name (cursor,closeable,...).")
  c:option("--classpath", "Jars or class directories read for what their methods do with a resource they are "
    .. "given or return (closing helpers, factories), not reported on."):args("+"):count("*")
  c:flag("--strict", "Judge every rule as the Cursor detector does: operations outside a try block, try blocks "
    .. "whose cleanup does not release it, every path and exception; Android Lint's rules (typedarray...) too.")
  c:option("--suppressions", "A suppressions file: a line per suppression, ID WHERE (ID: sift:RULE, "
    .. "sift:RULE/CRITERION, Recycle or all; WHERE: a class, class.method, or a prefix ending in *). "
    .. "Android's @SuppressLint(\"Recycle\") (or \"sift:RULE\"...) on a method or class is read from the "
    .. "bytecode without it.")
  c:option("--baseline", "A baseline file (written by --write-baseline): its findings, known by their "
    .. "fingerprints, are not reported again.")
  c:option("--write-baseline", "Write every finding's fingerprint to this file (a baseline), then report as usual.")
  c:flag("--json", "Print the findings as JSON.")
  c:flag("--sarif", "Print SARIF 2.1.0 (for code review tools).")
end

-- the file an option names, opened in `mode`; nil when it cannot be,
-- said on err (bad usage: the caller exits 2)
local function open_option(err, flag, path, mode)
  local f, why = io.open(path, mode)
  if not f then err:write("sift: ", flag, ": ", common.printable(why), "\n") end
  return f
end

function M.commands.lint(args, out, err)
  local lint = require "sift.lint"
  local rules, why = lint.select(args.rules)
  if not rules then
    err:write("sift: --rules: ", why, "\n")
    return common.EXIT_USAGE
  end
  local classes, problems = lint.load(args.file)
  for _, p in ipairs(problems) do  -- (said in every output format, on stderr)
    err:write("sift: skipped ", common.printable(p.file), ": ", common.printable(p.message), "\n")
  end
  local classpath = {}
  for _, group in ipairs(args.classpath or {}) do
    local more, unread = lint.load(group)
    for _, cls in ipairs(more) do classpath[#classpath + 1] = cls end
    for _, p in ipairs(unread) do
      problems[#problems + 1] = p
      err:write("sift: skipped ", common.printable(p.file), ": ", common.printable(p.message), "\n")
    end
  end
  local findings = lint.check(classes, rules, classpath, { strict = args.strict })
  local known = 0  -- (findings the baseline silenced)
  local suppressed  -- (and those suppressed: by @SuppressLint, read from the bytecode, or the suppressions file)
  findings, suppressed = lint.unsuppressed_in_code(findings, classes)
  if args.suppressions then
    local f = open_option(err, "--suppressions", args.suppressions, "rb")
    if not f then return common.EXIT_USAGE end
    local entries, bad = lint.read_suppressions(f:read("a"))
    f:close()
    if #bad > 0 then
      err:write(("sift: --suppressions: line %d is no suppression (ID WHERE): %s\n"):format(bad[1].line,
        common.printable(bad[1].text)))
      return common.EXIT_USAGE
    end
    local more
    findings, more = lint.unsuppressed(findings, entries)
    suppressed = suppressed + more
  end
  if args.write_baseline then
    local f = open_option(err, "--write-baseline", args.write_baseline, "wb")
    if not f then return common.EXIT_USAGE end
    f:write(lint.baseline_text(findings))
    f:close()
  end
  if args.baseline then
    local f = open_option(err, "--baseline", args.baseline, "rb")
    if not f then return common.EXIT_USAGE end
    findings, known = lint.without(findings, lint.read_baseline(f:read("a")))
    f:close()
  end
  if args.sarif then
    out:write(json.encode(require("sift.lint.sarif").log(findings, rules, require("sift")._VERSION, problems)), "\n")
  elseif args.json then
    out:write(json.encode({ classes = #classes, skipped = json.array(problems), findings = json.array(findings) }), "\n")
  else
    for _, f in ipairs(findings) do
      out:write(("%s:%s: %s.%s [%s/%s] %s\n      at pc %d: %s\n"):format(f.source or f.file, f.line or "?",
        f.class, f.method, f.rule, f.criterion, f.message, f.pc, f.instruction))
    end
    out:write(("%d finding%s in %d class%s%s%s\n"):format(#findings, #findings == 1 and "" or "s", #classes,
      #classes == 1 and "" or "es", (suppressed > 0 and (", %d suppressed"):format(suppressed) or "")
        .. (known > 0 and (", %d in the baseline"):format(known) or ""),
      #problems > 0 and (", %d input%s not read"):format(#problems, #problems == 1 and "" or "s") or ""))
  end
  if #problems > 0 then return common.EXIT_UNREAD end  -- (before findings: the check is incomplete)
  return #findings > 0 and common.EXIT_BAD_INPUT or common.EXIT_OK
end

return M
