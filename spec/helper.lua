--- Test helpers: where the shared fixtures are, temporary files, and
-- running the `sift` command line.
local helper = {}

local root = os.getenv("SIFT_FIXTURES") or "../shared/fixtures"

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

--- The fixtures folder, or nil when it is absent.
function helper.fixtures()
  if exists(root .. "/hprof/MANIFEST.md") then return root end
  return nil
end

-- busted gives each spec file an environment whose `pending`, looked up
-- while a test runs, marks that test pending; find it from the caller
local function mark_pending(msg)
  for level = 3, 12 do
    local info = debug.getinfo(level, "f")
    if not info then break end
    for i = 1, math.huge do
      local name, value = debug.getupvalue(info.func, i)
      if not name then break end
      if name == "_ENV" and type(value) == "table" and value.pending then
        return value.pending(msg)
      end
    end
  end
  error(msg)
end

--- Path of a fixture, or nil (after marking the test pending with a visible
-- message) when the shared fixtures are not there.
function helper.fixture(rel)
  if not helper.fixtures() then
    mark_pending("shared fixtures not found at " .. root .. " (set SIFT_FIXTURES)")
    return nil
  end
  return root .. "/" .. rel
end

--- Every file under a fixture folder, sorted, as paths relative to it.
function helper.fixture_files(dir)
  local out = {}
  local p = io.popen(("cd %s && find %s -type f | sort"):format(helper.quote(root), helper.quote(dir)))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

function helper.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

--- Write bytes to a fresh temporary file and return its path.
function helper.tmpfile(bytes)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(bytes or "")
  f:close()
  return path
end

--- A fresh temporary directory.
function helper.tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

--- `sift serve` started as its own process with these arguments (quoted
-- here) and `--port 0 --data DIR/data` (unless `data` names another):
-- its URL (nil when it stopped without one, or gave none within minutes),
-- its pid, and DIR (its output in DIR/out).
function helper.serve(args, data)
  local dir = helper.tmpdir()
  local words = {}
  for i, a in ipairs(args) do words[i] = helper.quote(a) end
  os.execute(("lua5.4 bin/sift serve --port 0 --data %s %s > %s/out 2>&1 & echo $! > %s/pid"):format(
    helper.quote(data or dir .. "/data"), table.concat(words, " "), dir, dir))
  local pid = helper.read(dir .. "/pid"):match("%d+")
  local url = helper.wait_for("sift serve to print its URL", function()
    local f = io.open(dir .. "/out")  -- (the shell makes it in the child, a moment later)
    local text = f and f:read("a") or ""
    if f then f:close() end
    local found = text:match("(http://127%.0%.0%.1:%d+/)")
    if found then return found end
    if not os.execute("kill -0 " .. pid .. " 2>/dev/null") then return "stopped", text end
    return nil, text
  end)
  return url ~= "stopped" and url or nil, pid, dir
end

