--- Your own entries in the books: a cash purchase, a cheque the bank has
-- not cashed yet. They are transactions like imported ones (transfers,
-- duplicates, reports and journals take them), with no import
-- (`import_id` NULL) and the key `manual:<id>`; they start `uncleared`.
-- An imported row keeps the bank's data as downloaded: of it, only the
-- category, the notes and the status change. Every change is kept in
-- `edits` (field, old, new, time), and a later import that brings the
-- bank's row of an entry links the two (`sift.finance.store.match`).
--
-- Errors are nil, a message and a code: "usage" when the arguments alone
-- are wrong (a date that is no date, an amount that is no decimal: the
-- CLI exits 2), none when the books refuse (no such transaction, an
-- imported row's bank data, an account with no currency: exit 1).
--
--     local books <close> = assert(require("sift.finance").open("books.db"))
--     local id = assert(books:add { date = "2024-03-02", amount = "-4.20", payee = "Corner shop",
--       currency = "GBP", category = "Food:Groceries" })
--     books:edit(id, { status = "cleared", notes = "milk and bread" })
-- @module sift.finance.entries

local store = require "sift.finance.store"
local rules = require "sift.finance.rules"

local M = {}

--- The statuses, as ledger and GnuCash keep them, and their journal marks
-- (ledger's and hledger's: `*` reconciled, `!` pending, none uncleared).
M.STATUSES = { uncleared = "", cleared = "!", reconciled = "*" }

--- The name of the account your entries go to when none is named.
M.DEFAULT_ACCOUNT = "Cash"

local LIMIT = { payee = 200, memo = 1000, notes = 4000, account = 100 }

-- {======================================================
-- Checks: each returns the value as stored, or nil and why
-- =======================================================

local function usage(msg) return nil, msg, "usage" end

--- A date as YYYY-MM-DD that is a day of the calendar.
function M.check_date(text)
  local y, m, d = tostring(text):match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
  if y then
    local t = os.time { year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 }
    if os.date("!%Y-%m-%d", t) == text then return text end
  end
  return nil, ("date: %s is no day of the calendar (YYYY-MM-DD, say 2024-03-02)"):format(tostring(text))
end

-- an amount's text: decimal, not zero (its decimals are checked against
-- the account's currency later: the books know it)
local function amount_text(text)
  if math.type(text) == "integer" then text = tostring(text) end
  if type(text) ~= "string" then
    return nil, ("amount: %s is not decimal text (say \"-12.50\"; a float is not exact)"):format(tostring(text))
  end
  if not (text:match("^[+-]?%d+%.?%d*$") or text:match("^[+-]?%.%d+$")) then
    return nil, ("amount: %s is not a decimal amount (say 12.50, or -12.50 for money out: a point before "
      .. "the decimals, no thousands separators)"):format(text)
  end
  if not text:find("[1-9]") then return nil, ("amount: %s moves no money"):format(text) end
  return text
end

--- An amount as exact decimal text ("-12.50": negative is money out),
-- in the currency's minor units.
-- @return units and the decimal text, or nil and why
function M.check_amount(text, currency)
  local why
  text, why = amount_text(text)
  if not text then return nil, why end
  local units
  units, why = store.minor_units(text, currency)
  if not units then return nil, "amount: " .. why end
  return units, store.decimal(units, currency)
end

-- text of one line: no control characters, not only spaces, at most
-- `limit` characters; spaces at its ends go
local function check_text(field, text, limit, may_be_empty)
  if type(text) ~= "string" then return nil, ("%s: not text"):format(field) end
  if not utf8.len(text) then return nil, ("%s: not UTF-8 text"):format(field) end
  if text:find("%c") then return nil, ("%s: has a control character (a line break, a tab): one line of text"):format(field) end
  text = text:gsub("^%s+", ""):gsub("%s+$", "")
  if text == "" and not may_be_empty then return nil, ("%s: empty"):format(field) end
  if utf8.len(text) > limit then return nil, ("%s: longer than %d characters"):format(field, limit) end
  return text
end

--- A status: uncleared, cleared or reconciled.
function M.check_status(text)
  if M.STATUSES[text] then return text end
  return nil, ("status: %s is none of uncleared, cleared, reconciled"):format(tostring(text))
end

local function check_currency(text)
  if type(text) == "string" and text:match("^%u%u%u$") then return text end
  return nil, ("currency: %s is not an ISO 4217 code (three capital letters: USD, EUR, GBP)"):format(tostring(text))
end

-- }======================================================

-- the account named (its number, its name, or KIND:NUMBER); or the
-- default cash account; made (a cash account) when none has that name and
-- a currency is given. Returns the account row and whether it was made,
-- or nil and why.
local function find_account(db, name, currency)
  name = name or M.DEFAULT_ACCOUNT
  local kind, number = name:match("^(%l+):(.+)$")
  local found = {}
  for row in db:rows([[SELECT id, kind, number, name, currency FROM accounts
      WHERE number = ? OR name = ? OR (kind = ? AND number = ?) ORDER BY id]], name, name, kind, number) do
    found[#found + 1] = row
  end
  if #found > 1 then
    local names = {}
    for i, a in ipairs(found) do names[i] = a.kind .. ":" .. a.number end
    return nil, ("account: %s names %d accounts (%s): name one as KIND:NUMBER"):format(name, #found,
      table.concat(names, ", "))
  end
  if found[1] then return found[1], false end
  if not currency then
    local names = {}
    for row in db:rows("SELECT number FROM accounts ORDER BY id") do names[#names + 1] = row.number end
    return nil, ("account: no account %s%s: to make a cash account of that name, give its currency "
      .. "(--currency)"):format(name, #names > 0 and (" (the accounts: " .. table.concat(names, ", ") .. ")") or "")
  end
  if name:find("[:;]") then return nil, ("account: %s: a new account's name may not have ':' or ';'"):format(name) end
  db:run("INSERT OR IGNORE INTO institutions (org, fid) VALUES ('', '')")
  local institution = db:first("SELECT id FROM institutions WHERE org = '' AND fid = ''").id
  db:run([[INSERT INTO accounts (institution_id, kind, bank_id, number, currency, name)
    VALUES (?, 'cash', '', ?, ?, ?)]], institution, name, currency, name)
  return db:first("SELECT id, kind, number, name, currency FROM accounts WHERE id = ?", db:last_id()), true
end

local function category_id(db, name)
  if not name then return nil end
  db:run("INSERT OR IGNORE INTO categories (name) VALUES (?)", name)
  return db:first("SELECT id FROM categories WHERE name = ?", name).id
end

local function record(db, id, field, old, new)
  db:run("INSERT INTO edits (txn, field, old, new, at) VALUES (?, ?, ?, ?, datetime('now'))", id, field,
    old ~= nil and tostring(old) or nil, new ~= nil and tostring(new) or nil)
end

--- Add an entry. entry: `date` (YYYY-MM-DD), `amount` (decimal text,
-- negative for money out), `payee`; optional `account` (its number or
-- name, or KIND:NUMBER; default "Cash", a cash account made on first use),
-- `currency` (needed when the account has none, as a new one; when given,
-- it must be the account's), `category`, `memo`, `notes`, `status`
-- (default uncleared).
-- @return the new id and `{ account, currency, created }` (created: the
--   account was made), or nil, why and a code ("usage" when the
--   arguments alone are wrong)
function M.add(books, entry)
  local db = books.db
  local date, why = M.check_date(entry.date)
  if not date then return usage(why) end
  local payee
  payee, why = check_text("payee", entry.payee, LIMIT.payee)
  if not payee then return usage(why) end
  payee = payee:gsub("%s+", " ")
  local memo, notes, account_name
  if entry.memo ~= nil then
    memo, why = check_text("memo", entry.memo, LIMIT.memo, true)
    if not memo then return usage(why) end
  end
  if entry.notes ~= nil then
    notes, why = check_text("notes", entry.notes, LIMIT.notes, true)
    if not notes then return usage(why) end
  end
  if entry.account ~= nil then
    account_name, why = check_text("account", entry.account, LIMIT.account)
    if not account_name then return usage(why) end
    account_name = account_name:gsub("%s+", " ")
  end
  if entry.currency ~= nil then
    local ok
    ok, why = check_currency(entry.currency)
    if not ok then return usage(why) end
  end
  if entry.category ~= nil then
    why = rules.category_problem(entry.category)
    if why then return usage("category: " .. why) end
  end
  local status = entry.status or "uncleared"
  if not M.check_status(status) then return usage(select(2, M.check_status(status))) end
  -- (the amount's decimals are checked against the account's currency)
  if not amount_text(entry.amount) then return usage(select(2, amount_text(entry.amount))) end
  -- (a refusal inside raises { refused = why }: nothing of it is kept,
  -- not even the account it made)
  local function refuse(msg) error({ refused = msg }, 0) end
  local ok, id, info = pcall(store.atomic, db, function()
    local account, made = find_account(db, account_name, entry.currency)
    if not account then refuse(made) end
    local currency = account.currency or entry.currency
    if not currency then
      refuse(("account %s has no currency (its statements named none): give --currency"):format(account.number))
    end
    if entry.currency and entry.currency ~= currency then
      refuse(("currency: account %s is in %s, not %s"):format(account.number, currency, entry.currency))
    end
    if not account.currency then db:run("UPDATE accounts SET currency = ? WHERE id = ?", currency, account.id) end
    local units, text = M.check_amount(entry.amount, currency)
    if not units then refuse(text) end
    db:run([[INSERT INTO transactions (account_id, key, posted, amount, amount_text, name, memo, payee, category_id,
        category_source, confidence, status, notes) VALUES (?, 'manual:new', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)]],
      account.id, date, units, text, payee, memo, payee, category_id(db, entry.category),
      entry.category and "user" or nil, entry.category and 1 or nil, status, notes)
    local new = db:last_id()
    db:run("UPDATE transactions SET key = ? WHERE id = ?", "manual:" .. new, new)
    return new, { account = account.number, currency = currency, created = made }
  end)
  if not ok then
    if type(id) == "table" and id.refused then return nil, id.refused end
    error(id, 0)
  end
  return id, info
end

-- the fields `edit` takes, in the order it applies them; the bank's are
-- refused on an imported row
local FIELDS = { "date", "amount", "payee", "memo", "category", "notes", "status" }
local BANKS = { date = true, amount = true, payee = true, memo = true }

local function load(db, id)
  return db:first([[SELECT t.id, t.posted, t.amount, t.payee, t.memo, t.notes, t.status, t.import_id,
      c.name AS category, a.currency FROM transactions t JOIN accounts a ON a.id = t.account_id
      LEFT JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], id)
end

local function check_id(id)
  if math.type(id) == "integer" and id > 0 then return id end
  if type(id) == "string" and id:match("^%d+$") and math.tointeger(tonumber(id)) then return math.tointeger(tonumber(id)) end
  return nil, ("id: %s is not a transaction's id (a whole number)"):format(tostring(id))
end

--- Change a transaction. changes: any of `date`, `amount`, `payee`,
-- `memo`, `category` (false: uncategorised), `notes` ("" clears them),
-- `status`. Of an imported row only the category, notes and status
-- change: the bank's data stays as downloaded (asking for more changes
-- nothing). Each change is recorded in `edits` with its time; all or
-- nothing.
-- @return the changes made `{ { field, old, new } }` (old and new as
--   text), or nil, why and a code
function M.edit(books, id, changes)
  local db = books.db
  local why
  id, why = check_id(id)
  if not id then return usage(why) end
  local given = {}
  for _, f in ipairs(FIELDS) do if changes[f] ~= nil then given[#given + 1] = f end end
  for k in pairs(changes) do
    local known = false
    for _, f in ipairs(FIELDS) do known = known or f == k end
    if not known then return usage(("no field %s (the fields: %s)"):format(tostring(k), table.concat(FIELDS, ", "))) end
  end
  if #given == 0 then return usage("nothing to change (--date, --amount, --payee, --memo, --category, --notes, --status)") end
  -- the arguments alone first
  local new = {}
  if changes.date ~= nil then
    new.date, why = M.check_date(changes.date)
    if not new.date then return usage(why) end
  end
  if changes.payee ~= nil then
    new.payee, why = check_text("payee", changes.payee, LIMIT.payee)
    if not new.payee then return usage(why) end
    new.payee = new.payee:gsub("%s+", " ")
  end
  for _, f in ipairs { "memo", "notes" } do
    if changes[f] ~= nil then
      new[f], why = check_text(f, changes[f], LIMIT[f], true)
      if not new[f] then return usage(why) end
    end
  end
  if changes.category then
    why = rules.category_problem(changes.category)
    if why then return usage("category: " .. why .. " (categorize --clear ID makes it uncategorised)") end
    new.category = changes.category
  end
  if changes.status ~= nil then
    new.status, why = M.check_status(changes.status)
    if not new.status then return usage(why) end
  end
  if changes.amount ~= nil and not amount_text(changes.amount) then return usage(select(2, amount_text(changes.amount))) end
  local t = load(db, id)
  if not t then return nil, ("no transaction %d"):format(id) end
  if t.import_id then
    local refused = {}
    for _, f in ipairs(given) do if BANKS[f] then refused[#refused + 1] = f end end
    if #refused > 0 then
      return nil, ("transaction %d was imported from the bank (import %d): its %s stay%s as downloaded; only "
        .. "its category, notes and status change"):format(id, t.import_id, table.concat(refused, ", "),
        #refused == 1 and "s" or "")
    end
  end
  if changes.amount ~= nil then
    local units, text = M.check_amount(changes.amount, t.currency)
    if not units then return nil, text end
    new.amount, new.amount_text = units, text
  end
  local done = {}
  -- (each field as text, nil for none: what edits keeps)
  local function blank(v) if v == "" then return nil end return v end
  store.atomic(db, function()
    local function change(field, old, value)
      if old == value then return false end
      done[#done + 1] = { field = field, old = old, new = value }
      record(db, id, field, old, value)
      return true
    end
    if new.date and change("date", t.posted, new.date) then
      db:run("UPDATE transactions SET posted = ? WHERE id = ?", new.date, id)
    end
    if new.amount and change("amount", store.decimal(t.amount, t.currency), new.amount_text) then
      db:run("UPDATE transactions SET amount = ?, amount_text = ? WHERE id = ?", new.amount, new.amount_text, id)
    end
    if new.payee and change("payee", t.payee, new.payee) then
      db:run("UPDATE transactions SET payee = ?, name = ? WHERE id = ?", new.payee, new.payee, id)
    end
    if new.memo and change("memo", t.memo, blank(new.memo)) then
      db:run("UPDATE transactions SET memo = ? WHERE id = ?", blank(new.memo), id)
    end
    if changes.category ~= nil and change("category", t.category, new.category) then
      if new.category then
        db:run("UPDATE transactions SET category_id = ?, category_source = 'user', confidence = 1 WHERE id = ?",
          category_id(db, new.category), id)
      else
        db:run("UPDATE transactions SET category_id = NULL, category_source = NULL, confidence = NULL WHERE id = ?", id)
      end
    end
    if new.notes and change("notes", t.notes, blank(new.notes)) then
      db:run("UPDATE transactions SET notes = ? WHERE id = ?", blank(new.notes), id)
    end
    if new.status and change("status", t.status, new.status) then
      db:run("UPDATE transactions SET status = ? WHERE id = ?", new.status, id)
    end
  end)
  return done
end

--- Delete one of your own entries (with its proposals; its edits stay,
-- with a last one saying what was deleted). An imported row is refused:
-- `sift statements --drop` drops a whole import.
-- @return true, or nil, why and a code
function M.delete(books, id)
  local db = books.db
  local why
  id, why = check_id(id)
  if not id then return usage(why) end
  local t = load(db, id)
  if not t then return nil, ("no transaction %d"):format(id) end
  if t.import_id then
    return nil, ("transaction %d was imported from the bank (import %d): it stays as downloaded (sift statements "
      .. "--drop %d drops the whole import)"):format(id, t.import_id, t.import_id)
  end
  store.atomic(db, function()
    db:run([[DELETE FROM pair_undo WHERE transaction_id = ? OR pair_id IN (SELECT id FROM pairs WHERE a = ? OR b = ?)]],
      id, id, id)
    db:run("DELETE FROM pairs WHERE a = ? OR b = ?", id, id)
    db:run("DELETE FROM transactions WHERE id = ?", id)
    record(db, id, "deleted", ("%s %s %s"):format(t.posted, store.decimal(t.amount, t.currency), t.payee), nil)
  end)
  return true
end

return M
