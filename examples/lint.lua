-- sift lint from Lua: read class files, directories or jars, run the
-- Cursor rule (and any others named), leave out what an @SuppressLint in
-- the code covers (read from the bytecode), print the findings by method.
-- Usage: sift run examples/lint.lua PATH... [--rules cursor,closeable]
local lint = require "sift.lint"

local paths, names = {}, nil
local i = 1
while i <= #arg do
  if arg[i] == "--rules" then names, i = arg[i + 1], i + 2
  else paths[#paths + 1], i = arg[i], i + 1 end
end
assert(#paths > 0, "usage: sift run examples/lint.lua PATH... [--rules cursor,closeable]")
local rules = assert(lint.select(names))
local classes, problems = assert(lint.load(paths))
for _, p in ipairs(problems) do io.stderr:write("skipped ", p.file, ": ", p.message, "\n") end
local by_method = {}
local findings, suppressed = lint.unsuppressed_in_code(lint.check(classes, rules), classes)
for _, f in ipairs(findings) do
  local key = f.class .. "." .. f.method
  if not by_method[key] then
    by_method[key] = true
    print(key)
  end
  print(("  line %s  %-18s %s"):format(f.line or "?", f.criterion, f.instruction))
end
print(("%d classes checked%s"):format(#classes,
  suppressed > 0 and (", %d findings suppressed by @SuppressLint"):format(suppressed) or ""))
