--- Resource leaks before they happen: rules over bytecode (class files,
-- dex files, directories of them, jars and apks). The default rule is the Android Cursor rule of the FindBugs
-- detector it comes from: in a method that opens a Cursor,
--
-- 1. `op-outside-try`: a Cursor operation (other than close) outside any
--    try block;
-- 2. `try-without-close`: a try block around Cursor operations whose
--    cleanup (a handler catching everything: a `finally`, or javac's and
--    d8's try-with-resources) does not close it;
--
-- and `never-closed`: a Cursor opened and closed nowhere in the method. A
-- Cursor returned or stored in a field changes owner: not a finding. A
-- call to a method that closes a Cursor it is given (a helper the rule can
-- see, or a known one) counts as closing it. Other resources are rules of
-- the same shape (`sift.lint.rules`).
--
--     local lint = require "sift.lint"
--     local classes, skipped = lint.load({"build/classes", "app.apk"})
--     for _, f in ipairs(lint.check(classes)) do print(f.class, f.method, f.line, f.criterion) end
-- @module sift.lint

local core = require "sift.core"

local M = {}

M.rules = require "sift.lint.rules"

M.CRITERIA = {
  ["op-outside-try"] = "an operation outside any try block",
  ["try-without-close"] = "a try block whose cleanup does not release it",
  ["never-closed"] = "opened and released nowhere in the method",
}

-- methods known to close the resource they are given (owner.name, any descriptor)
M.KNOWN_CLOSERS = {
  ["kotlin/io/CloseableKt.closeFinally"] = true,
  ["kotlin/io/AutoCloseableKt.closeFinally"] = true,
  ["com/google/common/io/Closeables.closeQuietly"] = true,
  ["com/google/common/io/Closeables.close"] = true,
  ["org/apache/commons/io/IOUtils.closeQuietly"] = true,
  ["okhttp3/internal/Util.closeQuietly"] = true,
}

local GENERIC = { ["java/io/Closeable"] = true, ["java/lang/AutoCloseable"] = true }

--- {======================================================
-- Reading bytecode
-- =======================================================

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local bytes = f:read("a")
  f:close()
  return bytes
end

-- the files under a directory (sorted)
local function files_under(dir)
  local p = io.popen(("find '%s' -type f \\( -name '*.class' -o -name '*.jar' -o -name '*.apk' -o -name '*.dex' \\) "
    .. "2>/dev/null | LC_ALL=C sort"):format(dir:gsub("'", "'\\''")))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local function is_dir(path)
  local f = io.open(path, "rb")
  if not f then return false end
  local _, _, code = f:read(1)
  f:close()
  return code == 21  -- EISDIR
end

--- Read classes from paths (class files, dex files, directories, jars,
-- apks). Returns the classes (each as `core.classfile` or `core.dexfile`
-- gives it, with `file`: where it came from) and the inputs that were not
-- read (`{file, message}`): a path that cannot be opened, a jar or apk
-- whose zip directory cannot be read, a damaged class, dex or entry, a
-- directory holding no class, dex, jar or apk file. Everything else is
-- still read: a problem never stops the others.
function M.load(paths)
  local classes, problems = {}, {}
  local function problem(file, message) problems[#problems + 1] = { file = file, message = message } end
  local function add(bytes, where)
    if bytes:sub(1, 4) == "dex\n" then
      local dex, err = core.dexfile(bytes)
      if not dex then return problem(where, err) end
      for _, cls in ipairs(dex) do
        cls.file = where
        classes[#classes + 1] = cls
      end
      return
    end
    local cls, err = core.classfile(bytes)
    if not cls then return problem(where, err) end
    cls.file = where
    classes[#classes + 1] = cls
  end
  local function visit(path)
    local bytes, err = read(path)
    if not bytes then  -- (io.open's message starts with the path: said once)
      local prefix = path .. ": "
      return problem(path, err:sub(1, #prefix) == prefix and err:sub(#prefix + 1) or err)
    end
    if bytes:sub(1, 4) == "PK\3\4" then
      local entries, why = core.zip_entries(bytes)
      if not entries then return problem(path, why) end
      for _, e in ipairs(entries) do
        if e.bytes then add(e.bytes, path .. "!/" .. e.name)
        else problem(path .. "!/" .. e.name, e.error) end
      end
    else
      add(bytes, path)
    end
  end
  for _, path in ipairs(paths) do
    if is_dir(path) then
      local files = files_under(path)
      if #files == 0 then problem(path, "a directory with no class, dex, jar or apk file in it") end
      for _, file in ipairs(files) do visit(file) end
    else
      visit(path)
    end
  end
  return classes, problems
end

-- }======================================================

--- {======================================================
-- The rules
-- =======================================================

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function is_invoke(ins) return ins.owner and ins.op:sub(1, 6) == "invoke" end

-- the methods of the classes that release a resource they are given: a
-- parameter of one of the types (or Closeable) and a release call
local function closers(classes, types, release)
  local out = {}
  for _, cls in ipairs(classes) do
    for _, m in ipairs(cls.methods) do
      local params = (m.desc or ""):match("^%((.-)%)") or ""
      local takes = false
      for t in params:gmatch("L([^;]+);") do
        if types[t] or GENERIC[t] then takes = true end
      end
      if takes and m.code then
        for _, ins in ipairs(m.code) do
          if is_invoke(ins) and (types[ins.owner] or GENERIC[ins.owner]) and release[ins.name] then
            out[cls.name .. "." .. m.name .. m.desc] = true
            break
          end
        end
      end
    end
  end
  return out
end

-- what a value escapes by: in a class file the value on the stack (JVM),
-- in a dex file the instruction's register A
local ESCAPES = { areturn = true, putfield = true, putstatic = true }
local ESCAPES_REGISTER = { ["return-object"] = true, ["iput-object"] = true, ["sput-object"] = true }
local NEW = { new = true, ["new-instance"] = true }

-- what an instruction does to the resource: "open", "op", "release" or nil
local function role(code, i, types, release, closer)
  local ins = code[i]
  if not is_invoke(ins) then return nil end
  if closer[ins.owner .. "." .. ins.name .. ins.desc] or M.KNOWN_CLOSERS[ins.owner .. "." .. ins.name] then
    return "release"
  end
  if ins.name == "<init>" then
    if not types[ins.owner] then return nil end
    for j = i - 1, 1, -1 do  -- a constructor opens when this method made the object (new), not super()
      if NEW[code[j].op] and code[j].class == ins.owner then return "open" end
    end
    return nil
  end
  if types[ins.owner] or (GENERIC[ins.owner] and release[ins.name]) then
    return release[ins.name] and "release" or (types[ins.owner] and "op" or nil)
  end
  local returned = ins.desc:match("%)L([^;]+);$")
  if returned and types[returned] then return "open" end
  return nil
end

-- the local (class file) or register (dex) the value opened at code[i] is kept in
local function kept_in(code, i)
  local ins, next_ins = code[i], code[i + 1]
  if ins.name == "<init>" then  -- a dex constructor: the register new-instance filled
    for j = i - 1, 1, -1 do
      if code[j].op == "new-instance" and code[j].class == ins.owner then return code[j].var end
    end
  end
  if next_ins and next_ins.var and (next_ins.op:sub(1, 6) == "astore" or next_ins.op == "move-result-object") then
    return next_ins.var
  end
  return nil
end

-- whether the value opened at code[i] changes owner: returned or stored in
-- a field, at once or from the local or register it is kept in
local function escapes(code, i)
  if code[i + 1] and ESCAPES[code[i + 1].op] then return true end
  local var = kept_in(code, i)
  if not var then return false end
  for j = i + 1, #code do
    local ins = code[j]
    if ESCAPES_REGISTER[ins.op] and ins.var == var then return true end
    if ins.op:sub(1, 5) == "aload" and ins.var == var and code[j + 1] and ESCAPES[code[j + 1].op] then return true end
  end
  return false
end

local function catches_everything(t) return t.type == nil or t.type == "java/lang/Throwable" end

local function dotted(name) return (name or "?"):gsub("/", ".") end

local function describe(ins)
  return ("%s %s.%s%s"):format(ins.op, ins.owner, ins.name, ins.desc)
end

-- the findings of one rule in one method
local function check_method(cls, m, rule, name, types, release, closer, out)
  local code = m.code
  if not code then return end
  local roles, owned, released = {}, {}, false
  for i = 1, #code do
    roles[i] = role(code, i, types, release, closer)
    if roles[i] == "open" and not escapes(code, i) then owned[#owned + 1] = i end
    if roles[i] == "release" then released = true end
  end
  if #owned == 0 then return end
  local at = {}
  for i, ins in ipairs(code) do at[ins.pc] = i end
  -- whether the handler at pc releases: its code up to its athrow
  local function handler_releases(pc)
    local i = at[pc]
    while i and i <= #code do
      if roles[i] == "release" then return true end
      local op = code[i].op
      if op == "athrow" or op == "throw" or op:find("return", 1, true) then return false end
      i = i + 1
    end
    return false
  end
  local function finding(criterion, ins, detail)
    out[#out + 1] = { rule = name, criterion = criterion, class = dotted(cls.name), method = m.name, desc = m.desc,
      source = cls.source, file = cls.file, line = ins.line, pc = ins.pc, instruction = describe(ins),
      message = ("%s: %s%s"):format(rule.what, M.CRITERIA[criterion], detail or "") }
  end
  local reported = {}
  for i, ins in ipairs(code) do
    if roles[i] == "op" then
      local covering, cleaned = {}, false
      for _, t in ipairs(m.tries) do
        if t.start <= ins.pc and ins.pc < t.stop then
          covering[#covering + 1] = t
          if catches_everything(t) and handler_releases(t.handler) then cleaned = true end
        end
      end
      if #covering == 0 then
        finding("op-outside-try", ins)
      elseif not cleaned then
        local inner = covering[1]  -- (javac lists inner blocks first)
        local key = inner.start .. ":" .. inner.stop
        if not reported[key] then
          reported[key] = true
          local caught = {}
          for _, t in ipairs(covering) do caught[#caught + 1] = t.type and dotted(t.type) or "everything" end
          finding("try-without-close", ins, (" (the try block catches %s)"):format(table.concat(caught, ", ")))
        end
      end
    end
  end
  if not released then finding("never-closed", code[owned[1]]) end
end

--- The rules a `--rules` list names ("cursor,closeable"), or the default
-- ones; nil and a message for an unknown name.
function M.select(names, rules)
  rules = rules or M.rules
  local out = {}
  if not names or names == "" then
    for name, rule in pairs(rules) do if rule.default then out[name] = rule end end
    return out
  end
  for name in names:gmatch("[^,%s]+") do
    if not rules[name] then
      local known = {}
      for k in pairs(rules) do known[#known + 1] = k end
      table.sort(known)
      return nil, ("unknown rule '%s' (known: %s)"):format(name, table.concat(known, ", "))
    end
    out[name] = rules[name]
  end
  return out
end

--- Check classes (from M.load) with rules (a table of name → rule; the
-- default ones when nil). Returns the findings, by class, method and pc:
-- `{rule, criterion, class, method, desc, source, file, line, pc,
-- instruction, message}`.
function M.check(classes, rules)
  rules = rules or M.select()
  local out = {}
  local names = {}
  for name in pairs(rules) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local rule = rules[name]
    local types, release = set(rule.types), rule.release
    local closer = closers(classes, types, release)
    for _, cls in ipairs(classes) do
      for _, m in ipairs(cls.methods) do check_method(cls, m, rule, name, types, release, closer, out) end
    end
  end
  table.sort(out, function(a, b)
    if a.class ~= b.class then return a.class < b.class end
    if a.method ~= b.method then return a.method < b.method end
    if a.pc ~= b.pc then return a.pc < b.pc end
    return a.criterion < b.criterion
  end)
  return out
end

-- }======================================================

return M
