-- A bank that no longer speaks OFX: its CSV download imported through the
-- library with a rules file in the shape of hledger's CSV rules (a UK
-- current account: paid out and paid in apart, dd/mm/yyyy), imported
-- twice (the second time adds nothing), categorised by sift's rules and
-- listed. With no CSV given, it writes one beside the books.
--
--   sift run examples/finance_csv.lua books.db [bank.csv bank.rules]
local finance = require "sift.finance"
local fcsv = require "sift.finance.csv"

local db = assert(arg[1], "usage: sift run examples/finance_csv.lua BOOKS.db [BANK.csv BANK.rules]")
local csv_path, rules_path = arg[2], arg[3]

if not csv_path then
  csv_path, rules_path = db .. ".csv", db .. ".rules"
  local f = assert(io.open(csv_path, "w"))
  f:write([[
Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,Debit Amount,Credit Amount,Balance
31/01/2024,FPI,'30-99-50,12345678,"ACME LTD, SALARY JAN",,"2,150.00","3,380.36"
03/01/2024,DEB,'30-99-50,12345678,"TESCO STORES, 2041",52.80,,1145.46
02/01/2024,DD,'30-99-50,12345678,THAMES WATER,32.10,,1198.26
02/01/2024,DEB,'30-99-50,12345678,PRET A MANGER 0123,4.20,,1230.36
]])
  f:close()
  f = assert(io.open(rules_path, "w"))
  f:write([[
# Lloyds: newest first, paid out and paid in apart, dd/mm/yyyy
skip 1
fields date, type, sort_code, account, description, amount-out, amount-in, balance_
date-format %d/%m/%Y
currency GBP
account1 Lloyds Current
if %type ^DD
 comment direct debit
]])
  f:close()
end

local books <close> = assert(finance.open(db))
local counts = assert(fcsv.import(books, csv_path, { rules = rules_path }))
print(("first import: %d new, %d duplicate"):format(counts.new, counts.duplicate))
counts = assert(fcsv.import(books, csv_path, { rules = rules_path }))
print(("again: %d new, %d duplicate"):format(counts.new, counts.duplicate))

assert(books:categorize { rules = [[
if name ~ "salary" and amount > 0 then Income:Salary
if payee ~ "tesco|sainsbury" then Food:Groceries
if memo ~ "direct debit" then Bills
]] })
for _, t in ipairs(books:transactions { account = counts.account }) do
  print(("%s  %s  %s  %s"):format(t.posted, t.amount, t.name, t.category or "-"))
end
