-- sift serve as a hostile client meets it: a server in this process, and
-- requests written byte by byte on loopback sockets. Each bad one is
-- answered (and logged on stderr in one line), nothing of it is stored,
-- and the server goes on; then the files it kept, with their modes.
-- Usage: sift run examples/serve_security.lua DUMP.hprof
require("sift.paths").older_lua()
local serve = require "sift.serve"
local private = require "sift.private"
local core = require "sift.core"
local cqueues = require "cqueues"
local socket = require "cqueues.socket"

local dump_path = assert(arg[1], "usage: sift run examples/serve_security.lua DUMP.hprof")
local dump = assert(io.open(dump_path, "rb")):read("a")

assert(private.restrict())  -- umask 077, as sift serve runs
local data = os.tmpname()   -- (a fresh name: made a private directory below)
os.remove(data)
local server = assert(serve.new { data = data, body_timeout = 5 })
local port = server:listen()
local host = "127.0.0.1:" .. port

-- one request's raw bytes; then our side closes (FIN): the answer's first line and message
local function send(bytes)
  local s = assert(socket.connect { host = "127.0.0.1", port = port })
  s:onerror(function(_, _, why) return why end)
  s:setmode("b", "b")
  s:xwrite(bytes, "bn")
  s:flush()
  s:shutdown("w")
  local answer = s:read("*a") or ""
  s:close()
  local status = answer:match("^HTTP/1%.1 (%d+ [^\r]*)") or "(no answer)"
  local message = (answer:match('"error":"(.-)","status"') or answer:match("\r\n\r\n([^\n]*)\n$") or "")
    :gsub('\\"', '"')
  return status, message
end

local function post(extra, body, length)
  return ("POST /upload?name=app.hprof HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\n%s"
    .. "Content-Length: %s\r\n\r\n%s"):format(host, extra, length or #body, body)
end

local cq = cqueues.new()
cq:wrap(function() server:run() end)
cq:wrap(function()
  local cases = {
    { "a program's upload (curl's shape)", post("", dump) },
    { "the same bytes again", post("", dump) },
    { "Content-Length: 1e99", post("", "JAVA", "1e99") },
    { "a body cut after 1,000 of its bytes (FIN)", post("", dump:sub(1, 1000), #dump) },
    { "a page on another site posting", post("Origin: https://attacker.example\r\n", dump:sub(1, 4096)) },
    { "a DNS-rebound name", ("GET /index.json HTTP/1.1\r\nHost: attacker.example:%d\r\n\r\n"):format(port) },
  }
  for _, case in ipairs(cases) do
    local status, message = send(case[2])
    print(("%-42s %-17s %s"):format(case[1], status, message))
  end
  server.http:close()
end)
assert(cq:loop())
server:close()

print("\nwhat the data directory holds:")
local names = assert(core.listdir(data))
table.sort(names)
print(("  %04o  %s/"):format(core.stat(data).mode, data))
for _, name in ipairs(names) do
  print(("  %04o  %s"):format(core.stat(data .. "/" .. name).mode, name))
  os.remove(data .. "/" .. name)
end
os.remove(data)
