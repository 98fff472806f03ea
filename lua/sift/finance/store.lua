--- The finance store: one SQLite file, its schema and migrations, and
-- importing typed OFX statements into it (atomic, idempotent).
--
-- Money is integer minor units of the account's currency (`amount`,
-- cents for USD, yen for JPY) beside the exact decimal text
-- (`amount_text`). A transaction is unique on its account and its key:
--
-- - `fitid:<FITID>` when it has a FITID that no other transaction of the
--   same statement uses;
-- - otherwise a fingerprint `fp:<posted>|<amount>|<name>|<memo>|<checknum>#<n>`,
--   n counting identical transactions within the statement (two coffees
--   of the same price on the same day are two transactions).
--
-- Importing the same statement again, or one that overlaps it, finds
-- every key already there: nothing is added. A known key whose date,
-- amount or text differ is "changed": the new values are kept and the old
-- ones go to `revisions`; unless the download is older than the one that
-- set them (DTSERVER, else the statement's end): then it is "older" and
-- nothing changes.
-- @module sift.finance.store

local core = require "sift.core"

local M = {}

-- each migration takes the schema from version i - 1 to i
local MIGRATIONS = {
  [[
  CREATE TABLE institutions (
    id INTEGER PRIMARY KEY, org TEXT NOT NULL, fid TEXT NOT NULL, UNIQUE (org, fid));
  CREATE TABLE accounts (
    id INTEGER PRIMARY KEY, institution_id INTEGER NOT NULL REFERENCES institutions (id),
    kind TEXT NOT NULL, bank_id TEXT NOT NULL, number TEXT NOT NULL, type TEXT, currency TEXT,
    name TEXT, UNIQUE (institution_id, bank_id, number));
  CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  CREATE TABLE imports (
    id INTEGER PRIMARY KEY, file_hash TEXT NOT NULL, path TEXT, at TEXT NOT NULL,
    new INTEGER NOT NULL DEFAULT 0, duplicate INTEGER NOT NULL DEFAULT 0,
    changed INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE transactions (
    id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts (id),
    key TEXT NOT NULL, fitid TEXT, posted TEXT NOT NULL, user_date TEXT,
    amount INTEGER NOT NULL, amount_text TEXT NOT NULL, type TEXT, name TEXT, memo TEXT,
    payee TEXT, checknum TEXT, refnum TEXT,
    category_id INTEGER REFERENCES categories (id), category_source TEXT, confidence REAL,
    import_id INTEGER NOT NULL REFERENCES imports (id), UNIQUE (account_id, key));
  CREATE INDEX transactions_by_date ON transactions (posted);
  CREATE INDEX transactions_by_amount ON transactions (amount);
  CREATE TABLE revisions (
    transaction_id INTEGER NOT NULL REFERENCES transactions (id),
    import_id INTEGER NOT NULL REFERENCES imports (id),
    posted TEXT, amount INTEGER, amount_text TEXT, name TEXT, memo TEXT);
  CREATE TABLE balances (
    account_id INTEGER NOT NULL REFERENCES accounts (id), kind TEXT NOT NULL, date TEXT NOT NULL,
    amount INTEGER NOT NULL, amount_text TEXT NOT NULL, import_id INTEGER NOT NULL REFERENCES imports (id),
    PRIMARY KEY (account_id, kind, date));
  CREATE TABLE rules (id INTEGER PRIMARY KEY, source TEXT NOT NULL, path TEXT, at TEXT NOT NULL);
  CREATE TABLE pairs (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, a INTEGER NOT NULL REFERENCES transactions (id),
    b INTEGER NOT NULL REFERENCES transactions (id), status TEXT NOT NULL DEFAULT 'proposed',
    UNIQUE (kind, a, b));
  ]],
  -- accounts keyed by kind as well (a bank and an investment account may
  -- share a number); what a confirmed transfer replaced, so that
  -- rejecting it puts it back
  [[
  CREATE TABLE accounts_new (
    id INTEGER PRIMARY KEY, institution_id INTEGER NOT NULL REFERENCES institutions (id),
    kind TEXT NOT NULL, bank_id TEXT NOT NULL, number TEXT NOT NULL, type TEXT, currency TEXT,
    name TEXT, UNIQUE (institution_id, kind, bank_id, number));
  INSERT INTO accounts_new SELECT id, institution_id, kind, bank_id, number, type, currency, name FROM accounts;
  DROP TABLE accounts;
  ALTER TABLE accounts_new RENAME TO accounts;
  CREATE TABLE pair_undo (
    pair_id INTEGER NOT NULL REFERENCES pairs (id), transaction_id INTEGER NOT NULL REFERENCES transactions (id),
    category_id INTEGER REFERENCES categories (id), category_source TEXT, confidence REAL,
    PRIMARY KEY (pair_id, transaction_id));
  ]],
  -- when the download that set a transaction's values was made (its
  -- DTSERVER, or its statement's end): an older download changes nothing
  [[ALTER TABLE transactions ADD COLUMN as_of TEXT]],
  -- your own entries (no import: import_id NULL, key "manual:<id>"), a
  -- status as ledger and GnuCash keep (imported rows start cleared: the
  -- bank has them), your notes, the bank's row a manual entry was matched
  -- to (it then stops counting: `kept`), and every edit with its time
  [[
  CREATE TABLE transactions_new (
    id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts (id),
    key TEXT NOT NULL, fitid TEXT, posted TEXT NOT NULL, user_date TEXT,
    amount INTEGER NOT NULL, amount_text TEXT NOT NULL, type TEXT, name TEXT, memo TEXT,
    payee TEXT, checknum TEXT, refnum TEXT,
    category_id INTEGER REFERENCES categories (id), category_source TEXT, confidence REAL,
    import_id INTEGER REFERENCES imports (id), as_of TEXT,
    status TEXT NOT NULL DEFAULT 'cleared' CHECK (status IN ('uncleared', 'cleared', 'reconciled')),
    notes TEXT, matched_to INTEGER REFERENCES transactions (id), UNIQUE (account_id, key));
  INSERT INTO transactions_new (id, account_id, key, fitid, posted, user_date, amount, amount_text, type, name, memo,
      payee, checknum, refnum, category_id, category_source, confidence, import_id, as_of)
    SELECT id, account_id, key, fitid, posted, user_date, amount, amount_text, type, name, memo,
      payee, checknum, refnum, category_id, category_source, confidence, import_id, as_of FROM transactions;
  DROP TABLE transactions;
  ALTER TABLE transactions_new RENAME TO transactions;
  CREATE INDEX transactions_by_date ON transactions (posted);
  CREATE INDEX transactions_by_amount ON transactions (amount);
  CREATE TABLE edits (
    id INTEGER PRIMARY KEY, txn INTEGER NOT NULL, field TEXT NOT NULL, old TEXT, new TEXT, at TEXT NOT NULL);
  CREATE INDEX edits_by_txn ON edits (txn);
  ]],
  -- a monthly budget per category (what may be spent in a month, as a
  -- positive amount in minor units of its currency), and when it was set
  [[
  CREATE TABLE budgets (
    category_id INTEGER PRIMARY KEY REFERENCES categories (id), amount INTEGER NOT NULL CHECK (amount > 0),
    amount_text TEXT NOT NULL, currency TEXT NOT NULL, updated TEXT NOT NULL);
  ]],
}
M.VERSION = #MIGRATIONS
-- (read by the specs, which make books of an older schema with them)
M.MIGRATIONS = MIGRATIONS

--- Open a file that holds financial data for writing (`mode` as io.open's),
-- creating it first with only its owner allowed to read and write it
-- (0600), and its directory (0700) when `dir` is true.
-- @return a Lua file, or nil and a message
function M.open_private(path, mode, dir)
  local parent = dir and path:match("^(.*)/[^/]*$")
  if parent and parent ~= "" then
    local ok, err = core.private(parent, "dir")
    if not ok then return nil, err end
  end
  local ok, err = core.private(path)
  if not ok then return nil, err end
  return io.open(path, mode)
end

--- Open (creating on first use, 0600, in a 0700 directory) a store and
-- bring its schema up to date. Its -wal and -shm files take its mode.
-- @treturn sift.Database, or nil, message, code
function M.open(path)
  if path ~= ":memory:" then
    local f, perr = M.open_private(path, "rb", true)
    if not f then return nil, perr, "io" end
    f:close()
  end
  local db, err, code = core.sqlite(path)
  if not db then return nil, err, code end
  -- WAL: readers never wait for an import; the file read through a
  -- mapping and a 64 MB cache: a report reads a million rows in a second
  db:exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
    .. "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -65536")
  local version = db:first("PRAGMA user_version").user_version
  if version > #MIGRATIONS then
    db:close()
    return nil, ("%s: schema version %d is newer than this sift's (%d)"):format(path, version, #MIGRATIONS),
      "version"
  end
  -- (a migration that rebuilds a table does so with foreign keys off, as
  -- SQLite's ALTER TABLE notes say; they are checked before the commit)
  db:exec("PRAGMA foreign_keys = OFF")
  for v = version + 1, #MIGRATIONS do
    db:exec("BEGIN IMMEDIATE")
    local ok, e = pcall(db.exec, db, MIGRATIONS[v] .. ("; PRAGMA user_version = %d"):format(v))
    if ok and db:first("PRAGMA foreign_key_check") then ok, e = false, "a migration broke a foreign key" end
    if not ok then
      db:exec("ROLLBACK")
      db:close()
      return nil, e, "schema"
    end
    db:exec("COMMIT")
  end
  db:exec("PRAGMA foreign_keys = ON")
  return db
end

-- how deep each database is in atomic() (a weak table: closed ones go)
local depth = setmetatable({}, { __mode = "k" })

--- Run fn(...) in one transaction: committed when it returns, rolled back
-- when it raises (the error goes on). A process killed inside leaves the
-- database as it was: SQLite's journal undoes the rest on the next open.
-- Called inside another atomic() (a server's write that checks a row and
-- then edits it), it is a savepoint of that transaction: rolled back
-- alone when it raises, committed with the outer one.
function M.atomic(db, fn, ...)
  local d = depth[db] or 0
  local savepoint = d > 0 and ("sift_atomic_" .. d) or nil
  db:exec(savepoint and ("SAVEPOINT " .. savepoint) or "BEGIN IMMEDIATE")
  depth[db] = d + 1
  local result = table.pack(pcall(fn, ...))
  depth[db] = d
  if not result[1] then
    db:exec(savepoint and ("ROLLBACK TO " .. savepoint .. "; RELEASE " .. savepoint) or "ROLLBACK")
    error(result[2], 0)
  end
  db:exec(savepoint and ("RELEASE " .. savepoint) or "COMMIT")
  return table.unpack(result, 2, result.n)
end

-- {======================================================
-- Money
-- =======================================================

-- ISO 4217 minor units that are not 2
local MINOR = { BIF = 0, CLP = 0, DJF = 0, GNF = 0, ISK = 0, JPY = 0, KMF = 0, KRW = 0, PYG = 0,
  RWF = 0, UGX = 0, UYI = 0, VND = 0, VUV = 0, XAF = 0, XOF = 0, XPF = 0,
  BHD = 3, IQD = 3, JOD = 3, KWD = 3, LYD = 3, OMR = 3, TND = 3, CLF = 4, UYW = 4 }

--- Decimal places of a currency's minor unit (2 unless ISO 4217 says).
function M.minor_digits(currency)
  return MINOR[currency or ""] or 2
end

--- An exact decimal amount as integer minor units of currency, or nil
-- and why (more decimals than the currency has, and not zeros).
function M.minor_units(text, currency)
  local units, scale = core.ofx_amount(text)
  if not units then return nil, scale end
  local digits = M.minor_digits(currency)
  while scale > digits do
    if units % 10 ~= 0 then
      return nil, ("%s has more decimals than %s's %d"):format(text, currency or "the currency", digits)
    end
    units, scale = units // 10, scale - 1
  end
  for _ = scale + 1, digits do
    if units > math.maxinteger // 10 or units < math.mininteger // 10 then return nil, text .. " is too large" end
    units = units * 10
  end
  return units
end

--- Minor units as decimal text ("-6.60").
function M.decimal(units, currency)
  local digits = M.minor_digits(currency)
  if digits == 0 then return tostring(units) end
  local sign, abs = "", units
  if units < 0 then sign, abs = "-", -units end
  local p = 10 ^ digits // 1
  return ("%s%d.%0" .. digits .. "d"):format(sign, abs // p, abs % p)
end

-- }======================================================

-- {======================================================
-- Importing
-- =======================================================

-- what banks put before a merchant's name
local CHANNELS = { "CARD PAYMENT TO", "CARD PAYMENT", "DEBIT CARD PURCHASE", "POS PURCHASE", "PURCHASE",
  "CHECKCARD", "CONTACTLESS", "VISA", "VIS", "POS", "DD", "SO", "BGC", "FPI", "FPO", "TFR", "ACH" }

--- A payee as people name it, from the text a bank wrote: no payment
-- channel before it ("POS ", "CARD PAYMENT TO "), no store numbers or
-- references (words with digits), no "ON 12 MAR" dates, spaces single.
-- Text that would come out empty is kept as it was.
function M.normalise_payee(text)
  if not text then return nil end
  local words = {}
  for w in text:gmatch("%S+") do words[#words + 1] = w end
  local upper = " " .. table.concat(words, " "):upper() .. " "
  local skip = 0
  for _, c in ipairs(CHANNELS) do
    if upper:sub(1, #c + 2) == " " .. c .. " " then
      skip = select(2, c:gsub("%S+", ""))
      break
    end
  end
  local out, i = {}, skip + 1
  while i <= #words do
    local w = words[i]
    if w:upper() == "ON" and (words[i + 1] or ""):match("^%d%d?$") and (words[i + 2] or ""):match("^%a%a%a$") then
      i = i + 2  -- "ON 12 MAR"
    elseif not w:find("%d") then
      out[#out + 1] = w
    end
    i = i + 1
  end
  if #out == 0 then return table.concat(words, " ") end
  return table.concat(out, " ")
end

--- The fuller text a payee comes from: the statement's PAYEE, else NAME,
-- else MEMO; MEMO too when it begins with NAME's words and goes on (NAME
-- is cut at OFX's 32 characters, and banks put the whole text in MEMO)
local function words_upper(s)
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""):upper())
end

function M.payee_text(t)
  if t.payee and t.payee ~= t.name then return t.payee end  -- (a PAYEE aggregate; sift.ofx falls back to NAME)
  local name, memo = t.name, t.memo
  if not name or not name:find("%S") then return memo end
  if memo and #memo > #name then
    local n, m = words_upper(name), words_upper(memo)
    if #m > #n and m:sub(1, #n) == n then return memo end
  end
  return name
end

local function fingerprint(t)
  return ("fp:%s|%s|%s|%s|%s"):format(t.posted, t.amount, t.name or "", t.memo or "", t.checknum or "")
end

--- The keys of a statement's transactions (see the module's notes).
function M.keys(transactions)
  local fitids, seen, keys = {}, {}, {}
  for _, t in ipairs(transactions) do
    if t.fitid then fitids[t.fitid] = (fitids[t.fitid] or 0) + 1 end
  end
  for i, t in ipairs(transactions) do
    if t.fitid and fitids[t.fitid] == 1 then
      keys[i] = "fitid:" .. t.fitid
    else
      local fp = fingerprint(t)
      seen[fp] = (seen[fp] or 0) + 1
      keys[i] = fp .. "#" .. seen[fp]
    end
  end
  return keys
end


local ACCOUNT_KINDS = { bank = true, creditcard = true, investment = true }

--- Days apart a manual entry and the bank's row of it may be.
M.MATCH_DAYS = 3

--- Link the bank's new row `bank_id` (of account, amount in minor units,
-- posted) to one of your own entries that waits for it: same account and
-- amount, dates within MATCH_DAYS, not matched yet (the nearest date, then
-- the oldest entry). The entry is marked matched (`matched_to`) and stops
-- counting (`kept`); the bank's row stays, and takes the entry's category
-- (as your choice) and notes when it has none.
-- @return the entry's id, or nil when none waits
function M.match(db, bank_id, account, units, posted)
  local entry = db:first([[SELECT id, category_id, notes FROM transactions WHERE account_id = ? AND amount = ?
      AND import_id IS NULL AND matched_to IS NULL AND abs(julianday(posted) - julianday(?)) <= ?
    ORDER BY abs(julianday(posted) - julianday(?)), id LIMIT 1]], account, units, posted, M.MATCH_DAYS, posted)
  if not entry then return nil end
  db:run("UPDATE transactions SET matched_to = ? WHERE id = ?", bank_id, entry.id)
  if entry.category_id then
    db:run([[UPDATE transactions SET category_id = ?, category_source = 'user', confidence = 1
      WHERE id = ? AND category_id IS NULL]], entry.category_id, bank_id)
  end
  if entry.notes then db:run("UPDATE transactions SET notes = ? WHERE id = ? AND notes IS NULL", entry.notes, bank_id) end
  return entry.id
end

--- Import a typed OFX document (as `sift.ofx.parse` returns it) in one
-- transaction. opts: `path`, `hash` (of the file; computed from
-- `text` when given), `on_transaction(counts, done, total)` (called
-- after each row, for progress).
-- @return counts `{ new, duplicate, changed, older, skipped, statements,
--   balances, matched, warnings, import_id, seen_before }` (older: known
--   transactions this download has older values of, left as they are;
--   matched: new rows that are the bank's copy of one of your own
--   entries, see `match`)
function M.import(db, doc, opts)
  opts = opts or {}
  local hash = opts.hash or (opts.text and core.hash(opts.text)) or "-"
  local counts = { new = 0, duplicate = 0, changed = 0, older = 0, skipped = 0, statements = 0, balances = 0,
    matched = 0, warnings = {} }
  local before = db:first("SELECT at FROM imports WHERE file_hash = ? AND file_hash != '-' ORDER BY id LIMIT 1", hash)
  counts.seen_before = before and before.at
  local payees = {}  -- raw -> normalised (statements name the same shops again and again)
  local total, done = 0, 0
  for _, st in ipairs(doc.statements) do total = total + #st.transactions end
  M.atomic(db, function()
    db:run("INSERT INTO imports (file_hash, path, at) VALUES (?, ?, datetime('now'))", hash, opts.path)
    local import_id = db:last_id()
    counts.import_id = import_id
    local signon = doc.signon or {}
    db:run("INSERT OR IGNORE INTO institutions (org, fid) VALUES (?, ?)", signon.org or "", signon.fid or "")
    local institution = db:first("SELECT id FROM institutions WHERE org = ? AND fid = ?", signon.org or "",
      signon.fid or "").id
    for _, st in ipairs(doc.statements) do
      local a = st.account or {}
      if ACCOUNT_KINDS[st.kind] and a.id then
        counts.statements = counts.statements + 1
        local bank_id = a.bank_id or a.broker_id or ""
        db:run([[INSERT OR IGNORE INTO accounts (institution_id, bank_id, number, kind, type, currency)
          VALUES (?, ?, ?, ?, ?, ?)]], institution, bank_id, a.id, st.kind, a.type, st.currency)
        local acct = db:first([[SELECT id, currency FROM accounts WHERE institution_id = ? AND kind = ?
          AND bank_id = ? AND number = ?]], institution, st.kind, bank_id, a.id)
        local account, currency = acct.id, st.currency or acct.currency
        local as_of = (doc.signon or {}).server_time or st["end"]
        local keys = M.keys(st.transactions)
        -- your own entries in the account that wait for the bank's row
        local waiting = db:first([[SELECT count(*) AS n FROM transactions WHERE account_id = ? AND import_id IS NULL
          AND matched_to IS NULL]], account).n
        for i, t in ipairs(st.transactions) do
          local units, why = M.minor_units(t.amount, t.currency or currency)
          if not units then
            counts.skipped = counts.skipped + 1
            counts.warnings[#counts.warnings + 1] = ("transaction %s left out: %s"):format(t.fitid or i, why)
          else
            local posted = t.posted:sub(1, 10)
            local raw = M.payee_text(t)
            local payee = raw and payees[raw]
            if raw and not payee then
              payee = M.normalise_payee(raw)
              payees[raw] = payee
            end
            local n = db:run([[INSERT INTO transactions (account_id, key, fitid, posted, user_date, amount,
                amount_text, type, name, memo, payee, checknum, refnum, import_id, as_of)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING]],
              account, keys[i], t.fitid, posted, t.user_date and t.user_date:sub(1, 10), units, t.amount,
              t.type, t.name, t.memo, payee, t.checknum, t.refnum, import_id, as_of)
            if n == 1 then
              counts.new = counts.new + 1
              if waiting > 0 and M.match(db, db:last_id(), account, units, posted) then
                counts.matched, waiting = counts.matched + 1, waiting - 1
              end
            else
              local old = db:first([[SELECT id, posted, amount, amount_text, name, memo, as_of FROM transactions
                WHERE account_id = ? AND key = ?]], account, keys[i])
              if old.posted == posted and old.amount == units and old.name == t.name and old.memo == t.memo then
                counts.duplicate = counts.duplicate + 1
              elseif as_of and old.as_of and as_of < old.as_of then
                counts.older = counts.older + 1  -- (a download older than the one that set it: kept as it is)
              else
                counts.changed = counts.changed + 1
                db:run([[INSERT INTO revisions (transaction_id, import_id, posted, amount, amount_text, name, memo)
                  VALUES (?, ?, ?, ?, ?, ?, ?)]], old.id, import_id, old.posted, old.amount, old.amount_text,
                  old.name, old.memo)
                db:run([[UPDATE transactions SET posted = ?, amount = ?, amount_text = ?, name = ?, memo = ?,
                  payee = ?, as_of = coalesce(?, as_of) WHERE id = ?]], posted, units, t.amount, t.name, t.memo,
                  payee, as_of, old.id)
              end
            end
            done = done + 1
            if opts.on_transaction then opts.on_transaction(counts, done, total) end
          end
        end
        for kind, bal in pairs { ledger = st.ledger_balance, available = st.available_balance } do
          local units = bal and bal.date and M.minor_units(bal.amount, currency)
          if units then
            counts.balances = counts.balances + db:run([[INSERT INTO balances (account_id, kind, date, amount,
              amount_text, import_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET amount = excluded.amount,
              amount_text = excluded.amount_text, import_id = excluded.import_id]],
              account, kind, bal.date:sub(1, 10), units, bal.amount, import_id)
          end
        end
      end
    end
    db:run("UPDATE imports SET new = ?, duplicate = ?, changed = ?, skipped = ? WHERE id = ?",
      counts.new, counts.duplicate, counts.changed, counts.skipped, import_id)
  end)
  return counts
end

-- }======================================================

-- {======================================================
-- Balances: the one definition the report, /finance and the journals use
-- =======================================================

--- The transactions that count, as an SQL condition on the table's
-- alias: every one but the second of a confirmed duplicate pair and
-- your own entries matched to the bank's row (which counts instead).
function M.kept(alias)
  return ("(%s.matched_to IS NULL AND %s.id NOT IN (SELECT b FROM pairs WHERE kind = 'duplicate' "
    .. "AND status = 'confirmed'))"):format(alias, alias)
end

--- Each stored ledger balance checked against the running sum of the
-- account's imported transactions that count (`kept`; the bank's
-- balance knows nothing of your own entries it has not matched): a
-- balance implies an opening balance (the balance − the sum of the
-- transactions up to its date). The account's opening is the one most of
-- its balances imply (the earliest on a tie); a balance that implies
-- another is inconsistent: transactions are missing or doubled before
-- it, and the journals leave its assertion out.
-- @return list of `{ id, account, number, kind, date, balance, units,
--   opening, opening_units, consistent, import, manual_units }` (amounts
--   as decimal text, *_units as minor units; manual_units: your own
--   unmatched entries in the account up to the date, which the books'
--   balance has beside the bank's), by account and date; and a map
--   account id → its opening in minor units
function M.check_balances(db)
  local out, votes = {}, {}
  -- (each balance's two sums in one pass over its account's transactions)
  for row in db:rows([[
      SELECT b.rowid AS id, b.account_id, a.number, a.kind, a.currency, b.date, b.amount, b.import_id,
        b.amount - s.imported AS opening, s.manual
      FROM balances b JOIN accounts a ON a.id = b.account_id
        JOIN (SELECT l.rowid AS balance,
                coalesce(sum(CASE WHEN t.import_id IS NOT NULL THEN t.amount END), 0) AS imported,
                coalesce(sum(CASE WHEN t.import_id IS NULL THEN t.amount END), 0) AS manual
              FROM balances l LEFT JOIN transactions t ON t.account_id = l.account_id AND t.posted <= l.date
                AND ]] .. M.kept("t") .. [[
              WHERE l.kind = 'ledger' GROUP BY l.rowid) s ON s.balance = b.rowid
      WHERE b.kind = 'ledger' ORDER BY b.account_id, b.date]]) do
    local v = votes[row.account_id]
    if not v then v = { order = {} } votes[row.account_id] = v end
    if not v[row.opening] then v[row.opening] = 0 v.order[#v.order + 1] = row.opening end
    v[row.opening] = v[row.opening] + 1
    out[#out + 1] = { id = row.id, account = row.account_id, number = row.number, kind = row.kind, date = row.date,
      balance = M.decimal(row.amount, row.currency), units = row.amount, import = row.import_id,
      opening = M.decimal(row.opening, row.currency), opening_units = row.opening, currency = row.currency,
      manual_units = row.manual }
  end
  local openings = {}
  for account, v in pairs(votes) do
    local best = v.order[1]
    for _, o in ipairs(v.order) do if v[o] > v[best] then best = o end end
    openings[account] = best
  end
  for _, b in ipairs(out) do b.consistent = b.opening_units == openings[b.account] end
  return out, openings
end

return M
