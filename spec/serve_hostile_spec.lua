-- sift serve under hostile clients: a real `sift serve` process, driven
-- with raw loopback sockets (cqueues' sockets, outside any loop: each call
-- waits). Bad lengths, cut bodies (FIN and RST, raw, chunked and
-- multipart), slow headers and bodies, 64 kB of headers and 10,000 of
-- them, foreign hosts and origins, too many connections. After each: the
-- server still answers a normal request (while the hostile connection is
-- open, where it stays open) and --data holds nothing new. Then the modes
-- of every file the server and its workers wrote.
require("sift.paths").older_lua()
local socket = require "cqueues.socket"
local cjson = require "cjson"
local helper = require "spec.helper"

local JVM = "hprof/generated-jdk17/leaky_jdk17_all.hprof"

-- a raw connection to host:port (errors returned, not raised)
local function connect(port)
  local s = assert(socket.connect { host = "127.0.0.1", port = port })
  s:onerror(function(_, _, why) return why end)
  s:setmode("b", "b")
  assert(s:connect(60))
  return s
end

local ETIMEDOUT = require("cqueues.errno").ETIMEDOUT

-- everything the server sends until it closes (or `limit` seconds pass):
-- the text, and whether it closed
local function read_all(s, limit)
  local parts, deadline = {}, os.time() + (limit or 300)
  while os.time() <= deadline do
    local chunk, err = s:xread(-65536, "b", 5)
    if chunk then parts[#parts + 1] = chunk
    elseif err == ETIMEDOUT then s:clearerr()
    else return table.concat(parts), true end  -- (its end, or a reset)
  end
  return table.concat(parts), false
end

-- send bytes on a new connection, then close our side (FIN) unless
-- `hold`; returns the answer's status, its text and the socket
local function exchange(port, bytes, hold)
  local s = connect(port)
  s:xwrite(bytes, "bn", 60)
  s:flush("n", 60)
  if hold then return nil, nil, s end
  s:shutdown("w")
  local text = read_all(s)
  s:close()
  return tonumber(text:match("^HTTP/1%.%d (%d%d%d)")), text
end

-- send bytes, then reset the connection: LuaSocket's SO_LINGER of 0
-- makes close() an RST, not a FIN (cqueues has no linger option)
local function reset_after(port, bytes)
  local s = assert(require("socket").connect("127.0.0.1", port))
  assert(s:setoption("linger", { on = true, timeout = 0 }))
  assert(s:send(bytes))
  s:close()
end

local function head(method, path, host, extra)
  return ("%s %s HTTP/1.1\r\nHost: %s\r\n%s"):format(method, path, host, extra or "")
end

-- the names in a directory, sorted, as one string
local function names(dir) return table.concat(helper.names(dir), " ") end

-- a normal request answers, with the files list (with the spec's token)
local function answers(port, host, token)
  local status, text = exchange(port, head("GET", "/index.json", host or ("127.0.0.1:" .. port),
    (token and "Authorization: Bearer hostile-s3cret-token\r\n" or "") .. "Connection: close\r\n\r\n"))
  assert.are.equal(200, status, text)
  assert.truthy(text:find('"files":', 1, true), text)
end

local function stop(pid) os.execute("kill " .. pid .. " 2>/dev/null") end

describe("sift serve under hostile clients", function()
  local url, pid, dir, port, host
  local token_url, token_pid, token_dir, token_port
  setup(function()
    url, pid, dir = helper.serve { "--header-timeout", "15", "--body-timeout", "15", "--max-upload", "1M" }
    port = tonumber(url:match(":(%d+)/$"))
    host = "127.0.0.1:" .. port
    local secret = helper.tmpfile("hostile-s3cret-token\n")
    os.execute("chmod 600 " .. secret)
    token_url, token_pid, token_dir = helper.serve { "--token-file", secret, "--max-upload", "1M" }
    token_port = tonumber(token_url:match(":(%d+)/$"))
  end)
  teardown(function()
    stop(pid)
    stop(token_pid)
  end)

  it("answers 400 or 413 to every odd Content-Length before reading a byte, with and without a token", function()
    for _, p in ipairs { port, token_port } do
      local before = names(p == port and dir .. "/data" or token_dir .. "/data")
      for _, cl in ipairs { "-5", "1e99", "0x10", "abc", "+12", "99999999999999999999999", "5, 6" } do
        -- (to the token's server with its token, and without: 400 or 401 there)
        if p == token_port then
          local status = exchange(p, head("POST", "/upload", "127.0.0.1:" .. p, "Content-Length: " .. cl
            .. "\r\n\r\nJAVA PROFILE 1.0.2"))
          assert.truthy(status == 400 or status == 401, cl .. ": " .. tostring(status))
          answers(p, nil, true)
        end
        local status, text = exchange(p, head("POST", "/upload", "127.0.0.1:" .. p, "Content-Length: " .. cl
          .. "\r\nAuthorization: Bearer hostile-s3cret-token\r\n\r\nJAVA PROFILE 1.0.2"))
        assert.are.equal(400, status, cl .. ": " .. tostring(text))
        answers(p, nil, p == token_port)
      end
      local status, text = exchange(p, head("POST", "/upload", "127.0.0.1:" .. p,
        "Authorization: Bearer hostile-s3cret-token\r\nContent-Length: 3000000000\r\n\r\nJAVA"))
      assert.are.equal(413, status, text)
      assert.truthy(text:find("over the limit of 1,048,576 bytes", 1, true), text)
      answers(p, nil, p == token_port)
      assert.are.equal(before, names(p == port and dir .. "/data" or token_dir .. "/data"))
    end
    -- the token is still asked for every other request
    assert.are.equal(401, (exchange(token_port, head("GET", "/index.json", "127.0.0.1:" .. token_port, "\r\n"))))
    local log = helper.read(token_dir .. "/out")
    assert.truthy(log:find('400 POST %(no path read%) from 127.0.0.1:%d+: Content%-Length is not a length'), log)
    assert.falsy(log:find("hostile-s3cret-token", 1, true), "the token was printed")
  end)

  it("stores nothing of a body cut short (FIN or RST; raw, chunked, multipart) and says so", function()
    local jvm = helper.fixture(JVM)
    if not jvm then return end
    local bytes = helper.read(jvm):sub(1, 600000)
    local before = names(dir .. "/data")
    local raw = head("POST", "/upload?name=cut.hprof", host, ("Content-Length: %d\r\n\r\n"):format(#bytes))
      .. bytes:sub(1, 300000)
    local status, text = exchange(port, raw)
    assert.are.equal(400, status, text)
    assert.truthy(text:find("the body broke off after 300,000 of the 600,000 bytes Content-Length says", 1, true), text)
    local chunked = head("POST", "/upload?name=cut.hprof", host, "Transfer-Encoding: chunked\r\n\r\n")
      .. ("%x\r\n"):format(300000) .. bytes:sub(1, 300000) .. "\r\n" .. ("%x\r\n"):format(300000)
      .. bytes:sub(300001, 400000)
    status, text = exchange(port, chunked)
    assert.are.equal(400, status, text)
    local b = "cut-7d3f"
    local form = table.concat { "--", b, '\r\nContent-Disposition: form-data; name="file"; filename="f.hprof"\r\n',
      "Content-Type: application/octet-stream\r\n\r\n", bytes, "\r\n--", b, "--\r\n" }
    local multipart = head("POST", "/upload", host, ("Content-Type: multipart/form-data; boundary=%s\r\n"
      .. "Content-Length: %d\r\n\r\n"):format(b, #form)) .. form:sub(1, 400000)
    status, text = exchange(port, multipart)
    assert.are.equal(400, status, text)
    assert.truthy(text:find("broke off", 1, true), text)
    for _, request in ipairs { raw, chunked, multipart } do reset_after(port, request) end
    answers(port)
    assert.are.equal(before, names(dir .. "/data"))
    -- a body over --max-upload (1M here) is refused from its length, at once
    local whole = helper.read(jvm)
    local _, _, s = exchange(port, head("POST", "/upload?name=whole.hprof", host,
      ("Content-Length: %d\r\nAccept: application/json\r\n\r\n"):format(#whole)) .. whole:sub(1, 1000), true)
    text = read_all(s)
    s:close()
    assert.truthy(text:find("^HTTP/1.1 413 "), text)
    assert.truthy(text:find('"error":"the upload is over the limit of 1,048,576 bytes (--max-upload)"', 1, true), text)
    assert.are.equal(before, names(dir .. "/data"))
  end)

  it("times out slow headers and slow bodies (408) while answering everyone else", function()
    local before = names(dir .. "/data")
    local _, _, slow_head = exchange(port, "GET /index.json HTTP/1.1\r\nHost: " .. host .. "\r\nX-Slow: a", true)
    local _, _, slow_body = exchange(port, head("POST", "/upload", host, "Content-Length: 5000\r\n\r\nJAVA PROF"), true)
    answers(port)  -- (both are still open: their timeouts are 15 s)
    answers(port)
    local text, closed = read_all(slow_head)
    assert.is_true(closed)
    assert.truthy(text:find("^HTTP/1.1 408 "), text)
    text, closed = read_all(slow_body)
    assert.is_true(closed)
    assert.truthy(text:find("^HTTP/1.1 408 "), text)
    assert.truthy(text:find("the body stopped coming", 1, true), text)
    slow_head:close()
    slow_body:close()
    answers(port)
    assert.are.equal(before, names(dir .. "/data"))
  end)

  it("answers 431 to 64 kB of headers and to 10,000 headers", function()
    local status, text = exchange(port, head("GET", "/index.json", host, "X-Big: " .. ("a"):rep(64 * 1024) .. "\r\n\r\n"))
    assert.are.equal(431, status, text)
    local lines = {}
    for i = 1, 4 do lines[i] = ("X-Part-%d: %s\r\n"):format(i, ("b"):rep(16 * 1024)) end
    status, text = exchange(port, head("GET", "/index.json", host, table.concat(lines) .. "\r\n"))
    assert.are.equal(431, status, text)
    for i = 1, 10000 do lines[i] = ("X-H%d: v\r\n"):format(i) end
    status, text = exchange(port, head("GET", "/index.json", host, table.concat(lines) .. "\r\n"))
    assert.are.equal(431, status, text)
    assert.falsy(text:find("errno", 1, true) or text:find("multibyte", 1, true), text)
    answers(port)
  end)

  it("refuses a foreign Host (DNS rebinding) and cross-site writes; its own page's form works", function()
    local status, text = exchange(port, head("GET", "/index.json", "attacker.example:" .. port, "\r\n"))
    assert.are.equal(403, status, text)
    answers(port, "localhost:" .. port)
    answers(port, "[::1]:" .. port)
    local before = names(dir .. "/data")
    local dump = "JAVA PROFILE 1.0.2\0\0\0\0\4" .. ("\0"):rep(8)
    local function post(extra, path)
      return exchange(port, head("POST", path or "/upload?name=x.hprof", host,
        extra .. ("Content-Length: %d\r\n\r\n"):format(#dump)) .. dump)
    end
    for _, extra in ipairs { "Origin: http://attacker.example\r\n", "Origin: null\r\n",
      "Sec-Fetch-Site: cross-site\r\n", ("Origin: http://%s\r\n"):format(host),  -- (same origin, no form token)
      "Cookie: a=b\r\n" } do
      status, text = post(extra)
      assert.are.equal(403, status, extra .. text)
    end
    -- an HTML form posted from another site (multipart, a browser's)
    local b = "x"
    local form = ("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.hprof\"\r\n\r\n%s\r\n--x--\r\n")
      :format(dump)
    status, text = exchange(port, head("POST", "/upload", host, ("Origin: http://attacker.example\r\nContent-Type: "
      .. "multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n"):format(b, #form)) .. form)
    assert.are.equal(403, status, text)
    assert.are.equal(before, names(dir .. "/data"))
    -- the server's own page carries its form token: a browser on it may post
    local _, page = exchange(port, head("GET", "/", host, "Connection: close\r\n\r\n"))
    local csrf = page:match('action="/upload%?csrf=(%x+)"')
    assert.are.equal(32, #csrf)
    assert.truthy(page:find('"x-sift-csrf": "' .. csrf .. '"', 1, true))
    status, text = post(("Origin: http://%s\r\nAccept: application/json\r\n"):format(host),
      "/upload?name=x.hprof&csrf=" .. csrf)
    assert.are.equal(201, status, text)
    -- a program (no Origin, no cookie) posts as before
    status, text = post("Accept: application/json\r\n", "/upload?name=y.hprof")
    assert.are.equal(200, status, text)  -- (the same bytes: known already)
  end)

  it("checks an upload for a gzip bomb in a thread: every other request is served meanwhile", function()
    -- a gzip HPROF of 1.25 GB: an HPROF header, then 20 members of 64 MB of
    -- zeros (1.3 MB on the wire); --max-upload 128M lets it inflate to 1 GB
    local d = helper.tmpdir()
    local jvm = helper.fixture(JVM)
    if not jvm then return end
    local f = assert(io.open(d .. "/head", "wb"))
    f:write(helper.read(jvm):sub(1, 31))
    f:close()
    assert(os.execute(("cd %s && gzip -9 head && head -c 67108864 /dev/zero | gzip -9 > zeros.gz"):format(d)))
    local zeros = helper.read(d .. "/zeros.gz")
    local bomb = helper.read(d .. "/head.gz") .. zeros:rep(20)
    local u, p, sdir = helper.serve { "--max-upload", "128M" }
    finally(function() stop(p) end)
    local n = tonumber(u:match(":(%d+)/$"))
    local before = names(sdir .. "/data")
    local _, _, up = exchange(n, head("POST", "/upload?name=bomb.hprof.gz", "127.0.0.1", ("Content-Length: %d\r\n"
      .. "Accept: application/json\r\n\r\n"):format(#bomb)) .. bomb, true)
    up:shutdown("w")
    -- while its answer has not come, other requests are answered
    local served = 0
    while served < 1000 do
      if up:fill(1, 0) then break end  -- (its answer began)
      up:clearerr()
      local status = exchange(n, head("GET", "/index.json", "127.0.0.1", "Connection: close\r\n\r\n"))
      assert.are.equal(200, status)
      served = served + 1
    end
    local text = read_all(up)
    up:close()
    assert.truthy(text:find("^HTTP/1.1 413 "), text)
    assert.truthy(text:find("decompresses to more than 1073741824 bytes", 1, true), text)
    assert.is_true(served >= 3, ("only %d requests served while the bomb inflated"):format(served))
    assert.are.equal(before, names(sdir .. "/data"))
  end)

  it("takes another name with --allow-host, and only the token's requests elsewhere", function()
    local u, p = helper.serve { "--allow-host", "sift.example.org" }
    finally(function() stop(p) end)
    local n = tonumber(u:match(":(%d+)/$"))
    answers(n, "sift.example.org:" .. n)
    answers(n, "SIFT.example.org")
    assert.are.equal(403, (exchange(n, head("GET", "/index.json", "other.example.org", "\r\n"))))
  end)

  it("answers 503 to one connection over --max-connections, and serves again once they close", function()
    local u, p = helper.serve { "--max-connections", "3", "--header-timeout", "120" }
    finally(function() stop(p) end)
    local n = tonumber(u:match(":(%d+)/$"))
    local held = {}
    for i = 1, 3 do
      local _, _, s = exchange(n, "GET /index.json HTTP/1.1\r\n", true)
      held[i] = s
    end
    -- (the server counts a connection once it has taken it: wait until it refuses)
    local text = helper.wait_for("a fourth connection to be refused", function()
      local status, answer = exchange(n, head("GET", "/index.json", "127.0.0.1", "Connection: close\r\n\r\n"))
      return status == 503 and answer or nil, answer
    end)
    assert.truthy(text:find("too many connections", 1, true), text)
    for _, s in ipairs(held) do s:close() end
    helper.wait_for("the server to serve again", function()
      local status = exchange(n, head("GET", "/index.json", "127.0.0.1", "Connection: close\r\n\r\n"))
      return status == 200, status
    end)
  end)
end)

describe("sift serve's files", function()
  local function modes(dir)
    local p = io.popen("find " .. helper.quote(dir) .. " -exec stat -c '%a %U:%G %n' {} +")
    local out = {}
    for line in p:lines() do
      local mode, owner, path = line:match("^(%d+) (%S+) (.*)$")
      out[#out + 1] = { mode = mode, owner = owner, name = path:sub(#dir + 2) }
    end
    p:close()
    return out
  end

  it("refuses a --data directory others may write or another user owns", function()
    for _, setup in ipairs {
      { "chmod 777 %s", "others may write to it (mode 0777): chmod 700 " },
      { "chmod 700 %s && chown nobody %s", "owned by another user (uid 65534)" },
    } do
      local data = helper.tmpdir()
      assert(os.execute(setup[1]:format(data, data)))
      local p = io.popen(("timeout 120 lua5.4 bin/sift serve --port 0 --data %s 2>&1; echo \"exit $?\""):format(
        helper.quote(data)))
      local out = p:read("a")
      p:close()
      assert.truthy(out:find(setup[2], 1, true), out)
      assert.truthy(out:find("exit 2\n", 1, true), out)
      assert.are.equal("", names(data))
    end
  end)

  it("keeps every file 0600 and every directory 0700 (0640 and 2750 with --group), workers' too", function()
    local jvm = helper.fixture(JVM)
    if not jvm then return end
    for _, case in ipairs { { group = nil, file = "600", dir = "700" }, { group = "nogroup", file = "640", dir = "2750" } } do
      local args = { "--ingest", "--workers", "1" }
      if case.group then args[#args + 1] = "--group" args[#args + 1] = case.group end
      local parent = helper.tmpdir()
      local data = parent .. "/deep/data"
      local u, p, server_dir = helper.serve(args, data)
      finally(function() stop(p) end)
      assert.truthy(u, "sift serve stopped: " .. helper.read(server_dir .. "/out"))
      local n = tonumber(u:match(":(%d+)/$"))
      local whole = helper.read(jvm)
      local status, text = exchange(n, head("POST", "/ingest?app=a&version=1&device=d", "127.0.0.1",
        ("Content-Length: %d\r\n\r\n"):format(#whole)) .. whole)
      assert.are.equal(202, status, text)
      helper.wait_for("the worker to analyse the dump", function()
        local out = helper.sift { "fleet", "status", "--json", "--data", data }
        local ok, st = pcall(cjson.decode, out)
        return ok and st.done == 1, out
      end)
      local seen = modes(data)
      local names_seen = {}
      for _, f in ipairs(seen) do
        names_seen[#names_seen + 1] = f.name
        local want = f.name == "" and case.dir or case.file
        assert.are.equal(want, f.mode, ("%s %s"):format(f.mode, f.name))
        if case.group then assert.truthy(f.owner:match(":nogroup$"), f.owner .. " " .. f.name) end
      end
      table.sort(names_seen)
      local listed = table.concat(names_seen, " ")
      assert.truthy(listed:find("fleet.db", 1, true) and listed:find("%x+%.meta") and listed:find("%x+%.hprof"), listed)
      -- the parents sift made are private too
      local deep = modes(parent .. "/deep")
      assert.are.equal("700", deep[1].mode)
      stop(p)  -- (finally stops the last one when an assertion fails)
    end
  end)
end)
