--- `sift ofx`: OFX/QFX statements as a summary, JSON or CSV.
-- @module sift.cli.ofx

local json = require "sift.json"
local csv = require "sift.csv"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }
local commands = M.commands

local EXIT_OK, EXIT_BAD_INPUT, printable, say_failure, budget_option =
  common.EXIT_OK, common.EXIT_BAD_INPUT, common.printable, common.say_failure, common.budget_option

function M.define.ofx(parser)
  local ofxcmd = parser:command("ofx", "Read OFX/QFX bank statements: a summary per statement, or the "
    .. "transactions as JSON or CSV.")
  ofxcmd:argument("file", "An OFX or QFX file (v1 SGML, v2 XML, or no header)."):args("+")
  ofxcmd:flag("--json", "Print JSON: {version, statements, signon, status, warnings} per file "
    .. "(an array for several files); amounts are exact decimal strings, dates ISO 8601.")
  ofxcmd:flag("--csv", "Print the transactions as CSV (one header row for all files).")
  ofxcmd:flag("--strict", "Fail on the first problem (line and column) instead of reading on with warnings.")
  budget_option(ofxcmd)
end

local CSV_COLUMNS = { "file", "statement", "account", "currency", "fitid", "type", "posted", "amount",
  "name", "memo", "payee", "checknum", "refnum" }

-- a statement's summary, as a person reads it
local function print_statement(out, st)
  local a = st.account
  local id = table.concat({ a.bank_id or a.broker_id or "", a.branch_id or "", a.id or "?" }, "/")
    :gsub("^/+", ""):gsub("//+", "/")
  out:write(("  %s %s%s (%s)\n"):format(st.kind, a.type and (a.type .. " ") or "", id, st.currency or "no currency"))
  if st.start or st["end"] then
    out:write(("    %-18s %s .. %s\n"):format("period", st.start or "?", st["end"] or "?"))
  end
  for _, b in ipairs { { "ledger balance", st.ledger_balance }, { "available balance", st.available_balance } } do
    if b[2] then out:write(("    %-18s %s at %s\n"):format(b[1], b[2].amount, b[2].date or "?")) end
  end
  local n, first, last = #st.transactions, require("sift.ofx").range(st.transactions, "posted")
  out:write(("    %-18s %d%s\n"):format("transactions", n, n > 0 and (" (" .. first .. " .. " .. last .. ")") or ""))
  if st.investment_transactions then
    out:write(("    %-18s %d\n"):format("investment trades", #st.investment_transactions))
  end
  if st.positions then out:write(("    %-18s %d\n"):format("positions", #st.positions)) end
  if st.status and st.status.code and st.status.code ~= 0 then
    out:write(("    %-18s %d %s: %s\n"):format("status", st.status.code, st.status.severity or "",
      st.status.message or st.status.meaning or ""))
  end
end

function commands.ofx(args, out, err)
  local ofx = require "sift.ofx"
  local status, views, rows = EXIT_OK, {}, {}
  for _, path in ipairs(args.file) do
    local doc, msg, code = ofx.read(path, { strict = args.strict, lazy = true })
    if doc and not doc.tree:child("OFX") then  -- nothing of a statement: an error in every mode
      doc, msg, code = nil, path .. ": no <OFX> element: not an OFX file, or one cut before its body", "corrupt"
    end
    if doc then  -- what was skipped or is missing, on stderr whatever the output
      for _, w in ipairs(doc.warnings) do
        err:write(("sift: %s: warning%s: %s\n"):format(printable(path), w.line and (" (line " .. w.line .. ")") or "",
          printable(w.message)))
      end
      if doc.discarded > 0 then
        err:write(("sift: %s: warning: %d transaction(s) left out\n"):format(printable(path), doc.discarded))
      end
    end
    if not doc then
      say_failure(err, path, msg, code)
      status = EXIT_BAD_INPUT
      views[#views + 1] = { path = path, error = msg }
    elseif args.json then
      local v = ofx.view(doc)
      v.path = #args.file > 1 and path or nil
      views[#views + 1] = v
    elseif args.csv then
      for i, st in ipairs(doc.statements) do
        for _, t in ipairs(st.transactions) do
          rows[#rows + 1] = { file = path, statement = i, account = st.account.id, currency = t.currency or st.currency,
            fitid = t.fitid, type = t.type, posted = t.posted, amount = t.amount, name = t.name, memo = t.memo,
            payee = t.payee, checknum = t.checknum, refnum = t.refnum }
        end
      end
    else
      out:write(("%s: OFX %s (%s)"):format(path, doc.version or "?", doc.header_kind == "v1" and "SGML"
        or doc.header_kind == "v2" and "XML" or "no header"))
      if doc.signon then
        out:write((", signon %s %s%s"):format(tostring(doc.signon.code), doc.signon.severity or "",
          doc.signon.code ~= 0 and (": " .. (doc.signon.message or doc.signon.meaning or "")) or ""))
      end
      out:write("\n")
      for _, st in ipairs(doc.statements) do print_statement(out, st) end
      for _, s in ipairs(doc.status) do
        if s.code and s.code ~= 0 then
          out:write(("  %s response: status %d %s: %s\n"):format(s.kind, s.code, s.severity or "",
            s.message or s.meaning or ""))
        end
      end
      if doc.accounts then
        for _, a in ipairs(doc.accounts) do
          out:write(("  account %s %s %s%s\n"):format(a.kind or "?", a.type or "", a.id or "?",
            a.description and (" (" .. a.description .. ")") or ""))
        end
      end
    end
  end
  if args.json then
    out:write(json.encode(#views == 1 and views[1] or json.array(views), { arrays = ofx.view_arrays }), "\n")
  elseif args.csv and (status == EXIT_OK or #rows > 0 or #args.file > 1) then  -- no header for nothing read
    out:write(table.concat(CSV_COLUMNS, ","), "\n")
    for _, r in ipairs(rows) do out:write(csv.line(r, CSV_COLUMNS), "\n") end
  end
  return status
end

return M
