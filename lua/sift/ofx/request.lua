--- OFX requests for Direct Connect: sign-on, account list, bank, credit
-- card and investment statements, as v1 SGML (with or without leaf end
-- tags) or v2 XML, written with `sift.ofx.writer`.
--
--     local request = require "sift.ofx.request"
--     local profile = { org = "MYBANK", fid = "1234", user = "jdoe", appid = "QWIN", appver = "2700",
--       version = "103", clientuid = request.uuid() }
--     local text = request.statements(profile, password, accounts, { since = "2024-01-01" })
--     print(request.redact(text))              -- the password as ***
-- @module sift.ofx.request

local writer = require "sift.ofx.writer"

local L, N = writer.leaf, writer.node

local M = {}

--- A random UUID (version 4), from /dev/urandom: TRNUIDs and CLIENTUIDs.
function M.uuid()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = { f:read(16):byte(1, 16) }
  f:close()
  b[7] = (b[7] & 0x0F) | 0x40
  b[9] = (b[9] & 0x3F) | 0x80
  return ("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x"):format(table.unpack(b))
end

-- "2024-01-31" or "2024-01-31T10:00:00Z" -> OFX date-time text
local function ofx_date(iso)
  if iso == nil then return nil end
  return writer.date(iso)
end

local function version_number(profile)
  return tonumber(tostring(profile.version or "102"):sub(1, 3)) or 102
end

--- The sign-on request (SONRQ) of a profile: `org`, `fid`, `user`,
-- `appid` (QWIN), `appver` (2700), `language` (ENG), `clientuid` (sent
-- from version 103 on, as the specification introduced it).
function M.signon(profile, password, now)
  assert(profile.user, "the profile has no user")
  assert(password, "no password")
  local fi
  if profile.org or profile.fid then
    fi = N("FI", { profile.org and L("ORG", profile.org), profile.fid and L("FID", profile.fid) })
  end
  return N("SONRQ", {
    L("DTCLIENT", now or os.date("!%Y%m%d%H%M%S.000[0:GMT]")),
    L("USERID", profile.user),
    L("USERPASS", password),
    L("LANGUAGE", profile.language or "ENG"),
    fi,
    L("APPID", profile.appid or "QWIN"),
    L("APPVER", profile.appver or "2700"),
    version_number(profile) >= 103 and profile.clientuid and L("CLIENTUID", profile.clientuid) or nil,
  })
end

-- the account aggregate of a statement request
local function account_from(a)
  if a.kind == "creditcard" then return N("CCACCTFROM", { L("ACCTID", a.id) }) end
  if a.kind == "investment" then return N("INVACCTFROM", { L("BROKERID", a.broker_id or a.bank_id), L("ACCTID", a.id) }) end
  return N("BANKACCTFROM", { L("BANKID", a.bank_id), a.branch_id and L("BRANCHID", a.branch_id) or nil,
    L("ACCTID", a.id), L("ACCTTYPE", a.type or "CHECKING") })
end

--- The statement request of one account (`kind` bank, creditcard or
-- investment; `bank_id`, `branch_id`, `broker_id`, `id`, `type`) for a
-- date range (`since`, `until`, ISO dates; either may be absent).
function M.statement_request(account, range)
  range = range or {}
  local inctran = N("INCTRAN", { ofx_date(range.since) and L("DTSTART", ofx_date(range.since)),
    ofx_date(range["until"]) and L("DTEND", ofx_date(range["until"])), L("INCLUDE", "Y") })
  local trnuid = L("TRNUID", M.uuid())
  if account.kind == "creditcard" then
    return "CREDITCARDMSGSRQV1", N("CCSTMTTRNRQ", { trnuid, N("CCSTMTRQ", { account_from(account), inctran }) })
  elseif account.kind == "investment" then
    return "INVSTMTMSGSRQV1", N("INVSTMTTRNRQ", { trnuid, N("INVSTMTRQ", { account_from(account), inctran,
      L("INCOO", "Y"), N("INCPOS", { L("INCLUDE", "Y") }), L("INCBAL", "Y") }) })
  end
  return "BANKMSGSRQV1", N("STMTTRNRQ", { trnuid, N("STMTRQ", { account_from(account), inctran }) })
end

-- the text of a request: v1 SGML (leaf end tags when the profile says
-- close_leaves) or v2 XML, newlines unless the profile says none
local function text(profile, ofx)
  return writer.write(ofx, { version = profile.version or "102", close_leaves = profile.close_leaves,
    newline = profile.newlines == false and "" or "\r\n" })
end

--- The request for the account list (ACCTINFORQ, DTACCTUP 19691231:
-- every account).
function M.accounts(profile, password, now)
  local ofx = N("OFX", {
    N("SIGNONMSGSRQV1", { M.signon(profile, password, now) }),
    N("SIGNUPMSGSRQV1", { N("ACCTINFOTRNRQ", { L("TRNUID", M.uuid()),
      N("ACCTINFORQ", { L("DTACCTUP", "19691231") }) }) }),
  })
  return text(profile, ofx)
end

--- The request for the statements of several accounts, grouped by
-- message set as the specification orders them.
function M.statements(profile, password, accounts, range, now)
  local sets, order = {}, { "BANKMSGSRQV1", "CREDITCARDMSGSRQV1", "INVSTMTMSGSRQV1" }
  for _, a in ipairs(accounts) do
    local set, trn = M.statement_request(a, range)
    sets[set] = sets[set] or {}
    table.insert(sets[set], trn)
  end
  local children = { N("SIGNONMSGSRQV1", { M.signon(profile, password, now) }) }
  for _, set in ipairs(order) do
    if sets[set] then children[#children + 1] = N(set, sets[set]) end
  end
  return text(profile, N("OFX", children))
end

--- Request (or any) text with the password replaced by *** (in
-- USERPASS, and anywhere else it appears when it is given).
function M.redact(s, password)
  s = s:gsub("(<USERPASS>)([^<\r\n]*)", "%1***")
  if password and password ~= "" then
    local start = 1
    while true do
      local i, j = s:find(password, start, true)
      if not i then break end
      s = s:sub(1, i - 1) .. "***" .. s:sub(j + 1)
      start = i + 3
    end
  end
  return s
end

return M
