--- The one guard around every connection of `sift serve`: an accept loop
-- of its own over lua-http's HTTP/1.1 connections and streams (lua-http
-- parses the protocol; this decides what a connection may cost). Whatever
-- a client sends, and whatever fails inside lua-http or a handler, ends
-- with that connection: an answer when one can still be given (400, 408,
-- 413, 431, 500, 503), one line in the log, and the server goes on.
--
-- - at most `max_connections` at once; one more is answered 503 and closed
--   at once, so a crowd of stuck clients cannot fill the process;
-- - the request line and headers must arrive within `header_timeout`
--   seconds, in at most `max_header_bytes` and 100 lines (lua-http's cap);
-- - a body may be silent for at most `body_timeout` seconds between pieces
--   (`request:body()`), and must end where `Content-Length` says or with
--   its last chunk: a body that stops early (FIN, RST, timeout) is an
--   error, never a shorter body;
-- - a connection is kept for the next request only when the exchange
--   ended cleanly (request read to its end, answer written); any other is
--   closed, so a half-read body is never taken for the next request.
--
-- Plain HTTP/1.0 and 1.1: TLS belongs to a proxy in front (docs/serve.md).
-- @module sift.serve.listen

local cqueues = require "cqueues"
local socket_lib = require "cqueues.socket"
local errno = require "cqueues.errno"
local h1_connection = require "http.h1_connection"
local reason = require "http.h1_reason_phrases"
local grouped = require("sift.size").grouped

local M = {}

local Listener = {}
Listener.__index = Listener

M.DEFAULTS = { max_connections = 64, header_timeout = 30, body_timeout = 60, idle_timeout = 60,
  max_header_bytes = 32 * 1024 }

--- An error a request ends with: its HTTP status and a message for the
-- client and the log.
local function failure(status, message) return { status = status, message = message } end
M.failure = failure

-- the status for what reading a request's head gave: err and code as
-- lua-http returns them ("read_header: ..." and EILSEQ for a line it could
-- not parse: too long when the socket holds a whole line's worth unread)
local function head_failure(err, code, sock, max_line)
  if code == errno.ETIMEDOUT then return failure(408, "the request's headers did not come in time") end
  if code == errno.E2BIG then return failure(431, "too many header lines (at most 100)") end
  if code == errno.EPIPE or code == errno.ECONNRESET or code == nil and err == nil then
    return failure(400, "the connection ended inside the request's headers")
  end
  local op = type(err) == "string" and err:match("^([%w_]+):") or ""
  if code == errno.EILSEQ then
    local long = sock and sock:pending() >= max_line
    if op == "read_request_line" then
      return long and failure(414, ("a request line over %d bytes"):format(max_line))
        or failure(400, "not an HTTP/1.x request line")
    end
    return long and failure(431, ("a header line over %d bytes"):format(max_line))
      or failure(400, "a malformed header line")
  end
  if err == "invalid content-length" then return failure(400, "Content-Length is not a length") end
  return failure(400, "a malformed request: " .. tostring(err))
end

-- the status for a body read that failed
local function body_failure(err, code)
  if code == errno.ETIMEDOUT then return failure(408, "the body stopped coming (no byte for too long)") end
  if code == errno.ECONNRESET then return failure(400, "the body broke off: the connection was reset") end
  if code == errno.EPIPE then return failure(400, "the body broke off: the connection ended inside it") end
  if code == errno.EILSEQ or code == errno.E2BIG then
    return failure(400, "the chunked body is malformed or broke off inside a chunk")
  end
  return failure(400, "the body broke off: " .. tostring(err))
end

-- A complete answer written on the bare socket, for the cases where
-- lua-http has no stream to answer on (over the connection cap, a request
-- line it could not read): a fixed status line and three headers.
local function bare_answer(sock, status, message)
  local body = message .. "\n"
  sock:xwrite(("HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
    .. "connection: close\r\n\r\n%s"):format(status, reason[tostring(status)] or "Error", #body, body), "bn", 1)
  sock:flush("n", 1)
end

--- {======================================================
-- A request, as handlers see it
-- =======================================================

local Request = {}
Request.__index = Request

--- The declared length of the body: a number, nil when there is none,
-- or false when the header is not a plain decimal number (or says two
-- things).
function Request:length()
  local values = {}
  for name, v in self.headers:each() do
    if name == "content-length" then values[#values + 1] = v end
  end
  if #values == 0 then return nil end
  for _, v in ipairs(values) do
    if v ~= values[1] or not v:match("^%d+$") or #v > 18 then return false end
  end
  return tonumber(values[1])
end

--- The body's pieces, one per call: a string, then nil at its end; on a
-- body that breaks off or goes silent, nil and a failure (status,
-- message).
function Request:body()
  local stream, timeout, got = self.stream, self.body_timeout, 0
  local declared = self:length()
  return function()
    if self.body_done then return nil end
    local chunk, err, code = stream:get_next_chunk(timeout)
    if chunk == nil then
      if err ~= nil or code ~= nil then return nil, body_failure(err, code) end
      if declared and got < declared then
        return nil, failure(400, ("the body broke off after %s of the %s bytes Content-Length says"):format(
          grouped(got), grouped(declared)))
      end
      if not declared and stream.body_read_type == "chunked" and stream.state == "open" then
        return nil, failure(400, "the chunked body broke off before its last chunk")
      end
      self.body_done = true
      return nil
    end
    got = got + #chunk
    return chunk
  end
end

-- }======================================================

-- one request on a connection: true when the connection may carry another
local function exchange(self, conn, peer)
  local stream = conn:get_next_incoming_stream(self.opts.idle_timeout)
  if not stream then return false end  -- (idle past its time, or the client went)
  local headers, err, code = stream:get_headers(self.opts.header_timeout)
  local problem
  if not headers then
    problem = head_failure(err, code, conn.socket, self.opts.max_header_bytes)
    headers = stream.headers_in_progress  -- (what came before the failure)
  else
    local bytes = 0
    for name, value in headers:each() do bytes = bytes + #name + #value + 4 end
    if bytes > self.opts.max_header_bytes then
      problem = failure(431, ("the request's headers are over %d bytes"):format(self.opts.max_header_bytes))
    end
  end
  local method = headers and headers:get(":method") or stream.req_method or "?"
  local path = headers and headers:get(":path")
  path = path and path:match("^[^?]*") or "(no path read)"  -- (the query may hold a token: never logged)
  if problem then
    self.log(("%d %s %s from %s: %s"):format(problem.status, method, path, peer, problem.message))
    if stream.state == "open" and headers then  -- (the request line was read: lua-http can answer)
      pcall(self.on_failure, stream, headers, problem)
    else
      pcall(bare_answer, conn.socket, problem.status, problem.message)
    end
    return false
  end
  local request = setmetatable({ stream = stream, headers = headers, method = method, path = path, peer = peer,
    body_timeout = self.opts.body_timeout, log = self.log }, Request)
  local ok, why = pcall(self.handle, request)
  if not ok then
    self.log(("500 %s %s from %s: %s"):format(method, path, peer, tostring(why)))
    if not stream.body_write_type then
      pcall(self.on_failure, stream, headers, failure(500, "the server failed on this request"))
    end
    return false
  end
  if stream.state ~= "closed" then return false end  -- (a body left unread, or an answer cut)
  stream:shutdown()
  return not stream.close_when_done
end

-- Close a connection so that its last answer arrives: a socket closed
-- with bytes unread is reset by the kernel, and a reset throws away what
-- the client had not read yet (a 413 or a 431 among them). So the write
-- side is shut first, and what the client still sends is read and dropped
-- until it is silent for 2 s (at most 10 s and 1 MB in all: a client on a
-- busy machine may still be sending the headers it was refused for).
local function linger(sock)
  sock:clearerr()  -- (a cqueues socket keeps a failed read's error, and would give it again at once)
  sock:flush("n", 1)
  sock:shutdown("w")
  local deadline, dropped = cqueues.monotime() + 10, 0
  while dropped < 1024 * 1024 do
    local left = math.min(2, deadline - cqueues.monotime())
    if left <= 0 then break end
    local chunk = sock:xread(-65536, "b", left)
    if not chunk then break end
    dropped = dropped + #chunk
  end
end

local function peer_of(sock)
  local _, host, port = sock:peername()
  return host and ("%s:%s"):format(host, tostring(port)) or "a client gone"
end

local function serve_connection(self, sock, peer)
  local ok, why = pcall(function()
    sock:setmode("b", "b")
    local conn = h1_connection.new(sock, "server", 1.1)
    conn:setmaxline(self.opts.max_header_bytes)
    while exchange(self, conn, peer) do end
  end)
  if not ok then self.log(("connection from %s failed: %s"):format(peer, tostring(why))) end
  pcall(linger, sock)
  pcall(sock.close, sock)
  self.open = self.open - 1
end

local function accept_loop(self)
  while self.socket do
    local sock, code = self.socket:accept({ nodelay = true }, 0)
    if sock then
      if self.open >= self.opts.max_connections then
        -- answered and closed; past as many refusals again at once, closed
        -- without a word (a flood must not hold descriptors for its answers)
        if self.refusing < self.opts.max_connections then
          self.log(("503 from %s: over %d connections"):format(peer_of(sock), self.opts.max_connections))
          self.refusing = self.refusing + 1
          self.cq:wrap(function()
            pcall(bare_answer, sock, 503, "the server has too many connections open; try again")
            pcall(linger, sock)
            pcall(sock.close, sock)
            self.refusing = self.refusing - 1
          end)
        else
          pcall(sock.close, sock)
        end
      else
        self.open = self.open + 1
        self.cq:wrap(serve_connection, self, sock, peer_of(sock))
      end
    elseif code == errno.ETIMEDOUT then
      cqueues.poll(self.socket)
    elseif self.socket then  -- (EMFILE and the like: wait a moment, keep accepting)
      self.log("accept: " .. errno.strerror(code))
      cqueues.sleep(0.05)
    end
  end
end

--- A listener on host:port (0: any free port).
-- @tparam table opts `host`, `port`, `handle(request)` (writes the answer on
--   `request.stream`), `on_failure(stream, headers, failure)` (writes an
--   error answer), `log(line)`, and the limits of M.DEFAULTS
-- @return the listener, or nil and a message
function M.new(opts)
  local o = {}
  for k, v in pairs(M.DEFAULTS) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  local sock, err = socket_lib.listen { host = o.host, port = o.port or 0, reuseaddr = true }
  if not sock then return nil, err end
  sock:onerror(function(_, _, why) return why end)
  local ok, why = sock:listen()
  if not ok then return nil, errno.strerror(why) end
  local self = setmetatable({ opts = o, socket = sock, cq = cqueues.new(), open = 0, refusing = 0, handle = o.handle,
    on_failure = o.on_failure, log = o.log or function(line) io.stderr:write("sift serve: ", line, "\n") end },
    Listener)
  self.cq:wrap(accept_loop, self)
  return self
end

function Listener:localname()
  local _, host, port = self.socket:localname()
  return host, port
end

--- Run (for `timeout` seconds, or until closed). An error that escaped a
-- coroutine anyway is logged and the loop goes on.
function Listener:loop(timeout)
  local deadline = timeout and cqueues.monotime() + timeout
  while self.socket do
    local left = deadline and deadline - cqueues.monotime()
    if left and left <= 0 then return true end
    local ok, err = self.cq:step(left or 1)
    if not ok then self.log("loop: " .. tostring(err)) end
  end
  return true
end

function Listener:close()
  if self.socket then
    self.socket:close()
    self.socket = nil
  end
end

return M
