-- CSV statements for banks that no longer speak OFX (issue 38, item 5):
-- `sift import --csv FILE --rules RULES`, the rules in the shape of
-- hledger's CSV rules. Three banks' layouts, written at test time: a UK
-- current account (paid out and paid in apart, dd/mm/yyyy, newest first),
-- a German Girokonto (`;`, 1.234,56, dd.mm.yyyy, header lines, the bank's
-- reference as the id) and a US credit card (one signed amount,
-- MM/DD/YYYY, two identical coffees on one day). Each is imported into a
-- fresh book and checked row by row; imported again it adds nothing; a bad
-- row stores nothing and names its row; and hledger, reading the same CSV
-- with the same rules, gives the same dates, descriptions and amounts.
-- A TSV goes into the account an OFX import made (end, $, parentheses).
local helper = require "spec.helper"
local finance = require "sift.finance"
local fcsv = require "sift.finance.csv"

local BANKS = {
  uk = {
    csv = [[
Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,Debit Amount,Credit Amount,Balance
31/01/2024,FPI,'30-99-50,12345678,"ACME LTD, SALARY JAN",,"2,150.00","3,380.36"
03/01/2024,DEB,'30-99-50,12345678,"TESCO STORES, 2041",52.80,,1145.46
02/01/2024,DD,'30-99-50,12345678,THAMES WATER,32.10,,1198.26
02/01/2024,DEB,'30-99-50,12345678,PRET A MANGER 0123,4.20,,1230.36
01/01/2024,BAL,'30-99-50,12345678,BALANCE BROUGHT FORWARD,,,1234.56
]],
    rules = [[
# Lloyds: newest first, paid out and paid in apart, dd/mm/yyyy
skip 1
fields date, type, sort_code, account, description, amount-out, amount-in, balance_
date-format %d/%m/%Y
currency GBP
account1 Lloyds Current
; a balance line is no transaction
if %type ^BAL$
 skip
if %type ^DD
 comment direct debit
]],
    account = "Lloyds Current",
    -- posted, user date, amount, name, memo, the bank's id (none: a hash)
    want = {
      { "2024-01-02", nil, "-4.20", "PRET A MANGER 0123" },
      { "2024-01-02", nil, "-32.10", "THAMES WATER", "direct debit" },
      { "2024-01-03", nil, "-52.80", "TESCO STORES, 2041" },
      { "2024-01-31", nil, "2150.00", "ACME LTD, SALARY JAN" },
    },
  },
  de = {
    csv = table.concat({
      '"Kontonummer:";"DE89370400440532013000 / Girokonto";',
      '',
      '"Von:";"01.01.2024";',
      '"Bis:";"31.01.2024";',
      '',
      '"Buchungstag";"Wertstellung";"Buchungstext";"Auftraggeber / Begünstigter";"Verwendungszweck";"Kontonummer";'
        .. '"BLZ";"Betrag (EUR)";"Gläubiger-ID";"Mandatsreferenz";"Kundenreferenz";',
      '"02.01.2024";"02.01.2024";"Lastschrift";"REWE Markt GmbH";"REWE SAGT DANKE; 43210";"DE12500105170648489890";'
        .. '"";"-23,45";"";"";"REF-0001";',
      '"05.01.2024";"05.01.2024";"Dauerauftrag";"Hausverwaltung Schmidt";"Miete Januar; Wohnung 3";'
        .. '"DE02120300000000202051";"";"-1.250,00";"";"";"REF-0002";',
      '"15.01.2024";"15.01.2024";"Gutschrift";"ACME GmbH";"Gehalt Januar";"DE02100500000054540402";"";"3.456,78";'
        .. '"";"";"REF-0003";',
      '"20.01.2024";"20.01.2024";"Kartenzahlung";"BÄCKEREI MÜLLER";"Brötchen";"";"";"-4,10";"";"";"REF-0004";',
      '' }, "\r\n"),
    rules = [[
# A German Girokonto: ; between fields, 1.234,56, dd.mm.yyyy, the bank's reference as the id
separator ;
skip 4
fields date, value_date, text, name, purpose, iban, blz, amount, creditor, mandate, code
date-format %d.%m.%Y
decimal-mark ,
currency EUR
account1 Girokonto
description %name: %purpose
if %name bäckerei
 description Bäckerei Müller
if
%text ^gutschrift
%text dauerauftrag
 comment %text
]],
    account = "Girokonto",
    want = {
      { "2024-01-02", nil, "-23.45", "REWE Markt GmbH: REWE SAGT DANKE; 43210", nil, "REF-0001" },
      { "2024-01-05", nil, "-1250.00", "Hausverwaltung Schmidt: Miete Januar; Wohnung 3", "Dauerauftrag", "REF-0002" },
      { "2024-01-15", nil, "3456.78", "ACME GmbH: Gehalt Januar", "Gutschrift", "REF-0003" },
      { "2024-01-20", nil, "-4.10", "Bäckerei Müller", nil, "REF-0004" },
    },
  },
  us = {
    csv = [[
Transaction Date,Post Date,Description,Category,Type,Amount,Memo
03/14/2024,03/15/2024,STARBUCKS STORE 00123,Food & Drink,Sale,-5.75,
03/14/2024,03/15/2024,STARBUCKS STORE 00123,Food & Drink,Sale,-5.75,
03/12/2024,03/13/2024,"AMAZON.COM*AB12C, ""PRIME"" MEMBERSHIP",Shopping,Sale,-139.00,
03/10/2024,03/10/2024,Payment Thank You-Mobile,,Payment,"1,500.00",
03/02/2024,03/04/2024,SHELL OIL 57444,Gas,Sale,-42.10,
]],
    rules = [[
# A US credit card: one signed amount, MM/DD/YYYY, the purchase's day as date2
skip 1
fields date2, date, description, category_, type, amount, memo
date-format %m/%d/%Y
decimal-mark .
currency USD
account1 Sapphire
if %type ^payment$
 comment card payment
if amazon
& %amount ^-
 comment online: %category_
]],
    account = "Sapphire",
    want = {
      { "2024-03-04", "2024-03-02", "-42.10", "SHELL OIL 57444" },
      { "2024-03-10", "2024-03-10", "1500.00", "Payment Thank You-Mobile", "card payment" },
      { "2024-03-13", "2024-03-12", "-139.00", 'AMAZON.COM*AB12C, "PRIME" MEMBERSHIP', "online: Shopping" },
      { "2024-03-15", "2024-03-14", "-5.75", "STARBUCKS STORE 00123" },
      { "2024-03-15", "2024-03-14", "-5.75", "STARBUCKS STORE 00123" },
    },
  },
}

