--- The finance subcommands of `sift`: import, add, edit, delete, categorize, transactions,
-- transfers, duplicates, statements, report, journal, fetch (OFX Direct Connect). `sift.cli` adds them to its
-- parser (`M.define`) and dispatches to `M.commands`.
-- @module sift.cli.finance

local json = require "sift.json"
local csv = require "sift.csv"
local progress = require "sift.progress"
local store = require "sift.finance.store"

local M = { define = {}, commands = {} }
local commands = M.commands

local common = require "sift.cli.common"

local EXIT_OK, EXIT_BAD_INPUT, EXIT_USAGE = common.EXIT_OK, common.EXIT_BAD_INPUT, common.EXIT_USAGE

local function db_option(cmd)
  cmd:option("--db", "The SQLite file (default: $SIFT_DB, or ~/.local/share/sift/finance.db).")
end

-- the arguments of each command, added to the parser by sift.cli
function M.define.import(parser)
  local import = parser:command("import", "Import OFX/QFX statements, or a bank's CSV with --csv and --rules, "
    .. "into the finance database: all or nothing per file, and importing again adds nothing.")
  import:argument("file", "OFX or QFX files."):args("*")
  import:option("--csv", "A bank's CSV file, read with --rules (the shape of hledger's CSV rules).")
  import:option("--rules", "The rules file for --csv.")
  import:option("--account", "For --csv: the account (its number or name; default: the rules' account1), made "
    .. "when missing.")
  import:option("--currency", "For --csv: the currency of an account made, when the rules give none.")
  db_option(import)
  import:flag("--json", "Print the counts as JSON.")
  import:flag("-q --quiet", "Draw no progress bars."):target("quiet_here")
end

-- the fields of a transaction a person writes, as `add` and `edit` take
-- them: the option, its help for each, and whether `add` needs it
local ENTRY_FIELDS = {
  { "--date", "Its date (YYYY-MM-DD).", required = true },
  { "--amount", "Its amount, exact decimal; money out is negative (--amount -12.50).", required = true },
  { "--payee", "Who was paid, or paid you.", required = true },
  { "--category", "Its category (Food:Groceries)." },
  { "--memo", "A memo.", edit = "Its memo (\"\" clears it)." },
  { "--notes", "Your notes.", edit = "Your notes (\"\" clears them)." },
  { "--status", "uncleared (the default), cleared or reconciled.", edit = "uncleared, cleared or reconciled.",
    choices = { "uncleared", "cleared", "reconciled" } },
}

-- the entry fields given on the command line, by name (date, memo ...)
local function entry_fields(args)
  local t = {}
  for _, f in ipairs(ENTRY_FIELDS) do
    local name = f[1]:sub(3)
    t[name] = args[name]
  end
  return t
end

local function entry_options(cmd, adding)
  for _, f in ipairs(ENTRY_FIELDS) do
    local opt = cmd:option(f[1], adding and f[2] or f.edit or f[2])
    if adding and f.required then opt:count(1) end
    if f.choices then opt:choices(f.choices) end
  end
end

function M.define.add(parser)
  local add = parser:command("add", "Add a transaction of your own (cash, a cheque the bank has not cashed): "
    .. "it prints the new id. A later import that brings the bank's row of it links the two.")
  entry_options(add, true)
  add:option("--account", "The account: its number or name, or KIND:NUMBER (default: Cash, a cash account "
    .. "made on first use).")
  add:option("--currency", "The account's currency (ISO 4217: USD), needed when it has none, as a new account.")
  db_option(add)
  add:flag("--json", "Print the new transaction as JSON.")
end

function M.define.edit(parser)
  local edit = parser:command("edit", "Change a transaction: your own entries in everything, an imported one "
    .. "in its category, notes and status only (the bank's data stays as downloaded). Each change is kept "
    .. "with its time.")
  edit:argument("id", "The transaction's id (sift transactions lists them).")
  entry_options(edit, false)
  edit:flag("--history", "Print the transaction's edits, oldest first.")
  db_option(edit)
  edit:flag("--json", "Print JSON.")
