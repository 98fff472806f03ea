--- Summaries across methods: for each method of the classes read (those
-- reported on and those only read for this, `--classpath`), what it does
-- with each parameter that is a resource (closes it on some path, and
-- whether also when an exception leaves the method: `always`; whether it
-- also returns with it open on some path: `partly`; passes it
-- on: stores it or hands it to a keeper; returns it), whether it
-- returns a resource it opened (a factory: its caller owns the result) and
-- whether it returns one read from a field (an accessor: it opens nothing).
-- Computed with the resource model itself, in rounds until nothing
-- changes (at most four: a chain of helpers deeper than that is cut).
-- @module sift.lint.summaries

local bytecode = require "sift.lint.bytecode"
local resources = require "sift.lint.resources"

local M = {}

--- A summary as a string: two summaries say the same when their shapes are equal.
function M.shape(s)
  local parts = { tostring(s.fresh), tostring(s.kept) }
  for _, k in ipairs { "closes", "always", "partly", "stores", "returns" } do
    local ps = {}
    for p in pairs(s[k]) do ps[#ps + 1] = p end
    table.sort(ps)
    parts[#parts + 1] = k .. "=" .. table.concat(ps, ",")
  end
  return table.concat(parts, " ")
end

local function same(a, b)
  if (a == nil) ~= (b == nil) then return false end
  return a == nil or M.shape(a) == M.shape(b)
end

-- whether a call can throw nothing by what is known of the callee whatever
-- the classes read do
local function known_quiet(ins, ctx)
  if ins.op == "invokedynamic" then return true end  -- (a lambda made, a string joined)
  if ctx.quiet[ins.owner .. "." .. ins.name] or ctx.quiet_classes[ins.owner] then return true end
  -- (a wrapper, an Object, an exception: their constructors throw nothing)
  return ins.name == "<init>" and (ctx.wrappers[ins.owner] or ins.owner == "java/lang/Object"
    or ins.owner:find("Exception$") ~= nil or ins.owner:find("Error$") ~= nil)
end

--- The methods of classes that can throw nothing (no athrow, and only
-- calls that cannot either: a setter, a getter, a wrapper's constructor),
-- found in rounds: ctx.quiet_methods["owner.name+desc"] = true. Exceptions
-- the JVM raises itself (a null dereference) are left out, as everywhere
-- in the resource model.
function M.quiet(classes, ctx)
  local quiet = {}
  ctx.quiet_methods = quiet
  -- the methods left to judge: each one's key, and its calls that can throw
  -- unless the method called is found quiet
  local keys, calls = {}, {}
  for _, cls in ipairs(classes) do
    for _, m in ipairs(cls.methods) do
      if m.code then
        local list = {}
        for i, ins in ipairs(m.code) do
          local op = ins.op
          if (op == "athrow" or op == "throw") and not resources.asserts(m.code, i) then
            list = nil
            break
          end
          if ins.owner and bytecode.INVOKE[op] and not known_quiet(ins, ctx) then list[#list + 1] = ins end
        end
        if list then
          keys[#keys + 1] = cls.name .. "." .. m.name .. m.desc
          calls[#keys] = list
        end
      end
    end
  end
  for _ = 1, 8 do
    local changed = false
    for k, key in ipairs(keys) do
      if not quiet[key] then
        local ok = true
        for _, ins in ipairs(calls[k]) do
          if not ctx.is_quiet(ins.owner, ins.name, ins.desc) then
            ok = false
            break
          end
        end
        if ok then quiet[key] = true; changed = true end
      end
    end
    if not changed then break end
  end
  return quiet
end

--- The summaries ("owner.name+desc" -> {closes, always, stores, returns:
-- param index -> true; fresh, kept}) of every method of classes, for the rule context
-- ctx (sift.lint's); ctx.summaries is filled in as they are found.
function M.compute(classes, ctx)
  ctx.summaries, ctx.calls = {}, {}
  M.quiet(classes, ctx)
  for _ = 1, 4 do
    local next_round, changed = {}, false
    for _, cls in ipairs(classes) do
      ctx.dex = cls.version < 45
      for _, m in ipairs(cls.methods) do
        local r = m.code and resources.analyse(m, ctx)
        if r then
          local s = { closes = {}, always = {}, partly = {}, stores = {}, returns = {}, fresh = r.facts.returns_fresh or false,
            kept = r.facts.returned & resources.FIELD ~= 0 }
          for id, v in ipairs(r.ids) do
            if v.kind == "param" then
              local returned, k = false, id  -- (itself, or a wrapper holding it, returned)
              while k and not returned do
                returned = r.facts.returned & (1 << (k - 1)) ~= 0
                k = r.owner[k]
              end
              if returned then s.returns[v.param] = true
              elseif r.facts.closed[id] then
                s.closes[v.param] = true
                s.always[v.param] = not r.facts.exc_open[id] or nil
                s.partly[v.param] = r.facts.normal_open[id] and true or nil
              elseif r.facts.gone[id] then s.stores[v.param] = true end
            end
          end
          local key = cls.name .. "." .. m.name .. m.desc
          next_round[key] = s
          if not same(s, ctx.summaries[key]) then changed = true end
        end
      end
    end
    ctx.summaries = next_round
    ctx.calls = {}
    if not changed then break end
  end
  return ctx.summaries
end

return M
