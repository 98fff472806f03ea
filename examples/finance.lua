-- Your bank data in your own database: import statements (each file is
-- all or nothing, and importing again adds nothing), categorise them with
-- rules and with what the books learn from you, find transfers between
-- your accounts, report, and write a beancount journal.
--
--   sift run examples/finance.lua books.db [statement.ofx ...]
--
-- With no statements it makes up a year of a current account and a credit
-- card (sift.finance.sample) and writes them as OFX first.
local finance = require "sift.finance"
local report = require "sift.finance.report"

local db = assert(arg[1], "usage: sift run examples/finance.lua BOOKS.db [STATEMENT.ofx ...]")
local books <close> = assert(finance.open(db))

local files = { table.unpack(arg, 2) }
if #files == 0 then
  local sample = require "sift.finance.sample"
  local writer = require "sift.ofx.writer"
  local path = db .. ".sample.ofx"
  local f = assert(io.open(path, "wb"))
  f:write(writer.write(writer.tree(sample.statements { transactions = 1500 }), { version = 1 }))
  f:close()
  files[1] = path
end

for _, path in ipairs(files) do
  local c, err = books:import(path)
  if not c then error(err, 0) end
  print(("%s: %d new, %d already there, %d changed"):format(path, c.new, c.duplicate, c.changed))
end

-- rules win; what no rule matches is guessed from what is categorised
local counts = assert(books:categorize { rules = [[
if text ~ "tesco|sainsbury|lidl|aldi|waitrose|morrisons" then Groceries
if text ~ "homelet|rent" and amount < 0 then Housing:Rent
if text ~ "salary|payroll" and amount > 0 then Income:Salary payee "ACME Ltd"
if text ~ "netflix|spotify|disney" then Subscriptions
]] })
print(("categorised: %d by rules, %d guessed, %d left for you"):format(counts.by_rule, counts.guessed, counts.unsure))

-- your own choice for one of them (it is never overwritten, and it teaches)
local starbucks = books:transactions { search = "STARBUCKS", limit = 1 }[1]
if starbucks then books:set_category(starbucks.id, "Coffee") end

-- card repayments show up in both accounts: confirm them as transfers
local confirmed = 0
for _, pair in ipairs(books:transfers()) do
  if pair.status == "proposed" and pair.a.payee:find("CREDIT CARD") then
    books:decide(pair.id, true)
    confirmed = confirmed + 1
  end
end
print(("transfers confirmed: %d"):format(confirmed))

for _, check in ipairs(books:balances()) do
  print(("balance of %s on %s: %s (%s)"):format(check.number, check.date, check.balance,
    check.consistent and "matches the transactions" or "transactions are missing"))
end

local r = books:report { top = 5 }
io.write(report.text(r))
local svg = db .. ".report.svg"
local f = assert(io.open(svg, "w"))
f:write(report.svg(r))
f:close()
local journal = db .. ".beancount"
f = assert(io.open(journal, "w"))
assert(books:export("beancount", f))
f:close()
print(("chart: %s, journal: %s"):format(svg, journal))