end

function M.define.delete(parser)
  local delete = parser:command("delete", "Delete a transaction of your own (an imported one stays: "
    .. "sift statements --drop drops a whole import).")
  delete:argument("id", "The transaction's id.")
  db_option(delete)
end

function M.define.categorize(parser)
  local cat = parser:command("categorize", "Categorise transactions: rules first, then guesses learned "
    .. "from what is categorised; or set one, review the guesses, or measure the learner.")
  db_option(cat)
  cat:option("--rules", "A rules file (kept in the database for later runs).")
  cat:option("--min-confidence", "Leave guesses below this probability uncategorised.", "0.5"):convert(tonumber)
  cat:option("--set", "Set transaction ID's category: --set ID CATEGORY (your choice wins and trains the "
    .. "learner)."):args(2):count("*")
  cat:option("--clear", "Put transaction ID back to uncategorised (rules and the learner may categorise it "
    .. "again)."):count("*"):convert(tonumber)
  cat:flag("--review", "Go through the uncategorised and guessed transactions one by one.")
  cat:flag("--evaluate", "Print the learner's k-fold cross-validated accuracy on what is categorised.")
  cat:option("--folds", "Folds for --evaluate.", "5"):convert(tonumber)
  cat:flag("--json", "Print JSON.")
end

function M.define.transactions(parser)
  local list = parser:command("transactions", "List transactions from the finance database.")
  db_option(list)
  list:option("--month", "Only this month (YYYY-MM).")
  list:option("--from", "From this date (YYYY-MM-DD).")
  list:option("--to", "Up to this date (YYYY-MM-DD).")
  list:option("--account", "Only this account number.")
  list:option("--category", "Only this category.")
  list:flag("--uncategorized", "Only those with no category.")
  list:option("--search", "Only those whose payee, name or memo contains this.")
  list:option("--limit", "At most this many."):convert(tonumber)
  list:flag("--json", "Print JSON.")
  list:flag("--csv", "Print CSV.")
end

for _, kind in ipairs { "transfers", "duplicates" } do
  M.define[kind] = function(parser)
    local cmd = parser:command(kind, kind == "transfers"
      and "Propose transfers between your own accounts (an amount out of one, into another, within days)."
      or "Propose likely duplicates from overlapping downloads (same account and amount, similar text).")
    db_option(cmd)
    cmd:option("--days", "How many days apart they may be.", kind == "transfers" and "4" or "3"):convert(tonumber)
    cmd:option("--confirm", "Confirm proposal ID."):count("*"):convert(tonumber)
    cmd:option("--reject", "Reject proposal ID."):count("*"):convert(tonumber)
    cmd:flag("--json", "Print JSON.")
  end
end

function M.define.statements(parser)
  local cmd = parser:command("statements", "List the imported statements and their balances (each checked "
    .. "against the transactions); drop a balance or a whole import.")
  db_option(cmd)
  cmd:option("--drop", "Drop import ID: its transactions, balances and record."):count("*"):convert(tonumber)
  cmd:option("--drop-balance", "Drop balance ID (its journal assertion goes)."):count("*"):convert(tonumber)
  cmd:flag("--json", "Print JSON.")
end

function M.define.report(parser)
  local report = parser:command("report", "Income and expenses by month and category, top payees, "
    .. "balance over time; as a table, JSON or an SVG chart.")
  db_option(report)
  report:option("--from", "From this date (YYYY-MM-DD).")
  report:option("--to", "Up to this date (YYYY-MM-DD).")
  report:option("--top", "Payees to list.", "10"):convert(tonumber)
  report:option("--currency", "Which currency (default: the most used).")
  report:option("--svg", "Also write the chart to this SVG file.")
  report:flag("--json", "Print JSON.")
end

