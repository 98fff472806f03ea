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
local function request_text(profile, ofx)
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
  return request_text(profile, ofx)
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
  return request_text(profile, N("OFX", children))
end

-- {======================================================
-- Redaction: the password in any form a server may echo it
-- =======================================================

-- the shortest piece of a password that is hidden wherever it appears
M.REDACT_PIECE = 6

local NAMED = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'", nbsp = " " }

-- a view of text decoded by one step: the decoded text and, for every
-- escape, a segment {decoded start, decoded end, source start, source end};
-- bytes between segments are copied one for one. `parent` is the text it
-- was decoded from (nil: the original).
local function view(text, segs, parent)
  return { text = text, segs = segs, parent = parent }
end

-- decode text with fn(text, i) -> (decoded, j) for an escape starting at
-- i and ending at j, or nil; `first` finds the next candidate position
local function decode(v, first, fn)
  local src, out, segs, n = v.text, {}, {}, 0
  local i, copied = 1, 1
  while true do
    local at = src:find(first, i)
    if not at then break end
    local decoded, j = fn(src, at)
    if decoded then
      if at > copied then
        out[#out + 1] = src:sub(copied, at - 1)
        n = n + (at - copied)
      end
      out[#out + 1] = decoded
      segs[#segs + 1] = { n + 1, n + #decoded, at, j }
      n = n + #decoded
      copied, i = j + 1, j + 1
    else
      i = at + 1
    end
  end
  if #segs == 0 then return nil end  -- (nothing decoded: the same text)
  out[#out + 1] = src:sub(copied)
  return view(table.concat(out), segs, v)
end

-- &amp; &lt; &gt; &quot; &apos; &nbsp; &#NN; &#xHH; (any case)
local function entity(src, at)
  local body, j = src:match("^&(#?[%w]+);()", at)
  if not body then return nil end
  local code = body:match("^#[xX](%x+)$")
  code = code and tonumber(code, 16) or tonumber(body:match("^#(%d+)$") or "")
  if code then
    if code > 0x10FFFF then return nil end
    return utf8.char(code), j - 1
  end
  local named = NAMED[body:lower()]
  return named, named and j - 1
end

-- %XX, and + as a space when `plus`
local function percent(plus)
  return function(src, at)
    if src:sub(at, at) == "+" then return plus and " " or nil, at end
    local h = src:match("^%%(%x%x)", at)
    return h and string.char(tonumber(h, 16)), h and at + 2
  end
end
local PERCENT, PERCENT_PLUS = percent(false), percent(true)

-- the bytes of v's parent that decoded to the byte at pos of v: first and
-- last (an escape's whole span, or the one byte copied)
local function to_parent(v, pos)
  local segs, lo, hi, k = v.segs, 1, #v.segs, nil
  while lo <= hi do  -- the last segment starting at or before pos
    local mid = (lo + hi) // 2
    if segs[mid][1] <= pos then k, lo = mid, mid + 1 else hi = mid - 1 end
  end
  if not k then return pos, pos end
  local seg = segs[k]
  if pos <= seg[2] then return seg[3], seg[4] end
  local p = seg[4] + (pos - seg[2])
  return p, p
end

-- where the bytes a..b of view v came from in the original text
local function origin(v, a, b)
  while v.parent do
    a = (to_parent(v, a))
    local _, last = to_parent(v, b)
    b, v = last, v.parent
  end
  return a, b
end

-- the spans of the original text where the views hold a piece of the password
local function spans_of(views, pieces)
  local spans = {}
  for _, v in ipairs(views) do
    local low = v.text:lower()
    for _, piece in ipairs(pieces) do
      local i = 1
      while true do
        local a, b = low:find(piece, i, true)
        if not a then break end
        spans[#spans + 1] = { origin(v, a, b) }
        i = a + 1
      end
    end
  end
  return spans
end

--- Text with the password replaced by *** wherever it shows: in
-- USERPASS, and, when `password` is given, any piece of it of
-- `M.REDACT_PIECE` (6) characters or more (the whole of a shorter one),
-- in any case, as it is or escaped for XML/HTML (`&amp;`, `&lt;`, `&#38;`,
-- `&#x26;`...), URL-encoded (`%26`, `+` for a space) or both: the
-- escaped span is what is replaced. A server that echoes the password
-- upper-cased, escaped or cut to its first characters gets none of it
-- printed.
function M.redact(s, password)
  s = tostring(s)
  s = s:gsub("(<USERPASS>)([^<\r\n]*)", "%1***")
  if not password or password == "" then return s end
  local pw = password:lower()
  local size = math.min(M.REDACT_PIECE, #pw)
  local pieces, seen = {}, {}
  for i = 1, #pw - size + 1 do
    local piece = pw:sub(i, i + size - 1)
    if not seen[piece] then seen[piece], pieces[#pieces + 1] = true, piece end
  end
  local raw = view(s, {})
  local views = { raw }
  local html = s:find("&", 1, true) and decode(raw, "&", entity)
  local url = s:find("%", 1, true) and decode(raw, "%%", PERCENT)
  local form = s:find("[%%+]") and decode(raw, "[%%+]", PERCENT_PLUS)
  views[#views + 1] = html or nil
  views[#views + 1] = url or nil
  views[#views + 1] = form or nil
  if html and html.text:find("&", 1, true) then  -- escaped twice (&amp;lt;)
    views[#views + 1] = decode(html, "&", entity)
  end
  if html then  -- escaped both ways, in either order
    views[#views + 1] = html.text:find("%", 1, true) and decode(html, "%%", PERCENT) or nil
    views[#views + 1] = html.text:find("[%%+]") and decode(html, "[%%+]", PERCENT_PLUS) or nil
  end
  if url and url.text:find("&", 1, true) then views[#views + 1] = decode(url, "&", entity) end
  if form and form.text:find("&", 1, true) then views[#views + 1] = decode(form, "&", entity) end
  local spans = spans_of(views, pieces)
  if #spans == 0 then return s end
  table.sort(spans, function(a, b) return a[1] < b[1] end)
  local out, pos, i = {}, 1, 1
  while i <= #spans do
    local a, b = spans[i][1], spans[i][2]
    i = i + 1
    while i <= #spans and spans[i][1] <= b + 1 do  -- overlapping or touching: one ***
      b = math.max(b, spans[i][2])
      i = i + 1
    end
    out[#out + 1] = s:sub(pos, a - 1)
    out[#out + 1] = "***"
    pos = b + 1
  end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

-- }======================================================

return M
