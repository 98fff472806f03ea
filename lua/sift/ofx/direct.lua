--- OFX Direct Connect: download the account list and statements from a
-- bank's OFX server with a profile, keeping the password out of every
-- file, log and message.
--
--     local direct = require "sift.ofx.direct"
--     local profiles = assert(direct.load_profiles("profiles.ini"))
--     local p = profiles.mybank
--     local password = assert(direct.password(p))
--     local accounts = assert(direct.accounts(p, password))
--     local doc, text = assert(direct.statements(p, password, { since = "2024-01-01" }))
--
-- A profile file (INI):
--
--     [mybank]
--     url = https://ofx.mybank.example/ofx
--     org = MYBANK
--     fid = 1234
--     user = jdoe
--     appid = QWIN              ; the default, as are appver 2700 and version 102
--     version = 103
--     close_leaves = no         ; v1 without leaf end tags (some servers want them, some refuse them)
--     newlines = yes
--     password_command = pass show bank/mybank   ; or password_env = MYBANK_PASSWORD
--     cafile = /path/to/cert.pem                 ; trust this certificate (a self-signed server)
--     account = bank 121000248 1234567 CHECKING
--     account = creditcard 4111111111111111 MY CREDIT CARD   ; (a description may follow)
--     account = investment broker.example.com 987654
-- @module sift.ofx.direct

local core = require "sift.core"
local ofx = require "sift.ofx"
local request = require "sift.ofx.request"
local http = require "sift.ofx.http"

local M = {}