local dir = helper.tmpdir()
local function files(bank, csv_text)
  local b = BANKS[bank]
  local csv_path, rules_path = ("%s/%s.csv"):format(dir, bank), ("%s/%s.rules"):format(dir, bank)
  local f = assert(io.open(csv_path, "wb"))
  f:write(csv_text or b.csv)
  f:close()
  f = assert(io.open(rules_path, "wb"))
  f:write(b.rules)
  f:close()
  return csv_path, rules_path
end

local function fresh()
  local path = os.tmpname()
  os.remove(path)
  return assert(finance.open(path)), path
end

-- the stored rows as the `want` lists have them, by date then id
local function stored(books)
  local out = {}
  for _, t in ipairs(books:transactions {}) do
    local row = books.db:first("SELECT user_date FROM transactions WHERE id = ?", t.id)
    out[#out + 1] = { t.posted, row.user_date, t.amount, t.name, t.memo,
      not t.fitid:match("^csv:") and t.fitid or nil }
  end
  return out
end

local function count(books, what)
  return books.db:first("SELECT count(*) AS n FROM " .. what).n
end

local function have(tool) return os.execute("command -v " .. tool .. " >/dev/null 2>&1") == true end

describe("finance CSV import", function()
  for _, bank in ipairs { "uk", "de", "us" } do
    it(bank .. ": stores the exact transactions, once however often it is imported", function()
      local b = BANKS[bank]
      local csv_path, rules_path = files(bank)
      local books = fresh()
      local counts = assert(fcsv.import(books, csv_path, { rules = rules_path }))
      assert.are.same({ #b.want, 0, 0, b.account }, { counts.new, counts.duplicate, counts.changed, counts.account })
      assert.are.same(b.want, stored(books))
      local acct = books.db:first("SELECT kind, number, currency FROM accounts")
      assert.are.same({ "bank", b.account, ({ uk = "GBP", de = "EUR", us = "USD" })[bank] },
        { acct.kind, acct.number, acct.currency })
      -- again: every row is there already, and the file was seen before
      counts = assert(fcsv.import(books, csv_path, { rules = rules_path }))
      assert.are.same({ 0, #b.want, 0 }, { counts.new, counts.duplicate, counts.changed })
      assert.is_string(counts.seen_before)
      assert.are.equal(#b.want, count(books, "transactions"))
      books:close()
    end)
  end

  it("keys a row by the bank's id, else by its fields and its place among identical rows", function()
    local books = fresh()
    local csv_path, rules_path = files("us")
    assert(fcsv.import(books, csv_path, { rules = rules_path }))
    local keys = {}
    for row in books.db:rows("SELECT key FROM transactions WHERE name LIKE 'STARBUCKS%' ORDER BY key") do
      keys[#keys + 1] = row.key
    end
    -- the two coffees: the same hash, #1 and #2
    assert.matches("^fitid:csv:%x+#1$", keys[1])
    assert.are.equal((keys[1]:gsub("#1$", "#2")), keys[2])
    -- a later download overlapping it, with a third coffee that day and a new row: those two are new
    local later = BANKS.us.csv:gsub("^([^\n]*\n)", "%1" .. "03/18/2024,03/19/2024,UBER TRIP,Travel,Sale,-18.40,\n"
      .. "03/14/2024,03/15/2024,STARBUCKS STORE 00123,Food & Drink,Sale,-5.75,\n")
    csv_path = files("us", later)
    local counts = assert(fcsv.import(books, csv_path, { rules = rules_path }))
    assert.are.same({ 2, 5 }, { counts.new, counts.duplicate })
    assert.are.equal(3, books.db:first("SELECT count(*) AS n FROM transactions WHERE name LIKE 'STARBUCKS%'").n)
    -- the German bank's references are its keys
    local de = fresh()
    csv_path, rules_path = files("de")
    assert(fcsv.import(de, csv_path, { rules = rules_path }))
    assert.are.equal("fitid:REF-0003", de.db:first("SELECT key FROM transactions WHERE amount = 345678").key)
  end)

  it("stores nothing when a row is bad, and names its row and column", function()
    local books = fresh()
    local bad = BANKS.uk.csv:gsub("03/01/2024", "31/02/2024")
    local csv_path, rules_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ': row 3, column 1 (date): "31/02/2024" is not a date in the format %d/%m/%Y',
      "csv" }, { fcsv.import(books, csv_path, { rules = rules_path }) })
    bad = BANKS.uk.csv:gsub("32%.10", "32.1O")
    csv_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ': row 4, column 6 (amount-out): "32.1O" is not an amount', "csv" },
      { fcsv.import(books, csv_path, { rules = rules_path }) })
    bad = BANKS.uk.csv:gsub(",4%.20,,", ",4.20,1.00,")
    csv_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ": row 5, column 7 (amount-in): both amount-in (1.00) and amount-out (4.20) "
      .. "hold an amount", "csv" }, { fcsv.import(books, csv_path, { rules = rules_path }) })
    bad = BANKS.uk.csv:gsub("\n02/01/2024,DEB[^\n]*", "\n02/01/2024,DEB,'30-99-50")
    csv_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ": row 5, column 4: the row has 3 field(s), the rules read 7",
      "csv" }, { fcsv.import(books, csv_path, { rules = rules_path }) })
    bad = BANKS.uk.csv:gsub("52%.80", "52.805")
    csv_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ": row 3, column amount-out: -52.805 has more decimals than GBP's 2", "csv" },
      { fcsv.import(books, csv_path, { rules = rules_path }) })
    bad = BANKS.uk.csv:gsub('"ACME LTD, SALARY JAN"', '"ACME LTD, SALARY JAN')
    csv_path = files("uk", bad)
    assert.are.same({ nil, csv_path .. ": row 2, column 5: text after a quoted field's closing quote", "csv" },
      { fcsv.import(books, csv_path, { rules = rules_path }) })
    for _, what in ipairs { "transactions", "accounts", "imports" } do assert.are.equal(0, count(books, what)) end
  end)

  it("puts a bank's rows in the account its OFX imports made, once the bank stops speaking OFX", function()
    local writer = require "sift.ofx.writer"
    local st = { kind = "bank", currency = "USD", account = { bank_id = "021000021", id = "100200300", type = "CHECKING" },
      transactions = { { posted = "2024-01-05", amount = "-10.00", name = "LAST OFX ROW", fitid = "A1", type = "DEBIT" } },
      start = "2024-01-05", ["end"] = "2024-01-05" }
    local books = fresh()
    assert(books:import { text = writer.write(writer.tree { version = "102", statements = { st }, status = {}, warnings = {},
      signon = { code = 0, severity = "INFO", org = "TESTBANK", fid = "1001" } }, { version = 1 }) })
    -- tabs, dates as YYYY/MM/DD, $ and parentheses, a %N matcher, and the totals line that ends the rows
    local tsv = "Date\tDetails\tAmount\n2024/02/01\tCOFFEE\t$3.50\n2024/02/02\tRENT\t($1,234.00)\n"
      .. "Total\t\t$-1230.50\n2024/02/03\tNOT A ROW\t1.00\n"
    local counts = assert(fcsv.import(books, { text = tsv, path = "bank.tsv" }, { account = "100200300",
      rules_text = "skip 1\nseparator TAB\nfields date, description, amount\nif %1 ^total$\n end\n" }))
    assert.are.same({ 2, "100200300", "USD" }, { counts.new, counts.account, counts.currency })
    local rows = {}
    for _, t in ipairs(books:transactions {}) do rows[#rows + 1] = { t.posted, t.amount, t.name, t.institution } end
    assert.are.same({ { "2024-01-05", "-10.00", "LAST OFX ROW", "TESTBANK" }, { "2024-02-01", "3.50", "COFFEE", "TESTBANK" },
      { "2024-02-02", "-1234.00", "RENT", "TESTBANK" } }, rows)
    assert.are.equal(1, count(books, "accounts"))
    -- its currency is the account's
    assert.are.same({ nil, "bank.tsv: row 2: currency EUR, but account 100200300 is in USD", "account" },
      { fcsv.import(books, { text = tsv, path = "bank.tsv" }, { account = "100200300",
        rules_text = "skip 1\nseparator TAB\nfields date, description, amount\ncurrency EUR\nif %1 ^total$\n end\n" }) })
  end)

  it("reads the directives it documents and refuses others, naming the line", function()
    local function err(text) return select(2, fcsv.parse_rules(text, "bank.rules")) end
    local base = "fields date, description, amount\n"
    assert.are.equal("bank.rules:2: include is an hledger rule sift does not support",
      err(base .. "include common.rules\n"))
    assert.are.equal("bank.rules:3: sift keeps one amount a row: amount2 (another posting's amount) is not read",
      err(base .. "account1 Checking\namount2 %3\n"))
    assert.matches("^bank%.rules:2: frobnicate is not a field sift reads %(date, ", err(base .. "frobnicate yes\n"))
    assert.are.equal("bank.rules:2: %payee: no field of that name or number", err(base .. "if %payee x\n y\n"))
    assert.are.equal("bank.rules:3: description: no field named memo (the fields list names them)",
      err(base .. "if x\n description %memo\n"))
    assert.are.equal('bank.rules:2: the pattern: unclosed ( at character 5 of "(abc"', err(base .. "if (abc\n comment x\n"))
    assert.are.equal('bank.rules:2: the pattern: a repeated part may match no text (as (a*)* does) in "(x?)+y"',
      err(base .. "if (x?)+y\n comment x\n"))
    assert.are.equal("bank.rules:2: this if block has no indented rules under it", err(base .. "if abc\ndate-format %d\n"))
    assert.are.equal("bank.rules:2: %q is not a date format directive sift reads (%Y %y %m %d %b %B %e %H %M %S %l "
      .. "%I %p %%)", err(base .. "date-format %d/%m/%q\n"))
    assert.are.equal("bank.rules: the rules give no amount (amount, or amount-in and amount-out)",
      err("fields date, description\n"))
    -- what a rules file may say: comments both ways, status and balances read and not kept
    local rules = assert(fcsv.parse_rules("# c\n; c\nskip\nfields date,description,amount,balance,status\n"
      .. "newest-first\nseparator TAB\naccount2 expenses:misc\n"))
    assert.are.same({ 1, "\t" }, { rules.skip, rules.separator })
  end)

  it("matches if patterns as POSIX extended regular expressions, ignoring case, as grep -Ei does", function()
    local cases = {
      { "^tesco|sainsbury", "SAINSBURYS S/MKTS", true }, { "^tesco|sainsbury", "MY TESCO", false },
      { "^(pret|costa)[[:space:]]+a?", "Pret A Manger", true }, { "a{2,3}b", "caab", true },
      { "a{2,3}b", "cab", false }, { "\\<rent\\>", "RENT PAYMENT", true }, { "\\brent\\b", "PARENTS", false },
      { "caf.$", "CAFÉ", true }, { "café", "CAFÉ CRÈME", true }, { "[^0-9]+-$", "ABC-", true },
      { "x*y*z*", "", true }, { "(a|ab)(c|bcd)(d*)$", "abcd", true }, { "\\.", "AMAZON.COM", true },
      { "\\.", "AMAZON COM", false }, { "\\bcom", "-COM", true }, { "\\Bcom", "COM", false },
      { "(ab|a)(bc|c)$", "xabc", true }, { "b{2}$", "abbb", true }, { "^b{2}$", "bbb", false },
      { "[[:digit:]]{4}", "REF 2024", true }, { "[[:digit:]]{4}", "REF 202", false },
    }
    local grep = have("grep")
    for _, c in ipairs(cases) do
      local m = assert(fcsv.regex(c[1]))
      assert.are.equal(c[3], m(c[2]), c[1] .. " ~ " .. c[2])
      -- (and GNU grep -Ei, a POSIX ERE matcher, agrees)
      if grep then
        assert.are.equal(c[3], os.execute(("printf '%%s\\n' %s | LC_ALL=C.UTF-8 grep -Eiq -- %s"):format(
          helper.quote(c[2]), helper.quote(c[1]))) == true, "grep -Ei " .. c[1] .. " ~ " .. c[2])
      end
    end
  end)

  it("sift import --csv imports from the command line, and refuses half of it", function()
    local csv_path, rules_path = files("us")
    local db = os.tmpname()
    os.remove(db)
    local out, err, code = helper.sift { "import", "--csv", csv_path, "--rules", rules_path, "--db", db }
    assert.are.equal(0, code, err)
    assert.are.equal(csv_path .. ": 5 new, 0 duplicate, 0 changed (1 statement, 0 balances)\n", out)
    out = helper.sift_ok { "import", "--csv", csv_path, "--rules", rules_path, "--db", db }
    assert.matches(": 0 new, 5 duplicate, 0 changed", out)
    local listing = helper.sift_ok { "transactions", "--db", db }
    assert.matches("2024%-03%-13  Sapphire +%-139%.00", listing)
    out, err, code = helper.sift { "import", "--csv", csv_path, "--db", db }
    assert.are.same({ "", 2 }, { out, code })
    assert.matches("--csv FILE --rules RULES", err, 1, true)
    -- a new account needs its currency; --account and --currency give them
    local bare = BANKS.us.rules:gsub("currency USD\n", ""):gsub("account1 Sapphire\n", "")
    local f = assert(io.open(rules_path, "wb"))
    f:write(bare)
    f:close()
    out, err, code = helper.sift { "import", "--csv", csv_path, "--rules", rules_path, "--db", db, "--account", "Visa" }
    assert.are.same({ "", "sift: account Visa is new: give its currency (currency in the rules, or --currency)\n", 1 },
      { out, err, code })
    out = helper.sift_ok { "import", "--csv", csv_path, "--rules", rules_path, "--db", db, "--account", "Visa",
      "--currency", "USD", "--json" }
    local answer = require("cjson").decode(out).imports[1]
    assert.are.same({ 5, 5, "Visa", "USD" }, { answer.new, answer.rows, answer.account, answer.currency })
    if helper.have_validator() then assert(helper.schema_problems("import.schema.json", out)) end
    os.execute("rm -f " .. helper.quote(db) .. "*")
  end)

  it("gives what hledger gives reading the same CSV with the same rules", function()
    if not have("hledger") then
      pending("hledger is not installed: the peer check did not run")
      return
    end
    for _, bank in ipairs { "uk", "de", "us" } do
      local b = BANKS[bank]
      local csv_path, rules_path = files(bank)
      local p = io.popen(("env -u LD_PRELOAD LC_ALL=C.UTF-8 hledger -f %s --rules-file %s print -O csv 2>&1"):format(
        helper.quote(csv_path), helper.quote(rules_path)))
      local text = p:read("a")
      assert(p:close(), text)
      local records = assert(fcsv.records(text, ","))
      local theirs = {}
      for i = 2, #records do
        local r = records[i]
        -- txnidx, date, date2, status, code, description, comment, account, amount, commodity
        if r[8] == b.account then
          local amount = bank == "de" and r[9]:gsub(",", ".") or r[9]
          theirs[#theirs + 1] = { r[2], r[3] ~= "" and r[3] or nil, amount, r[6], r[7] ~= "" and r[7] or nil,
            r[5] ~= "" and r[5] or nil }
          assert.are.equal(({ uk = "GBP", de = "EUR", us = "USD" })[bank], r[10])
        end
      end
      local books = fresh()
      assert(fcsv.import(books, csv_path, { rules = rules_path }))
      local ours = stored(books)
      local function key(t) return table.concat({ t[1], t[3], t[4] }, "|") end
      table.sort(theirs, function(x, y) return key(x) < key(y) end)
      table.sort(ours, function(x, y) return key(x) < key(y) end)
      assert.are.same(theirs, ours, bank)
      books:close()
    end
  end)

  it("examples/finance_csv.lua imports a bank's CSV through the library", function()
    local db = os.tmpname()
    os.remove(db)
    local p = io.popen(("lua5.4 bin/sift run examples/finance_csv.lua %s 2>&1"):format(helper.quote(db)))
    local out = p:read("a")
    assert(p:close(), out)
    assert.matches("first import: 4 new, 0 duplicate\n", out, 1, true)
    assert.matches("again: 0 new, 4 duplicate\n", out, 1, true)
    assert.matches("2024-01-31  2150.00  ACME LTD, SALARY JAN  Income:Salary\n", out, 1, true)
    os.execute("rm -f " .. helper.quote(db) .. "*")
  end)
end)
