--- What the finance app's pages and writes share: the books of a request,
-- form bodies, the CSRF field, rows' version stamps, the navigation, and
-- the answers a handler gives (`sift.serve.finance`).
-- @module sift.serve.finance.common

local core = require "sift.core"
local html = require "sift.serve.html"

local esc = html.escape

local M = {}

--- The largest form body taken (bytes); an upload has the server's limit.
M.MAX_FORM = 64 * 1024

--- Transactions on a page of the list.
M.PER_PAGE = 50

--- The app's pages, as the navigation lists them.
M.NAV = { { "/finance/accounts", "accounts" }, { "/finance/transactions", "transactions" },
  { "/finance/add", "add" }, { "/finance/charts", "charts" }, { "/finance/budgets", "budgets" },
  { "/finance/import", "import" }, { "/finance", "report" } }

--- An answer: status, its JSON view, and its page (a function giving
-- HTML) or a place to go (303).
function M.answer(status, view, render) return { status = status, view = view, render = render } end

function M.redirect(location, view) return { status = 303, location = location, view = view } end

--- An error answer: status and message (the page says it in #error).
function M.fail(status, message)
  return { status = status, view = { error = message, status = status }, render = function()
    return html.page(("Error %d"):format(status), M.NAV, ('<p class="err" id="error">%s</p>'):format(esc(message)))
  end }
end

--- A page of the app: its title and body, with the app's navigation and
-- style.
function M.page(title, body)
  return html.page(title, M.NAV, table.concat {
    "<style>.fe{color:#b00020;margin-left:6px}form.f label{display:inline-block;min-width:7em}",
    "form.f div{margin:4px 0}.ok{color:#1b5e20}.guess{color:#555}svg text{font:11px system-ui,sans-serif}",
    "td form{margin:0}td input[type=text]{width:12em}.over{color:#b00020}</style>",
    body,
  })
end

--- The books of the server's --db, opened for this request (closed when
-- the value goes out of scope), or nil and an answer.
function M.books(server)
  if not server.opts.db then return nil, M.fail(404, "no books: start the server with --db FILE") end
  local books, msg = require("sift.finance").open(server.opts.db)
  if not books then return nil, M.fail(422, msg) end
  return books
end

-- percent-decoding of a form's value (+ is a space)
local function unescape(s)
  return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- The fields of an application/x-www-form-urlencoded text: name →
-- value (the first of a name).
function M.parse_form(text)
  local out = {}
  for pair in (text or ""):gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=?(.*)$")
    k = unescape(k)
    if out[k] == nil then out[k] = unescape(v) end
  end
  return out
end

--- A request's form body, read whole: its fields, or nil, status and why
-- (too long, broken off, not a form).
function M.read_form(request)
  local ctype = (request.headers:get("content-type") or ""):lower()
  if ctype ~= "" and not ctype:find("application/x-www-form-urlencoded", 1, true) then
    return nil, 415, "a form is sent as application/x-www-form-urlencoded"
  end
  local length = request:length()
  if length == false then return nil, 400, "Content-Length is not a length" end
  if length and length > M.MAX_FORM then return nil, 413, ("a form of more than %d bytes"):format(M.MAX_FORM) end
  local parts, got, next_chunk = {}, 0, request:body()
  while true do
    local chunk, failure = next_chunk()
    if not chunk then
      if failure then return nil, failure.status, failure.message end
      break
    end
    got = got + #chunk
    if got > M.MAX_FORM then return nil, 413, ("a form of more than %d bytes"):format(M.MAX_FORM) end
    parts[#parts + 1] = chunk
  end
  return M.parse_form(table.concat(parts))
end

--- The hidden field every form carries: this server's CSRF token (also in
-- its action's query, where `sift.serve.access` checks it before the body
-- is read).
function M.csrf_field(server)
  return ('<input type="hidden" name="csrf" value="%s">'):format(esc(server.csrf))
end

--- A form's action: the path with the CSRF token in its query.
function M.action(server, path)
  return ("%s%scsrf=%s"):format(path, path:find("?", 1, true) and "&" or "?", html.encode(server.csrf))
end

--- The version stamp of a transaction: what a form shows the row as, so
-- that a write from a page older than the row's last change is refused
-- (a hash of every value a person or an import may change).
M.STAMP_COLUMNS = "t.posted, t.amount, t.payee, t.name, t.memo, t.category_id, t.category_source, t.notes, "
  .. "t.status, t.matched_to"

function M.stamp_of(row)
  local parts = {}
  for i, col in ipairs { "posted", "amount", "payee", "name", "memo", "category_id", "category_source", "notes",
    "status", "matched_to" } do
    parts[i] = tostring(row[col] == nil and "\0" or row[col])
  end
  return core.hash(table.concat(parts, "\31"))
end

--- The stamp of transaction id in the books now, or nil when there is none.
function M.stamp(db, id)
  local row = db:first("SELECT " .. M.STAMP_COLUMNS .. " FROM transactions t WHERE t.id = ?", id)
  return row and M.stamp_of(row)
end

--- Where to go back to after a write: a path of the app (never another
-- site: a form's `back` field is only trusted when it is one of ours).
function M.back(value, default)
  if type(value) == "string" and value:match("^/finance[/?]") and not value:find("[%c\\]")
      and not value:find("//", 1, true) then
    return value
  end
  return default
end

--- The field a library message is about ("amount: ..." → amount).
function M.field_of(message, fields)
  local f = tostring(message):match("^(%a+):")
  if f and fields[f] then return f end
  return nil
end

--- A text input with its label and the error beside it: ids f-NAME and
-- err-NAME, or (a second form on the page) PREFIX-NAME and err-PREFIX-NAME.
function M.input(name, label, value, errors, attrs, prefix)
  local err = errors and errors[name]
  local id = (prefix or "f") .. "-" .. name
  return ('<div><label for="%s">%s</label> <input type="text" id="%s" name="%s" value="%s"%s>%s</div>'):format(
    id, esc(label), id, name, esc(value), attrs or "",
    err and ('<span class="fe" id="err-%s">%s</span>'):format(prefix and (prefix .. "-" .. name) or name, esc(err)) or "")
end

--- The statuses a transaction may have, as a select.
function M.status_select(value, errors)
  local opts = {}
  for _, s in ipairs { "uncleared", "cleared", "reconciled" } do
    opts[#opts + 1] = ('<option%s>%s</option>'):format(s == value and " selected" or "", s)
  end
  local err = errors and errors.status
  return ('<div><label for="f-status">status</label> <select id="f-status" name="status">%s</select>%s</div>'):format(
    table.concat(opts), err and ('<span class="fe" id="err-status">%s</span>'):format(esc(err)) or "")
end

--- The category names, for a datalist (id "categories").
function M.categories_list(db)
  local out = { '<datalist id="categories">' }
  for row in db:rows("SELECT name FROM categories ORDER BY name") do
    out[#out + 1] = ('<option value="%s">'):format(esc(row.name))
  end
  out[#out + 1] = "</datalist>"
  return table.concat(out)
end

--- A query string of these fields (those with values), sorted.
function M.query(fields)
  local q = {}
  for k, v in pairs(fields) do
    if v ~= nil and v ~= "" then q[#q + 1] = k .. "=" .. html.encode(v) end
  end
  table.sort(q)
  return #q > 0 and ("?" .. table.concat(q, "&")) or ""
end

return M