--- Wait until fn() gives a true value, and return it: polled with a
-- growing pause, for up to `limit` seconds (default 300: a busy machine
-- under ASan is slow, and a spec never races the clock). Past the limit
-- the spec fails with `what` and what fn last gave (its second value, or a
-- seen() call's answer).
function helper.wait_for(what, fn, limit, seen)
  local deadline, pause = os.time() + (limit or 300), 0.01
  local last, detail
  while true do
    last, detail = fn()
    if last then return last, detail end
    if os.time() > deadline then
      error(("waited %d s for %s; last seen: %s"):format(limit or 300, what,
        tostring(seen and seen() or detail or last)), 2)
    end
    os.execute(("sleep %g"):format(pause))
    pause = math.min(pause * 2, 0.5)
  end
end

--- The names in a directory (hidden ones too), sorted.
function helper.names(dir)
  local p = io.popen("ls -A " .. helper.quote(dir))
  local list = {}
  for name in p:lines() do list[#list + 1] = name end
  p:close()
  table.sort(list)
  return list
end

--- Whether Debian's python3-jsonschema is there to validate with.
function helper.have_validator()
  return os.execute("/usr/bin/python3 -c 'import jsonschema' 2>/dev/null") == true
end

--- Validate a JSON text against docs/schema/<name> (spec/schema_check.py):
-- true, or false and the problems found.
function helper.schema_problems(name, text)
  local file = helper.tmpfile(text)
  local p = io.popen(("/usr/bin/python3 spec/schema_check.py docs/schema %s %s 2>&1"):format(name, file))
  local problems = p:read("a")
  local ok = p:close()
  os.remove(file)
  return ok == true, problems
end

function helper.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

--- Headless Chromium (Debian's chromium, or $CHROMIUM): is it installed,
-- and what it prints for a URL with these arguments (`--dump-dom`: the DOM
-- after the page's scripts ran; `--screenshot=FILE`). It runs without the
-- sanitizer runtime make spec-asan preloads (that is for sift).
helper.CHROMIUM = os.getenv("CHROMIUM") or "chromium"

function helper.have_chromium()
  return os.execute(("command -v %s >/dev/null 2>&1"):format(helper.CHROMIUM)) == true
end

function helper.chromium(args, url)
  local p = io.popen(("env -u LD_PRELOAD %s --headless --no-sandbox --disable-gpu --hide-scrollbars %s %s 2>/dev/null")
    :format(helper.CHROMIUM, args, helper.quote(url)))
  local out = p:read("a")
  p:close()
  return out
end

-- one headless Chromium for the whole run, driven over DevTools
-- (spec/cdp.lua): started on first use, stopped when the run ends (a
-- browser's start costs seconds; a page in it, a fraction of one)
local shared_browser

--- The run's browser (a spec/cdp.lua session of 1280 × 900).
function helper.browser()
  if not shared_browser then
    local session = assert(require("spec.cdp").open { width = 1280, height = 900 })
    shared_browser = session
    helper.browser_guard = setmetatable({}, { __gc = function() session:close() end })
  end
  return shared_browser
end

--- The DOM of a page of `sift serve` once its file is open (the DOM after
-- its scripts ran, as --dump-dom writes it): while it opens (its first
-- visit starts the analysis) the page shows its progress, and is asked
-- for again.
function helper.dom(url)
  local browser = helper.browser()
  return helper.wait_for("the page of " .. url .. " past its progress page", function()
    browser:navigate("about:blank")  -- (a new document, also when only the #fragment differs)
    browser:navigate(url)
    -- (a progress page reloads itself once the file is open: between two
    -- documents there is none, and a reloaded one may be read half parsed,
    -- so only a complete document counts; the next round asks again)
    local ok, page = pcall(browser.eval, browser,
      "document.readyState === 'complete' && document.documentElement ? document.documentElement.outerHTML : ''")
    if not ok or page == "" then return false, ok and "no complete document yet" or page end
    return not page:find('<p id="progress">', 1, true) and page, page
  end)
end

--- A screenshot of a page in a window of width × height CSS pixels,
-- written as a PNG to `file`.
function helper.screenshot(url, file, width, height)
  local browser = helper.browser()
  browser:call("Emulation.setDeviceMetricsOverride", { width = width, height = height, deviceScaleFactor = 1,
    mobile = false })
  browser:navigate("about:blank")
  browser:navigate(url)
  local shot = browser:call("Page.captureScreenshot", { format = "png" })
  browser:call("Emulation.setDeviceMetricsOverride", { width = 1280, height = 900, deviceScaleFactor = 1, mobile = false })
  local f = assert(io.open(file, "wb"))
  f:write(helper.base64_decode(shot.data))
  f:close()
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

--- Base64 text as bytes.
function helper.base64_decode(text)
  local value = {}
  for i = 1, 64 do value[B64:byte(i)] = i - 1 end
  local out, bits, n = {}, 0, 0
  for c in text:gmatch("[%w+/]") do
    bits, n = bits << 6 | value[c:byte()], n + 6
    if n >= 8 then
      n = n - 8
      out[#out + 1] = string.char(bits >> n & 0xff)
    end
  end
  return table.concat(out)
end

--- Run bin/sift with arguments; returns stdout, stderr, exit status.
function helper.sift(args, shell_suffix)
  local errfile = os.tmpname()
  local words = {}
  for i, a in ipairs(args) do words[i] = helper.quote(a) end
  local cmd = ("lua5.4 bin/sift %s 2>%s %s"):format(table.concat(words, " "), errfile, shell_suffix or "")
  local p = io.popen(cmd)
  local out = p:read("a")
  local _, _, code = p:close()
  local err = helper.read(errfile)
  os.remove(errfile)
  return out, err, code
end

--- Run bin/sift expecting success (exit 0, else fail with its stderr):
-- its stdout.
function helper.sift_ok(args)
  local out, err, code = helper.sift(args)
  assert(code == 0, err)
  return out
end

--- Run bin/sift with --json among args, expecting success: its output decoded.
function helper.sift_json(args)
  return require("cjson").decode(helper.sift_ok(args))
end

--- A GET over lua-http from outside a cqueues loop (it blocks): status and
-- body. accept: the Accept header (default text/html).
function helper.http_get(url, accept)
  require("sift.paths").older_lua()
  local req = require("http.request").new_from_uri(url)
  req.headers:upsert("accept", accept or "text/html")
  local h, st = assert(req:go(120))
  return tonumber(h:get(":status")), st:get_body_as_string()
end


--- A shell command's success and output (stderr too); the peers (the JDK,
-- the engines) never run under the sanitizer runtime of `make spec-asan`.
function helper.sh(cmd)
  local p = io.popen("env -u LD_PRELOAD sh -c " .. helper.quote(cmd) .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end
local sh = helper.sh

--- A heap dump of the Java program `spec/java/<name>.java` (or of a class
-- in a package, leakcanary.FleetLeaks: spec/java/FleetLeaks.java): compiled,
-- run until it prints "ready <pid>", dumped with jcmd (extra jcmd arguments in
-- `dump_args`, JVM options in `java_args`) and stopped. The collector is
-- Serial unless `java_args` names one (-XX:+UseG1GC ...). With `histogram`,
-- the JVM's own `GC.class_histogram` is taken right before the dump and
-- right after it and written beside it (path .. ".before.histo", path ..
-- ".histo"). Cached in build/jvm/ by the source's checksum and the
-- options. Returns the path, or nil and why (no JDK).
function helper.jvm_dump(name, dump_args, java_args, histogram)
  if not sh("command -v javac && command -v jcmd") then return nil, "no JDK (javac, jcmd)" end
  local source = ("spec/java/%s.java"):format(name:match("[^.]*$"))  -- (a class in a package: its last part)
  local _, sum = sh("cksum " .. source)
  local dir = "build/jvm/" .. sum:match("^(%d+)")
  java_args = java_args or "-Xmx64m"
  local tag = (java_args .. " " .. (dump_args or "")):gsub("[^%w]+", "_")
  local path = ("%s/%s%s.hprof"):format(dir, name:match("[^.]*$"), tag)
  local function cached(p) local f = io.open(p) if f then f:close() end return f ~= nil end
  assert(os.execute("mkdir -p " .. dir))
  helper.once(dir .. ".lock", function()  -- (one lock per source: its classes are compiled into dir)
    return cached(path) and (not histogram or (cached(path .. ".histo") and cached(path .. ".before.histo")))
  end, function() helper.run_jvm(name, dir, source, path, dump_args, java_args, histogram) end)
  return path
end

-- jvm_dump's JVM run: compile, start, histograms around the dump, stop
function helper.run_jvm(name, dir, source, path, dump_args, java_args, histogram)
  local ok, out = sh(("javac -encoding UTF-8 -d %s %s"):format(dir, source))
  assert(ok, out)
  local gc = java_args:match("%-XX:%+Use%w+GC") and "" or "-XX:+UseSerialGC"
  local java = io.popen(("exec env -u LD_PRELOAD java %s %s -cp %s %s"):format(java_args, gc, dir, name))
  local pid = java:read("l"):match("^ready (%d+)$")
  local before_ok, before
  if histogram then before_ok, before = sh(("jcmd %s GC.class_histogram"):format(pid)) end
  ok, out = sh(("jcmd %s GC.heap_dump %s %s.tmp"):format(pid, dump_args or "", path))
  local histo_ok, histo = true, nil
  if histogram then histo_ok, histo = sh(("jcmd %s GC.class_histogram"):format(pid)) end
  os.execute("kill " .. pid)
  java:close()
  assert(ok and out:match("Heap dump file created"), out)
  assert(histo_ok, histo)
  if histogram then
    assert(before_ok, before)
    for file, text in pairs { [path .. ".before.histo"] = before, [path .. ".histo"] = histo } do
      local f = assert(io.open(file, "w"))
      f:write(text)
      f:close()
    end
  end
  assert(os.rename(path .. ".tmp", path))
end

--- Make a cached peer output once, also while the spec and sanitizer
-- passes run at the same time: `ready()` says whether it is there;
-- `make()` makes it while holding `lock`, a directory (mkdir is atomic)
-- that another pass waits on.
function helper.once(lock, ready, make)
  local locked = false
  helper.wait_for(lock .. " (held by another run; remove it if none is going)", function()
    if ready() then return true end
    locked = os.execute("mkdir " .. helper.quote(lock) .. " 2>/dev/null") == true
    return locked
  end, 900)
  if not locked then return end
  local ok, err = pcall(function() if not ready() then make() end end)
  os.execute("rmdir " .. helper.quote(lock))
  if not ok then error(err, 0) end
end

--- n heap dumps of one running Java program `spec/java/<name>.java`,
-- taken after each of its steps: it is started with a directory and mode
-- as arguments, prints "ready <pid>", and runs step N when DIR/go-N
-- appears, making DIR/done-N after it (GrowthSample.java does). Returns
-- the dump paths, oldest first, and DIR; nil without a JDK.
function helper.jvm_series(name, mode, n)
  if not sh("command -v javac && command -v jcmd") then return nil end
  local dir = helper.tmpdir()
  local ok, out = sh(("javac -d %s spec/java/%s.java"):format(helper.quote(dir), name))
  assert(ok, out)
  local java = io.popen(("exec env -u LD_PRELOAD java -Xmx64m -XX:+UseSerialGC -cp %s %s %s %s"):format(
    helper.quote(dir), name, helper.quote(dir), mode))
  local pid = java:read("l"):match("^ready (%d+)$")
  local dumps = {}
  for i = 1, n do
    assert(io.open(("%s/go-%d"):format(dir, i), "w")):close()
    helper.wait_for(("%s to finish its step %d"):format(name, i), function()
      local done = io.open(("%s/done-%d"):format(dir, i))
      if done then done:close() end
      return done ~= nil
    end)
    dumps[i] = ("%s/dump-%d.hprof"):format(dir, i)
    ok, out = sh(("jcmd %s GC.heap_dump %s"):format(pid, helper.quote(dumps[i])))
    assert(ok and out:match("Heap dump file created"), out)
  end
  os.execute("kill " .. pid)
  java:close()
  return dumps, dir
end

--- The rows of a `jcmd GC.class_histogram` text: { [class name as sift
-- writes it] = { count, bytes } } (classes of one name added up).
function helper.class_histogram(text)
  local normalize = require("sift.heap").normalize
  local rows = {}
  for count, bytes, name in text:gmatch("\n%s*%d+:%s+(%d+)%s+(%d+)%s+(%S+)") do
    name = normalize((name:gsub("/0x", "+0x")))
    local r = rows[name] or { count = 0, bytes = 0 }
    r.count, r.bytes = r.count + tonumber(count), r.bytes + tonumber(bytes)
    rows[name] = r
  end
  return rows
end

--- Lines of a text.
function helper.lines(s)
  local t = {}
  for line in s:gmatch("[^\n]+") do t[#t + 1] = line end
  return t
end

--- A `sift serve` listening in this process (opts for sift.serve.new),
-- driven by lua-http's client in the same cqueues loop, for the `it`s of a
-- describe to share (setup/teardown). get(path, headers) and post(path,
-- body, headers) give the status, the body (decoded when it is JSON) and
-- the headers; run(fn) runs fn(get, post, server) as a coroutine of the
-- server's loop (for clients at once), stepping the loop until it returns;
-- stop() closes the server.
function helper.start_server(opts)
  require("sift.paths").older_lua()
  local cqueues, request, cjson = require "cqueues", require "http.request", require "cjson"
  local server = assert(require("sift.serve").new(opts))
  server:listen()
  local url = server:url()
  local function call(method, path, body, headers)
    local req = request.new_from_uri(url .. path:gsub("^/", ""))
    req.follow_redirects = false
    req.headers:upsert(":method", method)
    for k, v in pairs(headers or {}) do req.headers:upsert(k, v) end
    if body then req:set_body(body) end
    local h, st = req:go(120)
    assert(h, st)
    local text = st:get_body_as_string()
    local status = tonumber(h:get(":status"))
    local ok, value = pcall(cjson.decode, text)
    return status, ok and value or text, h
  end
  local function get(path, headers) return call("GET", path, nil, headers) end
  local function post(path, body, headers) return call("POST", path, body, headers) end
  local cq = cqueues.new()
  cq:wrap(function() server:run() end)
  local s = {}
  function s.run(fn)
    local results
    cq:wrap(function() results = table.pack(pcall(fn, get, post, server)) end)
    while not results do assert(cq:step()) end
    if not results[1] then error(results[2], 0) end
    return table.unpack(results, 2, results.n)
  end
  function s.get(path, headers) return s.run(function() return get(path, headers) end) end
  function s.post(path, body, headers) return s.run(function() return post(path, body, headers) end) end
  function s.stop()
    s.run(function() server.http:close() end)
    assert(cq:loop())
    server:close()
  end
  return s
end

--- Run fn(get, post, server) against a server of helper.start_server's,
-- then stop it.
function helper.with_server(opts, fn)
  local s = helper.start_server(opts)
  local ok, err = pcall(s.run, fn)
  s.stop()
  if not ok then error(err, 0) end
end

return helper
