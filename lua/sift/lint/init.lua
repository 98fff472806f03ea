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
local bytecode = require "sift.lint.bytecode"
local resources = require "sift.lint.resources"
local summaries = require "sift.lint.summaries"
local sha1 = require "sift.sha1"

local M = {}

M.rules_data = require "sift.lint.rules"
M.rules = M.rules_data.all

--- The criteria, in the order SARIF lists them: the first two are the
-- Cursor detector's (rules with `seed`), the others every rule's.
M.CRITERIA_ORDER = { "op-outside-try", "try-without-close", "never-closed", "not-closed-on-path",
  "not-closed-on-exception" }
M.CRITERIA = {
  ["op-outside-try"] = "an operation outside any try block",
  ["try-without-close"] = "a try block whose cleanup does not release it",
  ["never-closed"] = "opened and released nowhere in the method, nor passed on",
  ["not-closed-on-path"] = "left open on a path that returns, though released or passed on on others",
  ["not-closed-on-exception"] = "released or passed on on every path that returns, but not when an exception leaves "
    .. "the method",
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

-- the class, jar, apk and dex files under a directory, sorted bytewise;
-- and the subdirectories that could not be read (core.dir's messages)
local function files_under(dir)
  local all, unread = core.dir(dir)
  local out = {}
  for _, path in ipairs(all or {}) do
    if path:match("%.class$") or path:match("%.jar$") or path:match("%.apk$") or path:match("%.dex$") then
      out[#out + 1] = path
    end
  end
  return out, unread or {}
end

local function is_dir(path)
  local st = core.stat(path)
  return st ~= nil and st.dir
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
      local files, unread = files_under(path)
      for _, why in ipairs(unread) do problem(path, why) end
      if #files == 0 and #unread == 0 then problem(path, "a directory with no class, dex, jar or apk file in it") end
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

local function set(list, into)
  local s = into or {}
  for _, v in ipairs(list or {}) do s[v] = true end
  return s
end

local function dotted(name) return (name or "?"):gsub("/", ".") end

local function describe(ins)
  if ins.owner then return ("%s %s.%s%s"):format(ins.op, ins.owner, ins.name, ins.desc or "") end
  return ("%s %s"):format(ins.op, ins.class or "")
end

-- the classes read below each type (its subclasses and implementations, at
-- any depth): type -> {name...}, made once per set of classes (by_name: the
-- classes by name) when first asked
local subtypes_made = setmetatable({}, { __mode = "k" })
local function subtypes_of(by_name)
  local subtypes = subtypes_made[by_name]
  if subtypes then return subtypes end
  local supertypes = {}
  local function supers(name)  -- every supertype of a class read, memoized
    if supertypes[name] then return supertypes[name] end
    local out = {}
    supertypes[name] = out  -- (a cycle in hostile input ends here)
    local c = by_name[name]
    if c then
      local direct = { table.unpack(c.interfaces or {}) }
      direct[#direct + 1] = c.super  -- (none for java/lang/Object: its interfaces are still read)
      for _, t in ipairs(direct) do
        out[t] = true
        for u in pairs(supers(t)) do out[u] = true end
      end
    end
    return out
  end
  subtypes = {}
  for cname in pairs(by_name) do
    for t in pairs(supers(cname)) do
      subtypes[t] = subtypes[t] or {}
      table.insert(subtypes[t], cname)
    end
  end
  subtypes_made[by_name] = subtypes
  return subtypes
end

-- the context the resource model reads for one rule: its type sets, the
-- library data, the summaries, and the classes by name (for inherited methods)
local function context(rule, by_name, strict)
  local types = set(rule.types)
  local wrappers, opens = set(rule.wrappers), set(rule.opens)
  local opens_named = {}
  for class, params in pairs(rule.opens_named or {}) do opens_named[class] = set(params) end
  local interesting_new = set(rule.wrappers, set(rule.opens))
  for class in pairs(opens_named) do interesting_new[class] = true end
  local interesting = set(rule.types, set(rule.wrappers, set(rule.opens)))
  for class in pairs(opens_named) do interesting[class] = true end
  local use_types = set(rule.types, set(rule.wrappers, set(rule.opens)))
  for class in pairs(GENERIC) do use_types[class] = true end
  for class in pairs(opens_named) do use_types[class] = true end
  local param_types = {}
  for class in pairs(use_types) do param_types[class] = true end
  local ctx = { rule = rule, types = types, wrappers = wrappers, opens = opens, opens_named = opens_named,
    interesting = interesting, interesting_new = interesting_new, use_types = use_types, param_types = param_types,
    release = rule.release, closers = M.rules_data.CLOSERS, takers = M.rules_data.TAKERS, parts = M.rules_data.PARTS,
    quiet = M.rules_data.QUIET, quiet_classes = M.rules_data.QUIET_CLASSES, open_failures = M.rules_data.OPEN_FAILURES,
    summaries = {}, quiet_methods = {}, by_name = by_name,
    escapes_args = rule.android and not strict or false, not_escapes = rule.not_escapes or {},
    unchecked = rule.unchecked and M.rules_data.UNCHECKED_CATCHES or {} }
  -- what `table` holds for a method, found on its class or inherited
  local function inherited(table, owner, name, desc)
    local cls = owner
    for _ = 1, 32 do
      local v = table[cls .. "." .. name .. desc]
      if v then return v end
      local c = by_name[cls]
      if not (c and c.super) then return nil end
      cls = c.super
    end
    return nil
  end
  -- an interface's or abstract method's summary: the one every
  -- implementation among the classes read has (class hierarchy analysis);
  -- nil when none is read or when they differ
  local function implemented(owner, name, desc)
    if not by_name[owner] then return nil end
    local found, shape = nil, nil
    for _, cname in ipairs(subtypes_of(by_name)[owner] or {}) do
      local s = ctx.summaries[cname .. "." .. name .. desc]
      if s then
        local this = summaries.shape(s)
        if shape and this ~= shape then return nil end
        found, shape = s, this
      end
    end
    return found
  end
  -- what is known of a method called, by owner, name and descriptor:
  -- {summary (or false), opens (whether a call opens a resource, once asked)};
  -- emptied when the summaries change (sift.lint.summaries). Every call
  -- instruction of every method asks.
  ctx.calls = {}
  local function called(owner, name, desc)
    local by_owner = ctx.calls[owner]
    if not by_owner then
      by_owner = {}
      ctx.calls[owner] = by_owner
    end
    local overloads = by_owner[name]
    if not overloads then
      overloads = {}
      by_owner[name] = overloads
    end
    local known = overloads[desc]
    if not known then
      known = { summary = next(ctx.summaries) ~= nil  -- (none: Android Lint's rules, one method at a time)
        and (inherited(ctx.summaries, owner, name, desc) or implemented(owner, name, desc)) or false }
      overloads[desc] = known
    end
    return known
  end
  function ctx.summary(owner, name, desc)
    return called(owner, name, desc).summary or nil
  end
  function ctx.is_quiet(owner, name, desc)
    return desc ~= nil and inherited(ctx.quiet_methods, owner, name, desc) or false
  end
  function ctx.opener(ins, summary)
    local ret = bytecode.desc(ins.desc).ret_class
    if summary and (summary.fresh or summary.kept or next(summary.returns)) then  -- (a factory; not one declared to
      return summary.fresh and ret ~= "java/lang/Object" or false                 -- return an Object: a task's result)
    end
    if not ret or M.rules_data.NO_RESOURCE[ret] then return false end
    if rule.accessors and rule.accessors[ins.name] then return false end
    if rule.openers and rule.openers[ins.owner .. "." .. ins.name] then return true end
    if rule.opener_names and rule.opener_names[ins.name] and types[ret] then return true end
    return rule.opens_returned and types[ret] or false
  end
  function ctx.opens_at(ins)
    if ins.op == "new" or ins.op == "new-instance" then return interesting_new[ins.class] or false end
    if not (ins.owner and ins.desc and bytecode.INVOKE[ins.op]) then return false end
    local known = called(ins.owner, ins.name, ins.desc)
    if known.opens == nil then known.opens = ctx.opener(ins, known.summary or nil) end
    return known.opens
  end
  return ctx
end

local function catches_everything(t) return t.type == nil or t.type == "java/lang/Throwable" end

--- Which occurrence instruction i of code is among the method's
-- instructions described alike (`what`: op, owner, name, descriptor):
-- the resource's allocation in the method's shape, not its pc or line.
function M.occurrence(code, i, what)
  local k = 0
  for j = 1, i do
    if describe(code[j]) == what then k = k + 1 end
  end
  return k
end

--- A finding's fingerprint: the SHA-1 (hex) of its class, method (name
-- and descriptor), rule, criterion, the instruction reported and its
-- occurrence among those alike in the method. An edit elsewhere in the
-- method (lines, pcs, other calls) leaves it as it was.
function M.fingerprint(class, method, rule, criterion, what, k)
  return sha1.hex(table.concat({ class, method, rule, criterion, what, tostring(k) }, "\n"))
end

--- The findings not in a baseline: `baseline` is a set of fingerprints
-- (M.read_baseline). Returns them and how many the baseline silenced.
function M.without(findings, baseline)
  local out, silenced = {}, 0
  for _, f in ipairs(findings) do
    if baseline[f.fingerprint] then silenced = silenced + 1 else out[#out + 1] = f end
  end
  return out, silenced
end

--- A baseline file's text: a line per finding, its fingerprint first, then
-- where it is (for the reader; only the fingerprint is read back).
function M.baseline_text(findings)
  local lines = { "# sift lint baseline: findings known and accepted; a line per finding, its fingerprint first" }
  for _, f in ipairs(findings) do
    lines[#lines + 1] = ("%s %s.%s%s %s/%s"):format(f.fingerprint, f.class, f.method, f.desc or "", f.rule,
      f.criterion)
  end
  return table.concat(lines, "\n") .. "\n"
end

--- The fingerprints of a baseline file's text (lines starting with 40 hex
-- digits; `#` comments and others ignored).
function M.read_baseline(text)
  local known = {}
  for line in text:gmatch("[^\n]+") do
    local fp = line:match("^(%x+)")
    if fp and #fp == 40 then known[fp:lower()] = true end
  end
  return known
end

--- A suppressions file's entries: a line per suppression, `ID WHERE`.
-- ID: `sift:RULE` or `sift:RULE/CRITERION` (`sift:typedarray`), Android
-- Lint's `Recycle` (its rules and the Cursor rule), or `all`. WHERE: a
-- class (`com.example.Foo`), a method (`com.example.Foo.bar`), or a
-- prefix ending in `*` (`com.example.*`). `#` starts a comment. Returns
-- the entries, and the lines that are none (line number and text).
function M.read_suppressions(text)
  local entries, bad, n = {}, {}, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local body = line:gsub("#.*", ""):match("^%s*(.-)%s*$")
    if body ~= "" then
      local id, where = body:match("^(%S+)%s+(%S+)$")
      if id and (id == "all" or id == "Recycle" or id:match("^sift:[%w_]+$") or id:match("^sift:[%w_]+/[%w-]+$")) then
        entries[#entries + 1] = { id = id, where = where }
      else
        bad[#bad + 1] = { line = n, text = line }
      end
    end
  end
  return entries, bad
end

local function suppresses(e, f)
  local android = false
  for _, name in ipairs(M.rules_data.android) do android = android or name == f.rule end
  local id_ok = e.id == "all" or (e.id == "Recycle" and android) or e.id == "sift:" .. f.rule
    or e.id == "sift:" .. f.rule .. "/" .. f.criterion
  if not id_ok then return false end
  if e.where:sub(-1) == "*" then return f.class:sub(1, #e.where - 1) == e.where:sub(1, -2) end
  return e.where == f.class or e.where == f.class .. "." .. f.method
end

--- The findings no suppression entry (M.read_suppressions) covers, and
-- how many were suppressed.
function M.unsuppressed(findings, entries)
  local out, n = {}, 0
  for _, f in ipairs(findings) do
    local hit = false
    for _, e in ipairs(entries) do
      if suppresses(e, f) then hit = true; break end
    end
    if hit then n = n + 1 else out[#out + 1] = f end
  end
  return out, n
end

-- an annotation Android Lint reads as @SuppressLint: android.annotation's, or
-- any class named SuppressLint (Android Lint matches the descriptor's end)
local function is_suppress_lint(a)
  local t = a.type or ""
  return t == "SuppressLint" or t:sub(-13) == "/SuppressLint"
end

local ANDROID_RULES = nil  -- (set of M.rules_data.android, made on first use)

--- Whether one id of an `@SuppressLint` covers a finding. Android Lint's
-- terms: ids match case-insensitively, a string may hold several
-- separated by commas; `all` covers every finding, and Android Lint's
-- names for the issue sift's Android rules and the Cursor rule stand for
-- (`Recycle`, Studio's `AndroidLintRecycle`, its category `Performance`)
-- cover theirs. sift's own: `sift:RULE` covers that rule's findings,
-- `sift:RULE/CRITERION` that criterion's.
function M.suppress_lint_covers(value, f)
  if not ANDROID_RULES then ANDROID_RULES = set(M.rules_data.android) end
  for raw in value:gmatch("[^,]+") do
    local id = raw:match("^%s*(.-)%s*$"):lower()
    if id == "all" or id == "sift:" .. f.rule or id == "sift:" .. f.rule .. "/" .. f.criterion then return true end
    if ANDROID_RULES[f.rule] and (id == "recycle" or id == "androidlintrecycle" or id == "performance") then
      return true
    end
  end
  return false
end

local function annotations_cover(annotations, f)
  for _, a in ipairs(annotations or {}) do
    if is_suppress_lint(a) then
      for _, v in ipairs(a.values or {}) do
        if M.suppress_lint_covers(v, f) then return true end
      end
    end
  end
  return false
end

-- whether the annotations of a method of cls named name (desc: with that
-- descriptor) cover f; for a lambda's body, those of the method it is written in
local function method_covers(cls, name, desc, f)
  local written_in = name:match("^lambda%$(.-)%$")
  for _, m in ipairs(cls.methods) do
    if m.annotations and ((m.name == name and (desc == nil or m.desc == desc)) or m.name == written_in)
        and annotations_cover(m.annotations, f) then
      return true
    end
  end
  return false
end

--- Whether an `@SuppressLint` in the code covers a finding: on its
-- method; for a lambda's body (`lambda$NAME$N`), on the method NAME it
-- is written in; on its class; for a local or anonymous class, on the
-- method it is written in (EnclosingMethod); on the classes it is nested
-- in (its enclosing class, or the classes read whose names are its name
-- cut at a `$`), and so on outwards. `by_name`: the classes by name
-- (com/example/Foo).
function M.suppressed_in_code(f, by_name)
  local name = f.class:gsub("%.", "/")
  local cls = by_name[name]
  if not cls then return false end
  if method_covers(cls, f.method, f.desc, f) then return true end
  local seen = {}
  while name and not seen[name] do
    seen[name] = true
    local c = by_name[name]
    local e = c and c.enclosing
    if c and annotations_cover(c.annotations, f) then return true end
    if e and e.name and by_name[e.class] and method_covers(by_name[e.class], e.name, e.desc, f) then return true end
    name = e and e.class or name:match("^(.*)%$[^$]*$")
  end
  return false
end

--- The findings no `@SuppressLint` in the code covers (M.suppressed_in_code;
-- classes: those checked, as M.load gives them), and how many it covered.
function M.unsuppressed_in_code(findings, classes)
  local by_name = {}
  for _, cls in ipairs(classes) do
    if cls.name and not by_name[cls.name] then by_name[cls.name] = cls end
  end
  local out, n = {}, 0
  for _, f in ipairs(findings) do
    if M.suppressed_in_code(f, by_name) then n = n + 1 else out[#out + 1] = f end
  end
  return out, n
end

-- the findings of one rule in one method, from the resource model's result r
local function findings_of(cls, m, rule, name, r, out, strict)
  local code, facts, ids, owner = m.code, r.facts, r.ids, r.owner
  local at = {}
  for i, ins in ipairs(code) do at[ins.pc] = i end
  local function finding(criterion, i, detail)
    local ins = code[i]
    local what = describe(ins)
    out[#out + 1] = { rule = name, criterion = criterion, class = dotted(cls.name), method = m.name, desc = m.desc,
      source = cls.source, file = cls.file, line = ins.line, pc = ins.pc, instruction = what,
      message = ("%s: %s%s"):format(rule.what, M.CRITERIA[criterion], detail or ""),
      fingerprint = M.fingerprint(cls.name, m.name .. (m.desc or ""), name, criterion, what,
        M.occurrence(code, i, what)) }
  end
  for id, v in ipairs(ids) do
    if v.kind == "open" and not owner[id] then
      -- the values this one holds together (the wrapped ones), and what became of them
      local members, mask, closed, gone, first = {}, 0, false, false, nil
      for k = 1, #ids do
        local root = k
        while owner[root] do root = owner[root] end
        if root == id then
          members[#members + 1] = k
          mask = mask | (1 << (k - 1))
          closed = closed or facts.closed[k] or false
          gone = gone or facts.gone[k] or false
          if ids[k].kind == "open" and (not first or ids[k].at < ids[first].at) then first = k end
          if ids[k].kind == "param" then first = nil; break end  -- (a wrapper of the caller's stream: the caller's)
        end
      end
      if not first then goto next_id end
      local opened = ids[first].init or ids[first].at
      local wrapped = first ~= id and (", in a %s"):format(dotted(v.class)) or ""
      local reported = false
      if (rule.seed or strict) and not gone then
        local ops = {}
        for _, k in ipairs(members) do for _, i in ipairs(facts.ops[k] or {}) do ops[#ops + 1] = i end end
        table.sort(ops)
        local function handler_releases(pc)  -- (its code up to the rethrow, gotos followed: d8 jumps to a shared close)
          local i, steps = at[pc], 0
          while i and i <= #code and steps < #code do
            if (facts.released_at[i] or 0) & mask ~= 0 then return true end
            local op = code[i].op
            if op == "athrow" or op == "throw" or op:find("return", 1, true) then return false end
            if op:sub(1, 4) == "goto" then i = at[code[i].branch or -1] else i = i + 1 end
            steps = steps + 1
          end
          return false
        end
        local seen = {}
        for _, i in ipairs(ops) do
          local ins = code[i]
          local covering, cleaned = {}, false
          for _, t in ipairs(m.tries or {}) do
            if t.start <= ins.pc and ins.pc < t.stop then
              covering[#covering + 1] = t
              if catches_everything(t) and handler_releases(t.handler) then cleaned = true end
            end
          end
          if #covering == 0 then
            finding("op-outside-try", i)
            reported = true
          elseif not cleaned then
            local key = covering[1].start .. ":" .. covering[1].stop  -- (javac lists inner blocks first)
            if not seen[key] then
              seen[key] = true
              local caught = {}
              for _, t in ipairs(covering) do caught[#caught + 1] = t.type and dotted(t.type) or "everything" end
              finding("try-without-close", i, (" (the try block catches %s)"):format(table.concat(caught, ", ")))
            end
            reported = true
          end
        end
      end
      if facts.normal_open[id] and not closed and not gone then
        finding("never-closed", opened, wrapped)
      elseif rule.android and not strict then  -- (Android Lint: released or escaping on some path is enough)
        goto next_id
      elseif not reported and facts.normal_open[id] then
        finding("not-closed-on-path", opened, (" (open at the return at line %s%s)"):format(
          code[facts.normal_open[id]].line or "?", wrapped))
      elseif not reported and facts.exc_open[id] and (closed or gone) then
        local e = code[facts.exc_open[id]]
        finding("not-closed-on-exception", opened, (" (an exception at line %s, %s, leaves it open%s)"):format(
          e.line or "?", describe(e), wrapped))
      end
    end
    ::next_id::
  end
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
    if name == "android" and not rules.android then  -- (Android Lint's Recycle rules)
      for _, n in ipairs(M.rules_data.android) do out[n] = rules[n] end
    elseif not rules[name] then
      local known = {}
      for k in pairs(rules) do known[#known + 1] = k end
      table.sort(known)
      return nil, ("unknown rule '%s' (known: %s)"):format(name, table.concat(known, ", "))
    else
      out[name] = rules[name]
    end
  end
  return out
end

--- The summaries of the methods of classes for one rule (see
-- sift.lint.summaries): "owner.name+desc" -> {closes, stores, returns
-- (parameter index -> true), fresh, kept}.
function M.summaries(classes, rule)
  local by_name = {}
  for _, cls in ipairs(classes) do if cls.name then by_name[cls.name] = cls end end
  return summaries.compute(classes, context(rule, by_name))
end

--- Check classes (from M.load) with rules (a table of name → rule; the
-- default ones when nil). `classpath` (optional) are more classes, read
-- for what their methods do with the resources they are given or return
-- (summaries), not reported on. Returns the findings, by class, method
-- and pc: `{rule, criterion, class, method, desc, source, file, line, pc,
-- instruction, message}`. `opts.strict`: the Cursor detector's try-based
-- criteria for every rule, and Android Lint's rules judged as the others
-- (every path, exceptions included; an argument escapes only as the
-- callee's summary says).
function M.check(classes, rules, classpath, opts)
  local strict = opts and opts.strict or false
  rules = rules or M.select()
  local all, by_name = {}, {}
  for _, list in ipairs { classpath or {}, classes } do
    for _, cls in ipairs(list) do
      all[#all + 1] = cls
      if cls.name then by_name[cls.name] = cls end
    end
  end
  local out = {}
  local names = {}
  for name in pairs(rules) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local rule = rules[name]
    local ctx = context(rule, by_name, strict)
    if not ctx.escapes_args then summaries.compute(all, ctx) end  -- (Android Lint's terms: one method at a time)
    for _, cls in ipairs(classes) do
      ctx.dex = cls.version < 45
      for _, m in ipairs(cls.methods) do
        local r = m.code and resources.analyse(m, ctx)
        if r then findings_of(cls, m, rule, name, r, out, strict) end
      end
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
