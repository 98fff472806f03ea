--- The finance app's pages that read: accounts with their balances, the
-- transaction list (filtered, sorted, paged, with categorising in place),
-- a transaction's page with its forms, the budgets and the import form.
-- Each returns an answer of `sift.serve.finance.common` (a JSON view and
-- its page).
-- @module sift.serve.finance.pages

local store = require "sift.finance.store"
local learn = require "sift.finance.learn"
local json = require "sift.json"
local html = require "sift.serve.html"
local common = require "sift.serve.finance.common"
local forms = require "sift.serve.finance.forms"
local charts = require "sift.serve.finance.charts"

local esc, num = html.escape, html.num

local M = {}

-- {======================================================
-- Accounts
-- =======================================================

--- The accounts with their balances (the statements' openings, as the
-- report takes them, plus every transaction that counts), and each
-- stored statement balance beside the books' sum at its date.
function M.accounts_view(books)
  local db = books.db
  local checks, openings = store.check_balances(db)
  local accounts = json.array {}
  local by_id = {}
  for row in db:rows([[SELECT a.id, a.kind, a.number, a.name, a.currency, i.org AS institution,
        (SELECT coalesce(sum(t.amount), 0) FROM transactions t WHERE t.account_id = a.id AND ]] .. store.kept("t")
        .. [[) AS sum, (SELECT count(*) FROM transactions t WHERE t.account_id = a.id) AS transactions,
        (SELECT count(*) FROM transactions t WHERE t.account_id = a.id AND t.status = 'uncleared') AS uncleared
      FROM accounts a JOIN institutions i ON i.id = a.institution_id ORDER BY a.id]]) do
    local units = (openings[row.id] or 0) + row.sum
    local a = { id = row.id, kind = row.kind, number = row.number, name = row.name, currency = row.currency,
      institution = row.institution ~= "" and row.institution or nil, units = units,
      balance = store.decimal(units, row.currency), known = openings[row.id] ~= nil,
      transactions = row.transactions, uncleared = row.uncleared, statements = json.array {} }
    accounts[#accounts + 1] = a
    by_id[row.id] = a
  end
  for _, b in ipairs(checks) do
    local a = by_id[b.account]
    if a then
      a.statements[#a.statements + 1] = { date = b.date, balance = b.balance, consistent = b.consistent,
        books = store.decimal(b.units + b.manual_units, b.currency), manual = store.decimal(b.manual_units, b.currency) }
    end
  end
  return { accounts = accounts }
end

function M.accounts(_, books)
  local view = M.accounts_view(books)
  return common.answer(200, view, function()
    local rows, statements = {}, {}
    for i, a in ipairs(view.accounts) do
      rows[i] = { html.a("/finance/transactions?account=" .. a.id, a.number), esc(a.name ~= a.number and a.name or ""),
        esc(a.kind), esc(a.institution), esc(a.currency),
        ('<span class="n" data-units="%d">%s</span>%s'):format(a.units, esc(a.balance),
          (a.known or a.kind == "cash") and "" or ' <span class="muted">(relative: no statement balance)</span>'),
        num(a.transactions), num(a.uncleared) }
      for _, s in ipairs(a.statements) do
        statements[#statements + 1] = { esc(a.number), esc(s.date), esc(s.balance), esc(s.books),
          s.consistent and '<span class="ok">reconciles</span>'
            or '<span class="err">does not reconcile: transactions are missing or doubled before it</span>' }
      end
    end
    return common.page("Accounts", table.concat {
      html.table({ "account", "name", "kind", "bank", "currency", "#balance", "#transactions", "#uncleared" }, rows,
        "accounts", "No accounts yet: import a statement or add an entry."),
      "<h2>Statement balances</h2><p class=\"muted\">Each balance the bank gave, beside the books' balance on its "
        .. "date (your unmatched entries included).</p>",
      html.table({ "account", "date", "#statement", "#books", "" }, statements, "statements",
        "No statement balances (an OFX statement brings them)."),
    })
  end)
end

-- }======================================================

-- {======================================================
-- Transactions
-- =======================================================

local SORTS = { date = "t.posted", amount = "t.amount", payee = "coalesce(t.payee, t.name, t.memo)",
  category = "c.name", account = "a.number", status = "t.status" }

--- The filters a list takes from its query, checked: the filter, or nil
-- and why.
function M.filter(query)
  local f = { account = query.account, month = query.month, category = query.category, payee = query.payee,
    q = query.q, sort = query.sort or "date", dir = query.dir or "desc", uncategorized = query.uncategorized }
  if f.account and f.account ~= "" and not f.account:match("^%d+$") then return nil, "account: an account's id" end
  if f.month and f.month ~= "" and not f.month:match("^%d%d%d%d%-%d%d$") then return nil, "month: YYYY-MM" end
  if not SORTS[f.sort] then return nil, "sort: one of date, amount, payee, category, account, status" end
  if f.dir ~= "asc" and f.dir ~= "desc" then return nil, "dir: asc or desc" end
  local page = math.tointeger(tonumber(query.page or "1"))
  if not page or page < 1 then return nil, "page: a whole number from 1" end
  f.page = page
  for k, v in pairs(f) do if v == "" then f[k] = nil end end
  return f
end

local function like(s) return "%" .. s:gsub("[%%_\\]", "\\%0") .. "%" end

--- The transactions of a filter: one page of them (rows as the list
-- shows them, with their stamps) and how many match in all.
function M.list(books, f)
  local where, args = {}, {}
  local function add(cond, ...)
    where[#where + 1] = cond
    for _, v in ipairs { ... } do args[#args + 1] = v end
  end
  if f.account then add("t.account_id = ?", tonumber(f.account)) end
  if f.month then add("substr(t.posted, 1, 7) = ?", f.month) end
  if f.uncategorized then add("t.category_id IS NULL")
  elseif f.category then add("c.name = ?", f.category) end
  if f.payee then add([[coalesce(t.payee, t.name) LIKE ? ESCAPE '\']], like(f.payee)) end
  if f.q then
    local l = like(f.q)
    add([[(t.payee LIKE ? ESCAPE '\' OR t.name LIKE ? ESCAPE '\' OR t.memo LIKE ? ESCAPE '\'
      OR t.notes LIKE ? ESCAPE '\')]], l, l, l, l)
  end
  local from = [[ FROM transactions t JOIN accounts a ON a.id = t.account_id
    LEFT JOIN categories c ON c.id = t.category_id]] .. (#where > 0 and (" WHERE " .. table.concat(where, " AND ")) or "")
  local total = books.db:first("SELECT count(*) AS n" .. from, table.unpack(args)).n
  local dir = f.dir == "asc" and "ASC" or "DESC"
  local rows = json.array {}
  for row in books.db:rows(("SELECT t.id, t.posted, t.amount AS units, t.payee, t.name, t.memo, t.notes, t.status, "
      .. "t.category_source, t.confidence, t.import_id, t.matched_to, t.category_id, t.type, c.name AS category, "
      .. "a.id AS account_id, a.number AS account, a.currency%s ORDER BY %s %s NULLS LAST, t.id %s LIMIT %d OFFSET %d")
      :format(from, SORTS[f.sort], dir, dir, common.PER_PAGE, (f.page - 1) * common.PER_PAGE), table.unpack(args)) do
    row.amount = store.decimal(row.units, row.currency)
    row.manual = row.import_id == nil
    row.version = common.stamp_of { posted = row.posted, amount = row.units, payee = row.payee, name = row.name,
      memo = row.memo, category_id = row.category_id, category_source = row.category_source, notes = row.notes,
      status = row.status, matched_to = row.matched_to }
    rows[#rows + 1] = row
  end
  return rows, total
end

--- The learner, trained on the books' categorised history (what you and
-- the rules set), as `sift categorize` trains it. Training on a large
-- history takes seconds, so the model is kept on the server (`server`,
-- when given) while that history stays the same: a checksum of its rows'
-- ids, categories, amounts, dates and texts, one scan.
function M.model(books, server)
  local sig = books.db:first([[SELECT count(*) AS n, total(id * category_id) AS c, total(id * amount) AS a,
      total(id * julianday(posted)) AS d, total(id * (length(coalesce(payee, '')) + 3 * length(coalesce(name, ''))
        + 7 * length(coalesce(memo, '')))) AS t, max(id) AS m
    FROM transactions WHERE category_source IN ('user', 'rule')]])
  local key = ("%s|%d|%.17g|%.17g|%.17g|%.17g|%s"):format(books.path, sig.n, sig.c, sig.a, sig.d, sig.t, sig.m)
  local kept = server and server.finance_model
  if kept and kept.key == key then return kept.model end
  local model = learn.train(books:examples())
  if server then server.finance_model = { key = key, model = model } end
  return model
end

-- the learner's guess for a row: category and confidence, or nil
function M.suggest(model, row)
  local category, p = model:guess { payee = row.payee, name = row.name, memo = row.memo, amount = row.amount,
    posted = row.posted }
  return category, p
end

-- a table whose heads are HTML already (links), its amount column (4th) right-aligned
local function raw_table(heads, rows, id)
  if #rows == 0 then return ('<p class="muted empty" id="%s">No transactions.</p>'):format(id) end
  local out = { ('<table id="%s"><tr>'):format(id) }
  for i, h in ipairs(heads) do out[#out + 1] = (i == 4 and '<th class="n">%s</th>' or "<th>%s</th>"):format(h) end
  out[#out + 1] = "</tr>"
  for _, row in ipairs(rows) do
    out[#out + 1] = ('<tr data-id="%s">'):format(row.id)
    for i, cell in ipairs(row) do out[#out + 1] = (i == 4 and '<td class="n">%s</td>' or "<td>%s</td>"):format(cell) end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

local function percent(p) return ("%.0f%%"):format(100 * p) end

--- The list's view and page.
function M.transactions(server, books, query)
  local f, why = M.filter(query)
  if not f then return common.fail(400, why) end
  local rows, total = M.list(books, f)
  local model
  for _, r in ipairs(rows) do
    if r.category_source ~= "user" and r.category_source ~= "rule" then
      model = model or M.model(books, server)
      r.suggestion, r.suggestion_confidence = M.suggest(model, r)
    end
  end
  local pages = math.max(1, (total + common.PER_PAGE - 1) // common.PER_PAGE)
  local view = { filter = f, total = total, page = f.page, pages = pages, per_page = common.PER_PAGE,
    transactions = rows }
  return common.answer(200, view, function()
    local here = { account = f.account, month = f.month, category = f.category, payee = f.payee, q = f.q,
      sort = f.sort ~= "date" and f.sort or nil, dir = f.dir ~= "desc" and f.dir or nil,
      uncategorized = f.uncategorized }
    local self_path = "/finance/transactions" .. common.query(here)
    local with_page = function(p)
      local q = {}
      for k, v in pairs(here) do q[k] = v end
      q.page = p > 1 and tostring(p) or nil
      return "/finance/transactions" .. common.query(q)
    end
    local function sort_link(key, label)
      local q = {}
      for k, v in pairs(here) do q[k] = v end
      q.sort = key ~= "date" and key or nil
      local dir = (f.sort == key and f.dir == "desc") and "asc" or "desc"
      q.dir = dir ~= "desc" and dir or nil
      local mark = f.sort == key and (f.dir == "desc" and " ▼" or " ▲") or ""
      return ('<a class="sort" href="%s">%s</a>%s'):format(esc("/finance/transactions" .. common.query(q)), esc(label), mark)
    end
    local accounts = { '<option value="">any account</option>' }
    for a in books.db:rows("SELECT id, number FROM accounts ORDER BY id") do
      accounts[#accounts + 1] = ('<option value="%d"%s>%s</option>'):format(a.id,
        tostring(a.id) == f.account and " selected" or "", esc(a.number))
    end
    local filter_form = table.concat {
      '<form method="get" action="/finance/transactions" id="filter">',
      '<select name="account">', table.concat(accounts), "</select> ",
      ('<input type="text" name="month" placeholder="YYYY-MM" value="%s" style="width:6em"> '):format(esc(f.month)),
      ('<input type="text" name="category" list="categories" placeholder="category" value="%s" style="width:10em"> ')
        :format(esc(f.category)),
      ('<input type="text" name="payee" placeholder="payee" value="%s" style="width:10em"> '):format(esc(f.payee)),
      ('<input type="text" name="q" placeholder="text" value="%s" style="width:10em"> '):format(esc(f.q)),
      '<button type="submit">filter</button> <a href="/finance/transactions">clear</a></form>',
      common.categories_list(books.db),
    }
    local trs = {}
    for i, r in ipairs(rows) do
      local cat
      if r.category_source == "user" or r.category_source == "rule" then
        cat = esc(r.category) .. (r.category_source == "rule" and ' <span class="muted">(rule)</span>' or "")
      else
        cat = forms.categorize_inline(server, r, self_path)
      end
      trs[i] = { html.a("/finance/t/" .. r.id, tostring(r.id)), esc(r.posted), esc(r.account),
        ('<span class="n" data-units="%d">%s</span>'):format(r.units, esc(r.amount)),
        esc(r.payee or r.name or r.memo) .. (r.matched_to
          and (' <span class="muted">(yours, matched to %s: not counted)</span>'):format(
            html.a("/finance/t/" .. r.matched_to, "#" .. r.matched_to)) or ""),
        cat, esc(r.status), r.manual and "yours" or "bank", id = r.id }
    end
    local from = (f.page - 1) * common.PER_PAGE
    local nav
    if total == 0 then nav = '<p id="count">No transactions match.</p>'
    else
      nav = ('<p id="count">%s–%s of %s (page %s of %s)%s%s</p>'):format(num(math.min(from + 1, total)),
        num(from + #rows), num(total), num(f.page), num(pages),
        f.page > 1 and (" " .. html.a(with_page(f.page - 1), "previous")) or "",
        f.page < pages and (" " .. html.a(with_page(f.page + 1), "next")) or "")
    end
    return common.page("Transactions", table.concat {
      filter_form, nav,
      raw_table({ "id", sort_link("date", "date"), sort_link("account", "account"), sort_link("amount", "amount"),
        sort_link("payee", "payee"), sort_link("category", "category"), sort_link("status", "status"), "" },
        trs, "transactions"),
    })
  end)
end

-- }======================================================

-- {======================================================
-- One transaction
-- =======================================================

--- A transaction as its page shows it (nil when there is none).
function M.transaction_row(books, id)
  local row = books.db:first([[SELECT t.id, t.posted, t.amount AS units, t.amount_text, t.payee, t.name, t.memo,
      t.notes, t.status, t.category_source, t.confidence, t.import_id, t.matched_to, t.category_id, t.type,
      t.fitid, t.checknum, c.name AS category, a.number AS account, a.kind AS account_kind, a.currency
    FROM transactions t JOIN accounts a ON a.id = t.account_id LEFT JOIN categories c ON c.id = t.category_id
    WHERE t.id = ?]], id)
  if not row then return nil end
  row.amount = store.decimal(row.units, row.currency)
  row.manual = row.import_id == nil
  row.version = common.stamp_of { posted = row.posted, amount = row.units, payee = row.payee, name = row.name,
    memo = row.memo, category_id = row.category_id, category_source = row.category_source, notes = row.notes,
    status = row.status, matched_to = row.matched_to }
  return row
end

--- A transaction's page: its values, its edit form (your own entries:
-- every field; imported rows: category, notes and status), categorising
-- with the learner's suggestion, a rule made from it, and its edits.
-- `state` (optional): the form's values and errors after a refused write.
function M.transaction(server, books, id, state, status)
  local t = M.transaction_row(books, id)
  if not t then return common.fail(404, ("no transaction %s"):format(tostring(id))) end
  local suggestion, confidence = M.suggest(M.model(books, server), t)
  t.suggestion, t.suggestion_confidence = suggestion, confidence
  local edits = json.array {}
  for row in books.db:rows("SELECT field, old, new, at FROM edits WHERE txn = ? ORDER BY id", id) do
    edits[#edits + 1] = row
  end
  local view = { transaction = t, edits = edits, errors = state and state.errors }
  return common.answer(status or 200, view, function()
    local rows = {}
    for i, e in ipairs(edits) do rows[i] = { esc(e.at), esc(e.field), esc(e.old), esc(e.new) } end
    return common.page(("Transaction %d"):format(id), table.concat {
      state and state.saved and '<p class="ok" id="saved">Saved.</p>' or "",
      state and state.message and ('<p class="err" id="error">%s</p>'):format(esc(state.message)) or "",
      html.facts { { "date", t.posted }, { "account", t.account }, { "amount", t.amount .. " " .. (t.currency or "") },
        { "payee", t.payee }, { "name (bank)", not t.manual and t.name or nil }, { "memo", t.memo },
        { "category", t.category and (t.category .. (t.category_source == "learned"
          and (" (a guess, " .. percent(t.confidence or 0) .. ")") or "")) or "uncategorised" },
        { "status", t.status }, { "notes", t.notes },
        { "from", t.manual and "your own entry" or ("the bank (import " .. t.import_id .. ")") },
        { "matched to", t.matched_to and ("#" .. t.matched_to .. " (the bank's row: this one is not counted)") } },
      "<h2>Categorise</h2>", forms.categorize(server, t, state),
      "<h2>Edit</h2>", forms.edit(server, t, state),
      "<h2>A rule from it</h2>", forms.rule(server, t, state),
      "<h2>Edits</h2>", html.table({ "at (UTC)", "field", "was", "now" }, rows, "edits", "No edits."),
      common.categories_list(books.db),
    })
  end)
end

--- The add form (with the values and errors of a refused add).
function M.add(server, books, state, status)
  return common.answer(status or 200, { errors = state and state.errors, message = state and state.message },
    function()
      return common.page("Add a transaction", table.concat {
        state and state.message and ('<p class="err" id="error">%s</p>'):format(esc(state.message)) or "",
        forms.add(server, books, state),
      })
    end)
end

-- }======================================================

-- {======================================================
-- Budgets and import
-- =======================================================

--- The budgets with a month's progress (?month=, default this month).
-- A month the books have no transaction in says so, with a link to the
-- latest month that has some (an old ledger's "this month" is empty).
function M.budgets(server, books, query, state, status)
  local budgets = require "sift.finance.budgets"
  local month = query.month or os.date("!%Y-%m")
  local list, why = budgets.progress(books, month)
  if not list then return common.fail(400, why) end
  local empty, latest = false, nil
  if not books.db:first("SELECT 1 AS x FROM transactions t WHERE t.posted >= ? AND t.posted < ? AND "
      .. store.kept("t") .. " LIMIT 1", month .. "-01", month .. "-32") then
    local row = books.db:first("SELECT substr(max(t.posted), 1, 7) AS m FROM transactions t WHERE " .. store.kept("t"))
    empty, latest = true, row and row.m
  end
  local view = { month = month, budgets = json.array(list), errors = state and state.errors, latest_month = latest,
    empty_month = empty }
  return common.answer(status or 200, view, function()
    local y, m = month:match("^(%d+)-(%d+)$")
    y, m = tonumber(y), tonumber(m)
    local prev = m == 1 and ("%04d-12"):format(y - 1) or ("%04d-%02d"):format(y, m - 1)
    local nxt = m == 12 and ("%04d-01"):format(y + 1) or ("%04d-%02d"):format(y, m + 1)
    return common.page("Budgets for " .. month, table.concat {
      ('<p>%s · %s · %s</p>'):format(html.a("/finance/budgets?month=" .. prev, "← " .. prev),
        html.a("/finance/budgets", "this month"), html.a("/finance/budgets?month=" .. nxt, nxt .. " →")),
      empty and ('<p class="muted" id="empty-month">No transactions in %s; %s.</p>'):format(esc(month), latest
        and ("the latest month with any is " .. html.a("/finance/budgets?month=" .. latest, latest))
        or "none in the books yet") or "",
      state and state.message and ('<p class="err" id="error">%s</p>'):format(esc(state.message)) or "",
      state and state.saved and '<p class="ok" id="saved">Saved.</p>' or "",
      charts.budgets(list, month),
      "<h2>Set a budget</h2>", forms.budget(server, books, state, month),
    })
  end)
end

--- The import form.
function M.import(server)
  return common.answer(200, {}, function()
    return common.page("Import a statement", table.concat {
      "<p>An OFX or QFX file from your bank: imported all or nothing, and importing it again adds nothing "
        .. "(as <code>sift import</code>).</p>",
      forms.import(server),
    })
  end)
end

return M
