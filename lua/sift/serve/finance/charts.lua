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

local PALETTE = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#86bcb6", "#d37295", "#8cd17d", "#b6992d", "#499894", "#fabfd2", "#79706e" }

--- The colour of the i-th category.
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

--- Spending by category per month, stacked: one bar a month, a segment
-- a category (largest categories lowest, as the report orders them),
-- each a link to the category's page. `r` is a report of
-- `sift.finance.report.build`.
function M.spending(r)
  local cur = r.currency
  local months = r.months
  if #months == 0 then return '<p class="muted" id="spending">No spending to draw.</p>' end
  local order, colour = {}, {}
  for i, c in ipairs(r.categories) do order[i] = c.name colour[c.name] = M.colour(i) end
  local max = 0
  for _, m in ipairs(months) do max = math.max(max, -m.expense) end
  local top = axis_top(max)
  local bar, gap, left, height, base = 28, 10, 70, 260, 280
  local width = left + #months * (bar + gap) + 20
  local out = { ('<svg xmlns="http://www.w3.org/2000/svg" id="spending" width="%d" height="%d" role="img" '
    .. 'aria-label="spending by category per month" data-currency="%s">'):format(width, base + 60, esc(cur or "")) }
  for k = 0, 4 do
    local v = top * k / 4
    local y = base - height * k / 4
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" '
      .. 'text-anchor="end">%s</text>'):format(left - 4, width - 10, y, y, left - 8, y + 4,
      esc(store.decimal(math.floor(v + 0.5), cur)))
  end
  for i, m in ipairs(months) do
    local x = left + (i - 1) * (bar + gap)
    local y = base
    for _, name in ipairs(order) do
      local units = m.categories[name]
      if units and units ~= 0 then
        local h = height * (-units) / top
        y = y - h
        local amount = store.decimal(units, cur)
        out[#out + 1] = ('<a href="%s"><rect class="seg" x="%d" y="%.2f" width="%d" height="%.2f" fill="%s" '
          .. 'data-month="%s" data-category="%s" data-amount="%s" data-units="%d"><title>%s %s: %s %s</title></rect></a>')
          :format(esc(category_href(name) .. "&month=" .. m.month), x, y, bar, h, colour[name], m.month, esc(name),
            amount, units, m.month, esc(name), amount, esc(cur or ""))
      end
    end
    out[#out + 1] = ('<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)" data-expense="%s">%s</text>')
      :format(x + bar // 2 + 4, base + 14, x + bar // 2 + 4, base + 14, store.decimal(m.expense, cur), m.month)
  end
  out[#out + 1] = "</svg>"
  local legend = { '<ul id="legend" style="columns:3;list-style:none;padding:0">' }
  for i, c in ipairs(r.categories) do
    legend[#legend + 1] = ('<li><span style="display:inline-block;width:10px;height:10px;background:%s"></span> %s '
      .. '<span class="n muted">%s</span></li>'):format(M.colour(i), html.a(category_href(c.name), c.name),
      esc(store.decimal(c.total, cur)))
  end
  legend[#legend + 1] = "</ul>"
  return table.concat(out) .. table.concat(legend)
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
-- `{ { number, currency, points = { { month, units } } } }`.
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
  local top, bottom = axis_top(hi), -axis_top(-lo)
  if lo >= 0 then bottom = 0 end
  local left, step, height, y0 = 80, math.max(12, math.min(40, 900 // #months)), 220, 20
  local width = left + (#months - 1) * step + 40
  local function y(units) return y0 + height * (top - units) / (top - bottom) end
  local out = { ('<svg xmlns="http://www.w3.org/2000/svg" id="balances" width="%d" height="%d" role="img" '
    .. 'aria-label="balance over time per account">'):format(width, y0 + height + 60) }
  for k = 0, 4 do
    local v = bottom + (top - bottom) * k / 4
    out[#out + 1] = ('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/><text x="%d" y="%.1f" '
      .. 'text-anchor="end">%s</text>'):format(left - 4, width - 10, y(v), y(v), v == 0 and "#999" or "#eee",
      left - 8, y(v) + 4, esc(store.decimal(math.floor(v + 0.5), accounts[1].currency)))
  end
  for i, m in ipairs(months) do
    if #months <= 24 or i % math.ceil(#months / 24) == 1 then
      local x = left + (i - 1) * step
      out[#out + 1] = ('<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)">%s</text>'):format(
        x + 4, y0 + height + 14, x + 4, y0 + height + 14, m)
    end
  end
  for k, a in ipairs(accounts) do
    local pts, dots = {}, {}
    for _, p in ipairs(a.points) do
      local x, yy = left + (index[p.month] - 1) * step, y(p.units)
      pts[#pts + 1] = ("%d,%.1f"):format(x, yy)
      dots[#dots + 1] = ('<circle class="point" cx="%d" cy="%.1f" r="3" fill="%s" data-account="%s" data-month="%s" '
        .. 'data-balance="%s" data-units="%d"><title>%s %s: %s</title></circle>'):format(x, yy, M.colour(k),
        esc(a.number), p.month, store.decimal(p.units, a.currency), p.units, esc(a.number), p.month,
        store.decimal(p.units, a.currency))
    end
    out[#out + 1] = ('<polyline fill="none" stroke="%s" stroke-width="2" points="%s" data-account="%s"/>'):format(
      M.colour(k), table.concat(pts, " "), esc(a.number))
    out[#out + 1] = table.concat(dots)
    out[#out + 1] = ('<text x="%d" y="%d" fill="%s">%s (%s)</text>'):format(left + 10 + (k - 1) * 200,
      y0 + height + 50, M.colour(k), esc(a.number), esc(a.currency or "?"))
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
