--- The finance app's forms, as HTML: add, edit, categorise (on a
-- transaction's page and in place in the list), a rule from a
-- transaction, a budget, an OFX upload. Every form posts to the app with
-- the server's CSRF token (in its action and as a field); a form about a
-- row carries the row's version stamp (`version`), so that a write from a
-- page older than the row is refused. After a refused write the form
-- shows what was sent, each error beside its field.
-- @module sift.serve.finance.forms

local html = require "sift.serve.html"
local common = require "sift.serve.finance.common"

local esc = html.escape

local M = {}

local function open_form(server, path, id, extra)
  return ('<form class="f" method="post" id="%s" action="%s"%s>%s'):format(id, esc(common.action(server, path)),
    extra or "", common.csrf_field(server))
end

-- the value a field shows: what was sent (after a refused write), else the row's
local function value_of(state, name, default)
  if state and state.form and state.form[name] ~= nil then return state.form[name] end
  return default
end

--- The add form.
function M.add(server, books, state)
  local errors = state and state.errors or {}
  local accounts = { '<datalist id="accounts">' }
  for a in books.db:rows("SELECT kind, number FROM accounts ORDER BY id") do
    accounts[#accounts + 1] = ('<option value="%s">'):format(esc(a.number))
  end
  accounts[#accounts + 1] = "</datalist>"
  return table.concat {
    open_form(server, "/finance/add", "add"),
    common.input("date", "date", value_of(state, "date", os.date("!%Y-%m-%d")), errors, ' placeholder="YYYY-MM-DD"'),
    common.input("amount", "amount", value_of(state, "amount", ""), errors,
      ' placeholder="-12.50 (negative: money out)"'),
    common.input("payee", "payee", value_of(state, "payee", ""), errors),
    common.input("account", "account", value_of(state, "account", "Cash"), errors, ' list="accounts"'),
    common.input("currency", "currency", value_of(state, "currency", ""), errors,
      ' placeholder="for a new account: GBP, USD…" style="width:6em"'),
    common.input("category", "category", value_of(state, "category", ""), errors, ' list="categories"'),
    common.input("memo", "memo", value_of(state, "memo", ""), errors),
    common.input("notes", "notes", value_of(state, "notes", ""), errors),
    common.status_select(value_of(state, "status", "uncleared"), errors),
    errors.general and ('<p class="fe" id="err-general">%s</p>'):format(esc(errors.general)) or "",
    '<button type="submit" id="add-submit">add</button></form>',
    table.concat(accounts), common.categories_list(books.db),
  }
end

--- The edit form of a transaction: your own entries' every field; of an
-- imported row, the category, notes and status (the bank's data stays).
function M.edit(server, t, state)
  local errors = state and state.action == "edit" and state.errors or {}
  local s = state and state.action == "edit" and state or nil
  local parts = { open_form(server, ("/finance/t/%d/edit"):format(t.id), "edit"),
    ('<input type="hidden" name="version" value="%s">'):format(esc(s and s.form.version or t.version)) }
  if t.manual then
    parts[#parts + 1] = common.input("date", "date", value_of(s, "date", t.posted), errors)
    parts[#parts + 1] = common.input("amount", "amount", value_of(s, "amount", t.amount), errors)
    parts[#parts + 1] = common.input("payee", "payee", value_of(s, "payee", t.payee), errors)
    parts[#parts + 1] = common.input("memo", "memo", value_of(s, "memo", t.memo or ""), errors)
  else
    parts[#parts + 1] = '<p class="muted">Imported from the bank: its date, amount, payee and memo stay as '
      .. "downloaded; the category, notes and status are yours.</p>"
  end
  parts[#parts + 1] = common.input("category", "category", value_of(s, "category", t.category or ""), errors,
    ' list="categories"')
  parts[#parts + 1] = common.input("notes", "notes", value_of(s, "notes", t.notes or ""), errors)
  parts[#parts + 1] = common.status_select(value_of(s, "status", t.status), errors)
  parts[#parts + 1] = '<button type="submit" id="edit-submit">save</button></form>'
  if t.manual then
    parts[#parts + 1] = open_form(server, ("/finance/t/%d/delete"):format(t.id), "delete")
      .. ('<input type="hidden" name="version" value="%s">'):format(esc(t.version))
      .. '<button type="submit" id="delete-submit">delete this entry</button></form>'
  end
  return table.concat(parts)
end

local function suggestion_text(t)
  if not t.suggestion then return '<span class="muted">no suggestion: nothing you or the rules categorised looks like it yet</span>' end
  return ('<span class="guess">suggested: <b class="suggestion">%s</b> (<span class="confidence" '
    .. 'data-confidence="%.4f">%.0f%%</span> sure)</span>'):format(esc(t.suggestion), t.suggestion_confidence,
    100 * t.suggestion_confidence)
end

--- Categorise on a transaction's page: the learner's suggestion filled
-- in, with its confidence.
function M.categorize(server, t, state)
  local s = state and state.action == "category" and state or nil
  local errors = s and s.errors or {}
  local default = t.category_source == "user" and t.category or t.suggestion or t.category or ""
  return table.concat {
    open_form(server, ("/finance/t/%d/category"):format(t.id), "categorize"),
    ('<input type="hidden" name="version" value="%s">'):format(esc(s and s.form.version or t.version)),
    common.input("category", "category", value_of(s, "category", default), errors, ' list="categories"', "cat"),
    "<div>", suggestion_text(t), "</div>",
    '<button type="submit" id="categorize-submit">set category</button></form>',
  }
end

--- Categorise in place, in a row of the list: an input holding the
-- learner's suggestion, its confidence beside it.
function M.categorize_inline(server, t, back)
  return table.concat {
    ('<form class="inline" method="post" action="%s">'):format(esc(common.action(server,
      ("/finance/t/%d/category"):format(t.id)))),
    common.csrf_field(server),
    ('<input type="hidden" name="version" value="%s">'):format(esc(t.version)),
    ('<input type="hidden" name="back" value="%s">'):format(esc(back)),
    ('<input type="text" name="category" list="categories" value="%s" placeholder="category">'):format(
      esc(t.category or t.suggestion or "")),
    t.suggestion and (' <span class="guess" data-confidence="%.4f">%s %.0f%%</span>'):format(t.suggestion_confidence,
      t.category and t.category_source == "learned" and "guessed" or "suggested", 100 * t.suggestion_confidence) or "",
    ' <button type="submit">set</button></form>',
  }
end

--- A rule from a transaction: its payee as the pattern, the category.
function M.rule(server, t, state)
  local s = state and state.action == "rule" and state or nil
  local errors = s and s.errors or {}
  return table.concat {
    open_form(server, ("/finance/t/%d/rule"):format(t.id), "rule"),
    '<p class="muted">Adds <code>if payee ~ "PATTERN" then CATEGORY</code> to the rules kept in the books and '
      .. "categorises again, as <code>sift categorize</code> does (the rules win over guesses; categories you set "
      .. "stay).</p>",
    common.input("pattern", "payee ~", value_of(s, "pattern", t.payee or t.name or ""), errors, nil, "rule"),
    common.input("category", "category", value_of(s, "category", t.category or t.suggestion or ""), errors,
      ' list="categories"', "rule"),
    '<button type="submit" id="rule-submit">add the rule</button></form>',
  }
end

--- A budget: a category and what may be spent on it in a month. An
-- existing budget's form carries its stamp (when it was set), and can
-- change the amount or remove the budget.
function M.budget(server, books, state, month)
  local errors = state and state.errors or {}
  local rows = {}
  for b in books.db:rows([[SELECT c.name, b.amount_text, b.currency, b.updated FROM budgets b
      JOIN categories c ON c.id = b.category_id ORDER BY c.name]]) do
    rows[#rows + 1] = table.concat {
      open_form(server, "/finance/budgets", "budget-" .. b.name:gsub("[^%w]", "_")),
      ('<input type="hidden" name="category" value="%s">'):format(esc(b.name)),
      ('<input type="hidden" name="version" value="%s">'):format(esc(b.updated)),
      ('<input type="hidden" name="month" value="%s">'):format(esc(month)),
      ('<label>%s</label> <input type="text" name="amount" value="%s" style="width:8em"> %s '):format(esc(b.name),
        esc(b.amount_text), esc(b.currency)),
      '<button type="submit">change</button> ',
      ('<button type="submit" name="action" value="remove" id="budget-remove-%s">remove</button></form>'):format(
        b.name:gsub("[^%w]", "_")),
    }
  end
  return table.concat {
    table.concat(rows),
    "<h3>A new budget</h3>",
    open_form(server, "/finance/budgets", "budget-new"),
    '<input type="hidden" name="version" value="">',
    ('<input type="hidden" name="month" value="%s">'):format(esc(month)),
    common.input("category", "category", value_of(state, "category", ""), errors, ' list="categories"'),
    common.input("amount", "a month", value_of(state, "amount", ""), errors, ' placeholder="400.00"'),
    '<button type="submit" id="budget-submit">set</button></form>',
    common.categories_list(books.db),
  }
end

--- An OFX/QFX upload.
function M.import(server)
  return table.concat {
    ('<form class="f" method="post" id="import" enctype="multipart/form-data" action="%s">'):format(
      esc(common.action(server, "/finance/import"))),
    common.csrf_field(server),
    '<input type="file" name="file" id="import-file" accept=".ofx,.qfx,.OFX,.QFX"> ',
    '<button type="submit" id="import-submit">import</button></form>',
  }
end

return M
