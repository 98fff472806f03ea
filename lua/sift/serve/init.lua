--- `sift serve`: a local web UI over the files sift reads, and an upload
-- endpoint, on lua-http (cqueues). Every page has a JSON twin (the same
-- path with `.json`, or `Accept: application/json`) in the CLI's schemas:
-- pages are views of what `sift.*` returns, so the CLI and the browser
-- agree. Binds to 127.0.0.1 unless told otherwise; elsewhere it needs a
-- token (`Authorization: Bearer T`, or the cookie a `?token=T` link sets).
-- Connections go through one guard (`sift.serve.listen`), requests through
-- the access rules (`sift.serve.access`): docs/serve.md, "Security".
--
--     local serve = require "sift.serve"
--     local server = assert(serve.new { files = { "app.hprof" }, data = "/home/me/sift-data" })
--     print(server:url())
--     server:run()
-- @module sift.serve

local http_headers = require "http.headers"
local http_util = require "http.util"
local cjson = require "cjson"
local cqueues = require "cqueues"
local condition = require "cqueues.condition"
local thread = require "cqueues.thread"
local json = require "sift.json"
local worker = require "sift.serve.worker"
local multipart = require "sift.serve.multipart"
local html = require "sift.serve.html"
local store_mod = require "sift.serve.store"
local listen = require "sift.serve.listen"
local access = require "sift.serve.access"
local private = require "sift.private"
local rand = require "openssl.rand"
local finance_app = require "sift.serve.finance"

local M = {}

local Server = {}
Server.__index = Server


--- A server (not yet listening).
-- @tparam table opts `files` (paths), `data` (the upload directory; by
--   default `sift.private.data_dir()`), `host` ("127.0.0.1"), `port` (0:
--   any free one), `token` (required when host is not loopback),
--   `allow_hosts` (names the Host header may give besides the loopback
--   ones), `group` (a group that may read the data: sift.private),
--   `max_upload` (bytes, default 2 GB), `max_decompressed` (bytes, default
--   8× max_upload), `model` (size model), `strings` (jars for BMD names),
--   `mapping` (a ProGuard/R8 mapping for heap dumps), `baseline` (a dump
--   to diff heaps with), `db` (a finance store: the /finance report),
--   `analyses` (long jobs at once: opening a file, computing a result its
--   pages share; default 2), `hold` (a test option:
--   a path; each computation waits while a file is there, its progress
--   saying so, so that a spec sees one running as long as it likes),
--   `ingest` (take POST /ingest into the fleet
--   queue in data: sift.fleet), `redis` and `postgres` (URLs: the fleet on
--   those engines), and the connection limits of `sift.serve.listen`
--   (`max_connections`, `header_timeout`, `body_timeout`, `idle_timeout`)
-- @return server, or nil, message
function M.new(opts)
  local host = opts.host or "127.0.0.1"
  if not access.loopback(host) and not opts.token then
    return nil, ("binding to %s needs --token: anyone who reaches the port could read the dumps"):format(host)
  end
  if opts.db then
    local f = io.open(opts.db, "rb")
    if not f then return nil, opts.db .. ": no such finance store" end
    f:close()
  end
  local data, why = opts.data
  if not data then
    data, why = private.data_dir()
    if not data then return nil, why end
  end
  local ok
  ok, why = private.directory(data, opts.group)
  if not ok then return nil, why end
  local store
  store, why = store_mod.new(data, { max_upload = opts.max_upload, max_decompressed = opts.max_decompressed })
  if not store then return nil, why end
  for _, path in ipairs(opts.files or {}) do
    local entry, msg = store:add(path)
    if not entry then return nil, msg end
  end
  opts.model = opts.model or "shark"
  local fleet
  if opts.ingest then
    fleet, why = require("sift.fleet").open(data, { redis = opts.redis, postgres = opts.postgres, retry = 5 })
    if not fleet then return nil, why end
  end
  local csrf = (rand.bytes(16):gsub(".", function(c) return ("%02x"):format(c:byte()) end))
  return setmetatable({ opts = opts, host = host, token = opts.token, store = store, fleet = fleet, csrf = csrf,
    rules = access.new { bind = host, allow_hosts = opts.allow_hosts, csrf = csrf },
    analyses = opts.analyses or 2, working = 0, changed = condition.new() }, Server)
end

