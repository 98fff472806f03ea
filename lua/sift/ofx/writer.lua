--- Writing OFX: a tree (as `sift.ofx.grammar` builds it) or typed bank,
-- credit-card and investment statements (as `sift.ofx` reads them) as
-- OFX 1.x SGML or 2.x XML. The direct-connect client builds its requests with it.
--
--     local writer = require "sift.ofx.writer"
--     local text = writer.write(doc.tree, { version = 2 })
--     local tree = writer.tree(doc)              -- typed statements -> tree
--     local node = writer.node("STMTRQ", { writer.node("INCTRAN", { writer.leaf("INCLUDE", "Y") }) })
-- @module sift.ofx.writer

local grammar = require "sift.ofx.grammar"

local M = {}

--- An element (a leaf with a value).
function M.leaf(tag, value)
  return setmetatable({ tag = tag, value = tostring(value) }, grammar.Node)
end

--- An aggregate with children (aggregates and leaves); nil children are
-- skipped.
function M.node(tag, children)
  local n, last = setmetatable({ tag = tag }, grammar.Node), 0
  for i in pairs(children or {}) do
    if math.type(i) == "integer" and i > last then last = i end
  end
  for i = 1, last do
    local c = children[i]
    if c and c.value ~= nil then  -- an element: its tag and value (as the grammar keeps them)
      n[#n + 1], n[#n + 2] = c.tag, c.value
    elseif c then
      n[#n + 1] = c
    end
  end
  return n
end

local function escape(s)
  return (s:gsub("[&<>]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }))
end

local function v1_header(version, ascii)
  return table.concat({ "OFXHEADER:100", "DATA:OFXSGML", "VERSION:" .. version, "SECURITY:NONE",
    ascii and "ENCODING:USASCII" or "ENCODING:UTF-8", ascii and "CHARSET:1252" or "CHARSET:NONE",
    "COMPRESSION:NONE", "OLDFILEUID:NONE", "NEWFILEUID:NONE", "", "" }, "\r\n")
end

local function v2_header(version)
  return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\r\n'
    .. ('<?OFX OFXHEADER="200" VERSION="%s" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>\r\n'):format(version)
end

--- OFX text of a tree (its `OFX` element, or the node itself).
-- @tparam table node a document or any node
-- @tparam[opt] table opts `version` (1 or 2, or "102", "211"...; default
--   1), `close_leaves` (SGML: write leaf end tags too), `newline`
--   ("\r\n" by default; "" for one line)
-- @treturn string
function M.write(node, opts)
  opts = opts or {}
  local version = tostring(opts.version or 1)
  local xml = version:sub(1, 1) == "2"
  if version == "1" then version = "102" elseif version == "2" then version = "211" end
  local nl = opts.newline or "\r\n"
  local out, ascii = {}, true
  local function emit(tag, x)
    if type(x) == "string" then
      if x:find("[\128-\255]") then ascii = false end
      -- an empty element keeps its end tag, or SGML would read an aggregate
      local close = xml or opts.close_leaves or x == ""
      out[#out + 1] = ("<%s>%s%s"):format(tag, escape(x), close and ("</" .. tag .. ">") or "") .. nl
    else
      out[#out + 1] = "<" .. tag .. ">" .. nl
      for t, c in x:items() do emit(t, c) end
      out[#out + 1] = "</" .. tag .. ">" .. nl
    end
  end
  local root = node.tag == "#document" and (node:child("OFX") or node) or node
  if root.tag == "#document" then
    for t, c in root:items() do emit(t, c) end
  else
    emit(root.tag, root.value or root)
  end
  local body = table.concat(out)
  return (xml and v2_header(version) or v1_header(version, ascii)) .. body
end

--- {======================================================
-- Typed statements -> tree
-- =======================================================

--- OFX date-time text of an ISO date ("2009-04-01") or UTC time
-- ("2009-05-23T12:20:17Z").
function M.date(iso)
  if not iso then return nil end
  local y, mo, d, h, mi, s = iso:match("^(%d%d%d%d)-(%d%d)-(%d%d)T(%d%d):(%d%d):(%d%d)Z$")
  if y then return ("%s%s%s%s%s%s.000[0:GMT]"):format(y, mo, d, h, mi, s) end
  y, mo, d = iso:match("^(%d%d%d%d)-(%d%d)-(%d%d)$")
  if y then return y .. mo .. d end
  error(("not an ISO date: %q"):format(iso), 2)
end

local L, N = M.leaf, M.node
local function opt(tag, v) return v ~= nil and L(tag, v) or nil end

local function status_node(s)
  s = s or { code = 0, severity = "INFO" }
  return N("STATUS", { L("CODE", s.code or 0), L("SEVERITY", s.severity or "INFO"), opt("MESSAGE", s.message) })
end

local function transaction_node(t)
  local to
  if t.transfer_to then
    to = N("BANKACCTTO", { opt("BANKID", t.transfer_to.bank_id), opt("BRANCHID", t.transfer_to.branch_id),
      opt("ACCTID", t.transfer_to.id), opt("ACCTTYPE", t.transfer_to.type) })
  end
  return N("STMTTRN", {
    opt("TRNTYPE", t.type), L("DTPOSTED", M.date(t.posted)), opt("DTUSER", M.date(t.user_date)),
    opt("DTAVAIL", M.date(t.available_date)), L("TRNAMT", t.amount), opt("FITID", t.fitid),
    opt("CORRECTFITID", t.correct_fitid), opt("CORRECTACTION", t.correct_action),
    opt("SRVRTID", t.server_id), opt("CHECKNUM", t.checknum), opt("REFNUM", t.refnum), opt("SIC", t.sic),
    opt("PAYEEID", t.payee_id), opt("NAME", t.name), opt("EXTDNAME", t.extended_name), to,
    opt("MEMO", t.memo), t.currency and N("CURRENCY", { L("CURRATE", t.currency_rate or "1.0"), L("CURSYM", t.currency) }),
    opt("INV401KSOURCE", t.inv401k_source),
  })
end

local function balance_node(tag, b)
  if not b then return nil end
  return N(tag, { L("BALAMT", b.amount), opt("DTASOF", M.date(b.date)) })
end

-- an investment trade's fields: its part (INVBUY or INVSELL) or the trade
-- itself, in the specification's order; fields the trade does not have
-- are left out
local INV_PART = { "units", "UNITS", "unit_price", "UNITPRICE", "markup", "MARKUP", "markdown", "MARKDOWN",
  "commission", "COMMISSION", "taxes", "TAXES", "fees", "FEES", "load", "LOAD", "withholding", "WITHHOLDING",
  "total", "TOTAL", "gain", "GAIN", "state_withholding", "STATEWITHHOLDING", "penalty", "PENALTY" }
local INV_PART_TEXT = { "subaccount_security", "SUBACCTSEC", "subaccount_fund", "SUBACCTFUND",
  "inv401k_source", "INV401KSOURCE" }
local INV_TRADE = { "income_type", "INCOMETYPE", "buy_type", "BUYTYPE", "sell_type", "SELLTYPE",
  "transfer_action", "TFERACTION", "position_type", "POSTYPE", "option_action", "OPTACTION",
  "subaccount_to", "SUBACCTTO", "subaccount_from", "SUBACCTFROM", "related_fitid", "RELFITID" }
local INV_TRADE_AMOUNTS = { "accrued_interest", "ACCRDINT", "old_units", "OLDUNITS", "new_units", "NEWUNITS",
  "numerator", "NUMERATOR", "denominator", "DENOMINATOR", "fraction_cash", "FRACCASH",
  "average_cost_basis", "AVGCOSTBASIS" }

local function secid_node(sec)
  return sec and N("SECID", { L("UNIQUEID", sec.id or ""), L("UNIQUEIDTYPE", sec.type or "") })
end

local function currency_node(t)
  return t.currency and N("CURRENCY", { L("CURRATE", t.currency_rate or "1.0"), L("CURSYM", t.currency) })
end

local function add_fields(children, t, fields)
  for i = 1, #fields, 2 do
    local v = t[fields[i]]
    if v ~= nil then children[#children + 1] = L(fields[i + 1], v) end
  end
end

local function trade_node(t)
  local tag = t.kind:upper()
  local invtran = N("INVTRAN", { opt("FITID", t.fitid), opt("SRVRTID", t.server_id),
    opt("DTTRADE", M.date(t.trade_date)), opt("DTSETTLE", M.date(t.settle_date)), opt("MEMO", t.memo) })
  local part = tag:match("^BUY") and "INVBUY" or tag:match("^SELL") and "INVSELL"
  local inner = { invtran, secid_node(t.security) }
  local outer = part and {} or inner
  add_fields(inner, t, INV_PART)
  if t.currency then inner[#inner + 1] = currency_node(t) end
  add_fields(inner, t, INV_PART_TEXT)
  if part then outer[1] = N(part, inner) end
  add_fields(outer, t, INV_TRADE)
  add_fields(outer, t, INV_TRADE_AMOUNTS)
  return N(tag, outer)
end

local function position_node(p)
  return N(p.kind:upper(), { N("INVPOS", { secid_node(p.security), opt("HELDINACCT", p.held_in),
    opt("POSTYPE", p.position_type), opt("UNITS", p.units), opt("UNITPRICE", p.unit_price),
    opt("MKTVAL", p.market_value), opt("DTPRICEASOF", M.date(p.price_date)), opt("MEMO", p.memo) }) })
end

local function investment_balance_node(b)
  if not b then return nil end
  local list
  if #b.list > 0 then
    list = N("BALLIST", {})
    for _, x in ipairs(b.list) do
      list[#list + 1] = N("BAL", { opt("NAME", x.name), opt("DESC", x.description), opt("BALTYPE", x.type),
        opt("VALUE", x.value), opt("DTASOF", M.date(x.date)) })
    end
  end
  return N("INVBAL", { opt("AVAILCASH", b.available_cash), opt("MARGINBALANCE", b.margin_balance),
    opt("SHORTBALANCE", b.short_balance), opt("BUYPOWER", b.buying_power), list })
end

local function security_node(sec)
  return N(sec.kind:upper(), { N("SECINFO", {
    secid_node { id = sec.id, type = sec.id_type }, opt("SECNAME", sec.name), opt("TICKER", sec.ticker),
    opt("FIID", sec.fiid), opt("UNITPRICE", sec.unit_price), opt("DTASOF", M.date(sec.price_date)) }) })
end

local SHAPES = {
  bank = { msgs = "BANKMSGSRSV1", trnrs = "STMTTRNRS", rs = "STMTRS", acct = "BANKACCTFROM" },
  creditcard = { msgs = "CREDITCARDMSGSRSV1", trnrs = "CCSTMTTRNRS", rs = "CCSTMTRS", acct = "CCACCTFROM" },
  investment = { msgs = "INVSTMTMSGSRSV1", trnrs = "INVSTMTTRNRS", rs = "INVSTMTRS", acct = "INVACCTFROM" },
}

-- a statement's response aggregate (STMTRS, CCSTMTRS, INVSTMTRS)
local function statement_node(st, shape)
  local a = st.account
  if st.kind ~= "investment" then
    local list = N("BANKTRANLIST", { opt("DTSTART", M.date(st.start)), opt("DTEND", M.date(st["end"])) })
    for _, t in ipairs(st.transactions) do list[#list + 1] = transaction_node(t) end
    return N(shape.rs, { L("CURDEF", st.currency), N(shape.acct, { opt("BANKID", a.bank_id),
      opt("BRANCHID", a.branch_id), L("ACCTID", a.id), opt("ACCTTYPE", a.type), opt("ACCTKEY", a.key) }),
      list, balance_node("LEDGERBAL", st.ledger_balance), balance_node("AVAILBAL", st.available_balance) })
  end
  local list = N("INVTRANLIST", { opt("DTSTART", M.date(st.start)), opt("DTEND", M.date(st["end"])) })
  for _, t in ipairs(st.investment_transactions or {}) do list[#list + 1] = trade_node(t) end
  for _, t in ipairs(st.transactions) do
    list[#list + 1] = N("INVBANKTRAN", { transaction_node(t), opt("SUBACCTFUND", t.subaccount_fund) })
  end
  local positions
  if st.positions then
    positions = N("INVPOSLIST", {})
    for _, p in ipairs(st.positions) do positions[#positions + 1] = position_node(p) end
  end
  return N(shape.rs, { opt("DTASOF", M.date(st.as_of)), L("CURDEF", st.currency),
    N(shape.acct, { opt("BROKERID", a.broker_id), L("ACCTID", a.id) }),
    list, positions, investment_balance_node(st.balances) })
end

--- A tree of a typed document (`sift.ofx.parse`): the signon, its bank,
-- credit-card and investment statements, and its securities list.
function M.tree(doc)
  local ofx = N("OFX", {})
  local s = doc.signon or {}
  ofx[#ofx + 1] = N("SIGNONMSGSRSV1", { N("SONRS", { status_node(s),
    L("DTSERVER", M.date(s.server_time) or "19700101"), L("LANGUAGE", s.language or "ENG"),
    (s.org or s.fid) and N("FI", { opt("ORG", s.org), opt("FID", s.fid) }) }) })
  local groups = {}
  for _, st in ipairs(doc.statements) do
    local shape = SHAPES[st.kind]
    if not shape then error(("cannot write a %s statement"):format(tostring(st.kind)), 2) end
    local msgs = groups[shape.msgs]
    if not msgs then
      msgs = N(shape.msgs, {})
      groups[shape.msgs] = msgs
      ofx[#ofx + 1] = msgs
    end
    msgs[#msgs + 1] = N(shape.trnrs, { opt("TRNUID", st.trnuid), status_node(st.status),
      statement_node(st, shape) })
  end
  if doc.securities then
    local list = N("SECLIST", {})
    for _, sec in ipairs(doc.securities) do list[#list + 1] = security_node(sec) end
    ofx[#ofx + 1] = N("SECLISTMSGSRSV1", { list })
  end
  return ofx
end

-- }======================================================

return M