function M.define.fetch(parser)
  local fetch = parser:command("fetch", "Download from a bank's OFX server (Direct Connect) with a profile: "
    .. "the account list, or statements (and import them).")
  fetch:argument("what", "accounts or statements."):choices { "accounts", "statements" }
  fetch:argument("profile", "The profile's name in the profiles file.")
  fetch:option("--profiles", "The profiles file (default: $SIFT_PROFILES, or ~/.config/sift/profiles.ini).")
  fetch:option("--since", "Statements from this date (YYYY-MM-DD).")
  fetch:option("--until", "Statements up to this date (YYYY-MM-DD).")
  fetch:flag("--import", "Import the statements into the database (--db).")
  db_option(fetch)
  fetch:option("-o --output", "Also write the server's answer to this file.")
  fetch:option("--cafile", "Trust this certificate (or bundle) for the server, instead of the system's.")
  fetch:option("--log", "Write each request and answer to this file, the password replaced by ***.")
  fetch:option("--timeout", "Seconds the whole exchange may take: connecting, sending, the whole answer "
    .. "(default: the profile's timeout, or 60).")
    :convert(function(v) local n = tonumber(v) return n and n > 0 and n or nil end)
  fetch:option("--max-response", "Refuse an answer bigger than SIZE (e.g. 50M).", "256M")
  fetch:flag("--json", "Print JSON.")
end

function M.define.journal(parser)
  local journal = parser:command("journal", "Export the database as a ledger, hledger or beancount journal "
    .. "(FITIDs as metadata, statement balances as assertions) or CSV.")
  journal:argument("format", "ledger, hledger, beancount or csv."):choices { "ledger", "hledger", "beancount", "csv" }
  db_option(journal)
  journal:option("-o --output", "The file to write (default: standard output).")
  journal:option("--currency", "The currency of accounts whose statements named none (beancount needs one).")
  journal:option("--from", "Only transactions from this date (YYYY-MM-DD): the opening balance carries what came before.")
  journal:option("--to", "Only transactions up to this date (YYYY-MM-DD).")
  journal:option("--account", "Only this account (its number).")
end

local function open_books(args, err)
  local finance = require "sift.finance"
  local books, msg = finance.open(args.db)
  if not books then err:write("sift: ", msg, "\n") end
  return books
end

