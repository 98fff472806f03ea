--- The resource model of one method: each value that is a resource, from
-- where it is opened (an allocation site), followed through locals (or
-- registers) and the operand stack along every path of the method's
-- control-flow graph, exception edges included, with its state on each
-- path: not yet opened, open, closed, or passed on (returned, stored in a
-- field or an array, given to a method that keeps it, or to a wrapper that
-- is itself passed on). A wrapper built around a resource owns it: closing
-- either closes both, passing either on passes both. States merge at joins
-- as sets, so "open on some path" is exact up to paths that cannot happen.
--
-- A method's parameters are followed too (never reported): what happens
-- to them is the method's summary (sift.lint.summaries).
--
-- Exceptions: the instructions that can throw here are calls on a tracked
-- value or taking one, calls on a resource type, constructors of resources,
-- and athrow. A call elsewhere (StringBuilder.append, a logger) is taken not
-- to throw: a leak only an OutOfMemoryError could cause is not reported.
-- An `assert` (a throw of a new AssertionError) is not an exit either.
-- Nor do a wrapper's constructor (BufferedReader(Reader)), the methods of
-- sift.lint.rules' QUIET_CLASSES (PrintStream.println) and the methods of the
-- classes read that can throw nothing (no athrow, no call that can: a
-- setter; sift.lint.summaries).
-- An exception inside a try block goes to its handlers (a typed catch is
-- taken to catch it, unless it catches only what opening throws, such as
-- FileNotFoundException, and the call is on an open resource); outside
-- any, it leaves the method. A call on a collection is taken not to throw;
-- an unknown call given a stream that returns a stream holds it (a wrapper).
-- @module sift.lint.resources

local bytecode = require "sift.lint.bytecode"

local M = {}

-- a resource's states on the paths reaching a point, as bits
local UNOPENED, OPEN, CLOSED, GONE = 1, 2, 4, 8
M.UNOPENED, M.OPEN, M.CLOSED, M.GONE = UNOPENED, OPEN, CLOSED, GONE

local MAX_IDS = 62      -- values followed per method (a bit each in a Lua integer)
local FIELD = 1 << 62   -- a value read from a field: no resource of this method, but not a new one either
local ID_MASK = FIELD - 1
M.FIELD = FIELD

--- Whether instruction i of code throws the AssertionError it has just
-- made (`assert`, `throw new AssertionError(...)`: what the code says
-- cannot happen; not an exit that leaks).
function M.asserts(code, i)
  local prev = code[i - 1]
  return (code[i].op == "athrow" or code[i].op == "throw") and prev ~= nil
    and prev.owner == "java/lang/AssertionError" and prev.name == "<init>"
end

local function copy(s)
  local l, st, sk = {}, {}, {}
  for k, v in pairs(s.locals) do l[k] = v end
  for k, v in pairs(s.st) do st[k] = v end
  for k, v in ipairs(s.stack) do sk[k] = v end
  return { locals = l, st = st, stack = sk }
end

-- merge b into a; whether a changed
local function merge(a, b)
  local changed = false
  for k, v in pairs(b.locals) do
    local old = a.locals[k] or 0
    if old | v ~= old then a.locals[k] = old | v; changed = true end
  end
  for k, v in pairs(b.st) do
    local old = a.st[k] or 0
    if old | v ~= old then a.st[k] = old | v; changed = true end
  end
  for k, v in ipairs(b.stack) do
    local old = a.stack[k] or 0
    if old | v ~= old then a.stack[k] = old | v; changed = true end
  end
  return changed
end

local function bits(mask)
  return function(_, prev)
    local k = prev + 1
    while k <= MAX_IDS and mask >> (k - 1) ~= 0 do
      if mask & (1 << (k - 1)) ~= 0 then return k end
      k = k + 1
    end
    return nil
  end, nil, 0
end
M.bits = bits

--- Whether a dex invoke ins takes a value followed in state s (as its
-- receiver or an argument).
function M.dex_involves(ins, s)
  for _, reg in ipairs(ins.regs or {}) do
    if (s.locals[reg] or 0) & ID_MASK ~= 0 then return true end
  end
  return false
end

