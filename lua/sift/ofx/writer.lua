--- Writing OFX: a tree (as `sift.ofx.grammar` builds it) or typed bank and
-- credit-card statements (as `sift.ofx` reads them) as OFX 1.x SGML or
-- 2.x XML. The direct-connect client builds its requests with it.
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

local SHAPES = {
  bank = { msgs = "BANKMSGSRSV1", trnrs = "STMTTRNRS", rs = "STMTRS", acct = "BANKACCTFROM" },
  creditcard = { msgs = "CREDITCARDMSGSRSV1", trnrs = "CCSTMTTRNRS", rs = "CCSTMTRS", acct = "CCACCTFROM" },
}

--- A tree of a typed document (`sift.ofx.parse`): the signon and its bank
-- and credit-card statements. Investment statements are written from
-- their tree (`doc.tree`) instead.
function M.tree(doc)
  local ofx = N("OFX", {})
  local s = doc.signon or {}
  ofx[#ofx + 1] = N("SIGNONMSGSRSV1", { N("SONRS", { status_node(s),
    L("DTSERVER", M.date(s.server_time) or "19700101"), L("LANGUAGE", s.language or "ENG"),
    (s.org or s.fid) and N("FI", { opt("ORG", s.org), opt("FID", s.fid) }) }) })
  local groups = {}
  for _, st in ipairs(doc.statements) do
    local shape = SHAPES[st.kind]
    if not shape then error(("cannot write a %s statement from its values; write doc.tree"):format(st.kind), 2) end
    local a = st.account
    local acct = N(shape.acct, { opt("BANKID", a.bank_id), opt("BRANCHID", a.branch_id), L("ACCTID", a.id),
      opt("ACCTTYPE", a.type), opt("ACCTKEY", a.key) })
    local list = N("BANKTRANLIST", { opt("DTSTART", M.date(st.start)), opt("DTEND", M.date(st["end"])) })
    for _, t in ipairs(st.transactions) do list[#list + 1] = transaction_node(t) end
    local rs = N(shape.rs, { L("CURDEF", st.currency), acct, list,
      balance_node("LEDGERBAL", st.ledger_balance), balance_node("AVAILBAL", st.available_balance) })
    local msgs = groups[shape.msgs]
    if not msgs then
      msgs = N(shape.msgs, {})
      groups[shape.msgs] = msgs
      ofx[#ofx + 1] = msgs
    end
    msgs[#msgs + 1] = N(shape.trnrs, { L("TRNUID", st.trnuid or "0"), status_node(st.status), rs })
  end
  return ofx
end

-- }======================================================

return M
