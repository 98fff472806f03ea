--- Reports of the books: income and expenses by month and category, top
-- payees, and balance over time; as data, a terminal table, and an SVG
-- chart (expense bars stacked by category beside income bars, and the
-- balance as a line below) that opens in any browser.
--
-- Transfers (category "Transfer") and confirmed duplicates are left out
-- of income and expenses; balances count everything but the duplicates.
-- @module sift.finance.report

local store = require "sift.finance.store"

local M = {}

-- (the queries scan transactions alone, with no joins and no index (the
-- unary +): a million rows in well under a second each)
local KEPT = [[+account_id IN (SELECT id FROM accounts WHERE currency IS ?) AND ]] .. store.kept("transactions")

--- Build a report. opts: `from`, `to` (dates), `top` (payees, 10),
-- `currency` (default: the most used one).
-- @return `{ currency, months = { { month, income, expense, net,
--   categories = { [name] = units } } }, categories = { { name, total } },
--   payees = { { payee, total, count } }, balance = { { month, units } },
--   accounts = { { number, kind, institution, units, known } }, balance_known }` with amounts as integer minor units
function M.build(books, opts)
  opts = opts or {}
  local db = books.db
  local currency = opts.currency
  if not currency then
    local row = db:first([[SELECT a.currency FROM accounts a
      ORDER BY (SELECT count(*) FROM transactions t WHERE t.account_id = a.id) DESC LIMIT 1]])
    currency = row and row.currency
  end
  local period, args = "", {}
  if opts.from then period, args[#args + 1] = period .. " AND posted >= ?", opts.from end
  if opts.to then period, args[#args + 1] = period .. " AND posted <= ?", opts.to end
  local function params(...)  -- currency, the period's dates, then ...
    local p = table.pack(currency, table.unpack(args))  -- currency may be nil (no account yet)
    for _, v in ipairs { ... } do p.n = p.n + 1 p[p.n] = v end
    return table.unpack(p, 1, p.n)
  end
  local report = { currency = currency, months = {}, categories = {}, payees = {}, balance = {}, from = opts.from,
    to = opts.to }
  local names, transfer = { [0] = "Uncategorized" }, nil
  for row in db:rows("SELECT id, name FROM categories") do
    names[row.id] = row.name
    if row.name == "Transfer" then transfer = row.id end
  end
  -- one pass: by month and category, income, expenses and everything
  -- (transfers count for the balance, not as income or expenses)
  local by_month, totals, flows = {}, {}, {}
  -- (grouped by one integer, YYYYMM * 10^6 + category: sorted fastest)
  for row in db:rows([[SELECT (substr(posted, 1, 4) * 100 + substr(posted, 6, 2)) * 1000000
          + coalesce(category_id, 0) AS k,
        sum(CASE WHEN amount > 0 THEN amount ELSE 0 END) AS income,
        sum(CASE WHEN amount < 0 THEN amount ELSE 0 END) AS expense
      FROM transactions WHERE ]] .. KEPT .. period .. [[ GROUP BY 1 ORDER BY 1]], params()) do
    local ym = row.k // 1000000
    row.month, row.category = ("%04d-%02d"):format(ym // 100, ym % 100), row.k % 1000000
    local m = by_month[row.month]
    if not m then
      m = { month = row.month, income = 0, expense = 0, categories = {} }
      by_month[row.month] = m
      report.months[#report.months + 1] = m
      flows[row.month] = 0
    end
    flows[row.month] = flows[row.month] + row.income + row.expense
    if row.category ~= transfer then
      local name = names[row.category]
      m.income = m.income + row.income
      m.expense = m.expense + row.expense
      if row.expense ~= 0 then
        m.categories[name] = (m.categories[name] or 0) + row.expense
        totals[name] = (totals[name] or 0) + row.expense
      end
    end
  end
  for _, m in ipairs(report.months) do m.net = m.income + m.expense end
  for name, total in pairs(totals) do report.categories[#report.categories + 1] = { name = name, total = total } end
  table.sort(report.categories, function(a, b)
    if a.total ~= b.total then return a.total < b.total end
    return a.name < b.name
  end)
  for row in db:rows([[SELECT coalesce(payee, name, memo, '?') AS payee, sum(amount) AS total, count(*) AS count
      FROM transactions WHERE ]] .. KEPT .. period .. [[ AND +amount < 0 AND coalesce(category_id, 0) != ?
      GROUP BY 1 ORDER BY 2, 1 LIMIT ?]], params(transfer or -1, opts.top or 10)) do
    report.payees[#report.payees + 1] = row
  end
  -- the balance at each month's end: the accounts' openings (from the
  -- statements' balances, when known: store.check_balances, the one
  -- definition the journals use too) plus everything up to then
  local _, openings = store.check_balances(db)
  local running = 0
  report.accounts = {}  -- each account's balance at the end (`to`)
  for row in db:rows([[SELECT a.id, a.number, a.kind, i.org AS institution,
        (SELECT coalesce(sum(t.amount), 0) FROM transactions t WHERE t.account_id = a.id AND ]] .. store.kept("t")
        .. (opts.to and " AND t.posted <= ?" or "") .. [[) AS sum
      FROM accounts a JOIN institutions i ON i.id = a.institution_id WHERE a.currency IS ? ORDER BY a.id]],
      table.unpack(opts.to and { opts.to, currency, n = 2 } or { currency, n = 1 }, 1, opts.to and 2 or 1)) do
    running = running + (openings[row.id] or 0)
    report.accounts[#report.accounts + 1] = { number = row.number, kind = row.kind, institution = row.institution,
      units = (openings[row.id] or 0) + row.sum, known = openings[row.id] ~= nil }
  end
  report.balance_known = false
  for _, a in ipairs(report.accounts) do report.balance_known = report.balance_known or a.known end
  if opts.from then
    running = running + db:first("SELECT coalesce(sum(amount), 0) AS s FROM transactions WHERE " .. KEPT
      .. " AND posted < ?", currency, opts.from).s
  end
  for _, m in ipairs(report.months) do
    running = running + flows[m.month]
    report.balance[#report.balance + 1] = { month = m.month, units = running }
  end
  return report
end

-- {======================================================
-- Text
-- =======================================================

--- The report as a table for a terminal.
function M.text(report)
  local cur = report.currency
  local function money(u) return store.decimal(u, cur) end
  local out = {}
  local function line(...) out[#out + 1] = string.format(...) end
  line("Income and expenses by month (%s)%s", cur or "no currency",
    report.balance_known and "" or "  (balance relative: no statement balance)")
  line("%-8s %14s %14s %14s %14s", "month", "income", "expenses", "net", "balance")
  local balance = {}
  for _, b in ipairs(report.balance) do balance[b.month] = b.units end
  local inc, exp = 0, 0
  for _, m in ipairs(report.months) do
    line("%-8s %14s %14s %14s %14s", m.month, money(m.income), money(m.expense), money(m.net),
      balance[m.month] and money(balance[m.month]) or "")
    inc, exp = inc + m.income, exp + m.expense
  end
  line("%-8s %14s %14s %14s", "total", money(inc), money(exp), money(inc + exp))
  line("")
  line("Balances%s", report.to and (" on " .. report.to) or "")
  for _, a in ipairs(report.accounts) do
    line("  %-10s %-24s %14s%s", a.kind, a.number, money(a.units), a.known and "" or "  (relative)")
  end
  line("")
  line("Expenses by category")
  for _, c in ipairs(report.categories) do
    line("  %-28s %14s %6.1f%%", c.name, money(c.total), exp ~= 0 and 100 * c.total / exp or 0)
  end
  line("")
  line("Top payees")
  for _, p in ipairs(report.payees) do
    line("  %-36s %14s  (%d)", p.payee:sub(1, 36), money(p.total), p.count)
  end
  return table.concat(out, "\n") .. "\n"
end

--- The report as JSON-ready data (amounts as decimal text).
function M.view(report)
  local cur = report.currency
  local function money(u) return store.decimal(u, cur) end
  local array = require("sift.json").array
  local v = { currency = cur, balance_known = report.balance_known, months = array {}, categories = array {},
    payees = array {}, balance = array {} }
  for i, m in ipairs(report.months) do
    local cats = {}
    for name, u in pairs(m.categories) do cats[name] = money(u) end
    v.months[i] = { month = m.month, income = money(m.income), expense = money(m.expense), net = money(m.net),
      categories = cats }
  end
  for i, c in ipairs(report.categories) do v.categories[i] = { name = c.name, total = money(c.total) } end
  for i, p in ipairs(report.payees) do v.payees[i] = { payee = p.payee, total = money(p.total), count = p.count } end
  for i, b in ipairs(report.balance) do v.balance[i] = { month = b.month, balance = money(b.units) } end
  v.accounts = array {}
  for i, a in ipairs(report.accounts) do
    v.accounts[i] = { number = a.number, kind = a.kind, institution = a.institution, balance = money(a.units),
      known = a.known }
  end
  return v
end

-- }======================================================

-- {======================================================
-- SVG
-- =======================================================

local PALETTE = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f" }
local OTHER = "#bab0ac"

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- a round step for an axis of this range
local function step_for(range)
  local raw = range / 5
  local mag = 10 ^ math.floor(math.log(raw, 10))
  for _, f in ipairs { 1, 2, 2.5, 5, 10 } do
    if f * mag >= raw then return f * mag end
  end
  return 10 * mag
end

--- The report as an SVG document (text).
function M.svg(report, opts)
  opts = opts or {}
  local cur = report.currency
  local function money(u) return store.decimal(u, cur) .. (cur and " " .. cur or "") end
  local months = report.months
  -- months sit at their place in the calendar: a gap of a year is a
  -- year's width, not one slot
  local function serial(month)
    local y, m = month:match("^(%d+)-(%d+)$")
    return tonumber(y) * 12 + tonumber(m)
  end
  local first = months[1] and serial(months[1].month) or 0
  local function place(month) return serial(month) - first + 1 end
  local n = math.max(months[1] and place(months[#months].month) or 1, 1)
  local W = math.max(720, 60 + n * 28 + 200)
  local left, right, top = 80, 200, 40
  local bars_h, line_h, gap = 300, 160, 90
  local H = top + bars_h + gap + line_h + 50
  local plot_w = W - left - right
  local out = {}
  local function add(...) out[#out + 1] = string.format(...) end
  add('<?xml version="1.0" encoding="UTF-8"?>')
  add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
    .. 'font-family="Verdana, sans-serif" font-size="11">', W, H, W, H)
  add('<rect width="100%%" height="100%%" fill="#ffffff"/>')
  add('<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>', left,
    esc(opts.title or ("Income, expenses and balance" .. (cur and " (" .. cur .. ")" or ""))))
  -- the categories that get a colour: the largest eight, the rest "Other"
  local colour, legend = {}, {}
  -- (every category its own colour when they are no more than the
  -- palette; else the largest but one, and "Other" for the rest)
  local coloured = #report.categories <= #PALETTE and #PALETTE or #PALETTE - 1
  for i, c in ipairs(report.categories) do
    if i <= coloured then colour[c.name] = PALETTE[i] legend[#legend + 1] = { c.name, PALETTE[i] } end
  end
  if #report.categories > coloured then legend[#legend + 1] = { "Other", OTHER } end
  table.insert(legend, 1, { "Income", "#2e8b57" })
  -- the bar chart: income up, expenses down, around zero
  local hi, lo = 0, 0
  for _, m in ipairs(months) do
    hi = math.max(hi, m.income)
    lo = math.min(lo, m.expense)
  end
  if hi == lo then hi = 1 end
  local step = step_for(hi - lo)
  hi = math.ceil(hi / step) * step
  lo = math.floor(lo / step) * step
  local function y(v) return top + (hi - v) / (hi - lo) * bars_h end
  for v = lo, hi, step do
    add('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>', left, left + plot_w, y(v), y(v),
      v == 0 and "#555" or "#e6e6e6")
    add('<text x="%d" y="%.1f" text-anchor="end">%s</text>', left - 6, y(v) + 4, esc(store.decimal(v // 1, cur)))
  end
  local slot = plot_w / n
  local bw = math.max(2, math.min(24, slot * 0.4))
  for i, m in ipairs(months) do
    local x = left + (place(m.month) - 1) * slot + slot / 2
    add('<g class="month"><title>%s: income %s, expenses %s, net %s</title>', esc(m.month), esc(money(m.income)),
      esc(money(m.expense)), esc(money(m.net)))
    add('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2e8b57"/>', x - bw, y(m.income), bw,
      y(0) - y(m.income))
    -- expenses stacked down from zero, largest categories first
    local at = 0
    local parts = {}
    for name, u in pairs(m.categories) do parts[#parts + 1] = { name, u } end
    table.sort(parts, function(a, b) if a[2] ~= b[2] then return a[2] < b[2] end return a[1] < b[1] end)
    for _, p in ipairs(parts) do
      add('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>', x,
        y(at), bw, y(at + p[2]) - y(at), colour[p[1]] or OTHER, esc(m.month), esc(p[1]), esc(money(p[2])))
      at = at + p[2]
    end
    add('</g>')
    if #months <= 24 or i % math.ceil(#months / 24) == 1 then
      add('<text x="%.1f" y="%.1f" text-anchor="end" transform="rotate(-45 %.1f %.1f)">%s</text>', x + 4,
        top + bars_h + 14, x + 4, top + bars_h + 14, esc(m.month))
    end
  end
  -- the legend
  for i, l in ipairs(legend) do
    local ly = top + (i - 1) * 18
    add('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>', W - right + 20, ly, l[2])
    add('<text x="%d" y="%d">%s</text>', W - right + 38, ly + 10, esc(l[1]))
  end
  -- the balance line
  local btop = top + bars_h + gap
  local bal = report.balance
  if #bal > 0 then
    local bhi, blo = -math.huge, math.huge
    for _, b in ipairs(bal) do bhi, blo = math.max(bhi, b.units), math.min(blo, b.units) end
    if bhi == blo then bhi, blo = bhi + 100, blo - 100 end
    local bstep = step_for(bhi - blo)
    bhi, blo = math.ceil(bhi / bstep) * bstep, math.floor(blo / bstep) * bstep
    local function by(v) return btop + (bhi - v) / (bhi - blo) * line_h end
    add('<text x="%d" y="%d" font-weight="bold">Balance at month end%s</text>', left, btop - 10,
      report.balance_known and "" or " (relative: no statement balance)")
    for v = blo, bhi, bstep do
      add('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>', left, left + plot_w, by(v), by(v),
        v == 0 and "#555" or "#e6e6e6")
      add('<text x="%d" y="%.1f" text-anchor="end">%s</text>', left - 6, by(v) + 4, esc(store.decimal(v // 1, cur)))
    end
    local pts = {}
    for _, b in ipairs(bal) do
      local x = left + (place(b.month) - 1) * slot + slot / 2
      pts[#pts + 1] = ("%.1f,%.1f"):format(x, by(b.units))
      add('<circle cx="%.1f" cy="%.1f" r="3" fill="#1f4e79"><title>%s: %s</title></circle>', x, by(b.units),
        esc(b.month), esc(money(b.units)))
    end
    add('<polyline points="%s" fill="none" stroke="#1f4e79" stroke-width="2"/>', table.concat(pts, " "))
  end
  add('</svg>')
  return table.concat(out, "\n") .. "\n"
end

-- }======================================================

return M