-- the instructions of code that can open something, whatever the rule: its
-- first `new` of each class and first call of each method (every rule asks,
-- and asks again in each round of summaries)
local found_openers = setmetatable({}, { __mode = "k" })
local function openers(code)
  local list = found_openers[code]
  if list then return list end
  list = {}
  local seen = {}
  for _, ins in ipairs(code) do
    local op, key = ins.op, nil
    if op == "new" or op == "new-instance" then key = ins.class
    elseif ins.owner and ins.desc and bytecode.INVOKE[op] then key = ins.owner .. "." .. ins.name .. ins.desc end
    if key and not seen[key] then
      seen[key] = true
      list[#list + 1] = ins
    end
  end
  found_openers[code] = list
  return list
end

-- whether an instruction of code opens something under ctx's rule
local function opens_any(code, ctx)
  for _, ins in ipairs(openers(code)) do
    if ctx.opens_at(ins) then return true end
  end
  return false
end

-- whether a method of descriptor d (parsed) takes a parameter of a type ctx's rule follows
local function takes_resource(d, ctx)
  for _, p in ipairs(d.params) do
    if p.class and ctx.param_types[p.class] then return true end
  end
  return false
end

--- Analyse method m of class cls for one rule's context (see
-- sift.lint.check: `ctx` holds the rule's type sets and the summaries).
-- Returns nil when nothing in the method is followed, else
-- `{ids = {{kind = "open"|"param", at = index, class, param}...},
-- owner = {id -> wrapper id}, facts}`: facts.normal_open[id] and
-- facts.exc_open[id] (the exit instruction where it is still open),
-- facts.closed[id], facts.gone[id], facts.ops[id] (instruction indexes of
-- calls on it), facts.released_at[index] (mask), facts.returned (mask of
-- values returned; M.FIELD set when one was read from a field),
-- facts.returns_fresh.
function M.analyse(m, ctx)
  local code = m.code
  if not code or #code == 0 then return nil end
  local dex = ctx.dex
  local static = (m.access or 0) & 0x0008 ~= 0
  local d = bytecode.desc(m.desc or "()V")
  local first_slot = static and 0 or 1  -- (dex: the arguments are in the last `ins` registers)
  if dex then first_slot = m.registers and m.ins and m.registers - m.ins + (static and 0 or 1) or nil end
  -- (most methods follow nothing: they are told apart before anything is made)
  if not (first_slot and takes_resource(d, ctx)) and not (d.ret_class and ctx.interesting[d.ret_class])
      and not opens_any(code, ctx) then
    return nil
  end
  local ids, site, owner = {}, {}, {}
  -- the parameters followed: those whose type is a resource's
  local entry = { locals = {}, st = {}, stack = {} }
  if first_slot then
    local slot = first_slot
    for k, p in ipairs(d.params) do
      if p.class and ctx.param_types[p.class] and #ids < MAX_IDS then
        ids[#ids + 1] = { kind = "param", param = k, class = p.class }
        entry.locals[slot] = 1 << (#ids - 1)
        entry.st[#ids] = OPEN
      end
      slot = slot + p.slots
    end
  end

  local succ, at = bytecode.graph(code, dex)
  local facts = nil   -- set for the last pass, which records what it sees

  local function new_id(i, kind, class, is_new)
    if site[i] then return site[i] end
    if #ids >= MAX_IDS then return nil end
    ids[#ids + 1] = { kind = kind, at = i, class = class, new = is_new }
    site[i] = #ids
    return #ids
  end
  local function group(id)  -- the id and every value its wrapper chain holds together
    local out, root = {}, id
    while owner[root] do root = owner[root] end
    for k = 1, #ids do
      local r = k
      while owner[r] do r = owner[r] end
      if r == root then out[#out + 1] = k end
    end
    return out
  end
  -- whether id's wrapper chain holds a parameter (the caller's: a factory wrapping it opens nothing)
  local function holds_param(id)
    for _, k in ipairs(group(id)) do
      if ids[k].kind == "param" then return true end
    end
    return false
  end
  local closing = false  -- whether the instruction being applied closed something
  -- what happens to every open value of mask: "close", "pass" (passed on),
  -- or "partly" (closed on some paths of a callee, still open on others)
  local function settle(s, mask, how, not_on_exception)
    if how == "close" and mask & ID_MASK ~= 0 and not not_on_exception then closing = true end
    for id in bits(mask) do
      for _, k in ipairs(group(id)) do
        local v = s.st[k] or 0
        if v & OPEN ~= 0 then
          if how == "partly" then s.st[k] = v | CLOSED
          else s.st[k] = (v & ~OPEN) | (how == "close" and CLOSED or GONE) end
        end
        if facts then
          if how == "pass" then facts.gone[k] = true else facts.closed[k] = true end
        end
      end
    end
  end

  -- a call: receiver and argument masks, what it does to them, its result
  local function call(i, ins, s, recv, args, cd)
    local key = ins.owner .. "." .. ins.name
    local result = 0
    local summary = ctx.summary(ins.owner, ins.name, ins.desc)
    if ins.name == "<init>" then
      local id
      for k in bits(recv) do
        if ids[k].new and ids[k].class == ins.owner then id = k end
      end
      local argmask = 0
      for _, a in ipairs(args) do argmask = argmask | a end
      if id then
        local opened = false
        local owned = 0  -- (what it wraps that is open: opened here, or a parameter, the caller's)
        for a in bits(argmask) do
          if (s.st[a] or 0) & OPEN ~= 0 and a ~= id then owned = owned | (1 << (a - 1)) end
        end
        if ctx.wrappers[ins.owner] and owned ~= 0 then
          for a in bits(owned) do
            if not owner[a] then owner[a] = id end
          end
          opened = true
        elseif ctx.opens[ins.owner] then
          opened = true
        elseif ctx.opens_named[ins.owner] and cd.params[1] and ctx.opens_named[ins.owner][cd.params[1].class or ""] then
          opened = true
        end
        s.st[id] = opened and OPEN or GONE  -- (a wrapper of nothing owned: nothing to close)
        ids[id].init = ids[id].init or i
        return 0
      end
      if argmask ~= 0 then  -- an object of another class keeps what it is given
        if summary then
          for k, a in ipairs(args) do
            if a ~= 0 and summary.closes[k] then
              settle(s, a, summary.partly[k] and "partly" or "close", not summary.always[k])
            elseif a ~= 0 and summary.stores[k] then settle(s, a, "pass") end
          end
        else
          settle(s, argmask, "pass")
        end
      end
      return 0
    end
    if recv ~= 0 and ctx.release[ins.name] then
      settle(s, recv, "close")
      if facts then facts.released_at[i] = (facts.released_at[i] or 0) | recv end
      return 0
    end
    if ctx.closers[key] or ctx.takers[key] then
      local mask = 0
      for _, a in ipairs(args) do mask = mask | a end
      settle(s, mask, ctx.closers[key] and "close" or "pass")
      if facts and ctx.closers[key] then facts.released_at[i] = (facts.released_at[i] or 0) | mask end
      return ctx.takers[key] and mask or 0
    end
    if recv ~= 0 and facts then
      for id in bits(recv) do
        facts.ops[id] = facts.ops[id] or {}
        table.insert(facts.ops[id], i)
      end
    end
    for k, a in ipairs(args) do
      if a ~= 0 then
        if summary then
          if summary.closes[k] then  -- (a helper that closes on its normal path only has not, when it throws)
            settle(s, a, summary.partly[k] and "partly" or "close", not summary.always[k])
            if facts then facts.released_at[i] = (facts.released_at[i] or 0) | a end
          elseif summary.stores[k] then settle(s, a, "pass") end
          if summary.returns[k] then result = result | a end
        elseif not (cd.params[k].class and ctx.use_types[cd.params[k].class]) then
          settle(s, a, "pass")  -- (given as an Object, a collection's element...: kept elsewhere)
        end
        if ctx.escapes_args and not ctx.not_escapes[key] and not (summary and summary.closes[k]) then
          settle(s, a, "pass")  -- (Android Lint: an argument escapes)
        end
      end
    end
    if recv ~= 0 and (cd.ret_class == ins.owner or ctx.parts[key]) then  -- (returns itself, append; or a part of it)
      result = result | recv
    end
    -- (an unknown call making a stream of a stream it is given: a wrapper; MotionEvent.obtain(event) makes a copy)
    if not summary and cd.ret_class and ctx.use_types[cd.ret_class] and not ctx.not_escapes[key] then
      for k, a in ipairs(args) do
        if a & ID_MASK ~= 0 and cd.params[k].class and ctx.use_types[cd.params[k].class] then result = result | a end
      end
    end
    if ctx.opener(ins, summary) then
      local id = new_id(i, "open", cd.ret_class)
      if id then
        s.st[id] = OPEN
        result = result | (1 << (id - 1))
      end
    end
    return result
  end

  -- does instruction i throw (for the resource model: see the header)
  local function throws(i, ins, s)
    local op = ins.op
    if op == "athrow" or op == "throw" then return not M.asserts(code, i) end
    if not (ins.owner and bytecode.INVOKE[op]) then return false end
    if ins.name == "<init>" and (ctx.wrappers[ins.owner] or not (ctx.opens[ins.owner] or ctx.opens_named[ins.owner])) then
      return false
    end
    if ctx.closers[ins.owner .. "." .. ins.name] or ctx.quiet[ins.owner .. "." .. ins.name]
        or ctx.quiet_classes[ins.owner] or ctx.is_quiet(ins.owner, ins.name, ins.desc) then
      return false
    end
    local summary = ins.desc and ctx.summary(ins.owner, ins.name, ins.desc)
    if summary and next(summary.returns) then return false end  -- (a factory of wrappers: as a wrapper's constructor)
    if summary and next(summary.always) then return false end  -- (a closing helper: as a known closer, quiet)
    if ins.desc and bytecode.desc(ins.desc).ret_class == ins.owner then return false end  -- (fluent: derives a value)
    if ctx.use_types[ins.owner] or ctx.opens[ins.owner] then return true end
    if dex then return M.dex_involves(ins, s) end
    -- a call taking a followed value: its arguments are the top of the stack
    local cd = bytecode.desc(ins.desc)
    local n = cd.slots + ((op == "invokestatic" or op == "invokedynamic") and 0 or 1)
    for k = #s.stack - n + 1, #s.stack do
      if k >= 1 and s.stack[k] & ID_MASK ~= 0 then return true end
    end
    return false
  end

  -- whether instruction ins is a call on a followed value or taking one
  -- (what it throws is not what opening throws: FileNotFoundException...)
  local function involves(ins, s)
    if not (ins.owner and bytecode.INVOKE[ins.op] and ins.desc) then return false end
    if dex then return M.dex_involves(ins, s) end
    local n = bytecode.desc(ins.desc).slots + (ins.op == "invokestatic" and 0 or 1)
    for k = #s.stack - n + 1, #s.stack do
      if k >= 1 and s.stack[k] & ID_MASK ~= 0 then return true end
    end
    return false
  end

  -- the JVM: apply instruction i to state s (mutated); returns the mask a
  -- null test is made on and on which edge it is null ("branch"/"next")
  local function jvm_step(i, ins, s)
    local op, stack = ins.op, s.stack
    local function pop()
      local v = stack[#stack]
      stack[#stack] = nil
      return v or 0
    end
    local function push(v) stack[#stack + 1] = v end
    local simple = bytecode.SIMPLE[op]
    if simple then
      for _ = 1, simple[1] do pop() end
      for _ = 1, simple[2] do push(0) end
      return
    end
    if op:match("^[ilfda]load") then
      local kind = op:sub(1, 1)
      if kind == "a" then push(s.locals[ins.var] or 0)
      else
        push(0)
        if kind == "l" or kind == "d" then push(0) end
      end
      return
    end
    if op:match("^[ilfda]store") then
      local k2 = op:sub(1, 1)
      if k2 == "a" then s.locals[ins.var] = pop()
      else
        pop()
        s.locals[ins.var] = 0
        if k2 == "l" or k2 == "d" then pop(); s.locals[ins.var + 1] = 0 end
      end
      return
    end
    if op == "dup" then local v = pop(); push(v); push(v)
    elseif op == "dup_x1" then local v1, v2 = pop(), pop(); push(v1); push(v2); push(v1)
    elseif op == "dup_x2" then local v1, v2, v3 = pop(), pop(), pop(); push(v1); push(v3); push(v2); push(v1)
    elseif op == "dup2" then local v1, v2 = pop(), pop(); push(v2); push(v1); push(v2); push(v1)
    elseif op == "dup2_x1" then
      local v1, v2, v3 = pop(), pop(), pop(); push(v2); push(v1); push(v3); push(v2); push(v1)
    elseif op == "dup2_x2" then
      local v1, v2, v3, v4 = pop(), pop(), pop(), pop(); push(v2); push(v1); push(v4); push(v3); push(v2); push(v1)
    elseif op == "swap" then local v1, v2 = pop(), pop(); push(v1); push(v2)
    elseif op == "getstatic" or op == "getfield" then
      if op == "getfield" then pop() end
      push(ins.desc:match("^[L%[]") and FIELD or 0)
      if bytecode.field_slots(ins.desc) == 2 then push(0) end
    elseif op == "putstatic" or op == "putfield" then
      local v = 0
      for _ = 1, bytecode.field_slots(ins.desc) do v = v | pop() end
      if op == "putfield" then pop() end
      if v ~= 0 then settle(s, v, "pass") end
    elseif op == "aastore" then
      local v = pop(); pop(); pop()
      if v ~= 0 then settle(s, v, "pass") end
    elseif op == "areturn" then
      local v = pop()
      if facts then facts.returned = facts.returned | v end
      if v ~= 0 then
        if facts then
          for id in bits(v) do
            if ids[id].kind == "open" and (s.st[id] or 0) & OPEN ~= 0 and not holds_param(id) then
              facts.returns_fresh = true
            end
          end
        end
        settle(s, v, "pass")
      end
    elseif op == "athrow" then pop()
    elseif op == "new" then
      local id = ctx.interesting_new[ins.class] and new_id(i, "open", ins.class, true)
      if id then s.st[id] = UNOPENED end
      push(id and (1 << (id - 1)) or 0)
    elseif op == "multianewarray" then
      for _ = 1, ins.var or 1 do pop() end
      push(0)
    elseif op == "ifnull" or op == "ifnonnull" then
      return pop(), op == "ifnull" and "branch" or "next"
    elseif op == "invokedynamic" then  -- (a lambda keeps what it captures)
      local cd = bytecode.desc(ins.desc or "()V")
      local v = 0
      for _ = 1, cd.slots do v = v | pop() end
      if v & ID_MASK ~= 0 then settle(s, v, "pass") end
      if cd.ret_slots == 1 then push(0) elseif cd.ret_slots == 2 then push(0); push(0) end
    elseif bytecode.INVOKE[op] and ins.owner then
      local cd = bytecode.desc(ins.desc)
      local args = {}
      for k = #cd.params, 1, -1 do
        local v = 0
        for _ = 1, cd.params[k].slots do v = v | pop() end
        args[k] = v
      end
      local recv = (op == "invokestatic" or op == "invokedynamic") and 0 or pop()
      local r = call(i, ins, s, recv, args, cd)
      if cd.ret_slots == 1 then push(r) elseif cd.ret_slots == 2 then push(0); push(0) end
    end
    return nil
  end

  -- dex: registers; `var` an instruction's register A, `src` a move's
  -- source, `regs` an invoke's argument registers; the result of a call
  -- waits for move-result-object
  local NO_WRITE = { "^invoke", "^return", "^iput", "^sput", "^aput", "^if%-", "^throw", "^monitor", "^check%-cast",
    "^fill%-array", "^packed%-switch", "^sparse%-switch", "^filled%-new", "^goto", "^nop", "payload$" }
  local function dex_step(i, ins, s)
    local op, r = ins.op, ins.var
    local pending = s.stack[1] or 0
    s.stack[1] = nil
    if bytecode.INVOKE[op] and ins.owner then
      local cd = bytecode.desc(ins.desc)
      local regs = ins.regs or {}
      local k = 1
      local recv = 0
      if not op:find("static", 1, true) then
        recv = s.locals[regs[1] or -1] or 0
        k = 2
      end
      local args = {}
      for p, param in ipairs(cd.params) do
        args[p] = s.locals[regs[k] or -1] or 0
        k = k + param.slots
      end
      s.stack[1] = call(i, ins, s, recv, args, cd)
      return
    end
    if op == "move-result-object" then s.locals[r] = pending; return end
    if op:match("^move%-object") then s.locals[r] = s.locals[ins.src or -1] or 0; return end
    if op == "move-result-object" then s.locals[r] = pending; return end
    if op == "new-instance" then
      local id = ctx.interesting_new[ins.class] and new_id(i, "open", ins.class, true)
      if id then s.st[id] = UNOPENED end
      s.locals[r] = id and (1 << (id - 1)) or 0
      return
    end
    if op == "return-object" or op:match("^[isa]put%-object") then
      local v = s.locals[r] or 0
      if op == "return-object" and facts then
        facts.returned = facts.returned | v
        for id in bits(v) do
          if ids[id].kind == "open" and (s.st[id] or 0) & OPEN ~= 0 and not holds_param(id) then
            facts.returns_fresh = true
          end
        end
      end
      if v ~= 0 then settle(s, v, "pass") end
      return
    end
    if op == "if-eqz" then return s.locals[r] or 0, "branch" end
    if op == "if-nez" then return s.locals[r] or 0, "next" end
    for _, p in ipairs(NO_WRITE) do
      if op:find(p) then return end
    end
    if r then
      s.locals[r] = (op == "iget-object" or op == "sget-object") and FIELD or 0
      if op:find("wide", 1, true) then s.locals[r + 1] = 0 end
    end
  end
  local step = dex and dex_step or jvm_step

  local function catch_all(t) return t.type == nil or t.type == "java/lang/Throwable" end
  local RETURN = dex and { ["return-void"] = true, ["return"] = true, ["return-wide"] = true,
    ["return-object"] = true } or { ireturn = true, lreturn = true, freturn = true, dreturn = true, areturn = true,
    ["return"] = true }

  -- the fixpoint, then a last pass over it recording facts
  local states = { [1] = entry }
  local function run(record)
    local work, queued = { 1 }, { [1] = true }
    local budget = 40 * #code + 200
    local order = record and {} or nil
    if record then
      for i = 1, #code do if states[i] then order[#order + 1] = i end end
      work = order
    end
    local w = 1
    while w <= #work do
      local i = work[w]
      w = w + 1
      if not record then
        queued[i] = nil
        budget = budget - 1
        if budget < 0 then return false end
      end
      local ins, s = code[i], copy(states[i])
      local throwing = throws(i, ins, s)
      local before = throwing and copy(s) or nil
      closing = false
      local tested, null_edge = step(i, ins, s)
      if throwing then
        local exc = before
        if closing then exc = copy(s) end  -- (a close that throws has closed all the same)
        exc.stack = { 0 }
        local caught = false
        local on_value = involves(ins, before)
        for _, t in ipairs(m.tries or {}) do
          if t.start <= ins.pc and ins.pc < t.stop and at[t.handler]
              and not (on_value and t.type and ctx.open_failures[t.type]) then
            caught = true
            local h = at[t.handler]
            if not record then
              if not states[h] then states[h] = copy(exc); if not queued[h] then work[#work + 1] = h; queued[h] = true end
              elseif merge(states[h], exc) and not queued[h] then work[#work + 1] = h; queued[h] = true end
            end
            if catch_all(t) then break end
            if on_value and t.type and ctx.unchecked[t.type] then
              exc = copy(exc)  -- (a call on an Android resource throws RuntimeExceptions: this catch took them all;
              for k, v in pairs(exc.st) do  -- the handlers after it see only Errors, which leave no finding:
                if v & OPEN ~= 0 then exc.st[k] = (v & ~OPEN) | CLOSED end  -- followed, as if released)
              end
            end
          end
        end
        if not caught and record then
          for id = 1, #ids do
            if (exc.st[id] or 0) & OPEN ~= 0 and not facts.exc_open[id] then facts.exc_open[id] = i end
          end
        end
      end
      if record then
        if RETURN[ins.op] then
          for id = 1, #ids do
            if (s.st[id] or 0) & OPEN ~= 0 and not facts.normal_open[id] then facts.normal_open[id] = i end
          end
        end
      else
        for _, j in ipairs(succ[i]) do
          local out = s
          if tested and tested ~= 0 and ((null_edge == "branch" and j == at[ins.branch]) or
              (null_edge == "next" and j == i + 1 and j ~= at[ins.branch or -1])) then
            out = copy(s)  -- (the value tested is null on this edge: what it may hold was not opened here,
            for id in bits(tested) do  -- nor a wrapper around it)
              for _, k in ipairs(group(id)) do
                local v = out.st[k] or 0
                if v & OPEN ~= 0 then out.st[k] = (v & ~OPEN) | UNOPENED end
              end
            end
          end
          if not states[j] then
            states[j] = copy(out)
            if not queued[j] then work[#work + 1] = j; queued[j] = true end
          elseif merge(states[j], out) and not queued[j] then
            work[#work + 1] = j
            queued[j] = true
          end
        end
      end
    end
    return true
  end
  if not run(false) then return nil end  -- (no fixpoint within the budget: a method too tangled to judge)
  facts = { normal_open = {}, exc_open = {}, closed = {}, gone = {}, ops = {}, released_at = {}, returned = 0 }
  run(true)
  return { ids = ids, owner = owner, facts = facts, site = site }
end

return M
