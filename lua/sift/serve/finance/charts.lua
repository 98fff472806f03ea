--- The finance app's pictures, drawn by the server as inline SVG (no
-- script, nothing from elsewhere): spending by category per month as
-- stacked bars, one category's months, each account's balance over time,
-- and budgets' progress. Every bar and point carries its exact amount in
-- data- attributes (decimal text as `sift report --json` writes it, and
-- minor units), so what is drawn can be checked against the numbers.
-- @module sift.serve.finance.charts

local store = require "sift.finance.store"
local html = require "sift.serve.html"

local esc = html.escape

local M = {}

local json = require "sift.json"

-- Paul Tol's "muted" scheme: nine colours told apart with any colour vision
local PALETTE = { "#cc6677", "#332288", "#ddcc77", "#117733", "#88ccee", "#882255", "#44aa99", "#999933", "#aa4499" }
local OTHER, UNCATEGORIZED = "#8c8c8c", "#dddddd"
local NAMED = #PALETTE  -- the categories drawn each in its own colour; the rest are "Other"
local WIDTH = 1100      -- the pictures' width (they shrink with a narrower window)

--- The colour of the i-th category (the i-th account's line).
function M.colour(i) return PALETTE[(i - 1) % #PALETTE + 1] end

-- a round top for an axis that reaches max
local function axis_top(max)
  if max <= 0 then return 1 end
  local mag = 10 ^ math.floor(math.log(max, 10))
  for _, f in ipairs { 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 } do
    if f * mag >= max then return f * mag end
  end
  return 10 * mag
end

local function category_href(name)
  if name == "Uncategorized" then return "/finance/category?uncategorized=1" end
  return "/finance/category?name=" .. html.encode(name)
end

-- an svg element of width × height that shrinks to the window
local function svg_open(id, width, height, label, extra)
  return ('<svg xmlns="http://www.w3.org/2000/svg" id="%s" width="%d" height="%d" viewBox="0 0 %d %d" '
    .. 'style="max-width:100%%;height:auto;font-size:12px" role="img" aria-label="%s"%s>'):format(id, width, height,
    width, height, label, extra or "")
end

-- month labels under n slots from x0, slot wide: level when they fit, else slanted and thinned
local function month_labels(out, months, x0, slot, y)
  local slant = slot < 56
  local every = math.max(1, math.ceil(16 / slot))
  for i, m in ipairs(months) do
    if (i - 1) % every == 0 then
      local x = x0 + (i - 0.5) * slot
      if slant then
        out[#out + 1] = ('<text x="%.1f" y="%d" text-anchor="end" transform="rotate(-45 %.1f %d)">%s</text>')
          :format(x + 4, y, x + 4, y, m)
      else
        out[#out + 1] = ('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'):format(x, y, m)
      end
    end
  end
end

--- Spending by category per month, stacked: one bar a month as wide as
-- the width allows (at most 72 px). The nine largest categories over the
-- period each have a colour of their own (largest lowest); the rest
-- make one grey "Other" segment above them (its `data-categories`, a
-- JSON list, names what it holds that month, its amount their exact
-- sum; it links to the list of them under the chart); Uncategorized is
-- its own light grey segment on top. Every segment has a tooltip
-- (category, month, amount) and links to the category's transactions
-- that month; the legend beside the bars is in the stack's order.
-- `r` is a report of `sift.finance.report.build`.
function M.spending(r)
  local cur = r.currency
  local months = r.months
  if #months == 0 then return '<p class="muted" id="spending">No spending to draw.</p>' end
  local function money(u) return store.decimal(u, cur) end
  -- the stack from the bottom: the named categories, Other, Uncategorized
  local named, colour, others, total = {}, {}, {}, {}
  local uncategorized
  for _, c in ipairs(r.categories) do
    total[c.name] = c.total
    if c.name == "Uncategorized" then uncategorized = c
    elseif #named < NAMED then named[#named + 1] = c.name colour[c.name] = PALETTE[#named]
    else others[#others + 1] = c.name end
  end
  local max = 0
  for _, m in ipairs(months) do max = math.max(max, -m.expense) end
  local top = axis_top(max)
  local left, legend_w, height, y0 = 80, 250, 300, 16
  local base = y0 + height
  local plot = WIDTH - left - legend_w - 10
  local slot = plot / #months
  local bar = math.max(2, math.min(72, math.floor(slot * 0.7)))
  local H = base + (slot < 56 and 70 or 30)
  local out = { svg_open("spending", WIDTH, math.max(H, y0 + 20 * (#named + 3)), "spending by category per month",
    (' data-currency="%s"'):format(esc(cur or ""))) }
  for k = 0, 4 do
    local y = base - height * k / 4
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/><text x="%d" y="%.1f" '
      .. 'text-anchor="end">%s</text>'):format(left - 4, left + plot, y, y, k == 0 and "#999" or "#e4e4e4", left - 8,
      y + 4, esc(money(math.floor(top * k / 4 + 0.5))))
  end
  out[#out + 1] = ('<text x="14" y="%.1f" text-anchor="middle" transform="rotate(-90 14 %.1f)" fill="#555">'
    .. 'spent (%s)</text>'):format(y0 + height / 2, y0 + height / 2, esc(cur or "?"))
  local function segment(href, class, x, y, h, fill, attrs, title)
    return ('<a href="%s"><rect class="%s" x="%.1f" y="%.2f" width="%d" height="%.2f" fill="%s" stroke="#fff" '
      .. 'stroke-width="0.5" %s><title>%s</title></rect></a>'):format(esc(href), class, x, y, bar, h, fill, attrs,
      esc(title))
  end
  for i, m in ipairs(months) do
    local x = left + (i - 1) * slot + (slot - bar) / 2
    local y = base
    local function stack(units) local h = height * (-units) / top y = y - h return h end
    for _, name in ipairs(named) do
      local units = m.categories[name]
      if units and units ~= 0 then
        local h = stack(units)
        out[#out + 1] = segment(category_href(name) .. "&month=" .. m.month, "seg", x, y, h, colour[name],
          ('data-month="%s" data-category="%s" data-amount="%s" data-units="%d"'):format(m.month, esc(name),
            money(units), units), ("%s, %s: %s %s"):format(name, m.month, money(units), cur or ""))
      end
    end
    local held, sum, lines = {}, 0, {}
    for _, name in ipairs(others) do
      local units = m.categories[name]
      if units and units ~= 0 then
        held[#held + 1], sum = name, sum + units
        lines[#lines + 1] = ("\n  %s %s"):format(name, money(units))
      end
    end
    if #held > 0 then
      local h = stack(sum)
      out[#out + 1] = segment("#other-categories", "other", x, y, h, OTHER,
        ('data-month="%s" data-amount="%s" data-units="%d" data-categories="%s"'):format(m.month, money(sum), sum,
          esc(json.encode(json.array(held)))),
        ("Other (%d categories), %s: %s %s%s"):format(#held, m.month, money(sum), cur or "", table.concat(lines)))
    end
    local units = m.categories.Uncategorized
    if units and units ~= 0 then
      local h = stack(units)
      out[#out + 1] = segment(category_href("Uncategorized") .. "&month=" .. m.month, "seg", x, y, h, UNCATEGORIZED,
        ('data-month="%s" data-category="Uncategorized" data-amount="%s" data-units="%d"'):format(m.month,
          money(units), units), ("Uncategorized, %s: %s %s"):format(m.month, money(units), cur or ""))
    end
  end
  month_labels(out, (function() local l = {} for i, m in ipairs(months) do l[i] = m.month end return l end)(), left,
    slot, base + 16)
  for i, m in ipairs(months) do
    out[#out + 1] = ('<text class="total" x="%.1f" y="%.1f" text-anchor="middle" font-size="11" fill="#555" '
      .. 'data-expense="%s">%s</text>'):format(left + (i - 0.5) * slot, base - height * (-m.expense) / top - 4,
      money(m.expense), money(-m.expense))
  end
  -- the legend, top to bottom as the stack is
  local items = {}
  if uncategorized then
    items[#items + 1] = { "Uncategorized", UNCATEGORIZED, category_href("Uncategorized"), uncategorized.total }
  end
  if #others > 0 then
    local sum = 0
    for _, n in ipairs(others) do sum = sum + total[n] end
    items[#items + 1] = { ("Other (%d categories)"):format(#others), OTHER, "#other-categories", sum,
      "Other: " .. table.concat(others, ", ") }
  end
  for k = #named, 1, -1 do items[#items + 1] = { named[k], colour[named[k]], category_href(named[k]), total[named[k]] } end
  local lx = left + plot + 24
  out[#out + 1] = '<g id="legend">'
  for k, it in ipairs(items) do
    local ly = y0 + (k - 1) * 20
    out[#out + 1] = ('<a href="%s"><g class="key" data-category="%s"><rect x="%d" y="%d" width="12" height="12" '
      .. 'fill="%s" stroke="#999" stroke-width="0.5"/><text x="%d" y="%d">%s</text><text x="%d" y="%d" '
      .. 'text-anchor="end" fill="#555">%s</text><title>%s</title></g></a>'):format(esc(it[3]), esc(it[1]), lx, ly,
      it[2], lx + 18, ly + 11, esc(it[1]), WIDTH - 4, ly + 11, money(it[4]),
      esc(it[5] or (it[1] .. ": " .. money(it[4]) .. " " .. (cur or ""))))
  end
  out[#out + 1] = "</g></svg>"
  if #others > 0 then
    local list = { ('<p id="other-categories"><b>Other</b> (grey, %d categories over the period): '):format(#others) }
    for k, n in ipairs(others) do
      list[#list + 1] = ('%s%s <span class="n muted">%s</span>'):format(k > 1 and " · " or "",
        html.a(category_href(n), n), esc(money(total[n])))
    end
    list[#list + 1] = "</p>"
    out[#out + 1] = table.concat(list)
  end
  return table.concat(out)
end

--- One category's spending per month (`series`: `{ { month, units } }`,
-- units negative for money out), as bars that link to the month's
-- transactions of it.
function M.category(series, currency, href_of)
  if #series == 0 then return '<p class="muted" id="category-chart">Nothing in this category.</p>' end
  local max = 0
  for _, s in ipairs(series) do max = math.max(max, math.abs(s.units)) end
  local top = axis_top(max)
  local bar, gap, left, height, base = 24, 8, 70, 160, 180
  local width = left + #series * (bar + gap) + 20
  local out = { ('<svg xmlns="http://www.w3.org/2000/svg" id="category-chart" width="%d" height="%d" role="img">')
    :format(width, base + 60) }
  for k = 0, 2 do
    local y = base - height * k / 2
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" '
      .. 'text-anchor="end">%s</text>'):format(left - 4, width - 10, y, y, left - 8, y + 4,
      esc(store.decimal(math.floor(top * k / 2 + 0.5), currency)))
  end
  for i, s in ipairs(series) do
    local x = left + (i - 1) * (bar + gap)
    local h = height * math.abs(s.units) / top
    out[#out + 1] = ('<a href="%s"><rect class="month" x="%d" y="%.2f" width="%d" height="%.2f" fill="%s" '
      .. 'data-month="%s" data-amount="%s" data-units="%d"><title>%s: %s</title></rect></a>'):format(
      esc(href_of(s.month)), x, base - h, bar, h, s.units < 0 and "#e15759" or "#59a14f", s.month,
      store.decimal(s.units, currency), s.units, s.month, store.decimal(s.units, currency))
    out[#out + 1] = ('<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)">%s</text>'):format(
      x + bar // 2 + 4, base + 14, x + bar // 2 + 4, base + 14, s.month)
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

--- Each account's balance at each month's end, as lines: `accounts` is
-- `{ { number, currency, points = { { month, units } } } }`. One line an
-- account in a colour of its own, a legend beside them; the axis is in
-- the first account's currency.
function M.balances(accounts)
  local months, seen = {}, {}
  local lo, hi = 0, 0
  for _, a in ipairs(accounts) do
    for _, p in ipairs(a.points) do
      if not seen[p.month] then seen[p.month] = true months[#months + 1] = p.month end
      lo, hi = math.min(lo, p.units), math.max(hi, p.units)
    end
  end
  if #months == 0 then return '<p class="muted" id="balances">No balances to draw.</p>' end
  table.sort(months)
  local index = {}
  for i, m in ipairs(months) do index[m] = i end
  -- ticks a round step apart, zero among them
  local step = axis_top(math.max(1, (hi - lo) / 5))
  local top, bottom = math.ceil(hi / step) * step, math.floor(lo / step) * step
  if top == bottom then top = bottom + step end
  local ticks = math.floor((top - bottom) / step + 0.5)
  local left, legend_w, height, y0 = 80, 250, 260, 16
  local plot = WIDTH - left - legend_w - 10
  local slot = plot / #months
  local function x(i) return left + (i - 0.5) * slot end
  local function y(units) return y0 + height * (top - units) / (top - bottom) end
  local cur = accounts[1].currency
  local out = { svg_open("balances", WIDTH, math.max(y0 + height + (slot < 56 and 70 or 30), y0 + 20 * #accounts),
    "balance over time per account") }
  for k = 0, ticks do
    local v = bottom + step * k
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/><text x="%d" y="%.1f" '
      .. 'text-anchor="end">%s</text>'):format(left - 4, left + plot, y(v), y(v), v == 0 and "#999" or "#e4e4e4",
      left - 8, y(v) + 4, esc(store.decimal(math.floor(v + 0.5), cur)))
  end
  out[#out + 1] = ('<text x="14" y="%.1f" text-anchor="middle" transform="rotate(-90 14 %.1f)" fill="#555">'
    .. 'balance (%s)</text>'):format(y0 + height / 2, y0 + height / 2, esc(cur or "?"))
  month_labels(out, months, left, slot, y0 + height + 16)
  local lx = left + plot + 24
  for k, a in ipairs(accounts) do
    local pts, dots = {}, {}
    -- the line goes on through the months without a transaction of the
    -- account (its balance stayed), to the chart's last month; a dot
    -- marks each month that has some
    local at = {}
    for _, p in ipairs(a.points) do at[index[p.month]] = p.units end
    local held
    for i = index[a.points[1].month], #months do
      held = at[i] or held
      pts[#pts + 1] = ("%.1f,%.1f"):format(x(i), y(held))
    end
    for _, p in ipairs(a.points) do
      local px, py = x(index[p.month]), y(p.units)
      dots[#dots + 1] = ('<circle class="point" cx="%.1f" cy="%.1f" r="3.5" fill="%s" data-account="%s" data-month="%s" '
        .. 'data-balance="%s" data-units="%d"><title>%s, %s: %s %s</title></circle>'):format(px, py, M.colour(k),
        esc(a.number), p.month, store.decimal(p.units, a.currency), p.units, esc(a.number), p.month,
        store.decimal(p.units, a.currency), esc(a.currency or ""))
    end
    out[#out + 1] = ('<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s" data-account="%s"/>'):format(
      M.colour(k), table.concat(pts, " "), esc(a.number))
    out[#out + 1] = table.concat(dots)
    local last = a.points[#a.points]
    local ly = y0 + (k - 1) * 20
    out[#out + 1] = ('<g class="key" data-account="%s"><line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" '
      .. 'stroke-width="3"/><text x="%d" y="%d">%s (%s)</text><text x="%d" y="%d" text-anchor="end" fill="#555">%s'
      .. '</text></g>'):format(esc(a.number), lx, lx + 14, ly + 7, ly + 7, M.colour(k), lx + 20, ly + 11, esc(a.number),
      esc(a.currency or "?"), WIDTH - 4, ly + 11, store.decimal(last.units, a.currency))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

--- Budgets' progress in a month (`sift.finance.budgets.progress`'s
-- list): a bar each, red past the budget.
function M.budgets(list, month)
  if #list == 0 then return '<p class="muted" id="budgets">No budgets yet.</p>' end
  local row_h, left, len = 26, 180, 400
  local out = { ('<svg xmlns="http://www.w3.org/2000/svg" id="budgets" width="%d" height="%d" role="img" '
    .. 'data-month="%s">'):format(left + len + 260, #list * row_h + 10, month) }
  for i, b in ipairs(list) do
    local y = (i - 1) * row_h + 5
    local filled = math.min(1, b.ratio) * len
    out[#out + 1] = ('<text x="%d" y="%d" text-anchor="end">%s</text>'):format(left - 8, y + 15, esc(b.category))
    out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="16" fill="#eee"/>'):format(left, y, len)
    out[#out + 1] = ('<rect class="progress" x="%d" y="%d" width="%.1f" height="16" fill="%s" data-category="%s" '
      .. 'data-spent="%s" data-budget="%s" data-ratio="%.4f"><title>%s: %s of %s</title></rect>'):format(left, y, filled,
      b.ratio > 1 and "#e15759" or "#59a14f", esc(b.category), b.spent, b.amount, b.ratio, esc(b.category), b.spent,
      b.amount)
    out[#out + 1] = ('<text x="%d" y="%d"%s>%s of %s %s (%.0f%%)</text>'):format(left + len + 8, y + 13,
      b.ratio > 1 and ' class="over" fill="#b00020"' or "", b.spent, b.amount, esc(b.currency), 100 * b.ratio)
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

return M
