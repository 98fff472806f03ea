-- Read bank statements (OFX or QFX, v1 SGML or v2 XML): each account's
-- balance and period, its largest spending, and what was left out and why.
--
--   sift run examples/ofx.lua statement.ofx [more.qfx ...]
local ofx = require "sift.ofx"

-- an amount in millionths, an integer: amounts compare exactly
local function micro(amount)
  local units, scale = ofx.units(amount)
  for _ = scale + 1, 6 do units = units * 10 end
  for _ = 7, scale do units = units // 10 end
  return units
end

assert(arg[1], "usage: sift run examples/ofx.lua FILE.ofx [FILE.qfx ...]")
for _, path in ipairs(arg) do
  local doc, err = ofx.read(path)          -- lenient: reads on, with warnings
  if not doc then
    print(err)
  else
    for _, st in ipairs(doc.statements) do
      local bal = st.ledger_balance
      print(("%s: %s account %s (%s), %d transactions, balance %s"):format(path, st.kind, st.account.id or "?",
        st.currency or "?", #st.transactions, bal and (bal.amount .. " on " .. bal.date) or "not given"))
      -- the three largest debits, compared exactly in minor units
      local debits = {}
      for _, t in ipairs(st.transactions) do
        local m = micro(t.amount)
        if m < 0 then debits[#debits + 1] = { t = t, micro = m } end
      end
      table.sort(debits, function(a, b) return a.micro < b.micro end)
      for i = 1, math.min(3, #debits) do
        local t = debits[i].t
        print(("  %s  %10s  %s"):format(t.posted:sub(1, 10), t.amount, t.payee or t.memo or ""))
      end
    end
    for _, w in ipairs(doc.warnings) do print(("  warning (line %s): %s"):format(w.line or "?", w.message)) end
  end
end
