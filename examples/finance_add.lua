-- Your own entries through the library: a cash account, a few purchases
-- and a gift added with exact amounts, one corrected (the edit is kept
-- with its time), one refused for what it says, and the report's line for
-- the month.
--
--   sift run examples/finance_add.lua books.db
local finance = require "sift.finance"

local db = assert(arg[1], "usage: sift run examples/finance_add.lua BOOKS.db")
local books <close> = assert(finance.open(db))

local entries = {
  { date = "2024-03-02", amount = "-4.20", payee = "Corner shop", category = "Food:Groceries" },
  { date = "2024-03-09", amount = "-12.35", payee = "Market stall", category = "Food:Groceries" },
  { date = "2024-03-15", amount = "50", payee = "Gran", category = "Gifts", notes = "birthday" },
  { date = "2024-03-21", amount = "-7.00", payee = "Barber" },
}
local ids = {}
for i, e in ipairs(entries) do
  e.account, e.currency = "Wallet", "GBP"
  local id, info = assert(books:add(e))
  ids[i] = id
  print(("added %d: %s %s %s%s"):format(id, e.date, e.amount, e.payee,
    info.created and (" (made the cash account %s, %s)"):format(info.account, info.currency) or ""))
end

-- the barber was 7.50, not 7.00: corrected, and given a category
for _, c in ipairs(assert(books:edit(ids[4], { amount = "-7.50", category = "Personal:Haircut" }))) do
  print(("edited %d: %s %s -> %s"):format(ids[4], c.field, c.old or "(none)", c.new or "(none)"))
end

-- a pound has two decimals: refused, and nothing is stored
local none, why = books:add { date = "2024-03-22", amount = "-0.125", payee = "Sweets", account = "Wallet" }
print(("refused: %s"):format(none == nil and why or "?"))

local money = require("sift.finance.store").decimal
local report = books:report { from = "2024-03-01", to = "2024-03-31" }
for _, m in ipairs(report.months) do
  print(("%s %s: income %s, expenses %s, net %s"):format(m.month, report.currency, money(m.income, report.currency),
    money(m.expense, report.currency), money(m.net, report.currency)))
end
