-- Your own entries in the finance books (issue 38, item 1): sift add,
-- edit and delete; the checks on every argument; an imported row's bank
-- data kept as downloaded; the edits kept with their time; a book of the
-- previous schema migrated; the bank's row of an entry matched on a later
-- import and counted once; statuses as ledger's and hledger's marks.
-- Statements are written at test time; no fixture is needed.
local helper = require "spec.helper"
local finance = require "sift.finance"
local store = require "sift.finance.store"
local writer = require "sift.ofx.writer"
local core = require "sift.core"

local function fresh()
  local path = os.tmpname()
  os.remove(path)
  return assert(finance.open(path)), path
end

local function cents(u) return store.decimal(u, "USD") end

-- a bank statement of rows { date, cents, name, fitid }: its LEDGERBAL the
-- opening plus every row, as the bank computes it
local CHECKING = { bank_id = "021000021", id = "100200300", type = "CHECKING" }
local function statement_file(opening, rows)
  local st = { kind = "bank", currency = "USD", account = CHECKING, transactions = {} }
  local sum = opening
  for _, r in ipairs(rows) do
    st.transactions[#st.transactions + 1] = { posted = r[1], amount = cents(r[2]), name = r[3], fitid = r[4],
      type = r[2] < 0 and "DEBIT" or "CREDIT" }
    sum = sum + r[2]
  end
  st.start, st["end"] = rows[1][1], rows[#rows][1]
  st.ledger_balance = { amount = cents(sum), date = st["end"] }
  local doc = { version = "102", signon = { code = 0, severity = "INFO", org = "TESTBANK", fid = "1001" },
    statements = { st }, status = {}, warnings = {} }
  return helper.tmpfile(writer.write(writer.tree(doc), { version = 1 })), sum
end

local function hledger(file, args)
  local p = io.popen(("env -u LD_PRELOAD LC_ALL=C.UTF-8 hledger -f %s %s 2>&1"):format(helper.quote(file), args))
  local out = p:read("a")
  return p:close() == true, out
end

local function have(tool) return os.execute("command -v " .. tool .. " >/dev/null 2>&1") == true end

-- (#once: the entries' rules are Lua; the SQLite binding runs under ASan
-- in the finance and fleet specs)
describe("finance entries #once", function()
  it("are added, edited and deleted with exact values, each edit kept with its time", function()
    local books, path = fresh()
    -- the default account, Cash, has no currency yet: it is asked for
    assert.are.same({ nil, "account: no account Cash: to make a cash account of that name, give its currency "
      .. "(--currency)" }, { books:add { date = "2024-03-02", amount = "-4.20", payee = "Corner shop" } })
    assert.are.equal(0, books.db:first("SELECT count(*) AS n FROM accounts").n)
    local id, info = books:add { date = "2024-03-02", amount = "-4.2", payee = "  Corner   shop ", currency = "GBP",
      category = "Food:Groceries", memo = "milk" }
    assert.are.same({ 1, { account = "Cash", currency = "GBP", created = true } }, { id, info })
    local t = books:transactions {}[1]
    assert.are.same({ "2024-03-02", "-4.20", -420, "Corner shop", "milk", "Food:Groceries", "user", "uncleared", true,
      "Cash", "cash", "GBP" }, { t.posted, t.amount, t.amount_units, t.payee, t.memo, t.category, t.category_source,
      t.status, t.manual, t.account, t.account_kind, t.currency })
    assert.are.equal("manual:1", books.db:first("SELECT key FROM transactions WHERE id = 1").key)
    -- (a second either side: Lua's os.time reads the kernel's coarse clock, which lags the one SQLite's
    -- datetime('now') reads by up to a tick, so they may name different seconds)
    local before = os.date("!%Y-%m-%d %H:%M:%S", os.time() - 1)
    local done = assert(books:edit(id, { amount = "-4.30", notes = "and bread", status = "cleared", payee = "Corner shop" }))
    local after = os.date("!%Y-%m-%d %H:%M:%S", os.time() + 1)
    assert.are.same({ { field = "amount", old = "-4.20", new = "-4.30" }, { field = "notes", new = "and bread" },
      { field = "status", old = "uncleared", new = "cleared" } }, done)  -- (the payee was the same: no edit)
    local edits = books:edits(id)
    assert.are.equal(3, #edits)
    for i, e in ipairs(edits) do
      assert.are.same({ id, done[i].field, done[i].old, done[i].new }, { e.txn, e.field, e.old, e.new })
      assert.is_true(e.at >= before and e.at <= after, e.at)
    end
    t = books:transactions {}[1]
    assert.are.same({ "-4.30", "and bread", "cleared" }, { t.amount, t.notes, t.status })
    -- clearing the category and the notes
    assert.are.same({ { field = "category", old = "Food:Groceries" }, { field = "notes", old = "and bread" } },
      books:edit(id, { category = false, notes = "" }))
    t = books:transactions {}[1]
    assert.are.same({ nil, nil, nil }, { t.category, t.category_source, t.notes })
    -- a second entry in the same account, then deleted: its edits stay, with what was deleted
    local gift = assert(books:add { date = "2024-03-15", amount = "50", payee = "Gran" })
    assert.is_true(books:delete(gift))
    assert.are.same({ nil, "no transaction 2" }, { books:delete(gift) })
    local last = books:edits(gift)
    assert.are.same({ 1, "deleted", "2024-03-15 50.00 Gran" }, { #last, last[1].field, last[1].old })
    assert.are.same({ 1, 6 }, { #books:transactions {}, #books:edits() })
    books:close()
    os.remove(path)
  end)

  it("checks every argument: exit 2 when the arguments are wrong, 1 when the books refuse", function()
    local books, path = fresh()
    books:close()
    local function add(...)
      local out, err, status = helper.sift { "add", "--db", path, ... }
      return { status, out, err }
    end
    local base = { "--date", "2024-03-02", "--payee", "Shop" }
    local function with(extra)
      local args = { table.unpack(base) }
      for _, a in ipairs(extra) do args[#args + 1] = a end
      return add(table.unpack(args))
    end
    assert.are.same({ 0, "1\n", "sift: made the cash account Cash (EUR)\n" }, with { "--amount=-1.50", "--currency", "EUR" })
    assert.are.same({ 0, "2\n", "" }, with { "--amount", "3" })
    local usage = {
      { { "--amount", "1,50" }, "amount: 1,50 is not a decimal amount (say 12.50, or -12.50 for money out: a point "
        .. "before the decimals, no thousands separators)" },
      { { "--amount", "0.00" }, "amount: 0.00 moves no money" },
      { { "--amount", "1e3" }, "amount: 1e3 is not a decimal amount (say 12.50, or -12.50 for money out: a point "
        .. "before the decimals, no thousands separators)" },
      { { "--amount", "1", "--date", "2024-02-30" }, "date: 2024-02-30 is no day of the calendar (YYYY-MM-DD, say "
        .. "2024-03-02)" },
      { { "--amount", "1", "--date", "02/03/2024" }, "date: 02/03/2024 is no day of the calendar (YYYY-MM-DD, say "
        .. "2024-03-02)" },
      { { "--amount", "1", "--payee", "  " }, "payee: empty" },
      { { "--amount", "1", "--payee", "a\nb" }, "payee: has a control character (a line break, a tab): one line of text" },
      { { "--amount", "1", "--currency", "euro" }, "currency: euro is not an ISO 4217 code (three capital letters: "
        .. "USD, EUR, GBP)" },
      { { "--amount", "1", "--category", "Food::Out" }, "category: " .. require("sift.finance.rules")
        .category_problem("Food::Out") },
    }
    for _, case in ipairs(usage) do
      local args = { "--date", "2024-03-02", "--payee", "Shop" }
      for _, a in ipairs(case[1]) do args[#args + 1] = a end
      -- (a later --date or --payee overrides: argparse keeps the last)
      assert.are.same({ 2, "", "sift: " .. case[2] .. "\n" }, add(table.unpack(args)), case[2])
    end
    local status = add("--amount", "1")[1]  -- (no --date: argparse's own usage error)
    assert.are.equal(2, status)
    assert.are.same({ 1, "", "sift: amount: 1.505 has more decimals than EUR's 2\n" }, with { "--amount", "1.505" })
    assert.are.same({ 1, "", "sift: currency: account Cash is in EUR, not USD\n" },
      with { "--amount", "1", "--currency", "USD" })
    assert.are.same({ 1, "", "sift: account: no account Wallet (the accounts: Cash): to make a cash account of that "
      .. "name, give its currency (--currency)\n" }, with { "--amount", "1", "--account", "Wallet" })
    local out, err, code = helper.sift { "edit", "--db", path, "9", "--notes", "x" }
    assert.are.same({ 1, "", "sift: no transaction 9\n" }, { code, out, err })
    out, err, code = helper.sift { "edit", "--db", path, "x1", "--notes", "x" }
    assert.are.same({ 2, "", "sift: id: x1 is not a transaction's id (a whole number)\n" }, { code, out, err })
    out, err, code = helper.sift { "edit", "--db", path, "1" }
    assert.are.same({ 2, "", "sift: edit: nothing to change (--date, --amount, --payee, --memo, --category, --notes, "
      .. "--status; --history lists the edits)\n" }, { code, out, err })
    out, err, code = helper.sift { "edit", "--db", path, "1", "--status", "done" }
    assert.are.same({ 2, "" }, { code, out }, err)
    out, err, code = helper.sift { "edit", "--db", path, "1", "--amount", "-2.25", "--status", "reconciled" }
    assert.are.same({ 0, "1: amount -1.50 -> -2.25\n1: status uncleared -> reconciled\n", "" }, { code, out, err })
    -- --json: the new transaction, as `sift transactions --json` gives it
    out = helper.sift_ok { "add", "--db", path, "--json", "--date", "2024-03-03", "--amount=-0.5", "--payee", "Bus",
      "--status", "cleared" }
    local t = require("cjson").decode(out)
    assert.are.same({ 3, "2024-03-03", "-0.50", "Bus", "cleared", true, "EUR" }, { t.id, t.posted, t.amount, t.payee,
      t.status, t.manual, t.currency })
    if helper.have_validator() then
      local ok, problems = helper.schema_problems("transactions.schema.json", "[" .. out .. "]")
      assert.is_true(ok, problems)
    end
    assert.are.equal("deleted 3\n", helper.sift_ok { "delete", "--db", path, "3" })
    -- nothing of a refused add was kept: two entries, one account
    books = assert(finance.open(path))
    assert.are.same({ 2, 1 }, { #books:transactions {}, books.db:first("SELECT count(*) AS n FROM accounts").n })
    books:close()
    os.remove(path)
  end)

  it("keep an imported row's bank data as downloaded: only its category, notes and status change", function()
    local file = statement_file(100000, { { "2024-01-05", -2500, "GROCER ONE", "G1" } })
    local books, path = fresh()
    assert(books:import(file))
    local id = books:transactions {}[1].id
    assert.are.same({ nil, ("transaction %d was imported from the bank (import 1): its amount, memo stay as "
      .. "downloaded; only its category, notes and status change"):format(id) },
      { books:edit(id, { amount = "-1.00", memo = "x", notes = "kept?" }) })
    assert.are.same({ "-25.00", "cleared" }, { books:transactions {}[1].amount, books:transactions {}[1].status })
    assert.is_nil(books:transactions {}[1].notes)  -- (all or nothing: the notes were not set either)
    assert.are.same({ { field = "category", new = "Food" }, { field = "notes", new = "weekly shop" },
      { field = "status", old = "cleared", new = "reconciled" } },
      books:edit(id, { category = "Food", notes = "weekly shop", status = "reconciled" }))
    books:close()
    local out, err, code = helper.sift { "delete", "--db", path, tostring(id) }
    assert.are.same({ 1, "", ("sift: transaction %d was imported from the bank (import 1): it stays as downloaded "
      .. "(sift statements --drop 1 drops the whole import)\n"):format(id) }, { code, out, err })
    out, err, code = helper.sift { "edit", "--db", path, tostring(id), "--date", "2024-01-06" }
    assert.are.same({ 1, "", ("sift: transaction %d was imported from the bank (import 1): its date stays as "
      .. "downloaded; only its category, notes and status change\n"):format(id) }, { code, out, err })
    out = helper.sift_ok { "edit", "--db", path, tostring(id), "--history" }
    assert.matches("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d UTC  category: %(none%) %-> Food\n.-  notes: %(none%) %-> "
      .. "weekly shop\n.-  status: cleared %-> reconciled\n3 edit%(s%)\n$", out)
    os.remove(file)
    os.remove(path)
  end)

  it("migrate a book of the previous schema, keeping its rows", function()
    local path = os.tmpname()
    os.remove(path)
    local db = assert(core.sqlite(path))
    for v = 1, 3 do db:exec(store.MIGRATIONS[v] .. ("; PRAGMA user_version = %d"):format(v)) end
    db:exec([[INSERT INTO institutions (org, fid) VALUES ('OLDBANK', '9');
      INSERT INTO accounts (institution_id, kind, bank_id, number, currency) VALUES (1, 'bank', '1', '555', 'USD');
      INSERT INTO imports (file_hash, path, at) VALUES ('x', 'old.ofx', '2023-01-01 00:00:00');
      INSERT INTO categories (name) VALUES ('Rent');
      INSERT INTO transactions (account_id, key, fitid, posted, amount, amount_text, name, payee, category_id,
        category_source, import_id, as_of) VALUES
        (1, 'fitid:A', 'A', '2023-01-02', -80000, '-800.00', 'LANDLORD', 'LANDLORD', 1, 'user', 1, '2023-01-03'),
        (1, 'fitid:B', 'B', '2023-01-05', 250000, '2500.00', 'PAYROLL', 'PAYROLL', NULL, NULL, 1, '2023-01-06');
      INSERT INTO balances (account_id, kind, date, amount, amount_text, import_id)
        VALUES (1, 'ledger', '2023-01-05', 270000, '2700.00', 1);
      INSERT INTO pairs (kind, a, b) VALUES ('duplicate', 1, 2);]])
    db:close()
    local books = assert(finance.open(path))
    assert.are.same({ 5, 5 }, { books.db:first("PRAGMA user_version").user_version, store.VERSION })
    local ts = books:transactions {}
    assert.are.same({ "-800.00", "Rent", "cleared", false, "2500.00", "cleared" },
      { ts[1].amount, ts[1].category, ts[1].status, ts[1].manual, ts[2].amount, ts[2].status })
    assert.are.same({ true }, { books:balances()[1].consistent })
    assert.is_nil(books.db:first("PRAGMA foreign_key_check"))
    -- and it takes entries, into the old account by its number
    assert.are.equal(3, (books:add { date = "2023-01-07", amount = "-20", payee = "Window cleaner", account = "555" }))
    assert.are.same({ 0 }, { #books:edits() })
    books:close()
    os.remove(path)
  end)

  it("are matched to the bank's row on a later import and counted once: report, balances, journals", function()
    local jan, jan_balance = statement_file(100000, { { "2024-01-05", -2500, "GROCER ONE", "J1" },
      { "2024-01-25", 300000, "ACME PAYROLL", "J2" } })
    local books, path = fresh()
    assert(books:import(jan))
    -- a cheque written on the 30th, cashed by the bank on 2 Feb; one of the
    -- 20th the bank never cashes; a cash withdrawal into the wallet
    local uncashed = assert(books:add { date = "2024-01-20", amount = "-35.00", payee = "Window cleaner (cheque 100)",
      account = "100200300" })
    local cheque = assert(books:add { date = "2024-01-30", amount = "-120.00", payee = "Plumber (cheque 101)",
      account = "100200300", category = "Home:Repairs", notes = "boiler" })
    local wallet = assert(books:add { date = "2024-02-06", amount = "60", payee = "ATM", account = "Wallet",
      currency = "USD" })
    local lunch = assert(books:add { date = "2024-02-07", amount = "-8.40", payee = "Noodle bar", account = "Wallet",
      category = "Eating Out", status = "reconciled" })
    -- before the bank has it: the cheque counts, and the journal's
    -- assertion of January's balance says the entry is not at the bank yet
    local r = books:report {}
    assert.are.same({ "2024-01", -(2500 + 3500 + 12000), 300000 }, { r.months[1].month, r.months[1].expense,
      r.months[1].income })
    local journal = path .. ".journal"
    local text = assert(books:export("hledger"))
    assert.matches("\n2024%-01%-25 %* Statement balance\n    ; the bank's statement says 3975%.00 on 2024%-01%-25; your "
      .. "own entries it has not brought yet add %-35%.00\n    Assets:Bank:TESTBANK:100200300 +0%.00 USD = 3940%.00 USD\n",
      text)
    assert(io.open(journal, "w")):write(text):close()
    if have("hledger") then
      local ok, out = hledger(journal, "balance")
      assert.is_true(ok, out)
    end
    local feb, feb_balance = statement_file(jan_balance, { { "2024-02-02", -12000, "CHEQUE 000101", "F1" },
      { "2024-02-06", -6000, "ATM WITHDRAWAL", "F2" }, { "2024-02-10", -12000, "CHEQUE 000102", "F3" } })
    local out, err, code = helper.sift { "import", "--db", path, feb }
    assert.are.equal(0, code, err)
    assert.are.equal(feb .. ": 3 new, 0 duplicate, 0 changed, 1 matched to your own entries (1 statement, "
      .. "1 balance)\n", out)
    books:close()
    books = assert(finance.open(path))
    local by_fitid = {}
    for _, t in ipairs(books:transactions {}) do if t.fitid then by_fitid[t.fitid] = t end end
    local bank = by_fitid.F1
    local c = books:transactions_by_id { cheque }[cheque]
    assert.are.same({ bank.id, "uncleared" }, { c.matched_to, c.status })
    -- the bank's row stays, with the entry's category and notes
    assert.are.same({ "-120.00", "Home:Repairs", "user", "boiler", "cleared" }, { bank.amount, bank.category,
      bank.category_source, bank.notes, bank.status })
    local list = helper.sift_ok { "transactions", "--db", path, "--account", "100200300" }
    assert.matches(("\n%%s+%d  2024%%-01%%-30  100200300%%s+%%-120%%.00  uncleared  Plumber %%(cheque 101%%)%%s+Home:Repairs "
      .. "%%(yours, matched to #%d: not counted%%)\n"):format(cheque, bank.id), list)
    -- F3 (10 Feb, 11 days after) was no match: one cheque, one match
    assert.is_nil(books.db:first("SELECT id FROM transactions WHERE matched_to = ?", by_fitid.F3.id))
    -- counted once: February's expenses are the bank's three rows and the lunch
    r = books:report {}
    assert.are.same({ "2024-02", -(12000 + 6000 + 12000 + 840), 6000 }, { r.months[2].month, r.months[2].expense,
      r.months[2].income })
    local accounts = {}
    for _, a in ipairs(r.accounts) do accounts[a.number] = a.units end
    assert.are.same({ ["100200300"] = feb_balance - 3500, Wallet = 6000 - 840 }, accounts)
    assert.is_nil(books:transactions_by_id { uncashed }[uncashed].matched_to)
    -- the withdrawal and the wallet's deposit are a transfer
    local transfers = books:transfers()
    assert.are.same({ 1, by_fitid.F2.id, wallet }, { #transfers, transfers[1].a.id, transfers[1].b.id })
    -- an entry made after the bank's row came is a proposed duplicate, the bank's row first
    local again = assert(books:add { date = "2024-02-11", amount = "-120", payee = "Electrician", account = "100200300" })
    local dups = books:duplicates()
    assert.are.same({ 1, by_fitid.F3.id, again }, { #dups, dups[1].a.id, dups[1].b.id })
    assert.is_true(books:decide(dups[1].id, true, "duplicate"))
    -- the journal: the cheque entry left out, the bank's row in; the
    -- statuses as marks; hledger accepts it and its balances are the report's
    text = assert(books:export("hledger"))
    assert.is_nil(text:find("; sift-id: " .. cheque .. "\n", 1, true))
    assert.is_nil(text:find("; sift-id: " .. again .. "\n", 1, true))
    assert.matches("\n2024%-02%-02 ! CHEQUE\n    ; fitid: F1\n", text)
    assert.matches("\n2024%-02%-06 ATM\n    ; sift%-id: " .. wallet .. "\n    Assets:Cash:Wallet  +60%.00 USD\n", text)
    assert.matches("\n2024%-02%-07 %* Noodle bar\n    ; sift%-id: " .. lunch .. "\n", text)
    assert.matches(("; the bank's statement says %s on 2024%%-02%%-10; your own entries it has not brought yet add "
      .. "%%-35%%.00\n"):format(cents(feb_balance)), text)
    assert(io.open(journal, "w")):write(text):close()
    if not have("hledger") then
      pending("hledger is not installed: the journal was not checked by it")
    else
      local ok, balances = hledger(journal, "balance --flat --no-total -E Assets")
      assert.is_true(ok, balances)
      assert.matches(("%s USD  Assets:Bank:TESTBANK:100200300\n"):format(cents(feb_balance - 3500)), balances)
      assert.matches("51.60 USD  Assets:Cash:Wallet\n", balances)
      -- hledger's status filters: -C the reconciled lunch, -P the bank's rows, -U the ATM deposit
      local _, cleared = hledger(journal, "register -C Assets:Cash")
      assert.matches("^2024%-02%-07 Noodle bar %s+Assets:Cash:Wallet%s+%-8%.40 USD%s+%-8%.40 USD\n$", cleared)
      local _, unmarked = hledger(journal, "register -U Assets:Cash")
      assert.matches("^2024%-02%-06 ATM %s+Assets:Cash:Wallet%s+60%.00 USD%s+60%.00 USD\n$", unmarked)
    end
    books:close()
    os.execute("rm -f " .. helper.quote(path) .. "* " .. helper.quote(journal))
    os.remove(jan)
    os.remove(feb)
  end)

  it("come through the library in examples/finance_add.lua, which prints the month's report line", function()
    local path = os.tmpname()
    os.remove(path)
    local p = io.popen(("lua5.4 bin/sift run examples/finance_add.lua %s 2>&1"):format(helper.quote(path)))
    local out = p:read("a")
    assert.is_true(p:close(), out)
    assert.are.equal([[
added 1: 2024-03-02 -4.20 Corner shop (made the cash account Wallet, GBP)
added 2: 2024-03-09 -12.35 Market stall
added 3: 2024-03-15 50 Gran
added 4: 2024-03-21 -7.00 Barber
edited 4: amount -7.00 -> -7.50
edited 4: category (none) -> Personal:Haircut
refused: amount: -0.125 has more decimals than GBP's 2
2024-03 GBP: income 50.00, expenses -24.05, net 25.95
]], out)
    -- the same numbers from the command line
    local report = helper.sift_json { "report", "--db", path, "--json" }
    assert.are.same({ "50.00", "-24.05", "25.95" }, { report.months[1].income, report.months[1].expense,
      report.months[1].net })
    -- and `sift journal`: every entry with its exact amount, and the wallet's balance the report's net
    local journal = helper.sift_ok { "journal", "ledger", "--db", path }
    assert.matches("\n2024%-03%-21 Barber\n    ; sift%-id: 4\n    Assets:Cash:Wallet  +%-7%.50 GBP\n    "
      .. "Expenses:Personal:Haircut\n", journal)
    assert.matches("\n2024%-03%-15 Gran\n    ; sift%-id: 3\n    ; notes: birthday\n    Assets:Cash:Wallet  +50%.00 GBP\n"
      .. "    Income:Gifts\n", journal)
    if have("hledger") then
      local file = helper.tmpfile(journal)
      local ok, balance = hledger(file, "balance --flat --no-total Assets")
      assert.are.same({ true, "           25.95 GBP  Assets:Cash:Wallet\n" }, { ok, balance })
      os.remove(file)
    end
    local list = helper.sift_ok { "transactions", "--db", path }
    assert.matches("\n     4  2024%-03%-21  Wallet              %-7%.50  uncleared  Barber%s+Personal:Haircut\n", list)
    if helper.have_validator() then
      local ok, problems = helper.schema_problems("transactions.schema.json",
        helper.sift_ok { "transactions", "--db", path, "--json" })
      assert.is_true(ok, problems)
    end
    os.execute("rm -f " .. helper.quote(path) .. "*")
  end)
end)
