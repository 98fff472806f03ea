-- The finance app of sift serve --db (issue 38, items 2-4), in Lua alone
-- (no browser): a real server on a loopback port driven by lua-http's
-- client. Accounts with their balances and statement balances; the
-- transaction list filtered, sorted and paged as SQL gives it; adding and
-- editing through forms with their errors beside the fields; imported
-- rows' bank data kept; categorising with the learner's suggestion; a
-- rule from a transaction; budgets; an OFX upload all or nothing and
-- idempotent; the chart's bars as the report's numbers; and the safe
-- writes: cross-origin, no token, a stale page (409), the file 0600.
-- Books are generated at test time (sift.finance.sample); no fixture.
local helper = require "spec.helper"
local finance = require "sift.finance"
local sample = require "sift.finance.sample"
local report = require "sift.finance.report"
local learn = require "sift.finance.learn"
local writer = require "sift.ofx.writer"
local common = require "sift.serve.finance.common"
local charts = require "sift.serve.finance.charts"
local store = require "sift.finance.store"
local cjson = require "cjson"

local function encode(fields)
  local out = {}
  for k, v in pairs(fields) do
    out[#out + 1] = k .. "=" .. tostring(v):gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end)
  end
  table.sort(out)
  return table.concat(out, "&")
end

local function count(path, sql, ...)
  local books <close> = assert(finance.open(path))
  return books.db:first(sql, ...).n
end

local function row(path, sql, ...)
  local books <close> = assert(finance.open(path))
  return books.db:first(sql, ...)
end

-- books of 300 generated transactions (a checking account and a card)
local function sample_books()
  local path = helper.tmpdir() .. "/books.db"
  local books <close> = assert(finance.open(path))
  assert(books:import(sample.statements { transactions = 300, seed = 5 }))
  return path
end

-- The spending chart's segments against the report `built`: each named
-- one (and Uncategorized, light grey) has the report's amount; the named
-- are the nine largest categories, each in its own colour; each month's
-- grey Other lists the rest of its categories and carries their exact
-- sum; together they are every (month, category) of the report, once.
-- Returns the number of Other segments, of named categories and of the
-- report's (month, category) amounts.
local function check_spending(page, built)
  local r = report.view(built)
  local units = {}  -- "month category" -> minor units, as the report has them
  for _, m in ipairs(built.months) do
    for name, u in pairs(m.categories) do units[m.month .. " " .. name] = u end
  end
  local want, got = {}, {}
  for _, m in ipairs(r.months) do
    for name, amount in pairs(m.categories) do want[#want + 1] = m.month .. " " .. name .. " " .. amount end
  end
  -- the named segments (and Uncategorized) carry the report's amounts
  local named, fills = {}, {}
  for fill, month, name, amount in page:gmatch('<rect class="seg"[^>]- fill="([^"]+)"[^>]- data%-month="([^"]+)" '
    .. 'data%-category="([^"]+)" data%-amount="([^"]+)"') do
    name = name:gsub("&amp;", "&")
    got[#got + 1] = month .. " " .. name .. " " .. amount
    if name ~= "Uncategorized" then named[name] = true fills[name] = fill
    else assert.are.equal("#dddddd", fill) end
  end
  -- the nine largest categories over the period, each in a colour of its own
  local top9, colours = {}, {}
  for _, c in ipairs(r.categories) do
    if c.name ~= "Uncategorized" and #top9 < 9 then top9[#top9 + 1] = c.name end
  end
  local drawn = {}
  for name in pairs(named) do drawn[#drawn + 1] = name colours[fills[name]] = true end
  table.sort(top9)
  table.sort(drawn)
  assert.are.same(top9, drawn)
  local distinct = 0
  for _ in pairs(colours) do distinct = distinct + 1 end
  assert.are.equal(#top9, distinct)
  -- each month's Other segment: the rest of the month's categories, its amount their exact sum
  local others = 0
  for attrs in page:gmatch('<rect class="other"([^>]*)>') do
    others = others + 1
    local month = attrs:match('data%-month="([^"]+)"')
    local amount, sum_units = attrs:match('data%-amount="([^"]+)" data%-units="(%-?%d+)"')
    local list = cjson.decode((attrs:match('data%-categories="([^"]+)"'):gsub("&quot;", '"')
      :gsub("&amp;", "&")))
    local sum = 0
    for _, name in ipairs(list) do
      assert.is_nil(named[name], name)
      assert.truthy(units[month .. " " .. name], month .. " " .. name)
      sum = sum + units[month .. " " .. name]
      got[#got + 1] = month .. " " .. name .. " " .. store.decimal(units[month .. " " .. name],
        r.currency)
    end
    assert.are.equal(sum, tonumber(sum_units))
    assert.are.equal(store.decimal(sum, r.currency), amount)
  end
  table.sort(want)
  table.sort(got)
  assert.are.same(want, got)
  return others, #top9, #want
end

describe("sift serve --db: the finance app", function()
  local db, s, origin

  -- a POST as a browser on this server sends it: its Origin, the CSRF
  -- token in the action's query and the form (unless told otherwise)
  local function post(path, fields, opts)
    opts = opts or {}
    local headers = { ["content-type"] = "application/x-www-form-urlencoded", origin = opts.origin or origin,
      accept = opts.accept or "text/html" }
    if opts.origin == false then headers.origin = nil end
    local token = opts.csrf == nil and s.run(function(_, _, server) return server.csrf end) or opts.csrf
    local sep = path:find("?", 1, true) and "&" or "?"
    return s.post(path .. (token and (sep .. "csrf=" .. token) or ""), encode(fields), headers)
  end

  local function get(path) return s.get(path, { accept = "text/html" }) end
  local function get_json(path) return s.get(path, { accept = "application/json" }) end

  setup(function()
    db = sample_books()
    s = helper.start_server { data = helper.tmpdir(), db = db }
    origin = s.run(function(_, _, server) return server:url():gsub("/$", "") end)
  end)
  teardown(function() if s then s.stop() end end)

  it("lists the accounts with their balances and the statement balances they reconcile against", function()
    local st, view = get_json("/finance/accounts.json")
    assert.are.equal(200, st)
    local doc = sample.statements { transactions = 300, seed = 5 }
    local r = report.build(assert(finance.open(db)), {})
    local got, want = {}, {}
    for i, a in ipairs(view.accounts) do
      got[i] = { a.number, a.balance, a.known, #a.statements, a.statements[1].balance, a.statements[1].consistent }
      local stmt = doc.statements[i]
      want[i] = { stmt.account.id, stmt.ledger_balance.amount, true, 1, stmt.ledger_balance.amount, true }
      assert.are.equal(r.accounts[i].units, a.units)
    end
    assert.are.same(want, got)
    local _, page = get("/finance/accounts")
    assert.truthy(page:find(('data-units="%d">%s</span>'):format(view.accounts[1].units, view.accounts[1].balance),
      1, true), page)
    assert.truthy(page:find('<span class="ok">reconciles</span>', 1, true))
  end)

  it("lists transactions filtered by account, month, category, payee and text, sorted and paged", function()
    local books <close> = assert(finance.open(db))
    local acct = books.db:first("SELECT id FROM accounts WHERE number = '11223344'").id
    -- account and month: the library's list of them, newest first
    local want = {}
    for _, t in ipairs(books:transactions { account = "11223344", month = "2024-02" }) do table.insert(want, 1, t.id) end
    local st, view = get_json(("/finance/transactions.json?account=%d&month=2024-02"):format(acct))
    assert.are.equal(200, st)
    local ids = {}
    for i, t in ipairs(view.transactions) do ids[i] = t.id end
    assert.is_true(#want > 50)
    assert.are.same({ #want, { table.unpack(want, 1, 50) } }, { math.tointeger(view.total), ids })
    -- payee and text: SQL's LIKE on the same columns
    local n = books.db:first("SELECT count(*) AS n FROM transactions WHERE coalesce(payee, name) LIKE '%TESCO%'").n
    assert.is_true(n > 0)
    assert.are.equal(n, select(2, get_json("/finance/transactions.json?payee=tesco")).total)
    local memo = books.db:first([[SELECT count(*) AS n FROM transactions WHERE payee LIKE '%rent%' OR name LIKE '%rent%'
      OR memo LIKE '%rent%' OR notes LIKE '%rent%']]).n
    assert.are.equal(memo, select(2, get_json("/finance/transactions.json?q=rent")).total)
    -- sorted by amount, smallest first; the second page goes on where the first stops
    local all = {}
    for r in books.db:rows("SELECT id, amount FROM transactions ORDER BY amount, id") do all[#all + 1] = r.id end
    local _, p1 = get_json("/finance/transactions.json?sort=amount&dir=asc")
    local _, p2 = get_json("/finance/transactions.json?sort=amount&dir=asc&page=2")
    assert.are.same({ #all, 50, all[1], all[50], all[51], all[100] },
      { p1.total, #p1.transactions, p1.transactions[1].id, p1.transactions[50].id, p2.transactions[1].id,
        p2.transactions[50].id })
    -- a category (after one is set)
    local st_bad, bad = get_json("/finance/transactions.json?sort=nope")
    assert.are.same({ 400, "sort: one of date, amount, payee, category, account, status" }, { st_bad, bad.error })
    local _, page = get("/finance/transactions?month=2024-02&page=1")
    assert.truthy(page:find('<p id="count">', 1, true), page)
  end)

  it("adds an entry from the form through sift.finance.entries, errors beside their fields", function()
    local before = count(db, "SELECT count(*) AS n FROM transactions")
    -- an amount with three decimals in pounds: refused beside the field, nothing written
    local st, page = post("/finance/add", { date = "2024-03-02", amount = "-4.205", payee = "Corner shop",
      account = "Wallet", currency = "GBP" })
    assert.are.equal(422, st)
    assert.truthy(page:find('<span class="fe" id="err-amount">amount: -4.205 has more decimals than GBP&#39;s 2</span>',
      1, true), page)
    assert.truthy(page:find('value="-4.205"', 1, true))  -- (what was sent stays in the form)
    st, page = post("/finance/add", { date = "2024-02-30", amount = "-4.20", payee = "Corner shop" })
    assert.are.equal(422, st)
    assert.truthy(page:find('id="err-date">date: 2024-02-30 is no day of the calendar', 1, true), page)
    assert.are.equal(before, count(db, "SELECT count(*) AS n FROM transactions"))
    assert.are.equal(0, count(db, "SELECT count(*) AS n FROM accounts WHERE number = 'Wallet'"))
    -- a good one: 303 to its page, stored exactly
    local _, _, h = post("/finance/add", { date = "2024-03-02", amount = "-4.2", payee = "Corner shop",
      account = "Wallet", currency = "GBP", category = "Food:Groceries", memo = "milk", status = "cleared" })
    local id = tonumber(h:get("location"):match("^/finance/t/(%d+)%?saved=1$"))
    assert.truthy(id, h:get("location"))
    assert.are.same({ posted = "2024-03-02", amount = -420, amount_text = "-4.20", payee = "Corner shop", memo = "milk",
      status = "cleared", category = "Food:Groceries", key = "manual:" .. id, number = "Wallet", currency = "GBP" },
      row(db, [[SELECT t.posted, t.amount, t.amount_text, t.payee, t.memo, t.status, c.name AS category, t.key,
        a.number, a.currency FROM transactions t JOIN accounts a ON a.id = t.account_id
        JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], id))
    st, page = get("/finance/t/" .. id .. "?saved=1")
    assert.are.equal(200, st)
    assert.truthy(page:find('<p class="ok" id="saved">Saved.</p>', 1, true))
  end)

  it("edits an entry; a stale page is refused with 409 and nothing written; an imported row keeps the bank's data",
    function()
    local books = assert(finance.open(db))
    local id = assert(books:add { date = "2024-03-05", amount = "-9.99", payee = "Kiosk", account = "Wallet", currency = "GBP" })
    books:close()
    local _, view = get_json("/finance/t/" .. id .. ".json")
    local version = view.transaction.version
    assert.are.equal(16, #version)
    local st, _, h = post("/finance/t/" .. id .. "/edit", { version = version, date = "2024-03-06", amount = "-10.49",
      payee = "Kiosk", memo = "", category = "Food:Snacks", notes = "crisps", status = "cleared" })
    assert.are.same({ 303, "/finance/t/" .. id .. "?saved=1" }, { st, h:get("location") })
    assert.are.same({ posted = "2024-03-06", amount = -1049, notes = "crisps", status = "cleared" },
      row(db, "SELECT posted, amount, notes, status FROM transactions WHERE id = ?", id))
    assert.are.equal(5, count(db, "SELECT count(*) AS n FROM edits WHERE txn = ?", id))  -- date, amount, category, notes, status
    -- the same form again: the row changed since its page was made
    local page
    st, page = post("/finance/t/" .. id .. "/edit", { version = version, date = "2024-03-07", amount = "-1.00",
      payee = "Kiosk", status = "cleared" })
    assert.are.equal(409, st)
    assert.truthy(page:find("this transaction changed since the page was opened", 1, true), page)
    assert.are.same({ posted = "2024-03-06", amount = -1049 }, row(db, "SELECT posted, amount FROM transactions WHERE id = ?", id))
    -- an error beside its field, and nothing written
    _, view = get_json("/finance/t/" .. id .. ".json")
    st, page = post("/finance/t/" .. id .. "/edit", { version = view.transaction.version, date = "2024-03-06",
      amount = "ten", payee = "Kiosk", status = "cleared", notes = "changed?" })
    assert.are.equal(422, st)
    assert.truthy(page:find('id="err-amount">amount: ten is not a decimal amount', 1, true), page)
    assert.are.equal("crisps", row(db, "SELECT notes FROM transactions WHERE id = ?", id).notes)
    -- an imported row: its category, notes and status change; the date and amount sent are not taken
    local bank = row(db, "SELECT id, posted, amount FROM transactions WHERE import_id IS NOT NULL ORDER BY id LIMIT 1")
    _, view = get_json("/finance/t/" .. bank.id .. ".json")
    local _, edit_page = get("/finance/t/" .. bank.id)
    assert.falsy(edit_page:find('name="amount"', 1, true))
    st = post("/finance/t/" .. bank.id .. "/edit", { version = view.transaction.version, date = "2020-01-01",
      amount = "1.00", category = "Housing", notes = "the landlord", status = "reconciled" })
    assert.are.equal(303, st)
    assert.are.same({ posted = bank.posted, amount = bank.amount, notes = "the landlord", status = "reconciled",
      category_source = "user" }, row(db, "SELECT posted, amount, notes, status, category_source FROM transactions "
      .. "WHERE id = ?", bank.id))
  end)

  it("deletes your own entry from its page, and refuses to delete an imported row", function()
    local books = assert(finance.open(db))
    local id = assert(books:add { date = "2024-03-08", amount = "-1.10", payee = "Stamp", account = "Wallet",
      currency = "GBP" })
    books:close()
    local _, view = get_json("/finance/t/" .. id .. ".json")
    local _, page = get("/finance/t/" .. id)
    assert.truthy(page:find('id="delete-submit"', 1, true))
    local st, _, h = post("/finance/t/" .. id .. "/delete", { version = view.transaction.version })
    assert.are.same({ 303, "/finance/transactions" }, { st, h:get("location") })
    assert.are.same({ 0, 1 }, { count(db, "SELECT count(*) AS n FROM transactions WHERE id = ?", id),
      count(db, "SELECT count(*) AS n FROM edits WHERE txn = ? AND field = 'deleted'", id) })
    local bank = row(db, "SELECT id FROM transactions WHERE import_id IS NOT NULL ORDER BY id LIMIT 1").id
    _, view = get_json("/finance/t/" .. bank .. ".json")
    st, page = post("/finance/t/" .. bank .. "/delete", { version = view.transaction.version })
    assert.are.equal(422, st)
    assert.truthy(page:find("it stays as downloaded", 1, true), page)
    assert.are.equal(1, count(db, "SELECT count(*) AS n FROM transactions WHERE id = ?", bank))
  end)

  it("categorises in place with the learner's suggestion and its confidence; a rule made from a transaction",
    function()
    -- teach it: every TESCO row is Groceries, set by hand
    local books = assert(finance.open(db))
    local tesco = {}
    for r in books.db:rows("SELECT id FROM transactions WHERE payee LIKE '%TESCO%' ORDER BY id") do tesco[#tesco + 1] = r.id end
    for i = 1, #tesco - 1 do assert(books:set_category(tesco[i], "Groceries")) end
    local last = tesco[#tesco]
    local model = learn.train(books:examples())
    local t = books.db:first("SELECT payee, name, memo, amount_text AS amount, posted FROM transactions WHERE id = ?", last)
    local guess, p = model:guess(t)
    books:close()
    assert.are.equal("Groceries", guess)
    local _, view = get_json("/finance/t/" .. last .. ".json")
    assert.are.same({ "Groceries", p }, { view.transaction.suggestion, view.transaction.suggestion_confidence })
    local _, page = get("/finance/t/" .. last)
    assert.truthy(page:find(('<b class="suggestion">Groceries</b> (<span class="confidence" data-confidence="%.4f">%.0f%%'
      .. "</span> sure)"):format(p, 100 * p), 1, true), page)
    -- in the list, in place: the row's form holds the suggestion; posting it comes back to the list
    local _, list = get("/finance/transactions?payee=tesco")
    assert.truthy(list:find(('action="/finance/t/%d/category?csrf='):format(last), 1, true), list)
    local st, _, h = post("/finance/t/" .. last .. "/category", { version = view.transaction.version,
      category = "Groceries", back = "/finance/transactions?payee=tesco" })
    assert.are.same({ 303, "/finance/transactions?payee=tesco" }, { st, h:get("location") })
    assert.are.same({ category = "Groceries", category_source = "user" }, row(db, [[SELECT c.name AS category,
      t.category_source FROM transactions t JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], last))
    -- a back that is not the app's is not followed
    _, view = get_json("/finance/t/" .. last .. ".json")
    _, _, h = post("/finance/t/" .. last .. "/category", { version = view.transaction.version, category = "Food",
      back = "https://evil.example/" })
    assert.are.equal("/finance/t/" .. last .. "?saved=1", h:get("location"))
    -- a rule from a STARBUCKS row: every row whose payee holds it is Coffee, by rule
    local sb = row(db, "SELECT id FROM transactions WHERE payee LIKE '%STARBUCKS%' ORDER BY id LIMIT 1").id
    st = post("/finance/t/" .. sb .. "/rule", { pattern = "starbucks", category = "Coffee" })
    assert.are.equal(303, st)
    assert.are.equal('if payee ~ "starbucks" then Coffee',
      row(db, "SELECT source FROM rules ORDER BY id DESC LIMIT 1").source:match("([^\n]+)\n$"))
    local n = count(db, "SELECT count(*) AS n FROM transactions WHERE payee LIKE '%STARBUCKS%'")
    assert.is_true(n > 1)
    assert.are.equal(n, count(db, [[SELECT count(*) AS n FROM transactions t JOIN categories c ON c.id = t.category_id
      WHERE t.payee LIKE '%STARBUCKS%' AND c.name = 'Coffee' AND t.category_source = 'rule']]))
    st, page = post("/finance/t/" .. sb .. "/rule", { pattern = 'a"b', category = "Coffee" })
    assert.are.equal(422, st)
    assert.truthy(page:find('id="err-rule-pattern">pattern: no &quot; or control characters', 1, true), page)
  end)

  it("draws spending by category per month with the report's exact amounts, and each account's balance", function()
    local _, page = get("/finance/charts")
    local others, named, amounts = check_spending(page, report.build(assert(finance.open(db)), {}))
    assert.are.same({ 0, 6 }, { others, named })  -- (the categories given so far: no Other)
    assert.is_true(amounts >= 10, amounts)  -- (Uncategorized, Groceries, Food, Coffee, Housing... in three months)
    -- books categorised as the generator labels them (over twenty categories): nine named, the rest Other
    do
      local labelled = helper.tmpdir() .. "/labelled.db"
      local books <close> = assert(finance.open(labelled))
      local doc, labels = sample.statements { transactions = 400, seed = 7 }
      assert(books:import(doc))
      for t in books.db:rows("SELECT id, fitid FROM transactions") do assert(books:set_category(t.id, labels[t.fitid])) end
      local built = report.build(books, {})
      local html_page = charts.spending(built)
      local o, n = check_spending(html_page, built)
      assert.are.same({ #built.months, 9 }, { o, n })
      assert.truthy(#built.categories > 20, #built.categories)
      assert.truthy(html_page:find('<p id="other-categories"><b>Other</b> (grey, ' .. (#built.categories - 9 -
        (html_page:find('data-category="Uncategorized"', 1, true) and 1 or 0)) .. " categories over the period)", 1, true))
    end
    -- the last point of each account's line is its balance on the accounts page
    local _, accounts = get_json("/finance/accounts.json")
    for _, a in ipairs(accounts.accounts) do
      local last
      for acct, balance in page:gmatch('<circle class="point"[^>]- data%-account="([^"]+)" data%-month="[^"]+" '
        .. 'data%-balance="([^"]+)"') do
        if acct == a.number then last = balance end
      end
      assert.are.equal(a.balance, last)
    end
    -- a line goes on through months without a transaction to the chart's last month, at the balance it kept
    local svg = charts.balances {
      { number = "A", currency = "GBP", points = { { month = "2024-01", units = 100 }, { month = "2024-02", units = 300 },
        { month = "2024-03", units = 200 }, { month = "2024-04", units = 400 } } },
      { number = "W", currency = "GBP", points = { { month = "2024-01", units = 500 }, { month = "2024-02", units = 480 } } },
    }
    local lines = {}
    for points, account in svg:gmatch('<polyline [^>]*points="([^"]+)" data%-account="(%a)"') do
      lines[account] = {}
      for px, py in points:gmatch("([%d.]+),([%d.]+)") do table.insert(lines[account], { tonumber(px), tonumber(py) }) end
    end
    assert.are.same({ 4, 4 }, { #lines.A, #lines.W })
    assert.are.same({ lines.A[4][1], lines.W[2][2], lines.W[2][2] }, { lines.W[4][1], lines.W[3][2], lines.W[4][2] })
    -- a category's drill-down: its months and its transactions
    local _, cat = get_json("/finance/category.json?name=Coffee")
    local sum = 0
    for _, m in ipairs(cat.months) do sum = sum + m.units end
    local spent = row(db, [[SELECT sum(t.amount) AS s FROM transactions t JOIN categories c ON c.id = t.category_id
      WHERE c.name = 'Coffee' AND t.amount < 0]]).s
    assert.are.same({ spent, cat.transactions.total },
      { sum, count(db, "SELECT count(*) AS n FROM transactions t JOIN categories c ON c.id = t.category_id WHERE c.name = 'Coffee'") })
  end)

  it("keeps budgets per category with a month's progress; a stale budget form is refused", function()
    local st, _, h = post("/finance/budgets", { category = "Coffee", amount = "20.00", version = "", month = "2024-02" })
    assert.are.same({ 303, "/finance/budgets?month=2024-02" }, { st, h:get("location") })
    local spent = row(db, [[SELECT -sum(t.amount) AS s FROM transactions t JOIN categories c ON c.id = t.category_id
      WHERE c.name = 'Coffee' AND t.amount < 0 AND t.posted LIKE '2024-02-%']]).s
    local _, view = get_json("/finance/budgets.json?month=2024-02")
    local b = view.budgets[1]
    assert.are.same({ "Coffee", 2000, "20.00", spent }, { b.category, b.units, b.amount, b.spent_units })
    local _, page = get("/finance/budgets?month=2024-02")
    assert.truthy(page:find(('data-category="Coffee" data-spent="%s" data-budget="20.00"'):format(b.spent), 1, true), page)
    assert.is_nil(page:find('id="empty-month"', 1, true))
    assert.is_false(view.empty_month)
    -- a month the books have nothing in (this month, on these 2024 books): said so, the latest month linked
    local latest = row(db, "SELECT substr(max(posted), 1, 7) AS m FROM transactions").m
    assert.truthy(latest:match("^2024%-0%d$"), latest)
    local _, empty = get_json("/finance/budgets.json?month=2031-05")
    assert.are.same({ "2031-05", true, latest }, { empty.month, empty.empty_month, empty.latest_month })
    _, page = get("/finance/budgets")
    assert.truthy(page:find(('<p class="muted" id="empty-month">No transactions in %s; the latest month with any is '
      .. '<a href="/finance/budgets?month=%s">%s</a>.</p>'):format(os.date("!%Y-%m"), latest, latest), 1, true), page)
    -- a second "new budget" form for Coffee, made before the first was set: refused
    local page2
    st, page2 = post("/finance/budgets", { category = "Coffee", amount = "99.00", version = "", month = "2024-02" })
    assert.are.equal(409, st)
    assert.truthy(page2:find("the budget of Coffee changed since the page was opened (it is now 20.00)", 1, true))
    assert.are.equal(2000, row(db, "SELECT amount AS n FROM budgets").n)
    st = post("/finance/budgets", { category = "Coffee", amount = "25", version = b.updated, month = "2024-02" })
    assert.are.equal(303, st)
    assert.are.equal(2500, row(db, "SELECT amount AS n FROM budgets").n)
    st, page2 = post("/finance/budgets", { category = "Tea", amount = "-5", version = "" })
    assert.are.equal(422, st)
    assert.truthy(page2:find('id="err-amount">amount: -5.00: a budget is what may be spent', 1, true), page2)
    -- removed by its form's second button; a form older than the budget removes nothing
    _, page = get("/finance/budgets?month=2024-02")
    local form = page:match('<form[^>]*id="budget%-Coffee".-</form>')
    assert.truthy(form and form:find('<button type="submit" name="action" value="remove" id="budget-remove-Coffee">',
      1, true), page)
    st, page2 = post("/finance/budgets", { category = "Coffee", action = "remove", version = b.updated, month = "2024-02" })
    assert.are.equal(409, st)
    assert.truthy(page2:find("the budget of Coffee changed since the page was opened (it is now 25.00)", 1, true), page2)
    _, view = get_json("/finance/budgets.json?month=2024-02")
    st, _, h = post("/finance/budgets", { category = "Coffee", action = "remove", version = view.budgets[1].updated,
      month = "2024-02" })
    assert.are.same({ 303, "/finance/budgets?month=2024-02", 0 },
      { st, h:get("location"), count(db, "SELECT count(*) AS n FROM budgets") })
    _, page = get("/finance/budgets?month=2024-02")
    assert.truthy(page:find('<p class="muted" id="budgets">No budgets yet.</p>', 1, true), page)
    st, page2 = post("/finance/budgets", { category = "Coffee", action = "remove", version = view.budgets[1].updated })
    assert.are.equal(409, st)
    assert.truthy(page2:find("the budget of Coffee was removed since the page was opened: nothing was saved", 1, true))
  end)

  it("imports an OFX upload all or nothing, and again adds nothing", function()
    local doc = sample.statements { transactions = 40, seed = 11 }
    doc.statements[1].account.id, doc.statements[2].account.id = "55550001", "4111000099990000"
    local text = writer.write(writer.tree(doc), { version = 1 })
    local boundary = "xYzBoUnDaRy"
    local body = table.concat { "--", boundary, "\r\n", 'Content-Disposition: form-data; name="csrf"\r\n\r\nx\r\n',
      "--", boundary, "\r\n", 'Content-Disposition: form-data; name="file"; filename="new.ofx"\r\n',
      "Content-Type: application/octet-stream\r\n\r\n", text, "\r\n--", boundary, "--\r\n" }
    local token = s.run(function(_, _, server) return server.csrf end)
    local function upload(b)
      return s.post("/finance/import?csrf=" .. token, b, { origin = origin, accept = "application/json",
        ["content-type"] = "multipart/form-data; boundary=" .. boundary })
    end
    local before = count(db, "SELECT count(*) AS n FROM transactions")
    local st, counts = upload(body)
    local n = #doc.statements[1].transactions + #doc.statements[2].transactions
    assert.are.same({ 200, n, 0 }, { st, counts.new, counts.duplicate })
    assert.are.equal(before + n, count(db, "SELECT count(*) AS n FROM transactions"))
    st, counts = upload(body)
    assert.are.same({ 200, 0, n }, { st, counts.new, counts.duplicate })
    -- a statement the bank answered with an error, and a file that is no
    -- statement: nothing of either is kept
    doc.signon.severity, doc.signon.code = "ERROR", 15500
    doc.statements[1].account.id = "55550002"
    local refused = body:gsub(text:gsub("%p", "%%%0"), (writer.write(writer.tree(doc), { version = 1 }):gsub("%%", "%%%%")))
    local imports = count(db, "SELECT count(*) AS n FROM imports")
    st, counts = upload(refused)
    assert.are.equal(422, st)
    assert.truthy(counts.error:find("the bank answered with an error, nothing imported", 1, true), counts.error)
    st, counts = upload(body:gsub("<OFX>", "<NOPE>"))
    assert.are.same({ 422, "new.ofx: not an OFX statement (no <OFX> element) (nothing was imported)" }, { st, counts.error })
    assert.are.same({ imports, 0 }, { count(db, "SELECT count(*) AS n FROM imports"),
      count(db, "SELECT count(*) AS n FROM accounts WHERE number = '55550002'") })
  end)

  it("refuses writes from another origin, without the form token, or by GET; the books stay 0600", function()
    local before = count(db, "SELECT count(*) AS n FROM transactions")
    local entry = { date = "2024-03-02", amount = "-1.00", payee = "Evil", account = "Wallet" }
    local st, page = post("/finance/add", entry, { origin = "http://evil.example" })
    assert.are.equal(403, st)
    assert.truthy(page:find("a request from http://evil.example may not change anything here", 1, true), page)
    st = post("/finance/add", entry, { csrf = false })
    assert.are.equal(403, st)
    st = post("/finance/add", entry, { csrf = ("0"):rep(32) })
    assert.are.equal(403, st)
    st = post("/finance/add", entry, { origin = "null" })
    assert.are.equal(403, st)
    -- a PUT with the token: the app takes only POST
    local token0 = s.run(function(_, _, server) return server.csrf end)
    assert.are.equal(405, (s.run(function(_, _, server)
      local req = require("http.request").new_from_uri(server:url() .. "finance/add?csrf=" .. token0)
      req.headers:upsert(":method", "PUT")
      req.headers:upsert("origin", origin)
      local h = assert(req:go(30))
      return tonumber(h:get(":status"))
    end)))
    assert.are.equal(before, count(db, "SELECT count(*) AS n FROM transactions"))
    -- every form of the app carries the token
    local token = s.run(function(_, _, server) return server.csrf end)
    for _, path in ipairs { "/finance/add", "/finance/t/1", "/finance/budgets", "/finance/import", "/finance/transactions" } do
      local _, html = get(path)
      local forms, with = 0, 0
      for form in html:gmatch('<form[^>]-method="post".-</form>') do
        forms = forms + 1
        if form:find("csrf=" .. token, 1, true) and form:find('name="csrf" value="' .. token .. '"', 1, true) then
          with = with + 1
        end
      end
      assert.is_true(forms > 0, path)
      assert.are.equal(forms, with, path)
    end
    local p = io.popen("stat -c %a " .. helper.quote(db))
    assert.are.equal("600", p:read("l"))
    p:close()
    assert.are.equal(32, #common.action({ csrf = token }, "/x"):match("csrf=(%x+)"))
  end)

  it("examples/finance_app.lua serves a generated ledger, adds through the form and is refused from elsewhere",
    function()
    local p = io.popen("lua5.4 bin/sift run examples/finance_app.lua --check 2>&1")
    local out = p:read("a")
    assert.is_true(p:close(), out)
    assert.matches("a generated ledger in [^\n]+: 403 transactions in two accounts\n", out)
    assert.matches("the finance app: http://127%.0%.0%.1:%d+/finance/accounts\n", out)
    assert.matches("add through the form: 303, to /finance/t/%d+%?saved=1\n", out)
    assert.matches("the same form from another origin: 403\n", out)
    assert.matches("Newsagent rows in the books: 1\n", out)
  end)

  it("is not there without --db", function()
    helper.with_server({ data = helper.tmpdir() }, function(get_, post_)
      local st, view = get_("/finance/accounts.json")
      assert.are.same({ 404, "no books: start the server with --db FILE" }, { st, view.error })
      st = post_("/finance/add", "date=2024-01-01&amount=-1&payee=x", { ["content-type"] = "application/x-www-form-urlencoded" })
      assert.are.equal(404, st)
    end)
  end)
end)
