--- The finance app of `sift serve --db BOOKS`: pages under /finance/ to
-- see the accounts and their balances, list, add, edit and categorise
-- transactions, make a rule from one, draw where the money goes, keep
-- budgets and import an OFX/QFX file (docs/finance.md, "The app").
--
-- Reads are GET (each page has a JSON twin: its path with .json, or
-- Accept: application/json). Writes are POST, and reach here only past
-- the server's rules for state-changing requests (same origin, this
-- server's CSRF token: `sift.serve.access`); each is one SQLite
-- transaction, and one from a page older than its row is refused (409).
-- @module sift.serve.finance

local common = require "sift.serve.finance.common"
local pages = require "sift.serve.finance.pages"
local pictures = require "sift.serve.finance.pictures"
local writes = require "sift.serve.finance.writes"

local M = {}

local GET = {
  accounts = function(server, books) return pages.accounts(server, books) end,
  transactions = function(server, books, query) return pages.transactions(server, books, query) end,
  add = function(server, books) return pages.add(server, books) end,
  charts = function(server, books, query) return pictures.charts(server, books, query) end,
  category = function(server, books, query) return pictures.category(server, books, query) end,
  budgets = function(server, books, query) return pages.budgets(server, books, query) end,
  import = function(server) return pages.import(server) end,
}

local ROW_WRITES = { edit = writes.edit, category = writes.categorize, delete = writes.delete, rule = writes.rule }

--- Whether a path is the app's.
function M.owns(path)
  return path:match("^/finance/") ~= nil
end

local function answer(server, request, path, query, books)
  local name = path:match("^/finance/(.*)$")
  if request.method == "GET" or request.method == "HEAD" then
    local page = GET[name]
    if page then return page(server, books, query) end
    local id = name:match("^t/(%d+)$")
    if id then
      return pages.transaction(server, books, math.tointeger(tonumber(id)), query.saved and { saved = true } or nil)
    end
    return common.fail(404, "no such page of the finance app")
  end
  if request.method ~= "POST" then return common.fail(405, "method not allowed") end
  if name == "import" then return writes.import(server, books, request) end
  local form, status, why = common.read_form(request)
  if not form then return common.fail(status, why) end
  if name == "add" then return writes.add(server, books, form) end
  if name == "budgets" then return writes.budget(server, books, form) end
  local id, action = name:match("^t/(%d+)/(%a+)$")
  local write = action and ROW_WRITES[action]
  if write then return write(server, books, math.tointeger(tonumber(id)), form) end
  return common.fail(404, "no such write in the finance app")
end

--- Answer a request of the app: an answer of `sift.serve.finance.common`
-- (`status`, `view` for JSON, `render` for HTML, or `location`).
-- @param server the `sift.serve` server (its opts.db, csrf)
-- @param request the request (`method`, `headers`, `body()`)
-- @string path without its query (".json" taken off by the caller)
-- @tab query its fields
-- @bool as_json whether the answer is JSON (else its page is made: `html`)
function M.handle(server, request, path, query, as_json)
  local books <close>, failure = common.books(server)
  local a = books and answer(server, request, path, query, books) or failure
  -- (the page is made while the books are open)
  if not as_json and a.render then a.html = a.render() end
  return a
end

return M
