--- Journals of the books for ledger, hledger and beancount, and CSV.
--
-- Each statement account is an asset (`Assets:Bank:ORG:NUMBER`,
-- `Assets:Investment:...`) or a liability (`Liabilities:CreditCard:...`);
-- the other leg of a transaction is its category under `Expenses:` (money
-- out) or `Income:` (money in), `...:Uncategorized` when it has none, and
-- `Assets:Transfers` for transfers between the user's own accounts (both
-- sides post there, so it nets to zero once both have arrived). Every
-- transaction keeps its FITID and sift id as metadata, so exports are
-- stable and tools can match them on a re-export. An opening balance
-- (from `Equity:Opening-Balances`, the day before the account's first
-- transaction) makes each statement's ledger balance come true, and each
-- balance becomes an assertion: ledger and hledger check it after the
-- day's transactions, beancount (whose `balance` holds at the start of
-- a day) the day after.
-- @module sift.finance.export

local store = require "sift.finance.store"
local csv = require "sift.csv"

local M = {}

-- ledger's and hledger's status marks of sift's statuses (their manuals:
-- unmarked is recorded but not reconciled, ! pending, * cleared in the
-- sense of reconciled with the statement)
local STATUS_MARKS = require("sift.finance.entries").STATUSES

-- {======================================================
-- Names
-- =======================================================

-- an account name component: ledger and hledger take words with single
-- spaces; beancount wants [A-Z0-9][A-Za-z0-9-]*
local function component(s, beancount)
  s = s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  if beancount then
    s = s:gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
    s = s:sub(1, 1):upper() .. s:sub(2)
    if s == "" then s = "X" end
  else
    s = s:gsub("[:;]", "-")
  end
  return s
end

local ROOTS = { bank = "Assets:Bank", investment = "Assets:Investment", creditcard = "Liabilities:CreditCard" }

local function account_name(row, beancount)
  -- (your cash accounts: Assets:Cash:NAME)
  if row.account_kind == "cash" then return "Assets:Cash:" .. component(row.account, beancount) end
  local org = row.institution ~= "" and row.institution or "Unknown"
  return ("%s:%s:%s"):format(ROOTS[row.account_kind] or "Assets:Other", component(org, beancount),
    component(row.account, beancount))
end

local function category_name(row, beancount)
  if row.category == "Transfer" then return "Assets:Transfers" end
  local root = row.amount_units < 0 and "Expenses" or "Income"
  local parts = {}
  for part in (row.category or "Uncategorized"):gmatch("[^:]+") do parts[#parts + 1] = component(part, beancount) end
  return root .. ":" .. table.concat(parts, ":")
end

-- }======================================================

local function day_before(date)
  local y, m, d = date:match("^(%d+)-(%d+)-(%d+)$")
  return os.date("!%Y-%m-%d", os.time { year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 } - 86400)
end

local function day_after(date)
  local y, m, d = date:match("^(%d+)-(%d+)-(%d+)$")
  return os.date("!%Y-%m-%d", os.time { year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 } + 86400)
end

-- the rows to write: every transaction that counts (store.kept), by
-- date, within opts.from/opts.to and of opts.account (a number) when
-- given; the accounts with their openings (store.check_balances: the
-- report's definition), carried to opts.from; the balances in the period,
-- the inconsistent ones marked
local function gather(books, opts)
  local db = books.db
  local checks, openings = store.check_balances(db)
  local kept, accounts, by_id = {}, {}, {}
  local skip = {}
  for row in db:rows("SELECT id FROM transactions WHERE NOT " .. store.kept("transactions")) do skip[row.id] = true end
  local before = {}  -- account id -> the sum of what counts before opts.from
  for _, t in ipairs(books:transactions { account = opts.account }) do
    t.currency = t.currency or opts.currency  -- (for accounts whose statements gave none)
    if skip[t.id] then
      t = nil
    elseif opts.from and t.posted < opts.from then
      before[t.account_id] = (before[t.account_id] or 0) + t.amount_units
      t = nil
    elseif opts.to and t.posted > opts.to then
      t = nil
    end
    if t then
      kept[#kept + 1] = t
      local a = by_id[t.account_id]
      if not a then
        a = { id = t.account_id, first = t.posted, currency = t.currency, row = t }
        by_id[t.account_id] = a
        accounts[#accounts + 1] = a
      end
    end
  end
  local balances = {}
  for _, a in ipairs(accounts) do
    a.base_opening = openings[a.id] or 0
    a.opening = a.base_opening + (before[a.id] or 0)
    a.opened = day_before(a.first)
  end
  for _, b in ipairs(checks) do
    local a = by_id[b.account]
    if a and (not opts.from or b.date >= opts.from) and (not opts.to or b.date <= opts.to) then
      balances[#balances + 1] = { account = a, date = b.date, amount = b.units, check = b, manual = b.manual_units }
      -- an assertion is never dated before the account opens
      if b.consistent and b.date < a.opened then a.opened = b.date end
    end
  end
  return kept, accounts, balances
end

-- why a balance's assertion is left out, as a comment
local function left_out(b, comment)
  local c = b.check
  return ("%s %s statement balance %s of %s on %s left out: it implies an opening balance of %s, not %s "
    .. "(transactions missing or doubled before it; `sift statements` lists and drops balances)"):format(comment,
    b.date, c.balance, c.number, b.date, c.opening, store.decimal(b.account.base_opening, c.currency))
end

-- a comment beside an assertion that counts your own entries the bank
-- has not brought yet: the statement's number and theirs
local function manual_note(b, comment)
  local c = b.check
  return ("%s the bank's statement says %s on %s; your own entries it has not brought yet add %s"):format(comment,
    c.balance, b.date, store.decimal(b.manual, c.currency))
end

local function money(units, currency, beancount)
  local text = store.decimal(units, currency)
  if currency then return text .. " " .. currency end
  if beancount then
    error("an account has no currency (its statement had no CURDEF): beancount needs one (--currency)", 0)
  end
  return text
end

local function quote(s)
  return '"' .. (s or ""):gsub('[\\"]', "\\%0") .. '"'
end

-- one line of text for a description: no newlines, no leading spaces
local function oneline(s)
  return ((s or ""):gsub("[\r\n\t]+", " "):gsub("^%s+", ""))
end

-- {======================================================
-- Writers
-- =======================================================

local function ledger_like(books, opts, hledger)
  local rows, accounts, balances = gather(books, opts)
  local out = { "; sift export: ledger journal" .. (hledger and " (hledger)" or ""), "" }
  -- events by date: openings, transactions, then the day's assertions
  local events = {}
  for _, a in ipairs(accounts) do
    if a.opening and a.opening ~= 0 then
      events[#events + 1] = { date = a.opened, order = 0, a = a }
    end
  end
  for i, t in ipairs(rows) do events[#events + 1] = { date = t.posted, order = 1, seq = i, t = t } end
  for i, b in ipairs(balances) do events[#events + 1] = { date = b.date, order = 2, seq = i, b = b } end
  table.sort(events, function(x, y)
    if x.date ~= y.date then return x.date < y.date end
    if x.order ~= y.order then return x.order < y.order end
    return (x.seq or 0) < (y.seq or 0)
  end)
  local function line(s) out[#out + 1] = s end
  for _, e in ipairs(events) do
    if e.a then
      local name = account_name(e.a.row)
      line(("%s * Opening balance"):format(e.date))
      line(("    %-50s  %s"):format(name, money(e.a.opening, e.a.currency)))
      line("    Equity:Opening-Balances")
    elseif e.t then
      local t = e.t
      -- (the status as ledger's and hledger's marks: none uncleared, ! pending, * reconciled)
      local mark = STATUS_MARKS[t.status] or ""
      line(("%s %s%s"):format(t.posted, mark ~= "" and (mark .. " ") or "", oneline(t.payee or t.name or t.memo or "")))
      if t.fitid then line(("    ; fitid: %s"):format(t.fitid)) end
      line(("    ; sift-id: %d"):format(t.id))
      if t.memo and t.memo ~= t.payee then line(("    ; memo: %s"):format(oneline(t.memo))) end
      if t.notes then line(("    ; notes: %s"):format(oneline(t.notes))) end
      line(("    %-50s  %s"):format(account_name(t), money(t.amount_units, t.currency)))
      line(("    %s"):format(category_name(t)))
    elseif not e.b.check.consistent then
      line(left_out(e.b, ";"))
    else
      local b = e.b
      line(("%s * Statement balance"):format(b.date))
      if b.manual ~= 0 then line(manual_note(b, "    ;")) end
      line(("    %-50s  %s = %s"):format(account_name(b.account.row), money(0, b.account.currency),
        money(b.amount + b.manual, b.account.currency)))
    end
    line("")
  end
  return table.concat(out, "\n")
end

local function beancount(books, opts)
  local rows, accounts, balances = gather(books, opts)
  local out = { "; sift export: beancount ledger", "" }
  local function line(s) out[#out + 1] = s end
  -- every account is opened on the earliest date it is used
  local opened, first = {}, {}
  local function use(name, date)
    if not first[name] or date < first[name] then first[name] = date end
  end
  for _, a in ipairs(accounts) do
    use(account_name(a.row, true), a.opened)
    if a.opening and a.opening ~= 0 then use("Equity:Opening-Balances", a.opened) end
  end
  for _, t in ipairs(rows) do
    use(account_name(t, true), t.posted)
    use(category_name(t, true), t.posted)
  end
  for name in pairs(first) do opened[#opened + 1] = name end
  table.sort(opened)
  for _, name in ipairs(opened) do line(("%s open %s"):format(first[name], name)) end
  line("")
  local events = {}
  for _, a in ipairs(accounts) do
    if a.opening and a.opening ~= 0 then events[#events + 1] = { date = a.opened, order = 0, a = a } end
  end
  for i, t in ipairs(rows) do events[#events + 1] = { date = t.posted, order = 1, seq = i, t = t } end
  for i, b in ipairs(balances) do events[#events + 1] = { date = day_after(b.date), order = 2, seq = i, b = b } end
  table.sort(events, function(x, y)
    if x.date ~= y.date then return x.date < y.date end
    if x.order ~= y.order then return x.order < y.order end
    return (x.seq or 0) < (y.seq or 0)
  end)
  for _, e in ipairs(events) do
    if e.a then
      line(("%s * \"Opening balance\""):format(e.date))
      line(("  %-50s  %s"):format(account_name(e.a.row, true), money(e.a.opening, e.a.currency, true)))
      line("  Equity:Opening-Balances")
    elseif e.t then
      local t = e.t
      line(("%s * %s %s"):format(t.posted, quote(oneline(t.payee or t.name)), quote(oneline(t.memo))))
      if t.fitid then line(("  fitid: %s"):format(quote(t.fitid))) end
      line(("  sift_id: %d"):format(t.id))
      line(("  %-50s  %s"):format(account_name(t, true), money(t.amount_units, t.currency, true)))
      line(("  %s"):format(category_name(t, true)))
    elseif not e.b.check.consistent then
      line(left_out(e.b, ";"))
    else
      local b = e.b
      if b.manual ~= 0 then line(manual_note(b, ";")) end
      line(("%s balance %-50s  %s"):format(e.date, account_name(b.account.row, true),
        money(b.amount + b.manual, b.account.currency, true)))
    end
    line("")
  end
  return table.concat(out, "\n")
end

M.CSV_COLUMNS = { "id", "posted", "account", "amount", "currency", "payee", "name", "memo", "category",
  "category_source", "fitid", "status", "notes", "matched_to" }

local function csv_text(books)
  local out = { table.concat(M.CSV_COLUMNS, ",") }
  for _, t in ipairs(books:transactions {}) do out[#out + 1] = csv.line(t, M.CSV_COLUMNS) end
  return table.concat(out, "\n") .. "\n"
end

-- }======================================================

M.FORMATS = { ledger = function(b, opts) return ledger_like(b, opts, false) end,
  hledger = function(b, opts) return ledger_like(b, opts, true) end, beancount = beancount, csv = csv_text }

--- The books as text in a format ("ledger", "hledger", "beancount",
-- "csv"), written to out (a file handle) when given. opts: `currency`
-- for accounts whose statements named none.
-- @return the text, or nil and why
function M.write(books, format, out, opts)
  local writer = M.FORMATS[format]
  if not writer then return nil, ("unknown format %q (ledger, hledger, beancount, csv)"):format(tostring(format)) end
  local ok, text = pcall(writer, books, opts or {})
  if not ok then return nil, text end
  if out then out:write(text) end
  return text
end

return M
