--- Personal finance on top of OFX statements: a SQLite store, imports
-- that never duplicate or lose anything, categorisation by rules and by
-- learning, transfers and duplicates, reports and ledger exports.
--
--     local finance = require "sift.finance"
--     local books <close> = assert(finance.open("finance.db"))
--     print(books:import("statement.ofx").new)
--     books:categorize { rules = io.open("rules.txt"):read("a") }
--     for _, t in ipairs(books:transactions { month = "2024-03" }) do
--       print(t.posted, t.amount, t.payee, t.category)
--     end
--     local report = books:report {}
--     books:export("beancount", io.stdout)
-- @module sift.finance

local ofx = require "sift.ofx"
local store = require "sift.finance.store"
local rules = require "sift.finance.rules"
local learn = require "sift.finance.learn"

local M = {}

local Books = {}
Books.__index = Books
Books.__close = function(self) self:close() end

--- The default database: $SIFT_DB, or ~/.local/share/sift/finance.db
-- (XDG_DATA_HOME when set).
function M.default_path()
  local env = os.getenv("SIFT_DB")
  if env and env ~= "" then return env end
  local base = os.getenv("XDG_DATA_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or ".") .. "/.local/share" end
  return base .. "/sift/finance.db"
end

--- Open (creating on first use) the books in a SQLite file.
-- @return the books, or nil, message, code
function M.open(path)
  path = path or M.default_path()
  local db, err, code = store.open(path)
  if not db then return nil, err, code end
  return setmetatable({ db = db, path = path }, Books)
end

function Books:close()
  if self.db then self.db:close() self.db = nil end
end

-- {======================================================
-- Import
-- =======================================================

--- Import a statement: a path, OFX text (`{ text = ... }`) or a document
-- as `sift.ofx.parse` returns. All or nothing, and importing it again adds
-- nothing.
-- @tparam[opt] table opts `on_transaction` (progress)
-- @return counts `{ new, duplicate, changed, skipped, statements,
--   balances, warnings, seen_before }`, or nil, message, code
function Books:import(source, opts)
  opts = opts or {}
  local doc, text, path = source, nil, nil
  if type(source) == "string" then
    path = source
    local f, err = io.open(path, "rb")
    if not f then return nil, err, "io" end
    text = f:read("a")
    f:close()
  elseif type(source) == "table" and source.text then
    text = source.text
  end
  if text then
    local msg, code
    doc, msg, code = ofx.parse(text)
    if not doc then return nil, (path and path .. ": " or "") .. msg, code end
    if not doc.tree:child("OFX") then
      return nil, (path and path .. ": " or "") .. "not an OFX statement (no <OFX> element)", "bad_header"
    end
  end
  local refused = M.bank_errors(doc)
  if refused then return nil, (path and path .. ": " or "") .. refused, "bank_error" end
  local counts = store.import(self.db, doc, { path = path, text = text, on_transaction = opts.on_transaction })
  for i, w in ipairs(doc.warnings or {}) do table.insert(counts.warnings, i, w.message) end
  for _, st in ipairs(doc.statements) do
    if (st.pending or 0) > 0 then
      counts.warnings[#counts.warnings + 1] = ("%s %s: %d pending transaction(s) (BANKTRANLISTP) left out: "
        .. "they are imported once the bank posts them"):format(st.kind, st.account and st.account.id or "?",
        st.pending)
    end
  end
  -- (said on every import of the file, not only the first)
  for _, b in ipairs(store.check_balances(self.db)) do
    if not b.consistent and b.import == counts.import_id then
      counts.warnings[#counts.warnings + 1] = ("account %s: statement balance %s on %s implies an opening "
        .. "balance of %s, unlike the account's other balances: transactions are missing or doubled before it "
        .. "(its journal assertion is left out; `sift statements` lists and drops balances)")
        :format(b.number, b.balance, b.date, b.opening)
    end
  end
  return counts
end

local function describe_status(s)
  return ("%s%s%s"):format(s.code and tostring(s.code) or "?", s.meaning and (" " .. s.meaning) or "",
    s.message and (": " .. s.message) or "")
end

-- a status the bank marked as an error (SEVERITY ERROR, or a code that
-- is neither success nor "up to date" without a severity)
local function is_error(s)
  if not s then return false end
  if s.severity then return s.severity:upper() == "ERROR" end
  return s.code ~= nil and s.code ~= 0 and s.code ~= 1
end

--- Why a document must not be imported: the bank answered the sign-on
-- or a statement request with an error (nothing of the file is then
-- stored), as one message; nil when it did not.
function M.bank_errors(doc)
  local why = {}
  if is_error(doc.signon) then why[#why + 1] = "sign-on refused: " .. describe_status(doc.signon) end
  for _, s in ipairs(doc.status or {}) do
    if is_error(s) then
      why[#why + 1] = ("%s statement%s: %s"):format(s.kind, s.trnuid and (" request " .. s.trnuid) or "",
        describe_status(s))
    end
  end
  if #why == 0 then return nil end
  return "the bank answered with an error, nothing imported: " .. table.concat(why, "; ")
end

-- }======================================================

-- {======================================================
-- Reading transactions
-- =======================================================

local SELECT = [[
  SELECT t.id, t.posted, t.amount, t.amount_text, t.type, t.name, t.memo, t.payee, t.checknum, t.fitid,
    t.category_source, t.confidence, c.name AS category, a.number AS account, a.kind AS account_kind,
    a.currency, a.id AS account_id, i.org AS institution, t.status, t.notes, t.matched_to, t.import_id,
    t.import_id IS NULL AS manual
  FROM transactions t JOIN accounts a ON a.id = t.account_id JOIN institutions i ON i.id = a.institution_id
  LEFT JOIN categories c ON c.id = t.category_id]]

--- Transactions, oldest first. filter: `month` ("2024-03"), `from`,
-- `to` (dates, inclusive), `account` (number), `category`,
-- `uncategorized`, `search` (in payee, name or memo), `limit`, `ids`.
function Books:transactions(filter)
  filter = filter or {}
  local where, args = {}, {}
  local function add(cond, ...)
    where[#where + 1] = cond
    for _, v in ipairs { ... } do args[#args + 1] = v end
  end
  if filter.month then add("substr(t.posted, 1, 7) = ?", filter.month) end
  if filter.from then add("t.posted >= ?", filter.from) end
  if filter.to then add("t.posted <= ?", filter.to) end
  if filter.account then add("a.number = ?", filter.account) end
  if filter.category then add("c.name = ?", filter.category) end
  if filter.uncategorized then add("t.category_id IS NULL") end
  if filter.search then
    local like = "%" .. filter.search:gsub("[%%_\\]", "\\%0") .. "%"
    add([[(t.payee LIKE ? ESCAPE '\' OR t.name LIKE ? ESCAPE '\' OR t.memo LIKE ? ESCAPE '\')]], like, like, like)
  end
  local sql = SELECT .. (#where > 0 and " WHERE " .. table.concat(where, " AND ") or "")
    .. " ORDER BY t.posted, t.id" .. (filter.limit and (" LIMIT %d"):format(math.tointeger(filter.limit)) or "")
  local out = {}
  for row in self.db:rows(sql, table.unpack(args)) do
    row.amount_units, row.amount = row.amount, store.decimal(row.amount, row.currency)
    row.manual = row.manual == 1
    out[#out + 1] = row
  end
  return out
end

-- }======================================================

-- {======================================================
-- Categorisation
-- =======================================================

local function category_id(db, name)
  db:run("INSERT OR IGNORE INTO categories (name) VALUES (?)", name)
  return db:first("SELECT id FROM categories WHERE name = ?", name).id
end

--- Set a transaction's category as the user's choice (it is never
-- overwritten by rules or guesses, and it trains the learner); with no
-- category (nil), the transaction goes back to uncategorised, and the
-- rules and the learner may categorise it again.
-- @return true, or nil and why
function Books:set_category(id, category)
  local found = self.db:first([[SELECT t.id, c.name AS category FROM transactions t
    LEFT JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], id)
  if not found then return nil, ("no transaction %s"):format(tostring(id)) end
  local problem = category ~= nil and rules.category_problem(category)
  if problem then return nil, problem end
  store.atomic(self.db, function()
    if found.category ~= category then
      self.db:run("INSERT INTO edits (txn, field, old, new, at) VALUES (?, 'category', ?, ?, datetime('now'))", id,
        found.category, category)
    end
    if category then
      self.db:run("UPDATE transactions SET category_id = ?, category_source = 'user', confidence = 1 WHERE id = ?",
        category_id(self.db, category), id)
    else
      self.db:run("UPDATE transactions SET category_id = NULL, category_source = NULL, confidence = NULL WHERE id = ?",
        id)
    end
  end)
  return true
end

--- The rules in use: the text given (which is then kept in the store), or
-- the last kept.
-- @return a rule set or nil, and an error message when the text does not read
function Books:rules(text, path)
  if text then
    local set, err = rules.compile(text, path)
    if not set then return nil, err end
    self.db:run("INSERT INTO rules (source, path, at) VALUES (?, ?, datetime('now'))", text, path)
    return set
  end
  local last = self.db:first("SELECT source, path FROM rules ORDER BY id DESC LIMIT 1")
  if not last then return nil end
  return rules.compile(last.source, last.path)
end

-- the categorised history: what the user set, and what rules set
function Books:examples()
  local out = {}
  for row in self.db:rows(SELECT .. " WHERE t.category_source IN ('user', 'rule') ORDER BY t.id") do
    row.amount = store.decimal(row.amount, row.currency)
    out[#out + 1] = { row, row.category }
  end
  return out
end

--- Categorise: rules first (they always win), then the learner's guesses
-- for what no rule matched. Categories the user set are never touched.
-- opts: `rules` (text; default: the rules kept in the store), `rules_path`,
-- `min_confidence` (guesses below it are left uncategorised; 0.5).
-- @return counts `{ by_rule, guessed, unsure, untouched }`, or nil and a
--   rules error
function Books:categorize(opts)
  opts = opts or {}
  local db = self.db
  local set, err = self:rules(opts.rules, opts.rules_path)
  if opts.rules and not set then return nil, err end
  local counts = { by_rule = 0, guessed = 0, unsure = 0, untouched = 0 }
  local min = opts.min_confidence or 0.5
  store.atomic(db, function()
    local pending = {}
    for row in db:rows(SELECT .. " WHERE t.category_source IS NULL OR t.category_source IN ('rule', 'learned')") do
      row.amount = store.decimal(row.amount, row.currency)
      pending[#pending + 1] = row
    end
    local learned = {}
    for _, t in ipairs(pending) do
      local category, payee = nil, nil
      if set then category, payee = set:match(t) end
      if category then
        db:run("UPDATE transactions SET category_id = ?, category_source = 'rule', confidence = 1, payee = coalesce(?, payee) WHERE id = ?",
          category_id(db, category), payee, t.id)
        counts.by_rule = counts.by_rule + 1
      else
        learned[#learned + 1] = t
      end
    end
    local model = learn.train(self:examples())
    for _, t in ipairs(learned) do
      local category, p = model:guess(t)
      if category and p >= min then
        db:run("UPDATE transactions SET category_id = ?, category_source = 'learned', confidence = ? WHERE id = ?",
          category_id(db, category), p, t.id)
        counts.guessed = counts.guessed + 1
      else
        db:run("UPDATE transactions SET category_id = NULL, category_source = NULL, confidence = ? WHERE id = ?",
          p, t.id)
        counts.unsure = counts.unsure + 1
      end
    end
  end)
  counts.untouched = db:first("SELECT count(*) AS n FROM transactions WHERE category_source = 'user'").n
  return counts
end

--- The learner's k-fold cross-validated accuracy on the categorised
-- history (see `sift.finance.learn.evaluate`).
function Books:evaluate(k)
  return learn.evaluate(self:examples(), k or 5)
end

-- }======================================================

-- {======================================================
-- Transfers and duplicates
-- =======================================================

--- Propose transfers between the user's own accounts: an amount out of
-- one and the same amount into another within `days` (4) days. Nothing
-- is changed until a pair is confirmed.
-- @return the pairs `{ id, status, out = t, into = t }`
function Books:transfers(days)
  local db = self.db
  store.atomic(db, function()
    db:run([[INSERT OR IGNORE INTO pairs (kind, a, b)
      SELECT 'transfer', x.id, y.id FROM transactions x JOIN transactions y
        ON y.amount = -x.amount AND y.account_id != x.account_id
        AND abs(julianday(y.posted) - julianday(x.posted)) <= ?
      WHERE x.amount < 0 AND x.matched_to IS NULL AND y.matched_to IS NULL]], days or 4)
  end)
  return self:pairs("transfer")
end

local function words(s)
  local set = {}
  for w in (s or ""):lower():gmatch("%a%a+") do set[w] = true end
  return set
end

local function similar(a, b)
  local x, y, both, either = words(a), words(b), 0, 0
  for w in pairs(x) do either = either + 1 if y[w] then both = both + 1 end end
  for w in pairs(y) do if not x[w] then either = either + 1 end end
  return either == 0 or both / either >= 0.5
end

--- Propose likely duplicates: in one account, the same amount within
-- `days` (3) days, from different imports, with similar text (as when a
-- bank changes its FITIDs between downloads); or one of your own entries
-- and an imported row, whatever their text (the bank's copy of an entry
-- you made after it came: the imported row is `a` and stays, the entry
-- is `b`). Nothing is deleted; a confirmed duplicate is left out of
-- reports and exports.
function Books:duplicates(days)
  local db = self.db
  store.atomic(db, function()
    local found = {}
    for row in db:rows([[SELECT x.id AS a, y.id AS b, x.name AS xn, y.name AS yn, x.memo AS xm, y.memo AS ym,
          x.import_id IS NULL AS xmanual, y.import_id IS NULL AS ymanual
        FROM transactions x JOIN transactions y ON y.account_id = x.account_id AND y.amount = x.amount
          AND y.id > x.id AND x.import_id IS NOT y.import_id AND abs(julianday(y.posted) - julianday(x.posted)) <= ?
        WHERE x.matched_to IS NULL AND y.matched_to IS NULL]], days or 3) do
      if row.xmanual == 1 then
        row.a, row.b = row.b, row.a
        found[#found + 1] = row
      elseif row.ymanual == 1
          or similar((row.xn or "") .. " " .. (row.xm or ""), (row.yn or "") .. " " .. (row.ym or "")) then
        found[#found + 1] = row
      end
    end
    for _, row in ipairs(found) do
      db:run("INSERT OR IGNORE INTO pairs (kind, a, b) VALUES ('duplicate', ?, ?)", row.a, row.b)
    end
  end)
  return self:pairs("duplicate")
end

--- The proposed and decided pairs of a kind ("transfer" or "duplicate").
function Books:pairs(kind)
  local out = {}
  for row in self.db:rows("SELECT id, a, b, status FROM pairs WHERE kind = ? ORDER BY id", kind) do
    local ts = self:transactions_by_id { row.a, row.b }
    out[#out + 1] = { id = row.id, status = row.status, kind = kind, a = ts[row.a], b = ts[row.b] }
  end
  return out
end

function Books:transactions_by_id(ids)
  local out = {}
  for _, id in ipairs(ids) do
    local row = self.db:first(SELECT .. " WHERE t.id = ?", id)
    if row then
      row.amount_units, row.amount = row.amount, store.decimal(row.amount, row.currency)
      row.manual = row.manual == 1
      out[id] = row
    end
  end
  return out
end

--- Confirm or reject a proposed pair of a kind ("transfer" or
-- "duplicate": each kind its own proposals, so a duplicate's id given as
-- a transfer's is an error). A confirmed transfer puts both transactions
-- in the category "Transfer" (as the user's choice); rejecting it after
-- puts back the categories they had. A confirmed duplicate's second
-- transaction stops counting (store.kept); rejecting it makes it count.
-- @return true, or nil and why
function Books:decide(pair_id, confirmed, kind)
  local pair = self.db:first("SELECT id, kind, a, b, status FROM pairs WHERE id = ?", pair_id)
  if not pair or (kind and pair.kind ~= kind) then
    return nil, ("no proposed %s %s%s"):format(kind or "pair", tostring(pair_id),
      pair and (" (#%d is a %s: sift %ss --%s %d)"):format(pair.id, pair.kind, pair.kind,
        confirmed and "confirm" or "reject", pair.id) or "")
  end
  local db = self.db
  store.atomic(db, function()
    db:run("UPDATE pairs SET status = ? WHERE id = ?", confirmed and "confirmed" or "rejected", pair_id)
    if pair.kind ~= "transfer" or (pair.status == "confirmed") == confirmed then return end
    if confirmed then
      db:run([[INSERT OR REPLACE INTO pair_undo (pair_id, transaction_id, category_id, category_source, confidence)
        SELECT ?, id, category_id, category_source, confidence FROM transactions WHERE id IN (?, ?)]],
        pair.id, pair.a, pair.b)
      db:run([[UPDATE transactions SET category_id = ?, category_source = 'user', confidence = 1
        WHERE id IN (?, ?)]], category_id(db, "Transfer"), pair.a, pair.b)
    else
      db:run([[UPDATE transactions SET (category_id, category_source, confidence) =
          (SELECT u.category_id, u.category_source, u.confidence FROM pair_undo u
           WHERE u.pair_id = ? AND u.transaction_id = transactions.id)
        WHERE id IN (SELECT transaction_id FROM pair_undo WHERE pair_id = ?)]], pair.id, pair.id)
      db:run("DELETE FROM pair_undo WHERE pair_id = ?", pair.id)
    end
  end)
  return true
end

-- }======================================================

--- Reports: see `sift.finance.report`.
function Books:report(opts)
  return require("sift.finance.report").build(self, opts)
end

--- Write the books as a journal: "ledger", "hledger", "beancount" or
-- "csv" (see `sift.finance.export`), to a file handle (or return the
-- text when out is nil).
function Books:export(format, out, opts)
  return require("sift.finance.export").write(self, format, out, opts)
end

--- Each stored statement balance checked against the running sum (see
-- `sift.finance.store.check_balances`).
function Books:balances()
  return store.check_balances(self.db)
end

--- The imported statements (one import a file): `{ id, path, at, new,
-- duplicate, changed, skipped, balances = { check_balances' entries } }`,
-- oldest first.
function Books:statements()
  local out, by_id = {}, {}
  for row in self.db:rows("SELECT id, path, at, new, duplicate, changed, skipped FROM imports ORDER BY id") do
    row.balances = {}
    out[#out + 1], by_id[row.id] = row, row
  end
  for _, b in ipairs(store.check_balances(self.db)) do
    local i = by_id[b.import]
    if i then i.balances[#i.balances + 1] = b end
  end
  return out
end

--- Drop a stored balance (its id as `statements` lists it): its
-- assertion leaves the journals.
-- @return true, or nil and why
function Books:drop_balance(id)
  if not self.db:first("SELECT rowid FROM balances WHERE rowid = ?", id) then
    return nil, ("no balance %s"):format(tostring(id))
  end
  store.atomic(self.db, function() self.db:run("DELETE FROM balances WHERE rowid = ?", id) end)
  return true
end

--- Drop an import: the transactions it brought (with their proposals and
-- revisions), its balances, and its record (importing the file again
-- brings it back).
-- @return the number of transactions dropped, or nil and why
function Books:drop_import(id)
  local db = self.db
  if not db:first("SELECT id FROM imports WHERE id = ?", id) then return nil, ("no import %s"):format(tostring(id)) end
  return store.atomic(db, function()
    local mine = "SELECT id FROM transactions WHERE import_id = ?"
    -- (your own entries matched to its rows count again)
    db:run("UPDATE transactions SET matched_to = NULL WHERE matched_to IN (" .. mine .. ")", id)
    db:run("DELETE FROM pair_undo WHERE pair_id IN (SELECT id FROM pairs WHERE a IN (" .. mine .. ") OR b IN ("
      .. mine .. ")) OR transaction_id IN (" .. mine .. ")", id, id, id)
    db:run("DELETE FROM pairs WHERE a IN (" .. mine .. ") OR b IN (" .. mine .. ")", id, id)
    db:run("DELETE FROM revisions WHERE import_id = ? OR transaction_id IN (" .. mine .. ")", id, id)
    db:run("DELETE FROM balances WHERE import_id = ?", id)
    local n = db:run("DELETE FROM transactions WHERE import_id = ?", id)
    db:run("DELETE FROM imports WHERE id = ?", id)
    return n
  end)
end

-- {======================================================
-- Your own entries: see `sift.finance.entries`
-- =======================================================

--- Add a transaction of your own: `{ date, amount, payee, account,
-- category, memo, notes, currency, status }` (see
-- `sift.finance.entries.add`).
-- @return its id and `{ account, currency, created }`, or nil, why and a code
function Books:add(entry)
  return require("sift.finance.entries").add(self, entry)
end

--- Change a transaction: `{ date, amount, payee, memo, category, notes,
-- status }` (an imported one: category, notes and status only).
-- @return the changes `{ { field, old, new } }`, or nil, why and a code
function Books:edit(id, changes)
  return require("sift.finance.entries").edit(self, id, changes)
end

--- Delete one of your own entries (never an imported row).
-- @return true, or nil, why and a code
function Books:delete(id)
  return require("sift.finance.entries").delete(self, id)
end

--- The edits of a transaction (or of all, with no id), oldest first:
-- `{ id, txn, field, old, new, at }`.
function Books:edits(id)
  local out = {}
  local sql = "SELECT id, txn, field, old, new, at FROM edits" .. (id and " WHERE txn = ?" or "") .. " ORDER BY id"
  for row in self.db:rows(sql, table.unpack(id and { id } or {})) do out[#out + 1] = row end
  return out
end

-- }======================================================

--- Counts for a summary: accounts, transactions, categorised, imports.
function Books:summary()
  return self.db:first([[SELECT (SELECT count(*) FROM accounts) AS accounts,
    (SELECT count(*) FROM transactions) AS transactions,
    (SELECT count(*) FROM transactions WHERE category_id IS NOT NULL) AS categorized,
    (SELECT count(*) FROM imports) AS imports, (SELECT min(posted) FROM transactions) AS first,
    (SELECT max(posted) FROM transactions) AS last]])
end


return M
