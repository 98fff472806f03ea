--- The HTTP client for OFX servers, on Debian's lua-http (cqueues, TLS
-- through luaossl): one POST of `application/x-ofx`, TLS verified by
-- default (the chain against the system's certificates or a file the user
-- names, and the host name or IP address against the certificate),
-- timeouts, answers capped, and a strict rule for where a request may go,
-- since every OFX request carries a password: only over HTTPS (plain HTTP
-- only to this machine), and after a redirect only to the same origin
-- (scheme, host, port) with a 307 or 308. lua-http's own redirect
-- following is off: it would post the body to any origin.
--
--     local http = require "sift.ofx.http"
--     local body, err, code = http.post("https://ofx.example.com/ofx", request, { timeout = 30 })
--     -- code: "network", "timeout", "tls", "http", "insecure", "redirect", "redirects", "too_big"
-- @module sift.ofx.http

local http_client = require "http.client"
local http_request = require "http.request"
local http_tls = require "http.tls"
local http_util = require "http.util"
local openssl_ctx = require "openssl.ssl.context"
local x509_store = require "openssl.x509.store"

local ETIMEDOUT = require("cqueues.errno").ETIMEDOUT
local monotime = require("cqueues").monotime

local M = {}

M.USER_AGENT = "InetClntApp/3.0"  -- what Quicken sends; some servers look
M.MAX_RESPONSE = 256 * 1024 * 1024  -- bytes; OFX downloads are a few MB at most

-- hosts a plain-HTTP request may go to: this machine only
local function loopback(host)
  return host == "localhost" or host == "::1" or host:match("^127%.%d+%.%d+%.%d+$") ~= nil
end

--- Split a URL into scheme, host, port, path.
function M.parse_url(url)
  local scheme, rest = url:match("^(%a[%w+.-]*)://(.*)$")
  if not scheme then return nil end
  scheme = scheme:lower()
  local authority, path = rest:match("^([^/?#]*)(.*)$")
  if path == "" then path = "/" end
  path = path:gsub("#.*$", "")
  local host, port = authority:match("^%[([^%]]+)%]:?(%d*)$")
  if not host then host, port = authority:match("^([^:]+):?(%d*)$") end
  if not host or (scheme ~= "http" and scheme ~= "https") then return nil end
  port = tonumber(port) or (scheme == "https" and 443 or 80)
  return { scheme = scheme, host = host, port = port, path = path }
end

