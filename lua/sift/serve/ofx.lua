--- The page of an OFX statement: its statements and their transactions,
-- in `sift ofx --json`'s schema.
-- @module sift.serve.ofx

local ofx = require "sift.ofx"
local html = require "sift.serve.html"

local esc = html.escape

local M = {}

--- Overview: each statement's account, period, balances and transactions.
function M.overview(ctx)
  local doc = ctx.doc
  local view = ofx.view(doc)
  return view, function()
    local parts = {}
    for _, w in ipairs(doc.warnings) do
      parts[#parts + 1] = ('<p class="err">%s%s</p>'):format(w.line and ("line " .. w.line .. ": ") or "", esc(w.message))
    end
    for i, st in ipairs(doc.statements) do
      local acct = st.account or {}
      parts[#parts + 1] = ("<h2>%d. %s %s (%s)</h2>"):format(i, esc(st.kind), esc(acct.id or "?"), esc(st.currency or "?"))
      parts[#parts + 1] = html.facts { { "period", st.start and ((st.start or "?") .. " .. " .. (st["end"] or "?")) },
        { "ledger balance", st.ledger_balance and (st.ledger_balance.amount .. " at " .. (st.ledger_balance.date or "?")) },
        { "available balance", st.available_balance and st.available_balance.amount },
        { "transactions", #st.transactions } }
      local rows = {}
      for k, t in ipairs(st.transactions) do
        if k > 1000 then break end
        rows[k] = { esc(t.posted), esc(t.amount), esc(t.type), esc(t.payee or t.name), esc(t.memo),
          ('<span class="mono">%s</span>'):format(esc(t.fitid)) }
      end
      parts[#parts + 1] = html.table({ "posted", "#amount", "type", "payee", "memo", "fitid" }, rows, "transactions-" .. i)
    end
    return html.page(ctx.entry.name, { { ("/f/%s/"):format(ctx.entry.id), ctx.entry.name } }, table.concat(parts))
  end
end

M.pages = { [""] = M.overview }

return M
