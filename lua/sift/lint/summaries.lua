--- Summaries across methods: for each method of the classes read (those
-- reported on and those only read for this, `--classpath`), what it does
-- with each parameter that is a resource (closes it on some path, and
-- whether also when an exception leaves the method: `always`; passes it
-- on: stores it or hands it to a keeper; returns it), whether it
-- returns a resource it opened (a factory: its caller owns the result) and
-- whether it returns one read from a field (an accessor: it opens nothing).
-- Computed with the resource model itself, in rounds until nothing
-- changes (at most four: a chain of helpers deeper than that is cut).
-- @module sift.lint.summaries

local resources = require "sift.lint.resources"

local M = {}

local function same(a, b)
  if (a == nil) ~= (b == nil) then return false end
  if not a then return true end
  if a.fresh ~= b.fresh or a.kept ~= b.kept then return false end
  for _, k in ipairs { "closes", "always", "stores", "returns" } do
    for p, v in pairs(a[k]) do if b[k][p] ~= v then return false end end
    for p, v in pairs(b[k]) do if a[k][p] ~= v then return false end end
  end
  return true
end

--- The summaries ("owner.name+desc" -> {closes, always, stores, returns:
-- param index -> true; fresh, kept}) of every method of classes, for the rule context
-- ctx (sift.lint's); ctx.summaries is filled in as they are found.
function M.compute(classes, ctx)
  ctx.summaries = {}
  for _ = 1, 4 do
    local next_round, changed = {}, false
    for _, cls in ipairs(classes) do
      ctx.dex = cls.version < 45
      for _, m in ipairs(cls.methods) do
        local r = m.code and resources.analyse(m, ctx)
        if r then
          local s = { closes = {}, always = {}, stores = {}, returns = {}, fresh = r.facts.returns_fresh or false,
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
    if not changed then break end
  end
  return ctx.summaries
end

return M
