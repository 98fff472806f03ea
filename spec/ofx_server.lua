-- A local OFX server for the Direct Connect specs. It listens on
-- 127.0.0.1 (port 0: the system picks one), over TLS when given a
-- certificate and key, checks every request it receives (method, path,
-- headers, content type, sign-on fields, CLIENTUID, TRNUIDs, date range)
-- and answers with real responses from ../shared/fixtures/ofx. A request
-- that fails a check gets HTTP 400 and the reason, so the client's spec
-- fails with it.
--
--   lua5.4 spec/ofx_server.lua key=value...
--     fixtures=DIR user=U password=P org=O fid=F appid=QWIN appver=2700
--     since=YYYYMMDD (the DTSTART statement requests must carry)
--     clientuid=yes (require one) mode=ok|error500|redirect|stmt_error|echo500|echo_signon
--     (echo500: HTTP 500 whose body echoes the password it received in
--     many forms; echo_signon: a sign-on refusal whose MESSAGE does:
--     upper-cased, HTML-escaped by name, by decimal and by hex number,
--     URL-encoded, and its first 8 characters)
--     status=302 location=/moved (mode=redirect: the first answer, $PORT
--     standing for the server's own port; later requests are expected at
--     the location's path)
--     cert=FILE key=FILE (TLS)
--     mode=html: a 200 whose body is an HTML maintenance page (title
--     "Scheduled maintenance"); mode=silent: accepts the connection and
--     never answers (no TLS handshake, nothing read); mode=trickle: a 200
--     whose OFX body comes one byte a second
--
-- It prints "PORT <n> PID <pid>" when it listens, and one line per request.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("SIFT_CPATH") or "build/?.so") .. ";" .. package.cpath
local socket = require "socket"
local grammar = require "sift.ofx.grammar"

local cfg = { mode = "ok", appid = "QWIN", appver = "2700" }
for _, a in ipairs(arg) do
  local k, v = a:match("^([%w_]+)=(.*)$")
  cfg[k] = v
end

local function fixture(rel)
  local f = assert(io.open(cfg.fixtures .. "/ofx/" .. rel, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
local pid = io.open("/proc/self/stat"):read("n")
io.write(("PORT %d PID %d\n"):format(port, pid))
io.flush()

local ssl_params
if cfg.cert then
  ssl_params = { mode = "server", protocol = "any", key = cfg.key, certificate = cfg.cert,
    options = { "all", "no_sslv2", "no_sslv3" } }
end

local seen_trnuids, seen_clientuid, requests = {}, nil, 0

-- what is wrong with a request, or nil
local function check(method, path, headers, body, expected_path)
  if method ~= "POST" then return "method " .. method .. ", not POST" end
  if path ~= expected_path then return ("path %s, not %s"):format(path, expected_path) end
  if headers["content-type"] ~= "application/x-ofx" then
    return "content type " .. tostring(headers["content-type"])
  end
  if not headers.host then return "no Host header" end
  if tonumber(headers["content-length"]) ~= #body then return "Content-Length does not match the body" end
  local doc = grammar.parse(body)
  if not doc then return "the body is not OFX" end
  local sonrq = doc:find("OFX/SIGNONMSGSRQV1/SONRQ")
  if not sonrq then return "no SONRQ" end
  for field, want in pairs { USERID = cfg.user, ["FI/ORG"] = cfg.org, ["FI/FID"] = cfg.fid, APPID = cfg.appid,
      APPVER = cfg.appver, LANGUAGE = "ENG" } do
    if sonrq:text(field) ~= want then return ("SONRQ %s is %s, not %s"):format(field, tostring(sonrq:text(field)), want) end
  end
  if not (sonrq:text("DTCLIENT") or ""):match("^%d%d%d%d%d%d%d%d%d%d%d%d%d%d") then return "no DTCLIENT" end
  if cfg.clientuid == "yes" then
    local id = sonrq:text("CLIENTUID")
    if not id then return "no CLIENTUID" end
    seen_clientuid = seen_clientuid or id
    if id ~= seen_clientuid then return "the CLIENTUID changed between requests" end
  end
  for _, path_ in ipairs { "OFX/SIGNUPMSGSRQV1/ACCTINFOTRNRQ", "OFX/BANKMSGSRQV1/STMTTRNRQ",
      "OFX/CREDITCARDMSGSRQV1/CCSTMTTRNRQ" } do
    local trn = doc:find(path_)
    if trn then
      local id = trn:text("TRNUID")
      if not id then return "no TRNUID in " .. path_ end
      if seen_trnuids[id] then return "TRNUID " .. id .. " used twice" end
      seen_trnuids[id] = true
    end
  end
  return nil, doc, sonrq
end

-- the password in the forms a careless server echoes it
local function echoes(pw)
  local named = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }
  return table.concat({
    pw:upper(),
    (pw:gsub('[&<>"]', named)),
    (pw:gsub("[&<>]", function(c) return ("&#%d;"):format(c:byte()) end)),
    (pw:gsub("[&<>]", function(c) return ("&#x%X;"):format(c:byte()) end)),
    (pw:gsub("[^%w%-_.~ ]", function(c) return ("%%%02X"):format(c:byte()) end):gsub(" ", "+")),
    pw:sub(1, 8),
  }, " | ")
end

-- a v1 sign-on refusal (15500) whose MESSAGE is text (escaped for SGML)
local function signon_refused(text)
  return "OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\nCHARSET:1252\r\n"
    .. "COMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n<OFX>\r\n<SIGNONMSGSRSV1>\r\n<SONRS>\r\n"
    .. "<STATUS>\r\n<CODE>15500\r\n<SEVERITY>ERROR\r\n<MESSAGE>"
    .. text:gsub("[&<>]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" })
    .. "\r\n</STATUS>\r\n<DTSERVER>20240102120000\r\n<LANGUAGE>ENG\r\n</SONRS>\r\n</SIGNONMSGSRSV1>\r\n</OFX>\r\n"
