--- The finance app's writes: add, edit, delete, categorise, a rule from a
-- transaction, a budget, an OFX/QFX upload. The server has checked the
-- request already (POST, same origin, this server's CSRF token:
-- `sift.serve.access`); here each write is one SQLite transaction, made
-- through the library the CLI uses (`sift.finance.entries`, the books'
-- rules and import), and a write whose form shows a row older than the
-- row is now (its `version` stamp differs) is refused with 409 and
-- changes nothing.
-- @module sift.serve.finance.writes

local store = require "sift.finance.store"
local entries = require "sift.finance.entries"
local budgets = require "sift.finance.budgets"
local rules_mod = require "sift.finance.rules"
local multipart = require "sift.serve.multipart"
local common = require "sift.serve.finance.common"
local pages = require "sift.serve.finance.pages"

local M = {}

local STALE = "this transaction changed since the page was opened (in another tab, by an import or by the "
  .. "command line): nothing was saved; open it again to see it as it is now"

local ADD_FIELDS = { date = true, amount = true, payee = true, account = true, currency = true, category = true,
  memo = true, notes = true, status = true }

-- the text of an optional field: nil when blank
local function given(v)
  if v == nil or v:match("^%s*$") then return nil end
  return v
end

--- POST /finance/add: a new entry (`sift add`'s checks); 303 to it, or the
-- form again with each error beside its field (422).
function M.add(server, books, form)
  local entry = { date = form.date, amount = form.amount, payee = form.payee or "", account = given(form.account),
    currency = given(form.currency), category = given(form.category), memo = given(form.memo),
    notes = given(form.notes), status = given(form.status) }
  local id, why = entries.add(books, entry)
  if not id then
    local field = common.field_of(why, ADD_FIELDS) or "general"
    return pages.add(server, books, { form = form, errors = { [field] = why }, message = why }, 422)
  end
  return common.redirect("/finance/t/" .. id .. "?saved=1", { id = id })
end

-- run fn in one SQLite transaction: its answer; fn refuses by raising
-- { answer = ANSWER }, which rolls the transaction back and is answered
local function atomically(books, fn)
  local ok, answer = pcall(store.atomic, books.db, fn)
  if ok then return answer end
  if type(answer) == "table" and answer.answer then return answer.answer end
  error(answer, 0)
end

-- the same after checking the transaction's stamp: fn's answer, or 404 /
-- 409 (nothing written)
local function with_row(books, id, version, fn)
  return atomically(books, function()
    local now = common.stamp(books.db, id)
    if not now then return common.fail(404, ("no transaction %d"):format(id)) end
    if version ~= now then return common.fail(409, STALE) end
    return fn()
  end)
end

local EDIT_FIELDS = { date = true, amount = true, payee = true, memo = true, category = true, notes = true,
  status = true }

-- an edit through sift.finance.entries (as `sift edit`); a refusal raises
-- { answer } so that the transaction is rolled back
local function edit(server, books, id, form, changes, action, back)
  return with_row(books, id, form.version, function()
    local done, why = entries.edit(books, id, changes)
    if not done then
      local field = common.field_of(why, EDIT_FIELDS) or "general"
      error({ answer = pages.transaction(server, books, id, { action = action, form = form,
        errors = { [field] = why }, message = why }, 422) }, 0)
    end
    return common.redirect(back or ("/finance/t/%d?saved=1"):format(id), { id = id, changes = done })
  end)
end

--- POST /finance/t/ID/edit: your own entry's every field; of an imported
-- row the category, notes and status.
function M.edit(server, books, id, form)
  local t = pages.transaction_row(books, id)
  if not t then return common.fail(404, ("no transaction %d"):format(id)) end
  -- (a field the form does not send is left as it is; one sent blank is cleared)
  local changes = { notes = form.notes, status = form.status }
  if form.category ~= nil then changes.category = given(form.category) or false end
  if t.manual then
    changes.date, changes.amount, changes.payee, changes.memo = form.date, form.amount, form.payee, form.memo
  end
  if changes.category == false and not t.category then changes.category = nil end
  if next(changes) == nil then
    return pages.transaction(server, books, id, { action = "edit", form = form, errors = {},
      message = "nothing to change: the form sent none of the fields" }, 422)
  end
  return edit(server, books, id, form, changes, "edit")
end

--- POST /finance/t/ID/category: set the category (blank: uncategorised).
function M.categorize(server, books, id, form)
  local changes = { category = given(form.category) or false }
  return edit(server, books, id, form, changes, "category", common.back(form.back, nil))
end

--- POST /finance/t/ID/delete: one of your own entries.
function M.delete(_, books, id, form)
  return with_row(books, id, form.version, function()
    local done, why = entries.delete(books, id)
    if not done then error({ answer = common.fail(422, why) }, 0) end
    return common.redirect("/finance/transactions", { deleted = id })
  end)
end

--- POST /finance/t/ID/rule: `if payee ~ "PATTERN" then CATEGORY` added to
-- the books' rules, and the books categorised again (`sift categorize`).
function M.rule(server, books, id, form)
  local pattern, category = given(form.pattern), given(form.category)
  local errors = {}
  if not pattern then errors.pattern = "pattern: the text the payee holds"
  elseif pattern:find('["%c]') then errors.pattern = 'pattern: no " or control characters' end
  if not category then errors.category = "category: a category"
  else
    local problem = rules_mod.category_problem(category)
    if problem then errors.category = "category: " .. problem end
  end
  if next(errors) then
    return pages.transaction(server, books, id, { action = "rule", form = form, errors = errors,
      message = errors.pattern or errors.category }, 422)
  end
  if not pages.transaction_row(books, id) then return common.fail(404, ("no transaction %d"):format(id)) end
  local line = ('if payee ~ "%s" then %s'):format(pattern, category:find("[%s]") and ('"' .. category .. '"') or category)
  local last = books.db:first("SELECT source, path FROM rules ORDER BY id DESC LIMIT 1")
  local text = (last and last.source:gsub("\n*$", "\n") or "") .. line .. "\n"
  local set, why = rules_mod.compile(text, "rules")
  if not set then
    return pages.transaction(server, books, id, { action = "rule", form = form, errors = { pattern = why },
      message = why }, 422)
  end
  local counts = store.atomic(books.db, function()
    assert(books:rules(text, last and last.path or "sift serve"))
    return assert(books:categorize {})
  end)
  return common.redirect(("/finance/t/%d?saved=1"):format(id), { rule = line, counts = counts })
end

--- POST /finance/budgets: set a category's budget, or remove it
-- (`action=remove`); a budget's form that shows an older setting than the
-- budget has now is refused (409).
function M.budget(server, books, form)
  local month = form.month and form.month:match("^%d%d%d%d%-%d%d$") and form.month or os.date("!%Y-%m")
  local category = given(form.category)
  local function refused(errors, status)
    return pages.budgets(server, books, { month = month }, { form = form, errors = errors,
      message = errors.category or errors.amount or errors.general }, status or 422)
  end
  if not category then return refused { category = "category: a category" } end
  return atomically(books, function()
    local now = budgets.get(books, category)
    if (now and now.updated or "") ~= (form.version or "") then
      error({ answer = refused({ general = now and ("the budget of %s changed since the page was opened (it is now "
        .. "%s): nothing was saved"):format(category, now.amount)
        or ("the budget of %s was removed since the page was opened: nothing was saved"):format(category) }, 409) }, 0)
    end
    if form.action == "remove" then
      if not now then error({ answer = refused({ category = ("category: no budget for %s"):format(category) }) }, 0) end
      assert(budgets.remove(books, category))
      return common.redirect("/finance/budgets?month=" .. month, { removed = category })
    end
    local b, why = budgets.set(books, category, form.amount)
    if not b then
      error({ answer = refused { [common.field_of(why, { category = true, amount = true, currency = true })
        or "general"] = why } }, 0)
    end
    return common.redirect("/finance/budgets?month=" .. month, { budget = b })
  end)
end

--- POST /finance/import: an OFX/QFX file (a form's file part, or the
-- body itself), imported as `sift import` imports it: all or nothing,
-- and again adds nothing.
function M.import(server, books, request)
  local headers = request.headers
  local max = server.opts.max_upload or 2 * 1024 ^ 3
  local length = request:length()
  if length == false then return common.fail(400, "Content-Length is not a length") end
  if length and length > max then return common.fail(413, "the statement is larger than --max-upload") end
  local next_chunk, name = request:body(), nil
  local ctype = headers:get("content-type") or ""
  if ctype:find("multipart/", 1, true) then
    local boundary = multipart.boundary(ctype)
    if not boundary then return common.fail(400, "a multipart body without its boundary") end
    local filename_or_why, failure
    next_chunk, filename_or_why, failure = multipart.file(next_chunk, boundary)
    if not next_chunk then
      return common.fail(failure and failure.status or 400, "the form holds no file: " .. filename_or_why)
    end
    name = filename_or_why
  end
  local parts, got = {}, 0
  while true do
    local chunk, failure = next_chunk()
    if not chunk then
      if failure then return common.fail(failure.status or 400, failure.message or "the body broke off") end
      break
    end
    got = got + #chunk
    if got > max then return common.fail(413, "the statement is larger than --max-upload") end
    parts[#parts + 1] = chunk
  end
  local text = table.concat(parts)
  if text == "" then return common.fail(422, "the upload is empty: choose an OFX or QFX file") end
  local counts, why = books:import { text = text }
  if not counts then return common.fail(422, (name and (name .. ": ") or "") .. why .. " (nothing was imported)") end
  counts.name = name
  local html = require "sift.serve.html"
  return common.answer(200, counts, function()
    local warnings = {}
    for i, w in ipairs(counts.warnings) do warnings[i] = "<li>" .. html.escape(w) .. "</li>" end
    return common.page("Imported " .. (name or "a statement"), table.concat {
      ('<p id="counts" data-new="%d" data-duplicate="%d">%d new, %d duplicate, %d changed%s (%d statement%s, %d '
        .. 'balance%s)</p>'):format(counts.new, counts.duplicate, counts.new, counts.duplicate, counts.changed,
        counts.matched > 0 and (", %d matched to your own entries"):format(counts.matched) or "",
        counts.statements, counts.statements == 1 and "" or "s", counts.balances, counts.balances == 1 and "" or "s"),
      counts.seen_before and ("<p>This file was imported before (%s UTC)%s.</p>"):format(html.escape(counts.seen_before),
        counts.new == 0 and counts.changed == 0 and ": nothing to add" or "") or "",
      #warnings > 0 and ("<ul>" .. table.concat(warnings) .. "</ul>") or "",
      '<p><a href="/finance/transactions">the transactions</a> · <a href="/finance/accounts">the accounts</a></p>',
    })
  end)
end

return M
