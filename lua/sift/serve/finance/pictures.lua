--- The finance app's pages of pictures: spending by category per month
-- with each account's balance over time (/finance/charts), and one
-- category's drill-down to its transactions (/finance/category).
-- @module sift.serve.finance.pictures

local store = require "sift.finance.store"
local report = require "sift.finance.report"
local json = require "sift.json"
local html = require "sift.serve.html"
local common = require "sift.serve.finance.common"
local charts = require "sift.serve.finance.charts"

local esc = html.escape

local M = {}

local function date_ok(d) return d == nil or (type(d) == "string" and d:match("^%d%d%d%d%-%d%d%-%d%d$") ~= nil) end

--- Each account's balance at the end of each month it has transactions
-- in: its opening (from its statements' balances, as the report takes
-- it) plus every transaction that counts up to then.
function M.balance_series(books)
  local db = books.db
  local _, openings = store.check_balances(db)
  local out = json.array {}
  for a in db:rows("SELECT id, number, currency FROM accounts ORDER BY id") do
    local running, points = openings[a.id] or 0, json.array {}
    for row in db:rows([[SELECT substr(t.posted, 1, 7) AS month, sum(t.amount) AS units FROM transactions t
        WHERE t.account_id = ? AND ]] .. store.kept("t") .. [[ GROUP BY 1 ORDER BY 1]], a.id) do
      running = running + row.units
      points[#points + 1] = { month = row.month, units = running, balance = store.decimal(running, a.currency) }
    end
    if #points > 0 then
      out[#out + 1] = { number = a.number, currency = a.currency, known = openings[a.id] ~= nil, points = points }
    end
  end
  return out
end

--- Spending by category per month (the report's numbers), and the
-- balances over time.
function M.charts(_, books, query)
  if not date_ok(query.from) or not date_ok(query.to) then return common.fail(400, "from, to: YYYY-MM-DD") end
  local r = report.build(books, { from = query.from, to = query.to, top = 10 })
  local series = M.balance_series(books)
  local view = report.view(r)
  view.balances = series
  return common.answer(200, view, function()
    return common.page("Where the money goes", table.concat {
      ('<form method="get" action="/finance/charts">from <input type="text" name="from" value="%s" style="width:7em"> '
        .. 'to <input type="text" name="to" value="%s" style="width:7em"> <button type="submit">show</button></form>')
        :format(esc(query.from), esc(query.to)),
      ("<h2>Spending by category per month (%s)</h2>"):format(esc(r.currency or "no currency")),
      '<p class="muted">Transfers between your accounts are left out, as in the report. A bar links to the '
        .. "category's transactions that month.</p>",
      charts.spending(r),
      "<h2>Balance over time per account</h2>",
      '<p class="muted">At each month\'s end: the statements\' opening balance plus every transaction that counts'
        .. " (an account with no statement balance starts at zero).</p>",
      charts.balances(series),
    })
  end)
end

--- One category (?name=, or ?uncategorized=1): its spending per month
-- and its transactions (?month= narrows them to a month).
function M.category(server, books, query)
  local uncategorized = query.uncategorized == "1"
  local name = query.name
  if not uncategorized and (not name or name == "") then return common.fail(400, "name: a category") end
  if query.month and not query.month:match("^%d%d%d%d%-%d%d$") then return common.fail(400, "month: YYYY-MM") end
  local currency = require("sift.finance.budgets").currency(books)
  local series = json.array {}
  local cond = uncategorized and "t.category_id IS NULL"
    or "t.category_id = (SELECT id FROM categories WHERE name = ?)"
  local args = uncategorized and { currency } or { name, currency }
  for row in books.db:rows([[SELECT substr(t.posted, 1, 7) AS month,
        sum(CASE WHEN t.amount < 0 THEN t.amount ELSE 0 END) AS units FROM transactions t
      WHERE ]] .. cond .. [[ AND t.account_id IN (SELECT id FROM accounts WHERE currency IS ?) AND ]] .. store.kept("t")
      .. [[ GROUP BY 1 HAVING units != 0 ORDER BY 1]], table.unpack(args)) do
    row.amount = store.decimal(row.units, currency)
    series[#series + 1] = row
  end
  local label = uncategorized and "Uncategorized" or name
  local list_query = { category = not uncategorized and name or nil, uncategorized = uncategorized and "1" or nil,
    month = query.month }
  local pages = require "sift.serve.finance.pages"
  local list = pages.transactions(server, books, list_query)
  if list.status ~= 200 then return list end
  local base = uncategorized and "/finance/category?uncategorized=1" or ("/finance/category?name=" .. html.encode(name))
  local view = { category = label, currency = currency, months = series, transactions = list.view }
  return common.answer(200, view, function()
    local body = list.render():match("<main>.-</h1>\n(.*)\n</main>") or ""
    return common.page("Category: " .. label, table.concat {
      ("<p>Spending in %s per month (%s); a bar shows that month's transactions. %s</p>"):format(esc(label),
        esc(currency or "?"), query.month and html.a(base, "all months") or ""),
      charts.category(series, currency, function(m) return base .. "&month=" .. m end),
      ("<h2>Transactions%s</h2>"):format(query.month and (" in " .. esc(query.month)) or ""),
      body,
    })
  end)
end

return M
