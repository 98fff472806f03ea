--- Budgets: what may be spent on a category in a month, and how much of
-- it a month has spent. A budget is a positive amount in minor units of
-- a currency (the books' main one, as the report takes it, unless named);
-- what a month spent on the category is the report's expense for it (the
-- money out of the accounts in that currency that counts: not your own
-- entries matched to the bank's row, not the second of a confirmed
-- duplicate pair), as a positive amount.
--
--     local budgets = require "sift.finance.budgets"
--     assert(budgets.set(books, "Groceries", "400.00"))
--     for _, b in ipairs(budgets.progress(books, "2024-03")) do
--       print(b.category, b.spent, b.budget, b.ratio)
--     end
-- @module sift.finance.budgets

local store = require "sift.finance.store"
local rules = require "sift.finance.rules"
local entries = require "sift.finance.entries"

local M = {}

-- the books' main currency: the report's (that of the account with the
-- most transactions)
function M.currency(books)
  local row = books.db:first([[SELECT a.currency FROM accounts a WHERE a.currency IS NOT NULL
    ORDER BY (SELECT count(*) FROM transactions t WHERE t.account_id = a.id) DESC, a.id LIMIT 1]])
  return row and row.currency
end

--- The budget of a category: `{ category, units, amount, currency,
-- updated }`, or nil when it has none.
function M.get(books, category)
  local row = books.db:first([[SELECT c.name AS category, b.amount AS units, b.amount_text AS amount, b.currency,
      b.updated FROM budgets b JOIN categories c ON c.id = b.category_id WHERE c.name = ?]], category)
  return row
end

--- Set (or change) a category's monthly budget: `amount` a positive
-- decimal ("400.00"), in `currency` (default: the books' main one).
-- @return the budget as `get` gives it, or nil, why and a code ("usage"
--   when the arguments alone are wrong)
function M.set(books, category, amount, currency)
  local problem = rules.category_problem(category)
  if problem then return nil, "category: " .. problem, "usage" end
  currency = currency or M.currency(books)
  if not currency then return nil, "currency: the books have no account with a currency yet: name one" end
  if type(currency) ~= "string" or not currency:match("^%u%u%u$") then
    return nil, ("currency: %s is not an ISO 4217 code"):format(tostring(currency)), "usage"
  end
  local units, text = entries.check_amount(amount, currency)
  if not units then return nil, text, "usage" end
  if units <= 0 then return nil, ("amount: %s: a budget is what may be spent, a positive amount"):format(text), "usage" end
  local db = books.db
  store.atomic(db, function()
    db:run("INSERT OR IGNORE INTO categories (name) VALUES (?)", category)
    local id = db:first("SELECT id FROM categories WHERE name = ?", category).id
    db:run([[INSERT INTO budgets (category_id, amount, amount_text, currency, updated)
      VALUES (?, ?, ?, ?, strftime('%Y-%m-%d %H:%M:%f', 'now'))
      ON CONFLICT DO UPDATE SET amount = excluded.amount, amount_text = excluded.amount_text,
        currency = excluded.currency, updated = excluded.updated]], id, units, text, currency)
  end)
  return M.get(books, category)
end

--- Remove a category's budget: true, or nil and why.
function M.remove(books, category)
  local n = books.db:run("DELETE FROM budgets WHERE category_id = (SELECT id FROM categories WHERE name = ?)", category)
  if n == 0 then return nil, ("no budget for %s"):format(tostring(category)) end
  return true
end

--- Each budget beside what `month` ("YYYY-MM") spent on its category:
-- `{ category, units, amount, currency, updated, spent_units, spent,
-- ratio }` (spent as a positive amount; ratio spent / budget), by
-- category name.
-- @return the list, or nil and why
function M.progress(books, month)
  if type(month) ~= "string" or not month:match("^%d%d%d%d%-%d%d$") then
    return nil, ("month: %s is not YYYY-MM"):format(tostring(month))
  end
  local out = {}
  for row in books.db:rows([[SELECT c.name AS category, b.amount AS units, b.amount_text AS amount, b.currency,
        b.updated, (SELECT coalesce(-sum(t.amount), 0) FROM transactions t WHERE t.category_id = b.category_id
          AND t.amount < 0 AND substr(t.posted, 1, 7) = ?
          AND t.account_id IN (SELECT id FROM accounts WHERE currency = b.currency) AND ]] .. store.kept("t") .. [[)
          AS spent_units
      FROM budgets b JOIN categories c ON c.id = b.category_id ORDER BY c.name]], month) do
    row.spent = store.decimal(row.spent_units, row.currency)
    row.ratio = row.spent_units / row.units
    out[#out + 1] = row
  end
  return out
end

return M