-- {======================================================
-- Profiles
-- =======================================================

local function config_home()
  local x = os.getenv("XDG_CONFIG_HOME")
  if x and x ~= "" then return x end
  return (os.getenv("HOME") or ".") .. "/.config"
end

local function data_home()
  local x = os.getenv("XDG_DATA_HOME")
  if x and x ~= "" then return x end
  return (os.getenv("HOME") or ".") .. "/.local/share"
end

--- The default profile file: $SIFT_PROFILES or ~/.config/sift/profiles.ini.
function M.default_profiles()
  local env = os.getenv("SIFT_PROFILES")
  if env and env ~= "" then return env end
  return config_home() .. "/sift/profiles.ini"
end

local BOOLEAN = { yes = true, ["true"] = true, on = true, ["1"] = true, no = false, ["false"] = false, off = false,
  ["0"] = false }

-- the bank account types OFX knows (ACCTTYPE)
local BANK_TYPES = { CHECKING = true, SAVINGS = true, MONEYMRKT = true, CREDITLINE = true, CD = true }

-- "bank BANKID ACCTID [TYPE] [DESCRIPTION]", "creditcard ACCTID
-- [DESCRIPTION]", "investment BROKERID ACCTID [DESCRIPTION]": the lines
-- `sift fetch accounts` prints, pasted back (the description is the
-- bank's name for the account, kept but not sent)
local function account_line(value)
  local words = {}
  for w in value:gmatch("%S+") do words[#words + 1] = w end
  local function description(from)
    return #words >= from and table.concat(words, " ", from) or nil
  end
  local kind = words[1]
  if kind == "bank" and #words >= 3 then
    local t = (words[4] or "CHECKING"):upper()
    if not BANK_TYPES[t] then return nil end
    return { kind = "bank", bank_id = words[2], id = words[3], type = t, description = description(5) }
  elseif kind == "creditcard" and #words >= 2 then
    return { kind = "creditcard", id = words[2], description = description(3) }
  elseif kind == "investment" and #words >= 3 then
    return { kind = "investment", broker_id = words[2], id = words[3], description = description(4) }
  end
end

--- The profile line for an account (as `accounts` lists them), which
-- `load_profiles` reads back: `account = creditcard 4111... MY CARD`.
function M.account_line(a)
  local parts = { "account =", a.kind }
  if a.kind == "bank" then
    parts[#parts + 1] = a.bank_id
    parts[#parts + 1] = a.id
    parts[#parts + 1] = a.type or "CHECKING"
  elseif a.kind == "investment" then
    parts[#parts + 1] = a.broker_id
    parts[#parts + 1] = a.id
  else
    parts[#parts + 1] = a.id
  end
  -- (a description holding " ;" or " #" would be cut there as a comment)
  local d = a.description and a.description:gsub("%s+[;#].*$", ""):gsub("%s+", " "):gsub("^ ", "")
  if d and d ~= "" then parts[#parts + 1] = d end
  return table.concat(parts, " ")
end

--- Read a profile file.
-- @return `{ [name] = profile }`, or nil and "file:line: why"
function M.load_profiles(path)
  path = path or M.default_profiles()
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local profiles, current, n = {}, nil, 0
  for line in f:lines() do
    n = n + 1
    line = line:gsub("%s+[;#].*$", ""):gsub("^%s*[;#].*$", "")
    local section = line:match("^%s*%[%s*([^%]]-)%s*%]%s*$")
    local key, value = line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
    if section then
      current = { name = section, accounts = {} }
      profiles[section] = current
    elseif key and not current then
      f:close()
      return nil, ("%s:%d: %s before any [profile]"):format(path, n, key)
    elseif key == "account" then
      local a = account_line(value)
      if not a then
        f:close()
        return nil, ("%s:%d: cannot read the account %q (bank BANKID ACCTID [TYPE [DESCRIPTION]], "
          .. "creditcard ACCTID [DESCRIPTION], investment BROKERID ACCTID [DESCRIPTION]; TYPE: CHECKING, SAVINGS, "
          .. "MONEYMRKT, CREDITLINE or CD)"):format(path, n, value)
      end
      table.insert(current.accounts, a)
    elseif key == "password" then
      f:close()
      return nil, ("%s:%d: passwords are not kept in profiles: use password_env or password_command"):format(path, n)
    elseif key then
      if BOOLEAN[value:lower()] ~= nil and (key == "close_leaves" or key == "newlines" or key == "verify") then
        current[key] = BOOLEAN[value:lower()]
      else
        current[key] = value
      end
    elseif line:match("%S") then
      f:close()
      return nil, ("%s:%d: cannot read %q"):format(path, n, line)
    end
  end
  f:close()
  for name, p in pairs(profiles) do
    if not p.url then return nil, ("%s: profile %s has no url"):format(path, name) end
    if not p.user then return nil, ("%s: profile %s has no user"):format(path, name) end
  end
  return profiles
end

--- The profile's CLIENTUID: its own `clientuid`, or one made on first
-- use and kept (the server ties its trust to it, so it must not change).
function M.clientuid(profile, dir)
  if profile.clientuid then return profile.clientuid end
  dir = dir or (data_home() .. "/sift/ofx-clientuid")
  local path = dir .. "/" .. profile.name:gsub("[^%w._-]", "_")
  local f = io.open(path, "r")
  if f then
    local id = f:read("l")
    f:close()
    if id and id:match("^%x+%-%x+%-%x+%-%x+%-%x+$") then return id end
  end
  local id = request.uuid()
  f = assert(require("sift.finance.store").open_private(path, "w", true))
  f:write(id, "\n")
  f:close()
  return id
end

-- }======================================================

-- {======================================================
-- The password
-- =======================================================

-- a command line's words, as a shell splits them without expanding
-- anything: spaces separate, '...' and "..." keep spaces, \ keeps the
-- next character. Returns the words, or nil and why.
local function words(line)
  local out, word, quote, i = {}, nil, nil, 1
  while i <= #line do
    local c = line:sub(i, i)
    if quote then
      if c == quote then quote = nil
      elseif c == "\\" and quote == '"' and i < #line then i = i + 1 word = word .. line:sub(i, i)
      else word = word .. c end
    elseif c == "'" or c == '"' then quote, word = c, word or ""
    elseif c == "\\" and i < #line then i = i + 1 word = (word or "") .. line:sub(i, i)
    elseif c:find("^%s$") then
      if word then out[#out + 1], word = word, nil end
    else word = (word or "") .. c end
    i = i + 1
  end
  if quote then return nil, "a quote is not closed" end
  if word then out[#out + 1] = word end
  if #out == 0 then return nil, "it is empty" end
  return out
end
M.words = words

--- The password of a profile: from the environment variable its
-- `password_env` names (or SIFT_OFX_PASSWORD), from the command its
-- `password_command` names (the first line of its output; a password
-- manager), or asked for at the terminal with echo off. The command is
-- run as its words, with no shell between (quotes group words; no pipes,
-- variables or globs: a script can hold those). The password is never
-- written anywhere.
-- @return the password, or nil and why
function M.password(profile, opts)
  opts = opts or {}
  local env = os.getenv(profile.password_env or "SIFT_OFX_PASSWORD")
  if env and env ~= "" then return env end
  if profile.password_command then
    local argv, why = words(profile.password_command)
    local pid, out
    if argv then pid, out = core.spawn(argv, { stdout = true }) end
    if not pid then
      return nil, ("password_command of profile %s cannot run: %s"):format(profile.name, argv and out or why)
    end
    local line = out:read("l")
    out:close()
    local how, status = core.wait(pid)
    if how ~= "exit" or status ~= 0 or not line or line == "" then
      return nil, ("password_command of profile %s gave no password"):format(profile.name)
    end
    return line
  end
  local tty = io.open("/dev/tty", "r+")
  if not tty or opts.no_prompt then
    if tty then tty:close() end
    return nil, ("no password for profile %s: set %s, or password_command in the profile"):format(profile.name,
      profile.password_env or "SIFT_OFX_PASSWORD")
  end
  tty:write(("Password for %s at %s: "):format(profile.user, profile.org or profile.name))
  tty:flush()
  local echoed = core.echo(tty, false)
  local line = tty:read("l")
  if echoed then core.echo(tty, true) end
  tty:write("\n")
  tty:close()
  if not line or line == "" then return nil, "no password given" end
  return line
end

-- }======================================================

-- {======================================================
-- Talking to the server
-- =======================================================

-- an HTML page's title, quoted ("no title" when it has none), when the
-- answer is one (a maintenance or login page where OFX was expected): its
-- Content-Type says text/html, or it starts with <!DOCTYPE html> or <html>
local function html_title(body, headers)
  local start = body:sub(1, 512):gsub("^\239\187\191", ""):gsub("^%s+", ""):lower()
  local ctype = (headers and headers["content-type"] or ""):lower()
  if not (ctype:find("^%s*text/html") or start:find("^<!doctype%s+html") or start:find("^<html[%s>]")) then
    return nil
  end
  local title = body:match("<[Tt][Ii][Tt][Ll][Ee][^>]*>(.-)</[Tt][Ii][Tt][Ll][Ee]%s*>")
  if not title then return "no title" end
  local named = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'", nbsp = " " }
  title = title:gsub("&(#?[xX]?)(%w+);", function(kind, name)
    local n = kind == "#" and tonumber(name) or kind:lower() == "#x" and tonumber(name, 16)
    if n and n < 0x110000 then return utf8.char(n) end
    return kind == "" and named[name:lower()] or nil
  end):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  if #title > 200 then title = title:sub(1, 200):gsub("[\128-\191]*[\192-\255]?$", "") .. "..." end
  return '"' .. title .. '"'
end

-- post a request; the log sees it and the answer with the password hidden
local function exchange(profile, password, text, opts)
  local log = opts.log
  if profile.verify == false then  -- said on every use: it must not be forgotten in a profile
    local warn = opts.warn or function(msg) io.stderr:write("sift: warning: ", msg, "\n") end
    warn(("TLS verification is off for %s (verify = no in its profile): anyone between you and %s can "
      .. "read your password"):format(profile.name or profile.url, profile.url))
  end
  if log then log(("POST %s\n%s"):format(profile.url, request.redact(text, password))) end
  local body, err, code = http.post(profile.url, text, { timeout = opts.timeout or tonumber(profile.timeout),
    cafile = opts.cafile or profile.cafile, verify = profile.verify, max_response = opts.max_response })
  if not body then return nil, request.redact(err, password), code end
  if log then log(("RESPONSE from %s\n%s"):format(profile.url, request.redact(body, password))) end
  local page = html_title(body, code)
  if page then
    return nil, request.redact(("the server answered with an HTML page, not OFX: %s"):format(page), password),
      "unknown_format"
  end
  local doc, msg, pcode = ofx.parse(body)
  if not doc then return nil, ("the server's answer is not OFX: %s"):format(request.redact(msg, password)), pcode end
  local s = doc.signon
  if not s then return nil, "the server's answer has no sign-on response", "ofx_status" end
  if s.code ~= 0 then
    return nil, request.redact(("sign-on refused by %s: %s %s: %s"):format(profile.org or profile.url,
      tostring(s.code), s.severity or "", s.message or s.meaning or "no message"), password), "ofx_status", s.code
  end
  return doc, body
end

local function with_clientuid(profile, opts)
  local p = setmetatable({}, { __index = profile })
  if tonumber(tostring(profile.version or "102"):sub(1, 3)) >= 103 then
    p.clientuid = M.clientuid(profile, opts.state_dir)
  end
  return p
end

--- The accounts the server has for this user (ACCTINFORS).
-- @tparam table opts `log` (a function given each request and answer,
--   password hidden), `cafile`, `timeout`, `state_dir`, `max_response`
--   (bytes), `warn` (a function given warnings; default: stderr)
-- @return list of `{ kind, bank_id, broker_id, id, type, description }`,
--   or nil, message, code
function M.accounts(profile, password, opts)
  opts = opts or {}
  local p = with_clientuid(profile, opts)
  local doc, err, code = exchange(p, password, request.accounts(p, password), opts)
  if not doc then return nil, err, code end
  for _, s in ipairs(doc.status) do
    if s.code and s.code ~= 0 then
      return nil, request.redact(("the account list was refused: %d %s"):format(s.code, s.message or s.meaning or ""),
        password), "ofx_status"
    end
  end
  local out = {}
  for _, a in ipairs(doc.accounts or {}) do
    out[#out + 1] = { kind = a.kind, bank_id = a.bank_id, branch_id = a.branch_id, broker_id = a.broker_id,
      id = a.id, type = a.type, description = a.description }
  end
  return out
end

--- Download statements: of the profile's accounts, or of every account
-- the server lists when the profile names none.
-- @tparam table opts `since`, `until` (ISO dates), `accounts`, and as
--   for `accounts`
-- @return the typed document (as `sift.ofx.parse` gives) and the
--   response text; or nil, message, code. Statements the server refused
--   are in doc.status (and doc.refused counts them).
function M.statements(profile, password, opts)
  opts = opts or {}
  local accounts = opts.accounts or (#(profile.accounts or {}) > 0 and profile.accounts)
  if not accounts then
    local err, code
    accounts, err, code = M.accounts(profile, password, opts)
    if not accounts then return nil, err, code end
  end
  if #accounts == 0 then return nil, "no accounts to ask for", "ofx_status" end
  local p = with_clientuid(profile, opts)
  local doc, text_or_err, code = exchange(p, password, request.statements(p, password, accounts,
    { since = opts.since, ["until"] = opts["until"] }), opts)
  if not doc then return nil, text_or_err, code end
  doc.refused = 0
  for _, s in ipairs(doc.status) do
    if s.code and s.code ~= 0 then doc.refused = doc.refused + 1 end
  end
  if doc.refused > 0 and #doc.statements == 0 then
    local s = doc.status[1]
    return nil, request.redact(("the statement request was refused: %d %s"):format(s.code,
      s.message or s.meaning or ""), password), "ofx_status"
  end
  return doc, text_or_err
end

-- }======================================================

return M
