--- A small HTTP/1.1 client for OFX servers, over LuaSocket and LuaSec:
-- one POST of `application/x-ofx`, TLS verified by default (the chain
-- against the system's certificates or a file the user names, and the
-- host name against the certificate), timeouts, and a strict rule for
-- where a request may go, since every OFX request carries a password:
-- only over HTTPS (plain HTTP only to this machine), and after a redirect
-- only to the same origin (scheme, host, port) with a 307 or 308.
--
--     local http = require "sift.ofx.http"
--     local body, err, code = http.post("https://ofx.example.com/ofx", request, { timeout = 30 })
--     -- code: "network", "tls", "http", "insecure", "redirect", "redirects", "too_big"
-- @module sift.ofx.http

local socket = require "socket"

local M = {}

M.USER_AGENT = "InetClntApp/3.0"  -- what Quicken sends; some servers look
M.CA_PATH = "/etc/ssl/certs"

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

-- does a certificate name (maybe *.example.com) cover host?
local function name_matches(pattern, host)
  pattern, host = pattern:lower(), host:lower()
  if pattern == host then return true end
  local rest = pattern:match("^%*%.(.+)$")
  return rest ~= nil and host:match("^[^.]+%.(.+)$") == rest
end

-- the host name (or IP address) check of RFC 6125 against the peer's
-- certificate: its subjectAltName, or its common name when it has none
local function check_host(conn, host)
  local cert = conn:getpeercertificate()
  if not cert then return nil, "the server sent no certificate" end
  local names, seen_san = {}, false
  local ext = cert:extensions() or {}
  local san = ext["2.5.29.17"]
  if san then
    seen_san = true
    for _, n in ipairs(san.dNSName or {}) do names[#names + 1] = n end
    for _, ip in ipairs(san.iPAddress or {}) do
      if ip == host then return true end
    end
  end
  if not seen_san then
    for _, entry in ipairs(cert:subject() or {}) do
      if entry.name == "CN" or entry.short_name == "CN" then names[#names + 1] = entry.value end
    end
  end
  for _, n in ipairs(names) do
    if name_matches(n, host) then return true end
  end
  return nil, ("the certificate is for %s, not %s"):format(#names > 0 and table.concat(names, ", ") or "no name", host)
end

-- a connected socket (TLS when https), or nil, message, code
local function connect(u, opts)
  local sock = socket.tcp()
  sock:settimeout(opts.timeout)
  local ok, err = sock:connect(u.host, u.port)
  if not ok then
    sock:close()
    return nil, ("cannot connect to %s:%d: %s"):format(u.host, u.port, err), "network"
  end
  if u.scheme == "http" then return sock end
  local ssl = require "ssl"
  local params = { mode = "client", protocol = "any", options = { "all", "no_sslv2", "no_sslv3", "no_tlsv1" } }
  if opts.verify ~= false then
    params.verify = { "peer", "fail_if_no_peer_cert" }
    if opts.cafile then params.cafile = opts.cafile else params.capath = M.CA_PATH end
  else
    params.verify = "none"
  end
  local conn
  conn, err = ssl.wrap(sock, params)
  if not conn then
    sock:close()
    return nil, "TLS: " .. tostring(err), "tls"
  end
  conn:sni(u.host)
  conn:settimeout(opts.timeout)
  ok, err = conn:dohandshake()
  if not ok then
    conn:close()
    local hint = opts.cafile and "" or " (if you trust this server's certificate, name it with --cafile)"
    return nil, ("TLS with %s: %s%s"):format(u.host, err, hint), "tls"
  end
  if opts.verify ~= false then
    ok, err = check_host(conn, u.host)
    if not ok then
      conn:close()
      return nil, ("TLS with %s: %s"):format(u.host, err), "tls"
    end
  end
  return conn
end

-- read a response: status, reason, headers (lower-case names), body; a
-- body over `max` bytes is refused before it is read
local function read_response(conn, max)
  local function too_big(n)
    return nil, ("the response is bigger than %d bytes (%s): refused (--max-response)"):format(max, n), "too_big"
  end
  local line, err = conn:receive("*l")
  if not line then return nil, "no response: " .. tostring(err) end
  local status, reason = line:match("^HTTP/%d%.%d (%d%d%d) ?(.*)$")
  if not status then return nil, ("not an HTTP response: %q"):format(line:sub(1, 60)) end
  local headers = {}
  while true do
    line, err = conn:receive("*l")
    if not line then return nil, "the response ends in its headers: " .. tostring(err) end
    if line == "" then break end
    local name, value = line:match("^([^:]+):%s*(.-)%s*$")
    if name then headers[name:lower()] = value end
  end
  local body
  if (headers["transfer-encoding"] or ""):lower():find("chunked") then
    local parts, received = {}, 0
    while true do
      line, err = conn:receive("*l")
      local size = line and tonumber(line:match("^%x+"), 16)
      if not size then return nil, "a bad chunk in the response: " .. tostring(err or line) end
      if size == 0 then break end
      received = received + size
      if received > max then return too_big(("at least %d"):format(received)) end
      local chunk = conn:receive(size)
      if not chunk then return nil, "the response ends in a chunk" end
      parts[#parts + 1] = chunk
      conn:receive("*l")
    end
    body = table.concat(parts)
  elseif headers["content-length"] then
    local n = tonumber(headers["content-length"])
    if not n or n < 0 then return nil, "a bad Content-Length" end
    if n > max then return too_big(n) end
    body, err = "", nil
    if n > 0 then body, err = conn:receive(n) end
    if not body then return nil, "the response is shorter than its Content-Length: " .. tostring(err) end
  else  -- to the end of the connection, in pieces, within the cap
    local parts, received = {}, 0
    while true do
      local piece, e, partial = conn:receive(65536)
      piece = piece or partial
      if piece and #piece > 0 then
        received = received + #piece
        if received > max then return too_big(("at least %d"):format(received)) end
        parts[#parts + 1] = piece
      end
      if e then break end
    end
    body = table.concat(parts)
  end
  return tonumber(status), reason, headers, body
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
-- @tparam[opt] table opts `timeout` (seconds, 60), `cafile` (trust this
--   certificate or bundle instead of the system's), `verify` (false turns
--   TLS verification off), `redirects` (5), `max_response` (bytes,
--   `M.MAX_RESPONSE`)
-- @return the response body, status and headers; or nil, message, code
--   ("network", "tls", "http", "insecure", "redirect", "redirects",
--   "too_big", "url")
function M.post(url, body, opts)
  opts = opts or {}
  opts.timeout = opts.timeout or 60
  local origin = M.parse_url(url)
  if not origin then return nil, ("not an http or https URL: %s"):format(url), "url" end
  if origin.scheme == "http" and not loopback(origin.host) then
    return nil, ("%s is plain HTTP: the request carries your password, and sift sends it only over HTTPS "
      .. "(or to this machine)"):format(url), "insecure"
  end
  for _ = 0, opts.redirects or 5 do
    local u = M.parse_url(url)
    local conn, err, code = connect(u, opts)
    if not conn then return nil, err, code end
    local host = u.host:find(":") and "[" .. u.host .. "]" or u.host
    local default = (u.scheme == "https" and u.port == 443) or (u.scheme == "http" and u.port == 80)
    local head = table.concat({
      ("POST %s HTTP/1.1"):format(u.path),
      ("Host: %s%s"):format(host, default and "" or ":" .. u.port),
      "Content-Type: application/x-ofx",
      "Accept: */*, application/x-ofx",
      "User-Agent: " .. M.USER_AGENT,
      ("Content-Length: %d"):format(#body),
      "Connection: close", "", "" }, "\r\n")
    local ok, serr = conn:send(head .. body)
    if not ok then
      conn:close()
      return nil, ("sending to %s: %s"):format(u.host, serr), "network"
    end
    local status, reason, headers, rbody = read_response(conn, opts.max_response or M.MAX_RESPONSE)
    conn:close()
    if not status then  -- (reason is the message, headers the code when there is one)
      return nil, ("from %s: %s"):format(u.host, reason), headers or "network"
    end
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
