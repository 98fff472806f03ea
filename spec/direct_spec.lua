-- OFX Direct Connect: requests, profiles, the HTTP client and `sift fetch`
-- against a local OFX server (spec/ofx_server.lua) over HTTP and HTTPS
-- with a self-signed certificate. The password must never show up in any
-- output, log or error.
local helper = require "spec.helper"
require("sift.paths").older_lua()  -- (lua-http, under sift.ofx.http, is packaged for Lua 5.1-5.3)
local request = require "sift.ofx.request"
local grammar = require "sift.ofx.grammar"
local direct = require "sift.ofx.direct"
local http = require "sift.ofx.http"

local PASSWORD = "Pa55-w0rd!sEcret"
local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. helper.quote(tmp)))

local PROFILE = { name = "fake", org = "FAKE", fid = "1101", user = "jdoe", appid = "QWIN", appver = "2700",
  version = "103", clientuid = "8fb0b191-4282-46ab-bf0f-66274759a73d" }

-- a local server; returns its port and a stop function
local function serve(opts)
  local words = { "fixtures=" .. helper.fixtures(), "user=jdoe", "password=" .. PASSWORD, "org=FAKE", "fid=1101" }
  for k, v in pairs(opts or {}) do words[#words + 1] = k .. "=" .. v end
  for i, w in ipairs(words) do words[i] = helper.quote(w) end
  local p = io.popen("exec lua5.4 spec/ofx_server.lua " .. table.concat(words, " ") .. " 2>&1")
  local line = p:read("l")
  local port, pid = line:match("^PORT (%d+) PID (%d+)$")
  assert(port, line)
  local output
  local function stop()
    if not output then
      os.execute("kill " .. pid)
      output = p:read("a")
      p:close()
    end
    return output
  end
  finally(stop)  -- (stopped even when the spec fails)
  return tonumber(port), stop
end

local function profiles_file(url, extra)
  local path = tmp .. "/profiles.ini"
  local f = assert(io.open(path, "w"))
  f:write(([[
# a test profile
[fake]
url = %s
org = FAKE
fid = 1101
user = jdoe
version = 103
password_env = FAKE_OFX_PASSWORD
%s
]]):format(url, extra or ""))
  f:close()
  return path
end

-- run bin/sift with the password (PASSWORD unless given) in the
-- environment and a private data dir
local function sift(args, password)
  local words = {}
  for i, a in ipairs(args) do words[i] = helper.quote(a) end
  local errfile = tmp .. "/stderr"
  local p = io.popen(("FAKE_OFX_PASSWORD=%s XDG_DATA_HOME=%s lua5.4 bin/sift %s 2>%s"):format(
    helper.quote(password or PASSWORD),
    helper.quote(tmp .. "/data"), table.concat(words, " "), errfile))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, helper.read(errfile), code
end

describe("OFX requests", function()
  it("builds sign-on, account list and statement requests the grammar reads back", function()
    local text = request.accounts(PROFILE, PASSWORD, "20240102120000.000[0:GMT]")
    local doc = assert(grammar.parse(text))
    assert.are.same({ "100", "103" }, { doc.header.fields.OFXHEADER, doc.header.fields.VERSION })
    local son = doc:find("OFX/SIGNONMSGSRQV1/SONRQ")
    assert.are.same({ "20240102120000.000[0:GMT]", "jdoe", PASSWORD, "ENG", "FAKE", "1101", "QWIN", "2700",
      PROFILE.clientuid }, { son:text("DTCLIENT"), son:text("USERID"), son:text("USERPASS"), son:text("LANGUAGE"),
      son:text("FI/ORG"), son:text("FI/FID"), son:text("APPID"), son:text("APPVER"), son:text("CLIENTUID") })
    assert.are.equal("19691231", doc:text("OFX/SIGNUPMSGSRQV1/ACCTINFOTRNRQ/ACCTINFORQ/DTACCTUP"))
    assert.matches("^%x+%-%x+%-4%x+%-[89ab]%x+%-%x+$", doc:text("OFX/SIGNUPMSGSRQV1/ACCTINFOTRNRQ/TRNUID"))
    -- no leaf end tags in v1 unless asked; CLIENTUID only from 103 on
    assert.is_nil(text:find("</USERID>", 1, true))
    local v102 = setmetatable({ version = "102" }, { __index = PROFILE })
    assert.is_nil(request.accounts(v102, PASSWORD):find("CLIENTUID", 1, true))
    local closed = setmetatable({ close_leaves = true, newlines = false }, { __index = PROFILE })
    local one_line = request.accounts(closed, PASSWORD)
    assert.truthy(one_line:find("<USERID>jdoe</USERID><USERPASS>", 1, true))
  end)

  it("asks for bank, card and investment statements over a date range, v1 or v2", function()
    local accounts = { { kind = "bank", bank_id = "121000248", id = "1234567", type = "SAVINGS" },
      { kind = "creditcard", id = "4111111111111111" }, { kind = "investment", broker_id = "b.example", id = "987" } }
    local v2 = setmetatable({ version = "211" }, { __index = PROFILE })
    local text = request.statements(v2, PASSWORD, accounts, { since = "2024-01-01", ["until"] = "2024-03-31" })
    assert.matches("^<%?xml", text)
    local doc = assert(grammar.parse(text))
    local st = doc:find("OFX/BANKMSGSRQV1/STMTTRNRQ/STMTRQ")
    assert.are.same({ "121000248", "1234567", "SAVINGS", "20240101", "20240331", "Y" }, { st:text("BANKACCTFROM/BANKID"),
      st:text("BANKACCTFROM/ACCTID"), st:text("BANKACCTFROM/ACCTTYPE"), st:text("INCTRAN/DTSTART"),
      st:text("INCTRAN/DTEND"), st:text("INCTRAN/INCLUDE") })
    assert.are.equal("4111111111111111", doc:text("OFX/CREDITCARDMSGSRQV1/CCSTMTTRNRQ/CCSTMTRQ/CCACCTFROM/ACCTID"))
    local inv = doc:find("OFX/INVSTMTMSGSRQV1/INVSTMTTRNRQ/INVSTMTRQ")
    assert.are.same({ "b.example", "987", "Y" }, { inv:text("INVACCTFROM/BROKERID"), inv:text("INVACCTFROM/ACCTID"),
      inv:text("INCPOS/INCLUDE") })
    local ids = {}
    for _, path in ipairs { "OFX/BANKMSGSRQV1/STMTTRNRQ", "OFX/CREDITCARDMSGSRQV1/CCSTMTTRNRQ",
        "OFX/INVSTMTMSGSRQV1/INVSTMTTRNRQ" } do
      ids[doc:text(path .. "/TRNUID")] = true
    end
    local n = 0
    for _ in pairs(ids) do n = n + 1 end
    assert.are.equal(3, n)
  end)

  it("hides the password in whatever it redacts", function()
    local text = request.accounts(PROFILE, PASSWORD)
    local hidden = request.redact(text .. " echo: " .. PASSWORD, PASSWORD)
    assert.is_nil(hidden:find(PASSWORD, 1, true))
    assert.truthy(hidden:find("<USERPASS>***", 1, true))
  end)
end)

-- a password with characters that HTML and URLs escape
local TRICKY = "S&cr<t-Pa55 w0rd+x"

-- the first piece of password of 6 characters or more that text shows in
-- any case, as it is or decoded (HTML entities, once or twice; %XX and +;
-- both, in either order), or nil: the spec's own decoder, not sift's
local function exposed(text, password)
  local named = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'" }
  local function html(t)
    return (t:gsub("&#[xX](%x+);", function(h) return utf8.char(tonumber(h, 16)) end)
      :gsub("&#(%d+);", function(d) return utf8.char(tonumber(d)) end)
      :gsub("&(%a+);", function(n) return named[n:lower()] end))
  end
  local function url(t, plus)
    if plus then t = t:gsub("%+", " ") end
    return (t:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
  end
  local pw = password:lower()
  for _, t in ipairs { text, html(text), html(html(text)), url(text), url(text, true), html(url(text)),
      html(url(text, true)), url(html(text)), url(html(text), true) } do
    local low = t:lower()
    for i = 1, #pw - 5 do
      if low:find(pw:sub(i, i + 5), 1, true) then return pw:sub(i, i + 5) end
    end
  end
  return nil
end

describe("the password scrubber (request.redact)", function()
  it("hides any piece of 6 characters or more, in any case, escaped or URL-encoded: the escaped span", function()
    local r = request.redact
    for _, case in ipairs {
      { "as it is: S&cr<t-Pa55 w0rd+x.", "as it is: ***." },
      { "upper: S&CR<T-PA55 W0RD+X.", "upper: ***." },
      { "named: S&amp;cr&lt;t-Pa55 w0rd+x.", "named: ***." },
      { "decimal: S&#38;cr&#60;t-Pa55 w0rd+x.", "decimal: ***." },
      { "hex: S&#x26;cr&#X3c;t-Pa55 w0rd+x.", "hex: ***." },
      { "twice: S&amp;amp;cr&amp;lt;t-Pa55 w0rd+x.", "twice: ***." },
      { "form: S%26cr%3Ct-Pa55+w0rd%2Bx.", "form: ***." },
      { "uri: S%26cr%3ct-Pa55%20w0rd+x.", "uri: ***." },
      { "both: S%26amp%3Bcr%26lt%3Bt-Pa55+w0rd%2Bx.", "both: ***." },
      { "first 8: S&amp;cr&lt;t-P.", "first 8: ***." },
      { "last 6: [w0rd+x] [w0rd%2BX]", "last 6: [***] [***]" },
      { "two: s&CR<t-pa and pa55 w0", "two: *** and ***" },
      -- 5 characters are not a piece; what is not the password stays
      { "five: S&cr<|t-Pa5|w0rd+|S&amp;cr&lt;", "five: S&cr<|t-Pa5|w0rd+|S&amp;cr&lt;" },
      { "entities elsewhere: &amp; &lt; %41 +", "entities elsewhere: &amp; &lt; %41 +" },
      { "<USERPASS>anything</USERPASS>", "<USERPASS>***</USERPASS>" },
    } do
      assert.are.equal(case[2], r(case[1], TRICKY), case[1])
    end
    -- a password under 6 characters: the whole of it, in any form
    assert.are.equal("***, ***, ***, ***; a&b: ab&", r("a&b<c, A&B<C, a&amp;b&lt;c, a%26b%3Cc; a&b: ab&", "a&b<c"))
    -- no password: only USERPASS; text that is not a string is shown as text
    assert.are.equal("<USERPASS>***\n<USERID>hunter2", r("<USERPASS>hunter2\n<USERID>hunter2"))
    assert.are.equal("12", r(12, "secret"))
  end)
end)

describe("OFX profiles", function()
  it("reads profiles, refuses passwords in them, and keeps one CLIENTUID per profile", function()
    local path = profiles_file("https://ofx.example/ofx", [[
account = bank 121000248 1234567 savings
account = creditcard 4111111111111111
close_leaves = yes]])
    local profiles = assert(direct.load_profiles(path))
    local p = profiles.fake
    assert.are.same({ "https://ofx.example/ofx", "103", true, 2, "SAVINGS", "creditcard" }, { p.url, p.version,
      p.close_leaves, #p.accounts, p.accounts[1].type, p.accounts[2].kind })
    local f = assert(io.open(path, "a"))
    f:write("password = hunter2\n")
    f:close()
    local none, err = direct.load_profiles(path)
    assert.is_nil(none)
    assert.matches("profiles.ini:%d+: passwords are not kept in profiles", err)
    local dir = tmp .. "/uid"
    local a, b = direct.clientuid({ name = "x" }, dir), direct.clientuid({ name = "x" }, dir)
    assert.are.equal(a, b)
    assert.are_not.equal(a, direct.clientuid({ name = "y" }, dir))
  end)

  it("takes the password from an environment variable or a command", function()
    assert.are.equal(os.getenv("HOME"), direct.password { name = "p", password_env = "HOME" })
    assert.are.equal("from-a-manager", direct.password { name = "p", password_env = "SIFT_NO_SUCH_VAR",
      password_command = "echo from-a-manager" })
    -- run as its words, no shell: quotes group, nothing is expanded
    assert.are.equal("a b;$HOME", direct.password { name = "p", password_env = "SIFT_NO_SUCH_VAR",
      password_command = [[printf '%s\n' "a b;$HOME"]] })
    assert.are.same({ nil, "password_command of profile p cannot run: sift-no-such-manager: No such file or directory" },
      { direct.password { name = "p", password_env = "SIFT_NO_SUCH_VAR", password_command = "sift-no-such-manager x" } })
    assert.are.same({ nil, "password_command of profile p gave no password" },
      { direct.password { name = "p", password_env = "SIFT_NO_SUCH_VAR", password_command = "false" } })
    local none, err = direct.password({ name = "p", password_env = "SIFT_NO_SUCH_VAR" }, { no_prompt = true })
    assert.is_nil(none)
    assert.matches("no password for profile p", err)
  end)
end)

-- (#once: Lua over lua-http; the OFX decoder it feeds runs under ASan in
-- the OFX specs and its fuzzer)
describe("sift fetch against a local OFX server #once", function()
  it("lists accounts, downloads statements and imports them twice without duplicates", function()
    if not helper.fixture("ofx/ofxparse/checking.ofx") then return end
    local port, stop = serve { clientuid = "yes", since = "20240101" }
    local profiles = profiles_file(("http://127.0.0.1:%d/ofx"):format(port))
    local log, db = tmp .. "/requests.log", tmp .. "/books.db"
    local outputs = {}
    local out, err, code = sift { "fetch", "accounts", "fake", "--profiles", profiles, "--log", log }
    outputs[#outputs + 1] = out .. err
    assert.are.equal(0, code, err)
    assert.matches("creditcard +4111111111111111 +MY CREDIT CARD", out)
    assert.matches("4 account%(s%)", out)
    for i = 1, 2 do
      out, err, code = sift { "fetch", "statements", "fake", "--profiles", profiles, "--since", "2024-01-01",
        "--import", "--db", db, "--log", log }
      outputs[#outputs + 1] = out .. err
      assert.are.equal(0, code, err)
      assert.matches(i == 1 and "imported: 3 new, 0 duplicate" or "imported: 0 new, 3 duplicate", out)
    end
    local server = stop()
    assert.is_nil(server:find("BAD", 1, true), server)
    assert.matches("ACCTINFO", server)
    assert.matches("STMT 0000000001", server)
    local logged = helper.read(log)
    assert.matches("<USERPASS>***", logged)
    assert.matches("RESPONSE from", logged)
    for _, text in ipairs { logged, table.concat(outputs), helper.read(db) } do
      assert.is_nil(text:find(PASSWORD, 1, true))
    end
  end)

  it("examples/fetch.lua downloads and imports with the Lua API", function()
    if not helper.fixture("ofx/ofxparse/checking.ofx") then return end
    local port = serve {}
    local profiles = profiles_file(("http://127.0.0.1:%d/ofx"):format(port), "account = bank 314074269 0000000002")
    local p = io.popen(("FAKE_OFX_PASSWORD=%s XDG_DATA_HOME=%s LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH=%s "
      .. "lua5.4 examples/fetch.lua fake %s 2024-01-01 %s 2>&1"):format(helper.quote(PASSWORD),
      helper.quote(tmp .. "/data"), helper.quote((os.getenv("SIFT_CPATH") or "build/?.so") .. ";;"),
      helper.quote(tmp .. "/example.db"), helper.quote(profiles)))
    local out = p:read("a")
    assert.is_true(p:close(), out)
    assert.matches("bank 1452687~7: 3 transactions, balance 100.99\nimported: 3 new, 0 already there", out)
    assert.is_nil(out:find(PASSWORD, 1, true))
  end)

  it("says why when the server refuses: bad credentials, HTTP errors, a statement error; follows redirects", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local cases = {
      { {}, "WRONG", "sign%-on refused by FAKE: 15500 ERROR: Your request could not be processed" },
      { { mode = "error500" }, nil, "HTTP 500 Internal Server Error from http://127%.0%.0%.1:%d+/ofx: the OFX service is down" },
      { { mode = "stmt_error" }, nil, "the statement request was refused: 2000 General Server Error" },
    }
    local all = {}
    for _, case in ipairs(cases) do
      local port, stop = serve(case[1])
      local profile = { name = "fake", url = ("http://127.0.0.1:%d/ofx"):format(port), org = "FAKE", fid = "1101",
        user = "jdoe", version = "102", accounts = { { kind = "bank", bank_id = "1", id = "2", type = "CHECKING" } } }
      local doc, err, code = direct.statements(profile, case[2] or PASSWORD, {})
      stop()
      assert.is_nil(doc)
      assert.matches(case[3], err)
      assert.is_truthy(code)
      all[#all + 1] = err
    end
    assert.is_nil(table.concat(all):find(PASSWORD, 1, true))
    local none, err, code = http.post("http://127.0.0.1:1/ofx", "x", { timeout = 5 })
    assert.are.same({ nil, "network" }, { none, code })
    assert.matches("cannot connect to 127%.0%.0%.1:1", err)
  end)

  it("never shows a password the server echoes upper-cased, escaped, URL-encoded or cut to 8 characters", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local profile = function(port)
      return { name = "fake", url = ("http://127.0.0.1:%d/ofx"):format(port), org = "FAKE", fid = "1101",
        user = "jdoe", version = "102", accounts = { { kind = "bank", bank_id = "1", id = "2", type = "CHECKING" } } }
    end
    -- the API's errors: the sign-on refusal's MESSAGE, and an HTTP 500's body
    local port, stop = serve { password = TRICKY, mode = "echo_signon" }
    local lines = {}
    local doc, err, code = direct.statements(profile(port), TRICKY, { log = function(t) lines[#lines + 1] = t end })
    assert.are.equal("signon refused, echo\n", stop())
    assert.are.same({ nil, "ofx_status" }, { doc, code })
    assert.are.equal("sign-on refused by FAKE: 15500 ERROR: you sent: *** | *** | *** | *** | *** | ***", err)
    local logged = table.concat(lines, "\n")
    assert.matches("<MESSAGE>you sent: %*%*%* | %*%*%* | %*%*%* | %*%*%* | %*%*%* | %*%*%*\r\n", logged)
    assert.is_nil(exposed(logged, TRICKY))
    port, stop = serve { password = TRICKY, mode = "echo500" }
    doc, err, code = direct.accounts(profile(port), TRICKY, {})
    assert.are.equal("500 echo\n", stop())
    assert.are.same({ nil, "http" }, { doc, code })
    assert.are.equal(("HTTP 500 Internal Server Error from http://127.0.0.1:%d/ofx: login failed, you sent: "
      .. "*** | *** | *** | *** | *** | ***"):format(port), err)
    -- the command line: stderr, stdout and the log
    for _, mode in ipairs { "echo_signon", "echo500" } do
      port, stop = serve { password = TRICKY, mode = mode }
      local log = tmp .. "/echo-" .. mode .. ".log"
      local out, serr, scode = sift({ "fetch", "accounts", "fake", "--profiles",
        profiles_file(("http://127.0.0.1:%d/ofx"):format(port)), "--log", log }, TRICKY)
      stop()
      assert.are.same({ 1, "" }, { scode, out })
      assert.matches(mode == "echo500" and "^sift: HTTP 500 Internal Server Error from [^\n]*: login failed, you sent: "
        or "^sift: sign%-on refused by FAKE: 15500 ERROR: you sent: ", serr)
      assert.matches("%*%*%* | %*%*%* | %*%*%* | %*%*%* | %*%*%* | %*%*%*\n$", serr)
      logged = helper.read(log)
      assert.matches(mode == "echo500" and "POST http" or "RESPONSE from", logged)
      for what, text in pairs { stderr = serr, log = logged } do
        assert.is_nil(exposed(text, TRICKY), mode .. " " .. what)
      end
    end
  end)

  it("over HTTPS, refuses a self-signed server unless its certificate is named", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local key, cert, other = tmp .. "/key.pem", tmp .. "/cert.pem", tmp .. "/other.pem"
    local okey = tmp .. "/other-key.pem"
    assert(os.execute(("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 2 -subj /CN=localhost "
      .. "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1"):format(key, cert)))
    assert(os.execute(("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 2 -subj /CN=bank.example "
      .. "-addext subjectAltName=DNS:bank.example >/dev/null 2>&1"):format(okey, other)))
    local port, stop = serve { cert = cert, key = key }
    local profiles = profiles_file(("https://127.0.0.1:%d/ofx"):format(port))
    local out, err, code = sift { "fetch", "accounts", "fake", "--profiles", profiles }
    assert.are.same({ 1, "" }, { code, out })
    assert.matches("sift: TLS with 127%.0%.0%.1: certificate verify failed: self%-signed certificate %(if you "
      .. "trust this server's certificate, name it with %-%-cafile%)", err)
    out, err, code = sift { "fetch", "accounts", "fake", "--profiles", profiles, "--cafile", cert }
    assert.are.equal(0, code, err)
    assert.matches("4 account%(s%)", out)
    -- by name too
    profiles = profiles_file(("https://localhost:%d/ofx"):format(port), "cafile = " .. cert)
    out, err, code = sift { "fetch", "accounts", "fake", "--profiles", profiles }
    assert.are.equal(0, code, err)
    assert.matches("4 account%(s%)", out)
    stop()
    -- a trusted certificate for another name is refused
    port, stop = serve { cert = other, key = okey }
    local body
    local opts = { cafile = other }
    body, err, code = http.post(("https://127.0.0.1:%d/ofx"):format(port), "x", opts)
    stop()
    assert.are.same({ nil, "tls" }, { body, code })
    assert.are.same({ cafile = other }, opts)  -- (post keeps its timeout and trust store in a copy)
    assert.matches("the certificate is for bank%.example, not 127%.0%.0%.1", err)
  end)

  it("sends the password only over HTTPS and to the origin asked: a same-origin 307 only", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local key, cert = tmp .. "/rkey.pem", tmp .. "/rcert.pem"
    assert(os.execute(("openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 2 -subj /CN=localhost "
      .. "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1"):format(key, cert)))
    local plain_port, stop_plain = serve {}  -- a plain listener: it must never hear from us
    local other_port, stop_other = serve { cert = cert, key = key }
    local function profile(port)
      return { name = "fake", url = ("https://127.0.0.1:%d/ofx"):format(port), org = "FAKE", fid = "1101",
        user = "jdoe", version = "102" }
    end
    for _, case in ipairs {
      { 302, "http://127.0.0.1:%d/ofx", plain_port, "it is another origin" },
      { 307, "http://127.0.0.1:%d/ofx", plain_port, "it is another origin" },
      { 307, "https://localhost:$PORT/moved", nil, "it is another origin" },  -- same port, another name
      { 308, "https://127.0.0.1:%d/ofx", other_port, "it is another origin" },
      { 302, "/moved", nil, "a 302 would not post the request again" },
    } do
      local port, stop = serve { cert = cert, key = key, mode = "redirect", status = case[1],
        location = case[3] and case[2]:format(case[3]) or case[2] }
      local accounts, why, code = direct.accounts(profile(port), PASSWORD, { cafile = cert })
      assert.is_nil(accounts)
      assert.are.equal("redirect", code)
      assert.matches(("HTTP %d from https://127%%.0%%.0%%.1:%d/ofx redirects to "):format(case[1], port), why)
      assert.matches("not followed %(" .. case[4]:gsub("%p", "%%%0") .. "[^)]*%); nothing was sent there", why)
      assert.are.equal(tostring(case[1]) .. "\n", stop())  -- one request, answered with the redirect
    end
    assert.are.equal("", stop_plain())
    assert.are.equal("", stop_other())
    -- a same-origin 307 keeps the POST and is followed
    local port, stop = serve { cert = cert, key = key, mode = "redirect", status = 307, location = "/moved" }
    local accounts = assert(direct.accounts(profile(port), PASSWORD, { cafile = cert }))
    assert.are.equal(4, #accounts)
    assert.matches("^307\nACCTINFO\n", stop())
    -- plain HTTP goes to this machine only; nothing is even connected to elsewhere
    local body, err, icode = http.post("http://192.0.2.1/ofx", "x", { timeout = 1 })
    assert.are.same({ nil, "insecure" }, { body, icode })
    assert.matches("is plain HTTP: the request carries your password", err)
  end)

  it("caps the answer's size, warns at every use of verify = no, and keeps its files private", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local port, stop = serve {}
    local url = ("http://127.0.0.1:%d/ofx"):format(port)
    local text = request.accounts(PROFILE, PASSWORD)
    local body, err, code = http.post(url, text, { max_response = 100, timeout = 5 })
    assert.are.same({ nil, "too_big" }, { body, code })
    assert.matches("the response is bigger than 100 bytes %(%d+%): refused %(%-%-max%-response%)", err)
    local warnings = {}
    local p = { name = "lax", url = url, org = "FAKE", fid = "1101", user = "jdoe", version = "102", verify = false }
    for _ = 1, 2 do assert(direct.accounts(p, PASSWORD, { warn = function(m) warnings[#warnings + 1] = m end })) end
    assert.are.equal(2, #warnings)
    assert.matches("TLS verification is off for lax %(verify = no in its profile%)", warnings[2])
    -- the database, the log and the saved answer: 0600, in 0700 directories
    local dir = tmp .. "/private/data"
    local profiles = profiles_file(url)
    local out, serr, scode = sift { "fetch", "statements", "fake", "--profiles", profiles, "--import",
      "--db", dir .. "/books.db", "--log", tmp .. "/private/fetch.log", "-o", tmp .. "/private/answer.ofx",
      "--since", "2013-01-01" }
    stop()
    assert.are.equal(0, scode, serr .. out)
    local function mode(path)
      local pm = io.popen("stat -c %a " .. helper.quote(path))
      local m = pm:read("l")
      pm:close()
      return m
    end
    assert.are.same({ "700", "700", "600", "600", "600" }, { mode(tmp .. "/private"), mode(dir),
      mode(dir .. "/books.db"), mode(tmp .. "/private/fetch.log"), mode(tmp .. "/private/answer.ofx") })
  end)

  it("names an HTML answer by its title; tells a refused connection, a TLS failure and a silent server apart", function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local port, stop = serve { mode = "html" }
    local out, err, code = sift { "fetch", "accounts", "fake", "--profiles",
      profiles_file(("http://127.0.0.1:%d/ofx"):format(port)) }
    assert.are.equal("html\n", stop())
    assert.are.same({ 1, "", 'sift: the server answered with an HTML page, not OFX: "Scheduled maintenance"\n' },
      { code, out, err })
    -- nothing listens: "cannot connect", over HTTP and HTTPS alike (not TLS)
    local closed = assert(require("socket").bind("127.0.0.1", 0))
    local _, free = closed:getsockname()
    closed:close()
    for _, scheme in ipairs { "http", "https" } do
      out, err, code = sift { "fetch", "accounts", "fake", "--profiles",
        profiles_file(("%s://127.0.0.1:%d/ofx"):format(scheme, free)) }
      assert.are.same({ 1, "", ("sift: cannot connect to 127.0.0.1:%d: Connection refused (nothing was sent)\n")
        :format(free) }, { code, out, err })
    end
    -- a server that accepts and never answers: the request went out (HTTP),
    -- or the TLS handshake never finished (HTTPS); --timeout 1 holds
    local monotime = require("cqueues").monotime
    port, stop = serve { mode = "silent" }
    for _, case in ipairs { { "http", "the request was sent, and no answer came" },
        { "https", "the TLS handshake did not finish; nothing was sent" } } do
      local t0 = monotime()
      out, err, code = sift { "fetch", "accounts", "fake", "--timeout", "1", "--profiles",
        profiles_file(("%s://127.0.0.1:%d/ofx"):format(case[1], port)) }
      local took = monotime() - t0
      assert.are.same({ 1, "", ("sift: connected to 127.0.0.1:%d, then no answer within 1 s (--timeout): %s\n")
        :format(port, case[2]) }, { code, out, err })
      assert.is_true(took >= 1 and took < 10, tostring(took))
    end
    assert.are.equal("accepted, silent\naccepted, silent\n", stop())
  end)

  it("limits the whole exchange with --timeout: a trickling answer is cut at the limit, saying how much came",
      function()
    if not helper.fixtures() then return helper.fixture("ofx") end
    local size = #helper.read(helper.fixtures() .. "/ofx/ofxparse/account_listing_aggregation.ofx")
    local port, stop = serve { mode = "trickle" }  -- (one byte a second: size seconds in all)
    local monotime = require("cqueues").monotime
    local t0 = monotime()
    local out, err, code = sift { "fetch", "accounts", "fake", "--timeout", "3", "--profiles",
      profiles_file(("http://127.0.0.1:%d/ofx"):format(port)) }
    local took = monotime() - t0
    assert.are.equal(("trickle %d bytes\n"):format(size), stop())
    assert.are.same({ 1, "" }, { code, out })
    local got = tonumber(err:match(("^sift: from 127%%.0%%.0%%.1:%d: the answer did not finish within 3 s %%(%%-%%-timeout%%): "
      .. "cut after (%%d+) bytes of %d\n$"):format(port, size)))
    assert.is_truthy(got, err)
    assert.is_true(got >= 1 and got <= 5, err)  -- (a byte a second for 3 s)
    assert.is_true(took >= 3 and took < 10, tostring(took))  -- (not per read: that would be size seconds)
  end)

  it("prints account lines that paste back into a profile, a credit card's description included", function()
    if not helper.fixture("ofx/ofxparse/checking.ofx") then return end
    local port, stop = serve {}
    local url = ("http://127.0.0.1:%d/ofx"):format(port)
    local out, err, code = sift { "fetch", "accounts", "fake", "--profiles", profiles_file(url) }
    assert.are.equal(0, code, err)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line:match("^account = .*") end
    assert.are.same({ "account = bank 314074269 0000000001 SAVINGS USAA SAVINGS",
      "account = bank 314074269 0000000002 CHECKING FOUR STAR CHECKING",
      "account = bank 314074269 00000000000003 CREDITLINE LINE OF CREDIT",
      "account = creditcard 4111111111111111 MY CREDIT CARD" }, lines)
    local pasted = profiles_file(url, table.concat(lines, "\n"))
    -- read back: the same accounts the server lists
    local listed = assert(direct.accounts({ name = "fake", url = url, org = "FAKE", fid = "1101", user = "jdoe",
      version = "102" }, PASSWORD))
    local profile = assert(direct.load_profiles(pasted)).fake
    local function fields(list)
      local t = {}
      for i, a in ipairs(list) do
        t[i] = { a.kind, a.bank_id, a.broker_id, a.id, a.type, a.description }
      end
      return t
    end
    assert.are.same(fields(listed), fields(profile.accounts))
    -- and fetched with: the server is asked for those accounts' statements
    out, err, code = sift { "fetch", "statements", "fake", "--profiles", pasted, "--since", "2024-01-01" }
    assert.are.equal(0, code, err)
    assert.matches("bank 1452687~7: 3 transaction%(s%), balance 100%.99", out)
    local server = stop()
    assert.is_nil(server:find("BAD", 1, true), server)
    assert.are.equal("ACCTINFO\nACCTINFO\nSTMT 0000000001\n", server)
  end)
end)