end

local function respond(conn, status, reason, body, extra)
  conn:send(("HTTP/1.1 %d %s\r\nContent-Type: application/x-ofx\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n%s")
    :format(status, reason, #body, extra or "", body))
end

server:settimeout(30)  -- (and it stops when nothing comes for 30 s: a failed spec leaves no server behind)
while true do
  local conn = server:accept()
  if not conn then os.exit(0) end
  if cfg.mode == "silent" then  -- hold it, say nothing, until the client hangs up
    print("accepted, silent")
    io.flush()
    conn:settimeout(30)
    conn:receive("*a")
    conn:close()
    conn = nil
  end
  if conn then conn:settimeout(10) end
  if ssl_params then
    local ssl = require "ssl"
    conn = ssl.wrap(conn, ssl_params)
    if not conn:dohandshake() then conn:close() conn = nil end
  end
  local line = conn and conn:receive("*l")
  if conn then
    if not line then  -- a client that only looked (at the certificate) and hung up
      conn:close()
      conn = nil
    end
  end
  if conn then
    requests = requests + 1
    local method, path = line:match("^(%u+) (%S+) HTTP/1%.1$")
    local headers = {}
    while true do
      local h = conn:receive("*l")
      if not h or h == "" then break end
      local k, v = h:match("^([^:]+):%s*(.-)%s*$")
      if k then headers[k:lower()] = v end
    end
    local body = conn:receive(tonumber(headers["content-length"]) or 0) or ""
    local location = (cfg.location or "/moved"):gsub("%$PORT", tostring(port))
    local expected_path = (cfg.mode == "redirect" and requests > 1) and (location:match("^%a+://[^/]*(/.*)$")
      or location) or "/ofx"
    local problem, doc, sonrq = check(method or "?", path or "?", headers, body, expected_path)
    if problem then
      print("BAD " .. problem)
      respond(conn, 400, "Bad Request", problem)
    elseif cfg.mode == "echo500" then
      print("500 echo")
      respond(conn, 500, "Internal Server Error", "login failed, you sent: " .. echoes(sonrq:text("USERPASS") or ""))
    elseif cfg.mode == "echo_signon" then
      print("signon refused, echo")
      respond(conn, 200, "OK", signon_refused("you sent: " .. echoes(sonrq:text("USERPASS") or "")))
    elseif cfg.mode == "html" then
      print("html")
      conn:send("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
        .. "<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n<title>\n  Scheduled  maintenance\n</title></head>\n"
        .. "<body><h1>We'll be back soon</h1></body></html>\n")
    elseif cfg.mode == "trickle" then
      local listing = fixture("ofxparse/account_listing_aggregation.ofx")
      print(("trickle %d bytes"):format(#listing))
      io.flush()
      conn:send(("HTTP/1.1 200 OK\r\nContent-Type: application/x-ofx\r\nContent-Length: %d\r\n\r\n"):format(#listing))
      for i = 1, #listing do
        if not conn:send(listing:sub(i, i)) then break end  -- (the client hung up)
        socket.sleep(1)
      end
    elseif cfg.mode == "error500" then
      print("500")
      respond(conn, 500, "Internal Server Error", "the OFX service is down for maintenance")
    elseif cfg.mode == "redirect" and requests == 1 then
      seen_trnuids = {}  -- (the same request comes again, to the new place)
      local status = tonumber(cfg.status) or 302
      print(status)
      respond(conn, status, "Redirect", "", "Location: " .. location .. "\r\n")
    elseif sonrq:text("USERPASS") ~= cfg.password then
      print("signon refused")
      respond(conn, 200, "OK", fixture("ofxparse/signon_fail.ofx"))
    elseif doc:find("OFX/SIGNUPMSGSRQV1/ACCTINFOTRNRQ/ACCTINFORQ") then
      local up = doc:text("OFX/SIGNUPMSGSRQV1/ACCTINFOTRNRQ/ACCTINFORQ/DTACCTUP")
      if up ~= "19691231" then
        respond(conn, 400, "Bad Request", "DTACCTUP " .. tostring(up))
      else
        print("ACCTINFO")
        respond(conn, 200, "OK", fixture("ofxparse/account_listing_aggregation.ofx"))
      end
    else
      local rq = doc:find("OFX/BANKMSGSRQV1/STMTTRNRQ/STMTRQ") or doc:find("OFX/CREDITCARDMSGSRQV1/CCSTMTTRNRQ/CCSTMTRQ")
      local start = rq and rq:text("INCTRAN/DTSTART")
      if not rq then
        respond(conn, 400, "Bad Request", "no statement request")
      elseif cfg.since and start ~= cfg.since then
        respond(conn, 400, "Bad Request", ("DTSTART %s, not %s"):format(tostring(start), cfg.since))
      elseif rq:text("INCTRAN/INCLUDE") ~= "Y" then
        respond(conn, 400, "Bad Request", "INCTRAN/INCLUDE is not Y")
      elseif cfg.mode == "stmt_error" then
        print("STMT error")
        respond(conn, 200, "OK", fixture("ofxparse/error_message.ofx"))
      else
        print("STMT " .. (rq:text("BANKACCTFROM/ACCTID") or rq:text("CCACCTFROM/ACCTID") or "?"))
        respond(conn, 200, "OK", fixture("ofxparse/checking.ofx"))
      end
    end
    io.flush()
    conn:close()
  end
end
