-- The finance app of `sift serve --db` on a generated ledger: a checking
-- account and a credit card over four months (sift.finance.sample, the
-- card repaid by transfers), the first three categorised, a few of your
-- own cash entries added through the library, rules, the last month's
-- categories guessed by the learner, and budgets;
-- then the server, whose URL it prints. Open it in a browser: accounts,
-- transactions, add, charts, budgets, import.
--
-- With --check it also posts to the app as a browser on it would (its
-- form token, its Origin): an entry added through the add form, then the
-- same form from another origin, refused; and stops.
--
-- Usage: sift run examples/finance_app.lua [BOOKS.db] [--port N] [--for SECONDS] [--check]
--   BOOKS.db: where the ledger goes (default: a new temporary file; an
--   existing file is served as it is, nothing added)
require("sift.paths").older_lua()
local finance = require "sift.finance"
local sample = require "sift.finance.sample"
local budgets = require "sift.finance.budgets"
local serve = require "sift.serve"

local path, port, seconds, check
local i = 1
while arg[i] do
  if arg[i] == "--port" then port, i = tonumber(arg[i + 1]), i + 1
  elseif arg[i] == "--for" then seconds, i = tonumber(arg[i + 1]), i + 1
  elseif arg[i] == "--check" then check = true
  else path = arg[i] end
  i = i + 1
end
local temporary = not path
if not path then
  path = os.tmpname()
  os.remove(path)
  path = path .. ".db"
end

local existed = io.open(path, "rb")
if existed then existed:close() end
if not existed then
  local books <close> = assert(finance.open(path))
  local doc, labels = sample.statements { transactions = 400, seed = 7 }
  local counts = assert(books:import(doc))
  print(("a generated ledger in %s: %d transactions in two accounts"):format(path, counts.new))
  -- the first three months categorised as their person would (the
  -- generator's labels); the last is left to the rules and the learner,
  -- whose suggestions the app shows
  local ids = {}
  for row in books.db:rows("SELECT id, fitid FROM transactions WHERE posted < '2024-04-01'") do ids[row.id] = row.fitid end
  for id, fitid in pairs(ids) do assert(books:set_category(id, labels[fitid])) end
  -- your own cash spending, through the library (as `sift add`)
  for _, e in ipairs {
    { date = "2024-01-06", amount = "-3.20", payee = "Corner shop", category = "Groceries" },
    { date = "2024-01-20", amount = "-12.00", payee = "Market stall", category = "Groceries" },
    { date = "2024-02-03", amount = "20", payee = "Gran", category = "Gifts", notes = "birthday" },
  } do
    e.account, e.currency = "Wallet", "GBP"
    assert(books:add(e))
  end
  assert(books:categorize { rules = 'if payee ~ "tesco|sainsbury|lidl|aldi|waitrose|morrisons" then Groceries\n'
    .. 'if payee ~ "rent" then Rent\nif payee ~ "payment to credit card|payment received" then Transfer\n' })
  assert(budgets.set(books, "Groceries", "400.00"))
  assert(budgets.set(books, "Coffee", "30.00"))
  assert(budgets.set(books, "Eating Out", "150.00"))
end

local data = os.tmpname()
os.remove(data)
assert(require("sift.private").directory(data))
local server = assert(serve.new { data = data, db = path, port = port or 0 })
server:listen()
print("the finance app: " .. server:url() .. "finance/accounts")
io.stdout:flush()

local cqueues = require "cqueues"
local cq = cqueues.new()
cq:wrap(function() server:run() end)
cq:wrap(function()
  if check then
    local request = require "http.request"
    local origin = server:url():gsub("/$", "")
    local function call(method, p, body, from)
      local req = request.new_from_uri(server:url() .. p)
      req.follow_redirects = false
      req.headers:upsert(":method", method)
      req.headers:upsert("accept", "text/html")
      if body then
        req.headers:upsert("origin", from or origin)
        req.headers:upsert("content-type", "application/x-www-form-urlencoded")
        req:set_body(body)
      end
      local h, stream = assert(req:go(60))
      return h:get(":status"), stream:get_body_as_string(), h
    end
    -- the add form, as a browser gets it: its action carries the form token
    local _, form = call("GET", "finance/add")
    local action = form:match('<form class="f" method="post" id="add" action="([^"]+)"'):gsub("&amp;", "&")
    local entry = "date=2024-03-01&amount=-2.50&payee=Newsagent&account=Wallet&category=Reading"
    local status, _, h = call("POST", action:sub(2), entry)
    print(("add through the form: %s, to %s"):format(status, h:get("location")))
    status = call("POST", action:sub(2), entry, "http://evil.example")
    print(("the same form from another origin: %s"):format(status))
    local books <close> = assert(finance.open(path))
    print(("Newsagent rows in the books: %d"):format(
      books.db:first("SELECT count(*) AS n FROM transactions WHERE payee = 'Newsagent'").n))
    if not seconds then seconds = 0 end
  end
  if seconds then
    cqueues.sleep(seconds)
    server.http:close()
  end
end)
assert(cq:loop())
server:close()
os.execute("rm -rf " .. ("%q"):format(data))
if temporary then
  for _, suffix in ipairs { "", "-wal", "-shm" } do os.remove(path .. suffix) end
end
