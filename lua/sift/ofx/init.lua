--- OFX and QFX statements: the tree (`sift.ofx.grammar`), typed
-- statements with exact amounts, and writing OFX back (`sift.ofx.writer`).
--
--     local ofx = require "sift.ofx"
--     local doc = assert(ofx.read("statement.qfx"))
--     for _, st in ipairs(doc.statements) do
--       print(st.kind, st.account.id, st.ledger_balance and st.ledger_balance.amount)
--       for _, t in ipairs(st.transactions) do print(t.posted, t.amount, t.name) end
--     end
--
-- Amounts are exact decimal strings as the file wrote them ("-6.60",
-- "115.8331"); `ofx.units(amount)` gives integer minor units and the
-- scale. Dates are ISO 8601: a date alone as "2009-04-01", a time as UTC
-- "2009-05-23T12:20:17Z". Lenient (the default) never invents a value: a
-- transaction with no valid date or amount is left out, with a warning
-- saying why; strict mode (`strict = true`) fails on the first problem
-- with its line and column.
-- @module sift.ofx

local core = require "sift.core"
local grammar = require "sift.ofx.grammar"

local M = { grammar = grammar }

-- a value as messages quote it: at most 40 characters, and how long it was
local function quoted(v)
  v = tostring(v)
  if #v <= 40 then return ("%q"):format(v) end
  return ("%q… (%d bytes)"):format(v:sub(1, 40), #v)
end
M.quoted = quoted

-- what the specification's status codes mean (OFX 1.6 / 2.1 tables)
M.STATUS_CODES = {
  [0] = "Success", [1] = "Client is up-to-date", [2000] = "General error",
  [2001] = "Invalid account", [2002] = "General account error", [2003] = "Account not found",
  [2004] = "Account closed", [2005] = "Account not authorized", [2006] = "Source account not found",
  [2007] = "Source account closed", [2008] = "Source account not authorized",
  [2009] = "Destination account not found", [2010] = "Destination account closed",
  [2011] = "Destination account not authorized", [2012] = "Invalid amount",
  [2014] = "Date too soon", [2015] = "Date too far in future", [2016] = "Transaction already committed",
  [2017] = "Already canceled", [2018] = "Unknown server ID", [2019] = "Duplicate request",
  [2020] = "Invalid date", [2021] = "Unsupported version", [2022] = "Invalid TAN",
  [2023] = "Unknown FITID", [2025] = "Branch ID missing", [2026] = "Bank name doesn't match bank ID",
  [2027] = "Invalid date range", [2028] = "Requested element unknown",
  [6500] = "<REJECTIFMISSING>Y invalid without <TOKEN>", [6501] = "Embedded transactions in request failed",
  [6502] = "Unable to process embedded transaction due to out-of-date <TOKEN>",
  [10000] = "Stop check in process", [10500] = "Too many checks to process",
  [10501] = "Invalid payee", [10502] = "Invalid payee address", [10503] = "Invalid payee account number",
  [10504] = "Insufficient funds", [10505] = "Cannot modify element", [10506] = "Cannot modify source account",
  [10507] = "Cannot modify destination account", [10508] = "Invalid frequency",
  [10509] = "Model already canceled", [10510] = "Invalid payee ID", [10511] = "Invalid payee city",
  [10512] = "Invalid payee state", [10513] = "Invalid payee postal code",
  [10514] = "Transaction already processed", [10515] = "Payee not modifiable by client",
  [10516] = "Wire beneficiary invalid", [10517] = "Invalid payee name",
  [10518] = "Unknown model ID", [10519] = "Invalid payee list ID",
  [12250] = "Investment transaction download not supported",
  [12251] = "Investment position download not supported",
  [12252] = "Investment positions for specified date not available",
  [12253] = "Investment open order download not supported",
  [12254] = "Investment balances download not supported", [12255] = "401(k) not available for this account",
  [13000] = "User ID & password will be sent out-of-band", [13500] = "Unable to enroll user",
  [13501] = "User already enrolled", [13502] = "Invalid service", [13503] = "Cannot change user information",
  [13504] = "FI missing or invalid in SONRQ",
  [15000] = "Must change USERPASS", [15500] = "Signon invalid (user ID or password wrong)",
  [15501] = "Customer account already in use", [15502] = "USERPASS lockout",
  [15503] = "Could not change USERPASS", [15504] = "Could not provide random data",
  [15505] = "Country system not available", [15506] = "Empty signon not supported",
  [15507] = "Signon invalid without supporting pin change request", [15508] = "Transaction not authorized",
}

--- {======================================================
-- Values
-- =======================================================

--- Integer minor units and scale of an amount string ("-6.60" -> -660, 2).
function M.units(amount)
  return core.ofx_amount(amount)
end

-- }======================================================


--- {======================================================
-- Typed statements
-- =======================================================

-- the reader of one document: turns nodes into values, noting problems
local function reader(doc, strict, lazy)
  local r = { warnings = doc.warnings, records = core.ofx_reader(doc, M.TRANSACTION_FIELDS), lazy = lazy }

  -- (an element has no position of its own: its aggregate's is given)
  function r.problem(node, message)
    local line, col
    if node and node.pos then line, col = grammar.line_col(doc.source, node.pos, doc) end
    if strict then error({ ofx_problem = { line = line, column = col, message = message } }, 0) end
    r.warnings[#r.warnings + 1] = { line = line, column = col, message = message }
  end

  -- an element's text, nil when absent or empty
  function r.text(node, path)
    return node and node:text(path)
  end

  -- a value at path read by parse (returning the value, or nil and why):
  -- nil when absent; false (and a problem) when empty or unreadable
  local function typed_value(node, path, what, parse, kind)
    local leaf = node and node:find(path)
    if not leaf or leaf.value == nil then return nil end
    if leaf.value == "" then
      r.problem(node, ("%s is empty"):format(what or path))
      return false
    end
    local v, why = parse(leaf.value)
    if not v then
      r.problem(node, ("%s %s is not %s (%s)"):format(what or path, quoted(leaf.value), kind, why))
      return false
    end
    return v
  end

  local function amount(text)
    local units, why, decimal = core.ofx_amount(text)
    if not units then return nil, why end
    return decimal
  end

  -- an amount at path as its exact decimal text
  function r.amount(node, path, what) return typed_value(node, path, what, amount, "an amount") end

  -- a date at path as ISO text
  function r.date(node, path, what) return typed_value(node, path, what, core.ofx_date, "a date") end

  -- STATUS: code, severity, message, and what the code means
  function r.status(node)
    if not node then return nil end
    local code = tonumber(r.text(node, "CODE"))
    return { code = code, severity = r.text(node, "SEVERITY"), message = r.text(node, "MESSAGE"),
      meaning = code and M.STATUS_CODES[code] }
  end

  return r
end

-- a balance aggregate (LEDGERBAL, AVAILBAL): nil when it has no amount
local function balance(r, node, what)
  if not node then return nil end
  local amount = r.amount(node, "BALAMT", what .. "/BALAMT")
  if not amount then return nil end
  return { amount = amount, date = r.date(node, "DTASOF", what .. "/DTASOF") or nil }
end

-- a bank or credit-card transaction's fields: element tag -> key
local TXN_TEXT = { FITID = "fitid", NAME = "name", EXTDNAME = "extended_name", MEMO = "memo",
  PAYEEID = "payee_id", CHECKNUM = "checknum", REFNUM = "refnum", SIC = "sic", SRVRTID = "server_id",
  CORRECTFITID = "correct_fitid", CORRECTACTION = "correct_action", INV401KSOURCE = "inv401k_source" }
local TXN_DATES = { DTPOSTED = "posted", DTUSER = "user_date", DTAVAIL = "available_date" }

-- what C reads of a transaction's elements (core.ofx_reader)
M.TRANSACTION_FIELDS = { text = TXN_TEXT, date = TXN_DATES, amount = { TRNAMT = "amount" },
  upper = { TRNTYPE = "type" }, fallback = { payee = "name" }, required = { "posted", "amount" } }

-- the fields a transaction's aggregates give
local function transaction_aggregate(r, t, tag, node)
  if tag == "PAYEE" then t.payee = r.text(node, "NAME")
  elseif tag == "CURRENCY" or tag == "ORIGCURRENCY" then
    t.currency, t.currency_rate = r.text(node, "CURSYM"), r.text(node, "CURRATE")
  elseif tag == "BANKACCTTO" or tag == "CCACCTTO" then
    t.transfer_to = { bank_id = r.text(node, "BANKID"), branch_id = r.text(node, "BRANCHID"),
      id = r.text(node, "ACCTID"), type = r.text(node, "ACCTTYPE") }
  end
end

-- a transaction that C could not read: read here, to say why it is left out
local function unreadable_transaction(r, node, where, n)
  local t, bad = {}, nil
  for tag, v in node:items() do
    if type(v) ~= "string" then transaction_aggregate(r, t, tag, v)
    elseif TXN_TEXT[tag] then
      if v ~= "" and t[TXN_TEXT[tag]] == nil then t[TXN_TEXT[tag]] = v end
    elseif TXN_DATES[tag] then
      local iso, err = core.ofx_date(v)
      if iso then t[TXN_DATES[tag]] = iso
      else bad = bad or {}; bad[#bad + 1] = ("%s %s is not a date (%s)"):format(tag, quoted(v), err) end
    elseif tag == "TRNAMT" then
      local units, why, decimal = core.ofx_amount(v)
      if units then t.amount = decimal
      else bad = bad or {}; bad[#bad + 1] = ("TRNAMT %s is not an amount (%s)"):format(quoted(v), why) end
    end
  end
  local why = bad and table.concat(bad, "; ") or not t.posted and "it has no DTPOSTED" or "it has no TRNAMT"
  r.problem(node, ("%s transaction %d (FITID %s) left out: %s"):format(where, n, t.fitid or "none", why))
  r.discarded = (r.discarded or 0) + 1
  return nil
end

-- a bank or credit-card transaction that C left to Lua (it holds an
-- aggregate, or does not read); nil when it cannot be kept (no valid date
-- or amount)
local function transaction(r, node, where, n)
  local t, aggregates = core.ofx_record(r.records, node)
  if not t or not t.posted or not t.amount then return unreadable_transaction(r, node, where, n) end
  if aggregates then
    for tag, x in node:items() do
      if type(x) ~= "string" then transaction_aggregate(r, t, tag, x) end
    end
  end
  t.payee = t.payee or t.name
  return t
end

-- an investment transaction (BUYSTOCK, INCOME, TRANSFER...): every field
-- it carries, amounts exact
local INV_AMOUNTS = { UNITS = "units", UNITPRICE = "unit_price", COMMISSION = "commission", FEES = "fees",
  TOTAL = "total", MARKUP = "markup", MARKDOWN = "markdown", TAXES = "taxes", LOAD = "load",
  WITHHOLDING = "withholding", STATEWITHHOLDING = "state_withholding", PENALTY = "penalty",
  GAIN = "gain", ACCRDINT = "accrued_interest", OLDUNITS = "old_units", NEWUNITS = "new_units",
  NUMERATOR = "numerator", DENOMINATOR = "denominator", FRACCASH = "fraction_cash",
  AVGCOSTBASIS = "average_cost_basis" }
local INV_TEXT = { INCOMETYPE = "income_type", BUYTYPE = "buy_type", SELLTYPE = "sell_type",
  SUBACCTSEC = "subaccount_security", SUBACCTFUND = "subaccount_fund", TFERACTION = "transfer_action",
  POSTYPE = "position_type", INV401KSOURCE = "inv401k_source", OPTACTION = "option_action",
  SUBACCTTO = "subaccount_to", SUBACCTFROM = "subaccount_from", RELFITID = "related_fitid" }
local function investment_transaction(r, node, where)
  local inv = node:find("INVBUY/INVTRAN") or node:find("INVSELL/INVTRAN") or node:child("INVTRAN")
  local t = { kind = node.tag:lower(), fitid = r.text(inv, "FITID") }
  local label = ("%s %s (FITID %s)"):format(where, node.tag, t.fitid or "none")
  t.trade_date = r.date(inv, "DTTRADE", label .. " DTTRADE") or nil
  t.settle_date = r.date(inv, "DTSETTLE", label .. " DTSETTLE") or nil
  t.memo = r.text(inv, "MEMO")
  t.server_id = r.text(inv, "SRVRTID")
  -- the fields of the transaction and of its INVBUY/INVSELL part
  local function collect(agg)
    for child in agg:each() do
      local amount_key, text_key = INV_AMOUNTS[child.tag], INV_TEXT[child.tag]
      if child.value == nil then amount_key, text_key = nil, nil end  -- (an aggregate by that name)
      if amount_key then t[amount_key] = r.amount(agg, child.tag, label .. " " .. child.tag) or nil
      elseif text_key then t[text_key] = child.value ~= "" and child.value:gsub("%s+$", "") or nil
      elseif child.tag == "SECID" then
        t.security = { id = r.text(child, "UNIQUEID"), type = r.text(child, "UNIQUEIDTYPE") }
      elseif child.tag == "CURRENCY" or child.tag == "ORIGCURRENCY" then
        t.currency, t.currency_rate = r.text(child, "CURSYM"), r.text(child, "CURRATE")
      end
    end
  end
  collect(node)
  local part = node:child("INVBUY") or node:child("INVSELL")
  if part then collect(part) end
  if not t.trade_date then
    r.problem(node, label .. " has no valid DTTRADE")
  end
  return t
end

local function position(r, node, where)
  local pos = node:child("INVPOS")
  if not pos then return nil end
  local secid = pos:child("SECID")
  return {
    kind = node.tag:lower(),
    security = secid and { id = r.text(secid, "UNIQUEID"), type = r.text(secid, "UNIQUEIDTYPE") },
    held_in = r.text(pos, "HELDINACCT"),
    position_type = r.text(pos, "POSTYPE"),
    units = r.amount(pos, "UNITS", where .. " UNITS") or nil,
    unit_price = r.amount(pos, "UNITPRICE", where .. " UNITPRICE") or nil,
    market_value = r.amount(pos, "MKTVAL", where .. " MKTVAL") or nil,
    price_date = r.date(pos, "DTPRICEASOF", where .. " DTPRICEASOF") or nil,
    memo = r.text(pos, "MEMO"),
  }
end

local function bank_account(r, node)
  if not node then return nil end
  return { bank_id = r.text(node, "BANKID"), branch_id = r.text(node, "BRANCHID"),
    id = r.text(node, "ACCTID"), type = r.text(node, "ACCTTYPE"), key = r.text(node, "ACCTKEY"),
    broker_id = r.text(node, "BROKERID") }
end

local STATEMENTS = {
  { rs = "STMTRS", trnrs = "STMTTRNRS", kind = "bank", account = "BANKACCTFROM" },
  { rs = "CCSTMTRS", trnrs = "CCSTMTTRNRS", kind = "creditcard", account = "CCACCTFROM" },
  { rs = "INVSTMTRS", trnrs = "INVSTMTTRNRS", kind = "investment", account = "INVACCTFROM" },
}

local function statement(r, rs, shape, where, status, trnuid)
  local st = {
    kind = shape.kind, account = bank_account(r, rs:child(shape.account)) or {},
    currency = r.text(rs, "CURDEF"), status = status, trnuid = trnuid, transactions = {},
  }
  if not st.currency then r.problem(rs, where .. " has no currency (CURDEF)") end
  st.ledger_balance = balance(r, rs:child("LEDGERBAL"), where .. "/LEDGERBAL")
  st.available_balance = balance(r, rs:child("AVAILBAL"), where .. "/AVAILBAL")
  -- pending card rows (BANKTRANLISTP, OFX 2.2): not posted yet, so not
  -- read as transactions; counted, so that an import can say so
  local pending = rs:child("BANKTRANLISTP")
  if pending then st.pending = #pending:children("STMTTRNP") end
  local list = rs:child("BANKTRANLIST") or rs:child("INVTRANLIST")
  if list then
    st.start = r.date(list, "DTSTART", where .. " DTSTART") or nil
    st["end"] = r.date(list, "DTEND", where .. " DTEND") or nil
    -- (the transactions that read stay in the tree until read: C's; the
    -- others come back in order)
    local txns, others = core.ofx_transactions(r.records, list)
    for _, o in ipairs(others) do
      if o.tag == "STMTTRN" then
        txns[o.k] = transaction(r, o.node, where, o.n)
      elseif o.k then  -- INVBANKTRAN
        local t = transaction(r, o.node:child("STMTTRN"), where, o.n)
        if t then t.subaccount_fund = r.text(o.node, "SUBACCTFUND") end
        txns[o.k] = t
      else  -- BUYSTOCK, INCOME, TRANSFER...
        st.investment_transactions = st.investment_transactions or {}
        st.investment_transactions[#st.investment_transactions + 1] = investment_transaction(r, o.node, where)
      end
    end
    core.ofx_compact(txns)
    st.transactions = r.lazy and txns or core.ofx_totable(txns)
  end
  if shape.kind == "investment" then
    st.as_of = r.date(rs, "DTASOF", where .. " DTASOF") or nil
    local poslist = rs:child("INVPOSLIST")
    if poslist then
      st.positions = {}
      for i, p in ipairs(poslist:children()) do
        st.positions[#st.positions + 1] = position(r, p, ("%s position %d"):format(where, i))
      end
    end
    local bal = rs:child("INVBAL")
    if bal then
      st.balances = { available_cash = r.amount(bal, "AVAILCASH") or nil,
        margin_balance = r.amount(bal, "MARGINBALANCE") or nil,
        short_balance = r.amount(bal, "SHORTBALANCE") or nil,
        buying_power = r.amount(bal, "BUYPOWER") or nil, list = {} }
      for _, b in ipairs(bal:find("BALLIST") and bal:find("BALLIST"):children("BAL") or {}) do
        st.balances.list[#st.balances.list + 1] = { name = r.text(b, "NAME"), description = r.text(b, "DESC"),
          type = r.text(b, "BALTYPE"), value = r.amount(b, "VALUE") or nil, date = r.date(b, "DTASOF") or nil }
      end
    end
  end
  return st
end

-- the securities list (SECLISTMSGSRSV1/SECLIST)
local function securities(r, ofx)
  local list = ofx:find("SECLISTMSGSRSV1/SECLIST")
  if not list then return nil end
  local out = {}
  for info in list:each() do
    local sec = info:child("SECINFO")
    if sec then
      local id = sec:child("SECID")
      out[#out + 1] = { kind = info.tag:lower(), id = id and r.text(id, "UNIQUEID"),
        id_type = id and r.text(id, "UNIQUEIDTYPE"), name = r.text(sec, "SECNAME"),
        ticker = r.text(sec, "TICKER"), fiid = r.text(sec, "FIID"),
        unit_price = r.amount(sec, "UNITPRICE") or nil, price_date = r.date(sec, "DTASOF") or nil }
    end
  end
  return out
end

-- the account list of an ACCTINFORS
local function accounts(r, ofx)
  local rs = ofx:find("SIGNUPMSGSRSV1/ACCTINFOTRNRS/ACCTINFORS")
  if not rs then return nil end
  local out = {}
  for info in rs:each() do
    if info.tag == "ACCTINFO" then
      local a = { description = r.text(info, "DESC"), phone = r.text(info, "PHONE") }
      for child in info:each() do
        local kind = ({ BANKACCTINFO = "bank", CCACCTINFO = "creditcard", INVACCTINFO = "investment" })[child.tag]
        if kind then
          local from = child:child("BANKACCTFROM") or child:child("CCACCTFROM") or child:child("INVACCTFROM")
          local acct = bank_account(r, from) or {}
          a.kind, a.bank_id, a.branch_id, a.id, a.type, a.broker_id =
            kind, acct.bank_id, acct.branch_id, acct.id, acct.type, acct.broker_id
          a.service_status = r.text(child, "SVCSTATUS")
        end
      end
      out[#out + 1] = a
    end
  end
  return out
end

--- The typed content of a parsed document (see `parse`).
local function typed(doc, strict, lazy)
  local r = reader(doc, strict, lazy)
  local ofx = doc:child("OFX") or doc
  local head = doc.header
  local out = { header = head.fields, header_kind = head.kind, charset = doc.charset, statements = {},
    status = {}, warnings = r.warnings, tree = doc }
  out.version = head.fields.VERSION
  local sonrs = ofx:find("SIGNONMSGSRSV1/SONRS")
  if sonrs then
    out.signon = r.status(sonrs:child("STATUS")) or {}
    out.signon.server_time = r.date(sonrs, "DTSERVER", "SONRS/DTSERVER") or nil
    out.signon.language = r.text(sonrs, "LANGUAGE")
    out.signon.org = r.text(sonrs, "FI/ORG")
    out.signon.fid = r.text(sonrs, "FI/FID")
  end
  for msgs in ofx:each() do
    for trnrs in msgs:each() do
      for _, shape in ipairs(STATEMENTS) do
        if trnrs.tag == shape.trnrs then
          local status = r.status(trnrs:child("STATUS"))
          local trnuid = r.text(trnrs, "TRNUID")
          out.status[#out.status + 1] = { kind = shape.kind, trnuid = trnuid, code = status and status.code,
            severity = status and status.severity, message = status and status.message,
            meaning = status and status.meaning }
          for _, rs in ipairs(trnrs:children(shape.rs)) do
            if rs.value == nil then
              out.statements[#out.statements + 1] = statement(r, rs, shape,
                ("%s %d"):format(shape.rs, #out.statements + 1), status, trnuid)
            else
              r.problem(trnrs, ("<%s> holds text, not a statement: left out"):format(shape.rs))
            end
          end
        end
      end
    end
  end
  out.securities = securities(r, ofx)
  out.accounts = accounts(r, ofx)
  out.discarded = r.discarded or 0
  return out
end

--- Parse OFX text into typed statements.
-- @tparam string text the file's bytes
-- @tparam[opt] table opts `strict`; `lazy`: each statement's
--   `transactions` is a list that reads a transaction from the tree when
--   it is indexed (`t[i]`, `#t`, `ipairs`, `pairs`, assigning and
--   appending work; `next` does not) and whose JSON (`sift.json`) is
--   written from the tree: what `sift ofx` uses, a million transactions
--   being seven million strings otherwise. By default it is a table.
-- @return `{ version, header, signon, statements, status, securities,
--   accounts, warnings, discarded, tree }`, or nil, message, code
function M.parse(text, opts)
  local strict = opts and opts.strict
  local doc, err, code = grammar.parse(text, opts)
  if not doc then return nil, err, code end
  if strict and #doc.warnings > 0 then
    return nil, doc.warnings[1].message, "corrupt"
  end
  local result, problem = grammar.protect(#text, typed, doc, strict, opts and opts.lazy)
  if not result then return nil, problem, "corrupt" end
  if not doc:child("OFX") and not strict then
    table.insert(result.warnings, 1, { message = "no <OFX> element: the file holds no statement" })
  elseif not doc:child("OFX") then
    return nil, "no <OFX> element", "corrupt"
  end
  return result
end

--- The keys of the JSON contract whose values are lists (written `[]`
-- when empty).
M.view_arrays = { statements = true, status = true, warnings = true, securities = true, accounts = true,
  transactions = true, investment_transactions = true, positions = true, list = true }

--- The document as the JSON contract has it (`sift ofx --json`): version,
-- statements, signon, status, warnings (and securities, accounts when
-- the file has them); no tree.
function M.view(doc)
  local warnings = {}
  for i, w in ipairs(doc.warnings) do
    warnings[i] = { line = w.line, column = w.column, message = w.message }
  end
  return { version = doc.version, statements = doc.statements, signon = doc.signon, status = doc.status,
    warnings = warnings, securities = doc.securities, accounts = doc.accounts, discarded = doc.discarded }
end

--- Read an OFX or QFX file (see `parse`); errors name the file.
function M.read(path, opts)
  local f, err = io.open(path, "rb")
  if not f then return nil, err, "io" end
  local text = f:read("a")
  f:close()
  local doc, msg, code = M.parse(text, opts)
  if not doc then return nil, path .. ": " .. msg, code end
  doc.path = path
  return doc
end

--- The smallest and largest value of key among a list of transactions
-- (a table, or a lazy list: see `parse`), nil when none has it.
function M.range(transactions, key)
  if type(transactions) == "userdata" then return core.ofx_range(transactions, key) end
  local low, high
  for _, t in ipairs(transactions) do
    local v = t[key]
    if v ~= nil and (low == nil or v < low) then low = v end
    if v ~= nil and (high == nil or v > high) then high = v end
  end
  return low, high
end

-- }======================================================

return M