--- {======================================================
-- Responses
-- =======================================================

local function send(stream, status, ctype, body, extra)
  local h = http_headers.new()
  h:append(":status", tostring(status))
  h:append("content-type", ctype)
  h:append("cache-control", "no-store")
  h:append("x-content-type-options", "nosniff")
  for k, v in pairs(extra or {}) do h:append(k, v) end
  stream:write_headers(h, body == nil)
  if body ~= nil then stream:write_chunk(body, true) end
end

local function send_json(stream, status, value)
  send(stream, status, "application/json", json.encode(value) .. "\n")
end

local function send_error(stream, status, message, as_json)
  if as_json then
    send_json(stream, status, { error = message, status = status })
  else
    send(stream, status, "text/html; charset=utf-8", html.page(("Error %d"):format(status), nil,
      ('<p class="err" id="error">%s</p>'):format(html.escape(message))))
  end
end

-- }======================================================


--- {======================================================
-- Pages
-- =======================================================

-- the finance report of --db: report.view's JSON, the text and the chart
local function finance_page(self, query)
  if not self.opts.db then return nil, 404, "no books: start the server with --db FILE" end
  local finance, report = require "sift.finance", require "sift.finance.report"
  local books <close>, msg = finance.open(self.opts.db)
  if not books then return nil, 422, msg end
  local ok, r = pcall(report.build, books, { from = query.from, to = query.to, top = 10 })
  if not ok then return nil, 422, (tostring(r):gsub("^.-:%d+: ", "")) end
  return report.view(r), function()
    local chart = report.svg(r):gsub("^<%?xml[^>]*>%s*", "")
    return html.page("Income and expenses", require("sift.serve.finance.common").NAV, table.concat {
      '<div id="chart">', chart, "</div>", "<pre>", html.escape(report.text(r)), "</pre>",
    })
  end
end

local function index_page(self)
  local files = json.array {}
  for i, e in ipairs(self.store:list()) do
    files[i] = { id = e.id, name = e.name, format = e.format, size = e.size, description = e.description,
      uploaded = e.uploaded, url = "/f/" .. e.id .. "/", sha256 = e.sha256 }
  end
  return { files = files }, function()
    local rows = {}
    for i, f in ipairs(files) do
      rows[i] = { html.a(f.url, f.name), html.escape(f.description), html.num(f.size), f.uploaded and "uploaded" or "" }
    end
    local nav = self.opts.db and { { "/finance/accounts", "finance" }, { "/finance", "finance report" } } or nil
    return html.page("Files", nav, table.concat {
      html.table({ "file", "what it is", "#bytes", "" }, rows, "files"),
      (([[<h2>Upload</h2><p>An HPROF (plain, .gz, .bz2), a BMD, an Android .trace or an OFX statement.</p>
<form method="post" action="/upload?csrf=CSRF" enctype="multipart/form-data">
<input type="file" id="file" name="file"> <button id="send" type="submit">upload</button> <span id="status"></span>
</form>
<script>
document.getElementById("send").onclick = function (event) {
  var f = document.getElementById("file").files[0];
  if (!f) return;
  event.preventDefault();  // (the form posts it too, without a script)
  var status = document.getElementById("status");
  status.textContent = "uploading…";
  fetch("/upload?name=" + encodeURIComponent(f.name), { method: "POST", body: f,
    headers: { "accept": "application/json", "x-sift-csrf": "CSRF" } })
    .then(function (r) { return r.json(); })
    .then(function (j) { if (j.url) location.href = j.url; else status.textContent = j.error; })
    .catch(function (e) { status.textContent = String(e); });
};
</script>]]):gsub("CSRF", self.csrf)),
    })
  end
end

--- {======================================================
-- Workers: each file's pages are made in a thread of its own, its page
-- thread; the results pages share (ctx.compute) in a second one, its
-- compute thread (sift.serve.worker). At most opts.analyses long jobs
-- (opening a file, a computation) run at once.
-- =======================================================

-- the thread's entry point (it must have no upvalues: it is dumped and
-- loaded into the thread's own Lua state)
local function thread_main(sock, path, cpath, setup)
  package.path, package.cpath = path, cpath
  return require("sift.serve.worker").run(sock, setup)
end

-- wait until fn(): cond is signalled whenever what fn looks at changes
local function wait_for(cond, fn)
  while not fn() do cond:wait() end
end

-- a worker thread for the file: {thread, sock, busy, has (the keys of
-- the results it was given)}
function Server:start(entry)
  local th, sock = thread.start(thread_main, package.path, package.cpath, worker.encode(entry, self.opts, self.analyses))
  sock:setmode("b", "b")
  return { thread = th, sock = sock, busy = false, has = {} }
end

-- the other files of an entry's format this server shows, as a page line
-- gives them to its worker (ctx.files): `id=name*path`, percent-encoded,
-- joined by &
local function served_files(self, entry)
  local out = {}
  for _, e in ipairs(self.store:list()) do
    if e.format == entry.format and e.id ~= entry.id and not e.problem then
      out[#out + 1] = ("%s=%s*%s"):format(e.id, html.encode(e.name), html.encode(e.path))
    end
  end
  return table.concat(out, "&")
end

local function stop(w)
  pcall(w.sock.close, w.sock)
end

-- a long job's turn (at most opts.analyses at once), and its end
function Server:acquire()
  wait_for(self.changed, function() return self.working < self.analyses end)
  self.working = self.working + 1
end

function Server:release()
  self.working = self.working - 1
  self.changed:signal()
end

-- one exchange with a worker: the results of the file it has not got
-- yet, then line; its progress goes to on_progress(label, done, total),
-- the results it computes are kept (entry.results: key -> bytes) and
-- their jobs marked ready. Returns "result", status, content type,
-- body, or "needs", key; raises an error when the worker stopped.
function Server:talk(entry, w, line, on_progress)
  for key, bytes in pairs(entry.results) do
    if not w.has[key] then
      w.sock:write(("store\t%s\t%d\n"):format(key, #bytes), bytes)
      w.has[key] = true
    end
  end
  w.sock:write(line, "\n")
  w.sock:flush()
  local function bytes(len) return len == "0" and "" or w.sock:read(tonumber(len)) end
  while true do
    local got = w.sock:read("*l")
    if not got then error("the worker stopped", 0) end
    local label, done, total = got:match("^progress\t([^\t]*)\t(%d+)\t(%d+)$")
    local key, len = got:match("^computed\t([^\t]*)\t(%d+)$")
    local st, ct, n = got:match("^result\t(%d+)\t([^\t]*)\t(%d+)$")
    if label then
      on_progress(label, tonumber(done), tonumber(total))
    elseif key then
      entry.results[key], w.has[key] = bytes(len), true
      if entry.jobs[key] then entry.jobs[key].state = "ready" end
      self.changed:signal()
    elseif st then
      return "result", tonumber(st), ct, bytes(n)
    elseif got:match("^needs\t") then
      return "needs", got:sub(7)
    else
      error("the worker said " .. got, 0)
    end
  end
end

-- the file's page thread, open: started and opened by the first request
-- that needs it (the others wait); nil, status, message when the file
-- does not open. entry.state says how far it is (idle, queued, working,
-- ready, failed) and entry.progress what the opening does.
function Server:page_thread(entry)
  wait_for(self.changed, function() return entry.state ~= "queued" and entry.state ~= "working" end)
  if entry.state == "ready" then return entry.pages end
  if entry.state == "failed" then return nil, 422, entry.why end
  entry.state = "queued"
  self:acquire()
  entry.state = "working"
  local w = self:start(entry)
  local ok, kind, status, _, body = pcall(self.talk, self, entry, w, "open", function(label, done, total)
    entry.progress = { label = label, done = done, total = total }
  end)
  self:release()
  entry.progress = nil
  if ok and status == 200 then
    entry.pages, entry.state = w, "ready"
  else
    stop(w)
    if ok then entry.state, entry.why = "failed", body  -- (it does not open: 422 on each page)
    else entry.state = nil end  -- (the thread died: started again next time)
  end
  self.changed:signal()
  if not ok then return nil, 500, "the file's worker failed: " .. tostring(kind) end
  return self:page_thread(entry)
end

-- the computation of key, that page (with arg and query qs) needs: its
-- job ({key, state (queued, working, ready, failed), label, done, total,
-- message}), started once. Jobs run in the file's compute thread (started,
-- with its own open of the file, by the first), one after another; the
-- thread runs the page up to its ctx.compute(key), which computes it.
function Server:compute(entry, key, page, arg, qs)
  if entry.jobs[key] then return entry.jobs[key] end
  local job = { key = key, state = "queued" }
  entry.jobs[key] = job
  local function on_progress(label, done, total) job.label, job.done, job.total = label, done, total end
  cqueues.running():wrap(function()
    wait_for(self.changed, function() return not entry.computing end)
    if entry.results[key] then  -- (an earlier job computed it on the way)
      job.state = "ready"
      return self.changed:signal()
    end
    entry.computing = true
    self:acquire()
    job.state = "working"
    local ok, why = pcall(function()
      if not entry.computer then
        entry.computer = self:start(entry)
        local _, status, _, body = self:talk(entry, entry.computer, "open", on_progress)
        if status ~= 200 then error(body, 0) end
      end
      local _, status, _, body = self:talk(entry, entry.computer,
        ("page\t%s\t%s\t%s\t1\t1\t%s"):format(page, arg or "", qs or "", served_files(self, entry)), on_progress)
      if not entry.results[key] then  -- (the page failed first: its message)
        local answered, view = pcall(cjson.decode, body)
        error(status ~= 200 and answered and type(view) == "table" and view.error or ("no " .. key .. " was computed"), 0)
      end
    end)
    self:release()
    if not ok then
      job.state, job.message = "failed", ("computing %s failed: %s"):format(key, tostring(why))
      if why == "the worker stopped" then  -- (started again by the next job; this one may be asked again)
        stop(entry.computer)
        entry.computer, entry.jobs[key] = nil, nil
      end
    end
    entry.computing = false
    self.changed:signal()
  end)
  return job
end

-- where a file is: its opening (state idle, queued, working, ready or
-- failed, with what it does and how far) and each computation's
local function progress_view(entry)
  local p = entry.progress or {}
  local jobs = json.array {}
  for key, j in pairs(entry.jobs) do
    jobs[#jobs + 1] = { key = key, state = j.state, label = j.label, done = j.done, total = j.total, error = j.message }
  end
  table.sort(jobs, function(x, y) return x.key < y.key end)
  return { state = entry.state or "idle", label = p.label, done = p.done, total = p.total, computations = jobs }
end

-- the page a browser gets while the file opens (key nil) or a result its
-- page needs is computed (key): it polls progress.json and reloads when
-- that is done
local function waiting_page(entry, key)
  local body = [[<p id="progress">opening…</p>
<p><progress id="bar" max="100" value="0" style="width:40em"></progress></p>
<script>
var KEY = KEYJSON;
(function poll() {
  fetch("/f/ID/progress.json", { headers: { accept: "application/json" } })
    .then(function (r) { return r.json(); })
    .then(function (p) {
      var job = p, what = "opening";
      if (KEY) {
        job = p.computations.filter(function (c) { return c.key === KEY; })[0] || { state: "ready" };
        what = KEY;
      }
      if (job.state !== "idle" && job.state !== "queued" && job.state !== "working") { location.reload(); return; }
      var pct = job.total ? Math.floor(100 * job.done / job.total) : 0;
      var label = job.label && job.label !== KEY ? what + ": " + job.label.replace(KEY + ": ", "") : what;
      document.getElementById("progress").textContent = job.state === "queued"
        ? label + ": waiting for another analysis…" : label + " " + pct + "%";
      document.getElementById("bar").value = pct;
      setTimeout(poll, 300);
    })
    .catch(function () { setTimeout(poll, 1000); });
})();
</script>]]
  body = body:gsub("/f/ID/", "/f/" .. entry.id .. "/"):gsub("KEYJSON", (json.encode(key or false):gsub("%%", "%%%%")))
  return html.page(entry.name, nil, body)
end

-- a page of a file from its page thread: status, content type and body
-- (no content type: body is an error message). A page that needs a
-- result not computed yet starts its computation; a browser gets that
-- computation's progress page at once, a JSON client its answer when it
-- is done.
function Server:ask(entry, page, arg, qs, as_json)
  local asked = {}  -- (the keys this page needed: each is given to it once)
  while true do
    local w, status, message = self:page_thread(entry)
    if not w then return status, nil, message end
    wait_for(self.changed, function() return not w.busy end)
    w.busy = true
    local ok, kind, st, ctype, body = pcall(self.talk, self, entry, w,
      ("page\t%s\t%s\t%s\t%d\t0\t%s"):format(page, arg or "", qs or "", as_json and 1 or 0, served_files(self, entry)),
      function(label, done, total)
        entry.progress = { label = label, done = done, total = total }
      end)
    w.busy, entry.progress = false, nil
    self.changed:signal()
    if not ok then  -- a worker that died is started again next time
      stop(w)
      if entry.pages == w then entry.pages, entry.state = nil, nil end
      return 500, nil, "the file's worker failed: " .. tostring(kind)
    end
    if kind == "result" then return st, ctype, body end
    if asked[st] then return 500, nil, ("the page needed %s again once it was given"):format(st) end
    asked[st] = true
    local job = self:compute(entry, st, page, arg, qs)
    if job.state == "failed" then return 500, nil, job.message end
    if not as_json and job.state ~= "ready" then
      return 200, "text/html; charset=utf-8", waiting_page(entry, job.key)
    end
    wait_for(self.changed, function() return job.state == "ready" or job.state == "failed" end)
    if job.state == "failed" then return 500, nil, job.message end
  end
end

-- }======================================================


--- {======================================================
-- Requests
-- =======================================================

local function wants_json(headers, path)
  if path:match("%.json$") then return true end
  local accept = headers:get("accept") or ""
  return accept:find("application/json", 1, true) ~= nil and not accept:find("text/html", 1, true)
end

-- an upload's answer is JSON unless the client asks for HTML (a
-- browser's form post does; curl's `Accept: */*` does not)
local function upload_wants_json(headers)
  return not (headers:get("accept") or ""):find("text/html", 1, true)
end

-- the file a request carries (its body, or an HTML form's file part),
-- stored: the entry and whether it was there already, or nil, status,
-- message. The declared length is checked before a byte is read.
local function receive(self, request, query, take)
  local stream, headers = request.stream, request.headers
  local length = request:length()
  local max = self.opts.max_upload or 2 * 1024 ^ 3
  if length == false then
    return nil, 400, ("Content-Length %q is not a length"):format((headers:get("content-length") or ""):sub(1, 40))
  end
  if headers:has("transfer-encoding") and length then
    return nil, 400, "a body with both Content-Length and Transfer-Encoding"
  end
  if not length and not headers:has("transfer-encoding") then
    return nil, 411, "an upload needs its length (Content-Length) or a chunked body"
  end
  if length and length > max then
    return nil, 413, store_mod.over_limit(max)
  end
  -- a client that asked to be told to go on (curl and lua-http do, for
  -- large bodies) is told once its length is known to be acceptable
  if (headers:get("expect") or ""):lower() == "100-continue" then stream:write_continue() end
  local body = request:body()
  local next_chunk, name = body, query.name or headers:get("x-filename")
  local ctype = headers:get("content-type") or ""
  if ctype:find("multipart/", 1, true) then  -- an HTML form's upload
    local boundary = multipart.boundary(ctype)
    if not boundary then return nil, 400, "a multipart body without its boundary" end
    local filename_or_why, failure
    next_chunk, filename_or_why, failure = multipart.file(body, boundary)
    if not next_chunk then
      return nil, failure and failure.status or 400, "the form holds no file: " .. filename_or_why
    end
    name = filename_or_why
  end
  if take then return take(next_chunk, name) end
  return self.store:upload(next_chunk, name)
end

local function upload(self, request, query, as_json)
  local entry, status, message = receive(self, request, query)
  if not entry then
    message = self.store:hide(message)
    request.log(("%d POST /upload from %s: %s"):format(status, request.peer, message))
    return send_error(request.stream, status, message, as_json)
  end
  local duplicate = status
  if not entry.state then  -- it opens now, in its thread
    cqueues.running():wrap(function() self:page_thread(entry) end)
  end
  local view = { id = entry.id, url = "/f/" .. entry.id .. "/", name = entry.name, format = entry.format,
    sha256 = entry.sha256, duplicate = duplicate }
  if as_json then return send_json(request.stream, duplicate and 200 or 201, view) end
  send(request.stream, 303, "text/plain", "", { location = view.url })
end

-- POST /ingest (--ingest): a dump or trace from a device, with its
-- metadata (X-Sift-App, -Version, -Device, -OS, -Time, -Tags headers or
-- the same names in the query), stored and queued for the workers; 202 at
-- once with the upload's id
local META = { "app", "version", "device", "os", "time", "tags" }

local function ingest(self, request, query)
  local stream, headers = request.stream, request.headers
  local entry, status, message = receive(self, request, query)
  if not entry then
    message = self.store:hide(message)
    request.log(("%d POST /ingest from %s: %s"):format(status, request.peer, message))
    return send_error(stream, status, message, true)
  end
  local meta = {}
  for _, k in ipairs(META) do meta[k] = query[k] or headers:get("x-sift-" .. k) end
  local ok, id, known = pcall(self.fleet.ingest, self.fleet, entry.sha256, entry.path, entry.format, meta)
  if not ok then  -- (the engines away past their retries: the device sends it again later)
    return send_error(stream, 503, "cannot queue the upload now: " .. self.store:hide(id), true)
  end
  send_json(stream, 202, { id = id, sha256 = entry.sha256, format = entry.format, duplicate = known })
end

-- POST /symbols?app=APP&version=V (or ?platform=NAME; X-Sift-App and
-- -Version headers too) (--ingest): one symbol file, the body or an HTML
-- form's file (an apk, jar, dex or class file, or an R8/ProGuard mapping:
-- sift.fleet.symbols), stored once by SHA-256 and recorded for the fleet's
-- workers; 201 with what was stored, 400 for a file of no such kind
local function symbols(self, request, query)
  local stream, headers = request.stream, request.headers
  local max = self.opts.max_upload or 2 * 1024 ^ 3
  local tmp
  local got, status, message = receive(self, request, query, function(next_chunk, name)
    tmp = ("%s/.upload-%d-%d"):format(self.store.dir, os.time(), math.random(1 << 30))
    local f = assert(io.open(tmp, "wb"))  -- (0600: the server runs with umask 077)
    local n = 0
    while true do
      local chunk, failure = next_chunk()
      if not chunk then
        f:close()
        if failure then return nil, failure.status, failure.message end
        break
      end
      n = n + #chunk
      if n > max then
        f:close()
        return nil, 413, store_mod.over_limit(max)
      end
      assert(f:write(chunk))
    end
    if n == 0 then return nil, 400, "the upload is empty" end
    return { path = tmp, name = store_mod.display_name(name), move = true }
  end)
  local added
  if got then
    local scope = { platform = query.platform or headers:get("x-sift-platform") }
    if not scope.platform then
      scope.app, scope.version = query.app or headers:get("x-sift-app"), query.version or headers:get("x-sift-version")
    end
    local ok
    ok, added, message = pcall(self.fleet.add_symbols, self.fleet, scope, { got })
    if not ok then  -- (the engines away past their retries)
      status, message, added = 503, "cannot record the symbols now: " .. tostring(added), nil
    elseif not added then
      status = 400
    end
  end
  if tmp then os.remove(tmp) end  -- (moved, if it was stored)
  if not added then
    message = self.store:hide(message, tmp)
    request.log(("%d POST /symbols from %s: %s"):format(status, request.peer, message))
    return send_error(stream, status, message, true)
  end
  send_json(stream, 201, { symbols = added })
end

--- Leak groups on a page of /fleet (?per_page=, up to FLEET_MAX_PER_PAGE).
M.FLEET_PER_PAGE, M.FLEET_MAX_PER_PAGE = 50, 1000

-- the leak groups (--ingest): sift fleet groups' JSON, and a page; one
-- page of them (?page=, from 1), with the number of groups in all
local function fleet_page(self, query)
  if not self.fleet then return nil, 404, "no fleet: start the server with --ingest" end
  local page = math.tointeger(tonumber(query.page or "1"))
  local per_page = math.tointeger(tonumber(query.per_page or M.FLEET_PER_PAGE))
  if not page or page < 1 or not per_page or per_page < 1 or per_page > M.FLEET_MAX_PER_PAGE then
    return nil, 400, ("?page= takes a whole number from 1, ?per_page= from 1 to %d"):format(M.FLEET_MAX_PER_PAGE)
  end
  local all = query.all == "1"
  -- the status first, then the groups: a file it counts done has its
  -- leaks in them (its results are one transaction); read the other way
  -- round, a result committed between the two reads was counted done and
  -- missing from the groups
  local st = self.fleet:status()  -- (as `sift fleet status --json` gives it)
  st.failures, st.warnings = self.fleet:failures(), self.fleet:warned()
  local groups, total = self.fleet:groups { all = all, limit = per_page, offset = (page - 1) * per_page }
  local pages = math.max(1, (total + per_page - 1) // per_page)
  return { status = st, groups = groups, page = page, per_page = per_page, total_groups = total }, function()
    local function link(p)
      return ('<a href="/fleet?page=%d%s%s">'):format(p, per_page ~= M.FLEET_PER_PAGE and ("&amp;per_page=" .. per_page)
        or "", all and "&amp;all=1" or "")
    end
    local from = (page - 1) * per_page
    local nav
    if total == 0 then nav = "<p>no leak groups</p>"
    elseif #groups == 0 then
      nav = ("<p>no groups on page %s: %s in all, on %s page(s) %s</p>"):format(html.num(page), html.num(total),
        html.num(pages), link(pages) .. "the last</a>")
    else
      nav = ("<p>groups %s&ndash;%s of %s (page %s of %s)%s%s</p>"):format(html.num(from + 1),
        html.num(from + #groups), html.num(total), html.num(page), html.num(pages),
        page > 1 and (" " .. link(page - 1) .. "previous</a>") or "",
        page < pages and (" " .. link(page + 1) .. "next</a>") or "")
    end
    local rows, damaged = {}, {}
    for i, g in ipairs(groups) do
      rows[i] = { html.num(g.dumps), ('<span class="mono">%s</span>'):format(g.signature:sub(1, 12)),
        html.escape(g.description) .. (g.reopened and " (reopened)" or "")
          .. (g.no_symbols and ("<br><em>%s</em>"):format(html.escape(table.concat(g.no_symbols, "; "))) or ""),
        html.escape(g.first_seen),
        html.escape(g.last_seen), html.escape(table.concat(g.versions, ", ")), html.num(#g.devices),
        html.num(g.retained_total), html.num(g.damaged_dumps), "<pre>" .. html.escape(g.trace) .. "</pre>" }
    end
    for _, f in ipairs(st.warnings) do
      for _, w in ipairs(f.warnings) do
        damaged[#damaged + 1] = { ('<span class="mono">%s</span>'):format(f.sha256:sub(1, 12)), html.escape(w) }
      end
    end
    return html.page("Leak groups", nil, table.concat {
      ("<p>%s uploads; %s files queued, %s running, %s done (%s with warnings), %s failed</p>"):format(
        html.num(st.uploads), html.num(st.queued), html.num(st.running), html.num(st.done),
        html.num(st.done_with_warnings), html.num(st.failed)),
      #st.no_symbols > 0 and ("<p>Analysed without names (upload their symbols: sift fleet symbols): %s</p>"):format(
        table.concat((function()
          local parts = {}
          for i, n in ipairs(st.no_symbols) do
            parts[i] = ("%s (%s file%s)"):format(html.escape(n.nameless), html.num(n.files), n.files == 1 and "" or "s")
          end
          return parts
        end)(), "; ")) or "",
      nav,
      html.table({ "#dumps", "signature", "leak", "first seen", "last seen", "versions", "#devices",
        "#retained", "#damaged dumps", "a trace" }, rows, "groups"),
      #damaged > 0 and "<h2>Dumps analysed with warnings (cut or damaged)</h2>"
        .. html.table({ "file", "warning" }, damaged, "warnings") or "",
    })
  end
end

local function refuse(request, status, message, as_json)
  request.log(("%d %s %s from %s: %s"):format(status, request.method, request.path, request.peer, message))
  return send_error(request.stream, status, message, as_json)
end

local function handle(self, request)
  local stream, headers, method = request.stream, request.headers, request.method
  local target = headers:get(":path") or "/"
  local path, qs = target:match("^([^?]*)%??(.*)$")
  local query = {}
  for k, v in http_util.query_args(qs) do query[k] = v end
  local as_json = wants_json(headers, path)
  local ok, why = access.host_ok(self.rules, headers:get(":authority"))
  if not ok then return refuse(request, 403, why, as_json) end
  if self.token then
    if not access.same(access.token_of(headers, query), self.token) then
      return refuse(request, 401, "a token is needed (--token)", as_json)
    end
    if query.token then  -- keep it as a cookie, so links work
      return send(stream, 303, "text/plain", "", { location = path,
        ["set-cookie"] = "sift_token=" .. self.token .. "; HttpOnly; SameSite=Strict; Path=/" })
    end
  end
  if method ~= "GET" and method ~= "HEAD" then
    ok, why = access.write_ok(self.rules, headers, query.csrf or headers:get("x-sift-csrf"))
    if not ok then return refuse(request, 403, why, as_json) end
  end
  if finance_app.owns(path) then  -- (the finance app of --db: sift.serve.finance)
    local a = finance_app.handle(self, request, (path:gsub("%.json$", "")), query, as_json)
    if a.status >= 400 then request.log(("%d %s %s from %s"):format(a.status, method, path, request.peer)) end
    if as_json then return send_json(stream, a.location and 200 or a.status, a.view or {}) end
    if a.location then return send(stream, 303, "text/plain", "", { location = a.location }) end
    return send(stream, a.status, "text/html; charset=utf-8", a.html)
  end
  if path == "/upload" and method == "POST" then return upload(self, request, query, upload_wants_json(headers)) end
  if path == "/ingest" and method == "POST" then
    if not self.fleet then return send_error(stream, 404, "not ingesting: start the server with --ingest", true) end
    return ingest(self, request, query)
  end
  if path == "/symbols" and method == "POST" then
    if not self.fleet then return send_error(stream, 404, "not ingesting: start the server with --ingest", true) end
    return symbols(self, request, query)
  end
  if method ~= "GET" and method ~= "HEAD" then return send_error(stream, 405, "method not allowed", as_json) end
  local view, render, status, message
  if path == "/" or path == "/index.json" or path == "/upload" then
    view, render = index_page(self)
  elseif path == "/fleet" or path == "/fleet.json" then
    view, render, message = fleet_page(self, query)
    if not view then status = render end
  elseif path == "/finance" or path == "/finance.json" then
    view, render, message = finance_page(self, query)
    if not view then status = render end
  else
    local id, rest = path:match("^/f/(%x+)/?(.*)$")
    local entry = id and self.store:get(id)
    if not entry then return send_error(stream, 404, "no such file here", as_json) end
    local page, arg = rest:gsub("%.json$", ""):match("^([^/]*)/?(.*)$")
    if page == "index" then page = "" end
    if entry.problem then return send_error(stream, 422, entry.name .. ": " .. entry.problem, as_json) end
    if page == "progress" then return send_json(stream, 200, progress_view(entry)) end
    local known, unknown = worker.page(entry.format, page)
    if not known then return send_error(stream, 404, unknown, as_json) end
    if not as_json and entry.state ~= "ready" and entry.state ~= "failed" then
      -- a browser before the file is open: the opening starts (once), the
      -- page shows how far it is
      if not entry.state then cqueues.running():wrap(function() self:page_thread(entry) end) end
      return send(stream, 200, "text/html; charset=utf-8", waiting_page(entry))
    end
    local st, ctype, body = self:ask(entry, page, arg, qs, as_json)
    if not ctype then return send_error(stream, st, body, as_json) end
    return send(stream, st, ctype, body)
  end
  if not view then return send_error(stream, status or 500, message or "failed", as_json) end
  if as_json then return send_json(stream, 200, view) end
  send(stream, 200, "text/html; charset=utf-8", render())
end

-- }======================================================

--- Listen (on the port asked, or any free one); returns the port, or
-- raises an error saying why not.
function Server:listen()
  local o = self.opts
  local listener, why = listen.new { host = self.host, port = o.port or 0, max_connections = o.max_connections,
    header_timeout = o.header_timeout, body_timeout = o.body_timeout, idle_timeout = o.idle_timeout,
    log = o.log,
    handle = function(request) return handle(self, request) end,
    on_failure = function(stream, headers, failure)
      send_error(stream, failure.status, failure.message, wants_json(headers, headers:get(":path") or ""))
    end,
  }
  if not listener then error(why, 0) end
  self.http = listener
  local _, port = listener:localname()
  self.port = port
  return port
end

function Server:url()
  local host = self.host:find(":", 1, true) and ("[" .. self.host .. "]") or self.host
  return ("http://%s:%d/"):format(host, self.port)
end

--- Serve until stopped (or for timeout seconds).
function Server:run(timeout)
  if not self.http then self:listen() end
  return self.http:loop(timeout)
end

--- Stop: the workers end (their documents closed) and the port is freed.
function Server:close()
  if self.http then self.http:close() end
  if self.fleet then self.fleet:close() end
  for _, e in ipairs(self.store:list()) do
    for _, which in ipairs { "pages", "computer" } do
      local w = e[which]
      if w then
        w.sock:close()
        w.thread:join()
        e[which] = nil
      end
    end
  end
end

return M