-- the names a certificate is for: its subjectAltName DNS names and IP
-- addresses, or its common name when it has none
local function certificate_names(cert)
  local names = {}
  for _, value in pairs(cert:getSubjectAlt() or {}) do names[#names + 1] = value end
  if #names == 0 then
    for kind, value in pairs(cert:getSubject()) do
      if kind == "CN" then names[#names + 1] = value end
    end
  end
  return names
end

-- why TLS with u failed, in words: the certificate's chain is not trusted
-- (and how to trust it), or it is for another name. A second connection
-- that verifies nothing fetches the certificate to tell which.
local function tls_failure(u, opts, err, timeout)
  local cs = require "cqueues.socket"
  local openssl_ssl = require "openssl.ssl"
  local hint = opts.cafile and "" or " (if you trust this server's certificate, name it with --cafile)"
  local ok, why = pcall(function()
    local sock = assert(cs.connect { host = u.host, port = u.port, sendname = false })
    local ctx = http_tls.new_client_context()
    ctx:setVerify(openssl_ctx.VERIFY_NONE)
    local ssl = openssl_ssl.new(ctx)
    if not http_util.is_ip(u.host) then ssl:setHostName(u.host) end
    assert(sock:starttls(ssl, timeout))
    local cert = ssl:getPeerCertificate()
    sock:close()
    local store = opts.store or x509_store.new():addDefaults()
    if cert and store:verify(cert) then
      local names = certificate_names(cert)
      return ("the certificate is for %s, not %s"):format(#names > 0 and table.concat(names, ", ")
        or "no name", u.host)
    end
  end)
  if ok and why then return ("TLS with %s: %s"):format(u.host, why) end
  -- (OpenSSL's words without its code: "certificate verify failed: self-signed certificate")
  local words = tostring(err):gsub("^starttls: ", ""):gsub("error:%x+:[^:]*::", ""):gsub(":(%S)", ": %1")
  return ("TLS with %s: %s%s"):format(u.host, words, hint)
end

-- the TLS context for opts: verification on (the system's certificates, or
-- opts.cafile's), or off with verify = false
local function context(opts)
  local ctx = http_tls.new_client_context()
  if opts.verify == false then
    ctx:setVerify(openssl_ctx.VERIFY_NONE)
  elseif opts.cafile then
    local store = x509_store.new()
    local ok, err = pcall(store.add, store, opts.cafile)
    if not ok then return nil, ("cannot read %s: %s"):format(opts.cafile, tostring(err)) end
    ctx:setStore(store)
    opts.store = store
  end
  return ctx
end

-- errno's words, without lua-http's or cqueues' name of the call that failed
local function strerror(err, errno)
  errno = errno or (math.type(err) == "integer" and err)
  if errno then return require("cqueues.errno").strerror(errno) end
  return (tostring(err):gsub("^%a+: ", ""))
end

-- one POST: status, headers (lower-case names), body; or nil, message,
-- code. opts.deadline (a cqueues.monotime) ends the whole exchange
-- (connecting, TLS, sending, the whole answer), not each read; each phase's failure is told apart:
-- cannot connect (nothing sent), TLS, connected but no answer (after the
-- request went out, or during the handshake), an answer cut (how much of
-- it came). A body over max bytes is refused as soon as that is known.
local function exchange(u, url, body, opts, ctx)
  local function left() return math.max(opts.deadline - monotime(), 0) end
  local where = ("%s:%d"):format(u.host, u.port)
  local function silent(what)
    return nil, ("connected to %s, then no answer within %g s (--timeout): %s"):format(where, opts.timeout, what),
      "timeout"
  end
  local req = http_request.new_from_uri(url)
  local headers = req.headers
  headers:upsert(":method", "POST")
  headers:upsert("content-type", "application/x-ofx")
  headers:upsert("accept", "*/*, application/x-ofx")
  headers:upsert("user-agent", M.USER_AGENT)
  headers:upsert("content-length", ("%d"):format(#body))
  -- TCP first, on its own: a refused or unreachable server is "cannot connect", never TLS
  local sock, err, errno = require("cqueues.auxlib").fileresult(require("cqueues.socket").connect {
    host = u.host, port = u.port, sendname = false, nodelay = true })
  if sock then
    sock:onerror(function(_, _, code) return code end)
    local ok
    ok, err, errno = sock:connect(left())
    if not ok then sock:close() sock = nil end
  end
  if not sock then
    return nil, ("cannot connect to %s: %s (nothing was sent)"):format(where, strerror(err, errno)), "network"
  end
  local connection
  connection, err, errno = http_client.negotiate(sock, { host = u.host, tls = u.scheme == "https", ctx = ctx,
    version = 1.1 }, left())
  if not connection then
    sock:close()
    if errno == ETIMEDOUT then return silent("the TLS handshake did not finish; nothing was sent") end
    return nil, tls_failure(u, opts, tostring(err), left()), "tls"
  end
  local stream = assert(connection:new_stream())
  local function fail(e, n, what)
    stream:shutdown()
    connection:close()
    if n == ETIMEDOUT then return silent(what) end
    return nil, ("from %s: the connection failed %s: %s"):format(where, what, strerror(e, n)), "network"
  end
  local ok
  ok, err, errno = stream:write_headers(headers, false, left())
  if ok then ok, err, errno = stream:write_body_from_string(body, left()) end
  if not ok then return fail(err, errno, "while the request was being sent") end
  local answer
  repeat  -- (1xx answers come before the real one)
    answer, err, errno = stream:get_headers(left())
    if not answer then return fail(err, errno, "the request was sent, and no answer came") end
  until not answer:get(":status"):match("^1%d%d$")
  local max = opts.max_response or M.MAX_RESPONSE
  local function too_big(n)
    stream:shutdown()
    connection:close()
    return nil, ("from %s: the response is bigger than %d bytes (%s): refused (--max-response)"):format(u.host,
      max, n), "too_big"
  end
  local length = tonumber(answer:get("content-length") or nil)
  if length and length > max then return too_big(length) end
  local parts, received = {}, 0
  while true do
    local chunk
    chunk, err, errno = stream:get_next_chunk(left())
    if not chunk then
      if errno == ETIMEDOUT then
        stream:shutdown()
        connection:close()
        return nil, ("from %s: the answer did not finish within %g s (--timeout): cut after %d bytes%s"):format(
          where, opts.timeout, received, length and (" of " .. length) or ""), "timeout"
      elseif err then
        return fail(err, errno, ("after %d bytes of the answer%s"):format(received,
          length and (" of " .. length) or ""))
      end
      break
    end
    received = received + #chunk
    if received > max then return too_big(("at least %d"):format(received)) end
    parts[#parts + 1] = chunk
  end
  stream:shutdown()
  connection:close()
  local plain = {}
  for name, value in answer:each() do plain[name] = value end
  return tonumber(answer:get(":status")), plain, table.concat(parts)
end

-- the same origin: scheme, host and port
local function same_origin(a, b)
  return a.scheme == b.scheme and a.host:lower() == b.host:lower() and a.port == b.port
end

--- POST an OFX request. It carries a password, so it goes only over HTTPS
-- (plain HTTP only to this machine: localhost, 127.0.0.0/8, ::1), and a
-- redirect is followed only to the same origin with 307 or 308 (which keep
-- the POST); any other redirect stops the request, naming the Location,
-- and nothing is sent there.
-- @tparam string url http or https
-- @tparam string body the request
-- @tparam[opt] table opts `timeout` (seconds for the whole exchange,
--   redirects included, not for each read: 60), `cafile` (trust this
--   certificate or bundle instead of the system's), `verify` (false turns
--   TLS verification off), `redirects` (5), `max_response` (bytes,
--   `M.MAX_RESPONSE`)
-- @return the response body, status and headers; or nil, message, code
--   ("network": cannot connect, or the connection failed; "timeout":
--   connected, then no (whole) answer in time; "tls", "http", "insecure",
--   "redirect", "redirects", "too_big", "url")
function M.post(url, body, opts)
  local own = { timeout = 60 }  -- (a copy: the caller's table is left as it was)
  for k, v in pairs(opts or {}) do own[k] = v end
  opts = own
  opts.deadline = monotime() + opts.timeout  -- (for the whole exchange, redirects included)
  local origin = M.parse_url(url)
  if not origin then return nil, ("not an http or https URL: %s"):format(url), "url" end
  if origin.scheme == "http" and not loopback(origin.host) then
    return nil, ("%s is plain HTTP: the request carries your password, and sift sends it only over HTTPS "
      .. "(or to this machine)"):format(url), "insecure"
  end
  local ctx
  if origin.scheme == "https" then
    local err
    ctx, err = context(opts)
    if not ctx then return nil, err, "tls" end
  end
  for _ = 0, opts.redirects or 5 do
    local u = M.parse_url(url)
    local host = u.host:find(":") and "[" .. u.host .. "]" or u.host
    local default = (u.scheme == "https" and u.port == 443) or (u.scheme == "http" and u.port == 80)
    local status, headers, rbody = exchange(u, url, body, opts, ctx)
    if not status then return nil, headers, rbody end  -- (message, code)
    local reason = require("http.h1_reason_phrases")[tostring(status)] or ""
    if status >= 300 and status < 400 and headers.location then
      local loc = headers.location
      if not loc:match("^%a[%w+.-]*://") then
        loc = ("%s://%s%s%s"):format(u.scheme, host, default and "" or ":" .. u.port,
          loc:sub(1, 1) == "/" and loc or u.path:gsub("[^/]*$", "") .. loc)
      end
      local target = M.parse_url(loc)
      if not (target and (status == 307 or status == 308) and same_origin(target, origin)) then
        local why = target and same_origin(target, origin)
          and ("a %d would not post the request again"):format(status)
          or "it is another origin, and the request carries your password"
        return nil, ("HTTP %d from %s redirects to %s: not followed (%s); nothing was sent there")
          :format(status, url, loc:sub(1, 200), why), "redirect", status
      end
      url = loc
    elseif status < 200 or status >= 300 then
      local excerpt = (rbody or ""):gsub("%s+", " "):sub(1, 200)
      return nil, ("HTTP %d %s from %s%s"):format(status, reason, url, excerpt ~= "" and (": " .. excerpt) or ""),
        "http", status
    else
      return rbody, status, headers
    end
  end
  return nil, ("more than %d redirects from %s"):format(opts.redirects or 5, url), "redirects"
end

return M