function commands.import(args, out, err)
  if (args.csv == nil) ~= (args.rules == nil) or (args.csv and #args.file > 0)
      or (not args.csv and (#args.file == 0 or args.account or args.currency)) then
    err:write("sift: import takes OFX/QFX files, or --csv FILE --rules RULES [--account NAME] [--currency CODE]\n")
    return EXIT_USAGE
  end
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local status, results = EXIT_OK, {}
  for _, path in ipairs(args.csv and { args.csv } or args.file) do
    local bar = progress.bar { label = "import", quiet = args.quiet or args.quiet_here }
    local function tick(_, done, total)
      if done % 5000 == 0 or done == total then bar.update(done, total) end
    end
    local counts, msg
    if args.csv then
      counts, msg = require("sift.finance.csv").import(books, path, { rules = args.rules, account = args.account,
        currency = args.currency, on_transaction = bar and tick })
    else
      counts, msg = books:import(path, { on_transaction = bar and tick })
    end
    if bar then bar.finish() end
    if not counts then
      err:write("sift: ", msg, "\n")
      status = EXIT_BAD_INPUT
      results[#results + 1] = { path = path, error = msg }
    else
      counts.path = path
      results[#results + 1] = counts
      if not args.json then
        out:write(("%s: %d new, %d duplicate, %d changed%s (%d statement%s, %d balance%s)\n"):format(path,
          counts.new, counts.duplicate, counts.changed,
          (counts.older > 0 and (", %d older than what is stored (kept)"):format(counts.older) or "")
          .. (counts.skipped > 0 and (", %d left out"):format(counts.skipped) or "")
          .. (counts.matched > 0 and (", %d matched to your own entries"):format(counts.matched) or ""),
          counts.statements, counts.statements == 1 and "" or "s", counts.balances, counts.balances == 1 and "" or "s"))
        if counts.seen_before then
          out:write(("  this file was imported before (%s UTC)%s\n"):format(counts.seen_before,
            counts.new == 0 and counts.changed == 0 and ": nothing to add" or ""))
        end
        for _, w in ipairs(counts.warnings) do out:write("  warning: ", w, "\n") end
      end
    end
  end
  local checks = books:balances()
  if args.json then
    out:write(json.encode({ imports = json.array(results), balances = json.array(checks) },
      { arrays = { warnings = true } }), "\n")
  end
  return status
end

-- text cut or padded to width characters (code points: a terminal shows
-- accented letters as one column each), bytes when it is not UTF-8
local function column(s, width)
  local n = utf8.len(s)
  if not n then return ("%-" .. width .. "s"):format(s:sub(1, width)) end
  if n > width then return s:sub(1, utf8.offset(s, width + 1) - 1) end
  return s .. (" "):rep(width - n)
end

local function show_transaction(t)
  return ("%6d  %s  %-12s %12s  %-10s %s %s%s%s"):format(t.id, t.posted, t.account:sub(-12), t.amount,
    t.status or "", column(t.payee or t.name or t.memo or "", 34), t.category or "-",
    t.category_source == "learned" and (" (guess %.0f%%)"):format(100 * (t.confidence or 0)) or "",
    t.matched_to and (" (yours, matched to #%d: not counted)"):format(t.matched_to) or "")
end

-- --review: each guessed or uncategorised transaction, one at a time
local function review(books, out, input)
  local todo = {}
  for _, t in ipairs(books:transactions {}) do
    if t.category_source == nil or t.category_source == "learned" then todo[#todo + 1] = t end
  end
  out:write(("%d transaction(s) to review. Enter accepts the guess, a name sets the category, "
    .. "s skips, q stops.\n"):format(#todo))
  local set = 0
  for i, t in ipairs(todo) do
    out:write(("[%d/%d] %s\n  category%s: "):format(i, #todo, show_transaction(t),
      t.category and (" [" .. t.category .. "]") or ""))
    out:flush()
    local answer = input:read("l")
    if answer == nil or answer == "q" then break end
    answer = answer:gsub("^%s+", ""):gsub("%s+$", "")
    if answer == "" and t.category then
      books:set_category(t.id, t.category)
      set = set + 1
    elseif answer ~= "" and answer ~= "s" then
      local ok, why = books:set_category(t.id, answer)
      if ok then set = set + 1 else out:write("  not set: ", why, "\n") end
    end
  end
  out:write(("%d categorised by you\n"):format(set))
end

function commands.categorize(args, out, err, input)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local status = EXIT_OK
  for _, pair in ipairs(args.set) do
    local ok, msg = books:set_category(tonumber(pair[1]) or -1, pair[2])
    if ok then out:write(("%s: %s\n"):format(pair[1], pair[2]))
    else err:write("sift: ", msg, "\n") status = EXIT_BAD_INPUT end
  end
  for _, id in ipairs(args.clear) do
    local ok, msg = books:set_category(id, nil)
    if ok then out:write(("%d: uncategorised\n"):format(id))
    else err:write("sift: ", msg, "\n") status = EXIT_BAD_INPUT end
  end
  if args.review then
    review(books, out, input or io.stdin)
  elseif args.evaluate then
    local r = books:evaluate(args.folds)
    if args.json then
      out:write(json.encode(r), "\n")
    else
      out:write(("learner accuracy: %.1f%% (%d of %d, %d-fold cross-validation)\n"):format(100 * r.accuracy,
        r.correct, r.total, r.folds))
      local names = {}
      for name in pairs(r.per_category) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do
        local p = r.per_category[name]
        out:write(("  %-28s %5.1f%%  (%d)\n"):format(name, 100 * p.correct / p.total, p.total))
      end
    end
  elseif #args.set == 0 and #args.clear == 0 then
    local text
    if args.rules then
      local f, msg = io.open(args.rules, "rb")
      if not f then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
      text = f:read("a")
      f:close()
    end
    local counts, msg = books:categorize { rules = text, rules_path = args.rules, min_confidence = args.min_confidence }
    if not counts then
      err:write("sift: ", msg, "\n")
      status = EXIT_BAD_INPUT
    elseif args.json then
      out:write(json.encode(counts), "\n")
    else
      out:write(("%d by rules, %d guessed, %d left uncategorised (guess below %.0f%%), %d set by you\n"):format(
        counts.by_rule, counts.guessed, counts.unsure, 100 * args.min_confidence, counts.untouched))
    end
  end
  return status
end

-- a library error on stderr; its exit status: 2 when the arguments alone
-- were wrong (code "usage"), 1 when the books refused
local function refused(err, msg, code)
  err:write("sift: ", msg, "\n")
  return code == "usage" and EXIT_USAGE or EXIT_BAD_INPUT
end

function commands.add(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local entry = entry_fields(args)
  entry.account, entry.currency = args.account, args.currency
  local id, info, code = books:add(entry)
  if not id then return refused(err, info, code) end
  if info.created then err:write(("sift: made the cash account %s (%s)\n"):format(info.account, info.currency)) end
  if args.json then
    local t = books:transactions_by_id { id }[id]
    t.amount_units = nil
    out:write(json.encode(t), "\n")
  else
    out:write(id, "\n")
  end
  return EXIT_OK
end

function commands.edit(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local changes = entry_fields(args)
  local id = args.id
  if next(changes) then
    local done, msg, code = books:edit(id, changes)
    if not done then return refused(err, msg, code) end
    if args.json then
      out:write(json.encode(json.array(done)), "\n")
    else
      for _, c in ipairs(done) do
        out:write(("%s: %s %s -> %s\n"):format(id, c.field, c.old or "(none)", c.new or "(none)"))
      end
      if #done == 0 then out:write(("%s: nothing changed\n"):format(id)) end
    end
  elseif not args.history then
    return refused(err, "edit: nothing to change (--date, --amount, --payee, --memo, --category, --notes, --status; "
      .. "--history lists the edits)", "usage")
  end
  if args.history then
    local n = math.tointeger(tonumber(id))
    if not n then return refused(err, ("id: %s is not a transaction's id (a whole number)"):format(id), "usage") end
    local list = books:edits(n)
    if args.json then
      out:write(json.encode(json.array(list)), "\n")
    else
      for _, e in ipairs(list) do
        out:write(("%s UTC  %s: %s -> %s\n"):format(e.at, e.field, e.old or "(none)", e.new or "(none)"))
      end
      out:write(("%d edit(s)\n"):format(#list))
    end
  end
  return EXIT_OK
end

function commands.delete(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local ok, msg, code = books:delete(args.id)
  if not ok then return refused(err, msg, code) end
  out:write(("deleted %s\n"):format(args.id))
  return EXIT_OK
end

local CSV_COLUMNS = require("sift.finance.export").CSV_COLUMNS

function commands.transactions(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local rows = books:transactions { month = args.month, from = args.from, to = args.to, account = args.account,
    category = args.category, uncategorized = args.uncategorized, search = args.search, limit = args.limit }
  if args.json then
    for _, t in ipairs(rows) do t.amount_units = nil end
    out:write(json.encode(json.array(rows)), "\n")
  elseif args.csv then
    out:write(table.concat(CSV_COLUMNS, ","), "\n")
    for _, t in ipairs(rows) do out:write(csv.line(t, CSV_COLUMNS), "\n") end
  else
    for _, t in ipairs(rows) do out:write(show_transaction(t), "\n") end
    out:write(("%d transaction(s)\n"):format(#rows))
  end
  return EXIT_OK
end

local function pairs_command(kind)
  return function(args, out, err)
    local books <close> = open_books(args, err)
    if not books then return EXIT_BAD_INPUT end
    local status = EXIT_OK
    for _, list in ipairs { { args.confirm, true }, { args.reject, false } } do
      for _, id in ipairs(list[1]) do
        local ok, msg = books:decide(id, list[2], kind)
        if not ok then err:write("sift: ", msg, "\n") status = EXIT_BAD_INPUT end
      end
    end
    local found = kind == "transfer" and books:transfers(args.days) or books:duplicates(args.days)
    if args.json then
      out:write(json.encode(json.array(found)), "\n")
    else
      for _, p in ipairs(found) do
        out:write(("#%d %s\n  %s\n  %s\n"):format(p.id, p.status, show_transaction(p.a), show_transaction(p.b)))
      end
      local proposed = 0
      for _, p in ipairs(found) do if p.status == "proposed" then proposed = proposed + 1 end end
      out:write(("%d %s(s), %d waiting for you (--confirm ID or --reject ID)\n"):format(#found, kind, proposed))
    end
    return status
  end
end
commands.transfers = pairs_command("transfer")
commands.duplicates = pairs_command("duplicate")

function commands.statements(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local status = EXIT_OK
  for _, id in ipairs(args.drop_balance) do
    local ok, msg = books:drop_balance(id)
    if ok then out:write(("balance %d dropped\n"):format(id)) else err:write("sift: ", msg, "\n") status = EXIT_BAD_INPUT end
  end
  for _, id in ipairs(args.drop) do
    local n, msg = books:drop_import(id)
    if n then out:write(("import %d dropped (%d transaction(s))\n"):format(id, n))
    else err:write("sift: ", msg, "\n") status = EXIT_BAD_INPUT end
  end
  local list = books:statements()
  if args.json then
    for _, i in ipairs(list) do i.balances = json.array(i.balances) end
    out:write(json.encode(json.array(list)), "\n")
    return status
  end
  for _, i in ipairs(list) do
    out:write(("import %d  %s UTC  %s: %d new, %d duplicate, %d changed\n"):format(i.id, i.at, i.path or "-", i.new,
      i.duplicate, i.changed))
    for _, b in ipairs(i.balances) do
      out:write(("  balance %d  %-10s %-20s %s  %14s  %s\n"):format(b.id, b.kind, b.number, b.date, b.balance,
        b.consistent and "consistent" or ("INCONSISTENT: implies an opening of " .. b.opening)))
    end
  end
  out:write(("%d import(s)\n"):format(#list))
  return status
end

function commands.report(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  local report = require "sift.finance.report"
  local r = books:report { from = args.from, to = args.to, top = args.top, currency = args.currency }
  if args.json then out:write(json.encode(report.view(r)), "\n") else out:write(report.text(r)) end
  local status = EXIT_OK
  if args.svg then
    local f, msg = store.open_private(args.svg, "wb", true)
    if f then
      f:write(report.svg(r))
      f:close()
      if not args.json then out:write("chart: ", args.svg, "\n") end
    else
      err:write("sift: ", msg, "\n")
      status = EXIT_BAD_INPUT
    end
  end
  return status
end

function commands.fetch(args, out, err)
  local direct = require "sift.ofx.direct"
  local profiles, msg = direct.load_profiles(args.profiles)
  if not profiles then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
  local profile = profiles[args.profile]
  if not profile then
    local names = {}
    for name in pairs(profiles) do names[#names + 1] = name end
    table.sort(names)
    err:write(("sift: no profile %s (the profiles are: %s)\n"):format(args.profile, table.concat(names, ", ")))
    return EXIT_BAD_INPUT
  end
  local password
  password, msg = direct.password(profile)
  if not password then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
  -- from here on, everything printed may quote the server (which may echo
  -- the password in any form): each line passes through the scrubber
  local request = require "sift.ofx.request"
  local function scrubbed(stream)
    return { write = function(self, ...)
      stream:write(request.redact(table.concat({ ... }), password))
      return self
    end, flush = function() stream:flush() end }
  end
  out, err = scrubbed(out), scrubbed(err)
  local logfile
  if args.log then
    logfile, msg = store.open_private(args.log, "a", true)
    if not logfile then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
  end
  local max_response = require("sift.size").parse(args.max_response)
  if not max_response then
    err:write(("sift: --max-response: cannot read '%s' (say 50M)\n"):format(args.max_response))
    return EXIT_USAGE
  end
  local opts = { cafile = args.cafile, timeout = args.timeout, since = args.since, ["until"] = args["until"],
    log = logfile and function(text)
      logfile:write(os.date("!%Y-%m-%dT%H:%M:%SZ "), request.redact(text, password), "\n\n")
    end,
    max_response = max_response, warn = function(warning) err:write("sift: warning: ", warning, "\n") end }
  local status = EXIT_OK
  if args.what == "accounts" then
    local accounts, e = direct.accounts(profile, password, opts)
    if not accounts then
      err:write("sift: ", e, "\n")
      status = EXIT_BAD_INPUT
    elseif args.json then
      out:write(json.encode(json.array(accounts)), "\n")
    else
      for _, a in ipairs(accounts) do out:write(direct.account_line(a), "\n") end
      out:write(("%d account(s); paste these `account = ...` lines into the profile\n"):format(#accounts))
    end
  else
    local doc, text = direct.statements(profile, password, opts)
    if not doc then
      err:write("sift: ", text, "\n")
      status = EXIT_BAD_INPUT
    else
      if args.output then
        local f, e = store.open_private(args.output, "wb", true)
        if f then f:write(text) f:close() else err:write("sift: ", e, "\n") status = EXIT_BAD_INPUT end
      end
      local summary = { statements = json.array {}, refused = doc.refused }
      for _, st in ipairs(doc.statements) do
        summary.statements[#summary.statements + 1] = { kind = st.kind, account = st.account.id,
          transactions = #st.transactions, ledger_balance = st.ledger_balance }
      end
      if args.import then
        local books <close> = open_books(args, err)
        if not books then return EXIT_BAD_INPUT end
        local counts, e = books:import { text = text }
        if not counts then err:write("sift: ", e, "\n") return EXIT_BAD_INPUT end
        summary.import = { new = counts.new, duplicate = counts.duplicate, changed = counts.changed }
      end
      if args.json then
        out:write(json.encode(summary), "\n")
      else
        for _, st in ipairs(summary.statements) do
          out:write(("%s %s: %d transaction(s)%s\n"):format(st.kind, st.account or "?", st.transactions,
            st.ledger_balance and (", balance " .. st.ledger_balance.amount) or ""))
        end
        if doc.refused > 0 then out:write(("%d statement request(s) refused by the server\n"):format(doc.refused)) end
        if summary.import then
          out:write(("imported: %d new, %d duplicate, %d changed\n"):format(summary.import.new,
            summary.import.duplicate, summary.import.changed))
        end
      end
    end
  end
  if logfile then logfile:close() end
  return status
end

function commands.journal(args, out, err)
  local books <close> = open_books(args, err)
  if not books then return EXIT_BAD_INPUT end
  -- (written only once the whole journal is made: a refused one leaves no file)
  local text, msg = books:export(args.format, nil, { currency = args.currency, from = args.from, to = args.to,
    account = args.account })
  if not text then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
  local dest = out
  if args.output then
    dest, msg = store.open_private(args.output, "wb", true)
    if not dest then err:write("sift: ", msg, "\n") return EXIT_BAD_INPUT end
  end
  dest:write(text)
  if args.output then dest:close() end
  return EXIT_OK
end

return M
