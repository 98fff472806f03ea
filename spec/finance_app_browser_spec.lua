-- The finance app of sift serve --db in headless Chromium (#heavy; issue
-- 38, "Done means"): one browser session fills and submits the add, edit
-- and categorise forms and uploads an OFX file, and the rows are then
-- found in SQLite; a form posted from another origin is refused (403) and
-- writes nothing; the chart's bars carry the numbers `sift report --json`
-- gives. The server is `sift serve` as a process on a loopback port over
-- books generated in a temporary directory.
local helper = require "spec.helper"
local finance = require "sift.finance"
local sample = require "sift.finance.sample"
local writer = require "sift.ofx.writer"

local function row(db, sql, ...)
  local books <close> = assert(finance.open(db))
  return books.db:first(sql, ...)
end

describe("the finance app in headless Chromium #heavy", function()
  it("adds, edits and categorises through its forms, imports an upload, refuses another origin, and draws the "
    .. "report's numbers #heavy", function()
    if not helper.have_chromium() then pending("chromium is not installed (apt-get install chromium)") return end
    local dir = helper.tmpdir()
    local db = dir .. "/books.db"
    do
      local books <close> = assert(finance.open(db))
      local doc, labels = sample.statements { transactions = 200, seed = 3 }
      assert(books:import(doc))
      -- from February on, categorised as the generator labels them (over nine categories: the chart has an
      -- Other); January is left for the forms to categorise
      for t in books.db:rows("SELECT id, fitid FROM transactions WHERE posted >= '2024-02-01'") do
        assert(books:set_category(t.id, labels[t.fitid]))
      end
    end
    local url, pid = helper.serve { "--db", db }
    assert.truthy(url, "sift serve did not start")
    local ok, err = pcall(function()
      local browser = helper.browser()
      local function js(s) return browser:eval(s) end
      local function fill(fields)
        for id, value in pairs(fields) do
          js(("(function(){var e=document.getElementById(%q); e.value=%q; return e.value})()"):format(id, value))
        end
      end
      -- click a submit button and wait for the page it leads to
      local function submit(button, path_pattern)
        local before = js("location.href")
        js(("document.getElementById(%q).click(), true"):format(button))
        return helper.wait_for("the page after " .. button, function()
          local okk, state = pcall(js, "document.readyState + ' ' + location.pathname + location.search")
          if not okk then return nil, state end
          local path = state:match("^complete (.*)$")
          if path and (url:gsub("/$", "") .. path) ~= before and path:match(path_pattern) then return path end
          return nil, state
        end, 60)
      end

      -- add: a cash purchase, through the form
      browser:navigate(url .. "finance/add")
      fill { ["f-date"] = "2024-03-02", ["f-amount"] = "-4.20", ["f-payee"] = "Corner shop", ["f-account"] = "Wallet",
        ["f-currency"] = "GBP", ["f-category"] = "Food:Groceries", ["f-memo"] = "milk" }
      local path = submit("add-submit", "^/finance/t/%d+")
      local id = tonumber(path:match("^/finance/t/(%d+)"))
      assert.are.same({ posted = "2024-03-02", amount = -420, payee = "Corner shop", memo = "milk", status = "uncleared",
        category = "Food:Groceries", number = "Wallet", import_id = nil }, row(db, [[SELECT t.posted, t.amount, t.payee,
        t.memo, t.status, c.name AS category, a.number, t.import_id FROM transactions t
        JOIN accounts a ON a.id = t.account_id JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], id))
      assert.are.equal("Saved.", js("document.getElementById('saved').textContent"))

      -- a refused add: the error beside its field, nothing written
      local n = row(db, "SELECT count(*) AS n FROM transactions").n
      browser:navigate(url .. "finance/add")
      fill { ["f-date"] = "2024-03-03", ["f-amount"] = "12,50", ["f-payee"] = "Market", ["f-account"] = "Wallet" }
      submit("add-submit", "^/finance/add")
      assert.truthy(js("document.getElementById('err-amount').textContent"):find("^amount: 12,50 is not a decimal amount"))
      assert.are.equal(n, row(db, "SELECT count(*) AS n FROM transactions").n)

      -- edit it: the amount corrected, cleared
      browser:navigate(url .. "finance/t/" .. id)
      fill { ["f-amount"] = "-4.80", ["f-notes"] = "and bread" }
      js("document.getElementById('f-status').value = 'cleared', true")
      submit("edit-submit", "^/finance/t/" .. id .. "%?saved=1$")
      assert.are.same({ amount = -480, notes = "and bread", status = "cleared" },
        row(db, "SELECT amount, notes, status FROM transactions WHERE id = ?", id))

      -- categorise an imported row in place, from the list: the row's form holds the category typed
      local bank = row(db, "SELECT id FROM transactions WHERE import_id IS NOT NULL AND category_id IS NULL ORDER BY id LIMIT 1").id
      browser:navigate(url .. "finance/transactions?sort=date&dir=asc")
      js(([[(function(){var f=document.querySelector('tr[data-id="%d"] form');
        f.querySelector('input[name=category]').value='Rent'; f.querySelector('button').click(); return true})()]])
        :format(bank))
      helper.wait_for("the list again", function()
        local okk, state = pcall(js, "document.readyState + ' ' + location.search + ' ' + "
          .. "(document.querySelector('tr[data-id=\"" .. bank .. "\"]') || {textContent: ''}).textContent")
        return okk and state:match("^complete %?dir=asc") and state:find("Rent", 1, true), state
      end, 60)
      assert.are.same({ category = "Rent", category_source = "user" }, row(db, [[SELECT c.name AS category,
        t.category_source FROM transactions t JOIN categories c ON c.id = t.category_id WHERE t.id = ?]], bank))

      -- and on a transaction's page, with the learner's suggestion
      local other = row(db, "SELECT id FROM transactions WHERE import_id IS NOT NULL AND category_id IS NULL ORDER BY id LIMIT 1").id
      browser:navigate(url .. "finance/t/" .. other)
      fill { ["cat-category"] = "Household" }
      submit("categorize-submit", "^/finance/t/" .. other)
      assert.are.equal("Household", row(db, [[SELECT c.name FROM transactions t JOIN categories c
        ON c.id = t.category_id WHERE t.id = ?]], other).name)

      -- an OFX upload: its rows in SQLite; the same file again adds nothing
      local doc = sample.statements { transactions = 30, seed = 9 }
      doc.statements[1].account.id, doc.statements[2].account.id = "77770001", "4111000077770000"
      local file = dir .. "/upload.ofx"
      local f = assert(io.open(file, "wb"))
      f:write(writer.write(writer.tree(doc), { version = 1 }))
      f:close()
      local count = #doc.statements[1].transactions + #doc.statements[2].transactions
      for round = 1, 2 do
        browser:navigate(url .. "finance/import")
        local root = browser:call("DOM.getDocument", {}).root.nodeId
        local node = browser:call("DOM.querySelector", { nodeId = root, selector = "#import-file" }).nodeId
        browser:call("DOM.setFileInputFiles", { nodeId = node, files = { file } })
        submit("import-submit", "^/finance/import")
        assert.are.same(round == 1 and { count, 0 } or { 0, count }, { tonumber(js("document.getElementById('counts').dataset.new")),
          tonumber(js("document.getElementById('counts').dataset.duplicate")) })
        assert.are.equal(count, row(db, [[SELECT count(*) AS n FROM transactions t JOIN accounts a ON a.id = t.account_id
          WHERE a.number IN ('77770001', '4111000077770000')]]).n)
      end

      -- another origin (localhost is not 127.0.0.1) posting to the app, with the token even: 403, nothing written
      n = row(db, "SELECT count(*) AS n FROM transactions").n
      browser:navigate(url .. "finance/add")
      local token = js("document.querySelector('input[name=csrf]').value")
      local port = url:match(":(%d+)/$")
      browser:navigate(("http://localhost:%s/"):format(port))
      js(([[(function(){var f=document.createElement('form'); f.method='post';
        f.action='http://127.0.0.1:%s/finance/add?csrf=%s';
        var fields={date:'2024-03-09', amount:'-99.00', payee:'Evil', account:'Wallet'};
        for (var k in fields) { var i=document.createElement('input'); i.name=k; i.value=fields[k]; f.appendChild(i); }
        document.body.appendChild(f); f.submit(); return true})()]]):format(port, token))
      local refused = helper.wait_for("the refusal", function()
        local okk, state = pcall(js, "document.readyState + ' ' + location.host + ' ' + document.title + ' ' "
          .. "+ ((document.getElementById('error') || {}).textContent || '')")
        return okk and state:match("^complete 127%.0%.0%.1:%d+ Error 403") and state, state
      end, 60)
      assert.truthy(refused:find("may not change anything here", 1, true), refused)
      assert.are.equal(n, row(db, "SELECT count(*) AS n FROM transactions").n)
      assert.is_nil(row(db, "SELECT id FROM transactions WHERE payee = 'Evil'"))

      -- the chart: each named segment's exact amount is sift report --json's; each month's grey Other
      -- lists the rest of that month's categories and carries their exact sum (in minor units)
      local cli = helper.sift_json { "report", "--json", "--db", db }
      local function minor(decimal)  -- "-12.30" -> -1230 (the report's two places)
        local sign, whole, frac = decimal:match("^(%-?)(%d+)%.(%d%d)$")
        assert.truthy(whole, decimal)
        return (sign == "-" and -1 or 1) * (tonumber(whole) * 100 + tonumber(frac))
      end
      local want, amounts = {}, {}
      for _, m in ipairs(cli.months) do
        for name, amount in pairs(m.categories) do
          want[#want + 1] = m.month .. " " .. name .. " " .. amount
          amounts[m.month .. " " .. name] = amount
        end
      end
      browser:navigate(url .. "finance/charts")
      local got = js([[Array.from(document.querySelectorAll('#spending rect.seg')).map(function (r) {
        return r.dataset.month + ' ' + r.dataset.category + ' ' + r.dataset.amount; })]])
      local named = #got
      local others = js([[Array.from(document.querySelectorAll('#spending rect.other')).map(function (r) {
        return [r.dataset.month, r.dataset.amount, r.dataset.units, JSON.parse(r.dataset.categories).join('\n')]; })]])
      for _, o in ipairs(others) do
        local month, sum = o[1], 0
        for name in o[4]:gmatch("[^\n]+") do
          local amount = amounts[month .. " " .. name]
          assert.truthy(amount, month .. " " .. name)
          got[#got + 1] = month .. " " .. name .. " " .. amount
          sum = sum + minor(amount)
        end
        assert.are.same({ sum, sum }, { minor(o[2]), tonumber(o[3]) })
      end
      table.sort(want)
      table.sort(got)
      assert.are.same(want, got)
      assert.truthy(named > 0 and named <= 10 * #cli.months, named)  -- (nine named and Uncategorized a month at most)
      assert.is_true(#others >= 2, #others)  -- (February on)
      -- (the bars of what the forms wrote among them: the entry as edited, the row categorised in place)
      local bars = " " .. table.concat(got, " | ") .. " "
      assert.truthy(bars:find(" 2024-03 Food:Groceries -4.80 ", 1, true), bars)
      assert.truthy(bars:find(" 2024-01 Rent -1200.00 ", 1, true), bars)
    end)
    os.execute("kill " .. pid)
    if not ok then error(err, 0) end
    local p = io.popen("stat -c %a " .. helper.quote(db))
    assert.are.equal("600", p:read("l"))
    p:close()
  end)
end)
