--- `sift serve`: a local web UI over the files sift reads, and an upload
-- endpoint, on lua-http (cqueues). Every page has a JSON twin (the same
-- path with `.json`, or `Accept: application/json`) in the CLI's schemas:
-- pages are views of what `sift.*` returns, so the CLI and the browser
-- agree. Binds to 127.0.0.1 unless told otherwise; elsewhere it needs a
-- token (`Authorization: Bearer T`, or the cookie a `?token=T` link sets).
--
--     local serve = require "sift.serve"
--     local server = assert(serve.new { files = { "app.hprof" }, data = "/tmp/sift-data" })
--     print(server:url())
--     server:run()
-- @module sift.serve

require("sift.paths").older_lua()  -- lua-http and its helpers are packaged for Lua 5.1-5.3

local http_server = require "http.server"
local http_headers = require "http.headers"
local http_util = require "http.util"
local sift = require "sift"
local json = require "sift.json"
local html = require "sift.serve.html"
local store_mod = require "sift.serve.store"

local M = {}

local Server = {}
Server.__index = Server

-- the pages of each kind of file
local PAGES = {
  hprof = require("sift.serve.heap").pages,
  bmd = require("sift.serve.heap").pages,
  trace = require("sift.serve.trace").pages,
  ofx = require("sift.serve.ofx").pages,
}

local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true, localhost = true }

--- A server (not yet listening).
-- @tparam table opts `files` (paths), `data` (the upload directory),
--   `host` ("127.0.0.1"), `port` (0: any free one), `token` (required when
--   host is not loopback), `max_upload` (bytes, default 2 GB),
--   `max_decompressed` (bytes, default 8× max_upload), `model` (size model),
--   `strings` (jars for BMD names), `baseline` (a dump to diff heaps with),
--   `db` (a finance store: the /finance report)
-- @return server, or nil, message
function M.new(opts)
  local host = opts.host or "127.0.0.1"
  if not LOOPBACK[host] and not opts.token then
    return nil, ("binding to %s needs --token: anyone who reaches the port could read the dumps"):format(host)
  end
  if opts.db then
    local f = io.open(opts.db, "rb")
    if not f then return nil, opts.db .. ": no such finance store" end
    f:close()
  end
  local data = opts.data or ((os.getenv("TMPDIR") or "/tmp") .. "/sift-serve")
  local store = store_mod.new(data, { max_upload = opts.max_upload, max_decompressed = opts.max_decompressed })
  for _, path in ipairs(opts.files or {}) do
    local entry, msg = store:add(path)
    if not entry then return nil, msg end
  end
  return setmetatable({ opts = opts, host = host, token = opts.token, store = store,
    model = opts.model or "shark" }, Server)
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

-- open a file's document once: a heap, a trace, a statement
function Server:document(entry)
  if entry.doc then return entry.doc end
  if entry.format == "ofx" then
    local doc, msg = require("sift.ofx").read(entry.path)
    if not doc then return nil, msg end
    entry.doc = doc
  else
    local doc, msg, code = sift.open(entry.path, { strings = self.opts.strings })
    if not doc then return nil, msg, code end
    entry.doc = doc
  end
  return entry.doc
end

-- the baseline dump (--baseline), opened once; nil when there is none,
-- or nil and why it does not open
function Server:baseline()
  if not self.opts.baseline then return nil end
  if not self.base_doc then
    local doc, msg = sift.open(self.opts.baseline, { strings = self.opts.strings })
    if not doc then return nil, msg end
    self.base_doc = doc
  end
  return self.base_doc
end

-- the finance report of --db: report.view's JSON, the text and the chart
local function finance_page(self, query)
  if not self.opts.db then return nil, 404, "no books: start the server with --db FILE" end
  local finance, report = require "sift.finance", require "sift.finance.report"
  local books, msg = finance.open(self.opts.db)
  if not books then return nil, 422, msg end
  local ok, r = pcall(report.build, books, { from = query.from, to = query.to, top = 10 })
  books:close()
  if not ok then return nil, 422, (tostring(r):gsub("^.-:%d+: ", "")) end
  return report.view(r), function()
    local chart = report.svg(r):gsub("^<%?xml[^>]*>%s*", "")
    return html.page("Income and expenses", nil, table.concat {
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
    return html.page("Files", self.opts.db and { { "/finance", "finance report" } } or nil, table.concat {
      html.table({ "file", "what it is", "#bytes", "" }, rows, "files"),
      [[<h2>Upload</h2><p>An HPROF (plain, .gz, .bz2), a BMD or an Android .trace.</p>
<input type="file" id="file"> <button id="send">upload</button> <span id="status"></span>
<script>
document.getElementById("send").onclick = function () {
  var f = document.getElementById("file").files[0];
  if (!f) return;
  var status = document.getElementById("status");
  status.textContent = "uploading…";
  fetch("/upload?name=" + encodeURIComponent(f.name), { method: "POST", body: f,
    headers: { "accept": "application/json" } })
    .then(function (r) { return r.json(); })
    .then(function (j) { if (j.url) location.href = j.url; else status.textContent = j.error; })
    .catch(function (e) { status.textContent = String(e); });
};
</script>]],
    })
  end
end

-- a file's page: the view and its HTML, or nil, status, message
function Server:file_page(entry, page, arg, query)
  local pages = PAGES[entry.format]
  if not pages then return nil, 415, ("sift serves no pages for %s"):format(entry.description or entry.format) end
  local fn = pages[page]
  if not fn then return nil, 404, ("no page %q for a %s file"):format(page, entry.format) end
  if entry.problem then return nil, 422, entry.path .. ": " .. entry.problem end
  local doc, msg = self:document(entry)
  if not doc then return nil, 422, msg end
  local ctx = { entry = entry, doc = doc, query = query, model = self.model, server = self }
  return fn(ctx, arg)
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

-- the token a request carries: bearer, cookie, or ?token=
local function token_of(headers, query)
  local auth = headers:get("authorization")
  if auth then return auth:match("^[Bb]earer%s+(%S+)") end
  local cookie = headers:get("cookie") or ""
  return cookie:match("sift_token=([^;%s]+)") or query.token
end

local function upload(self, stream, headers, query, as_json)
  local length = tonumber(headers:get("content-length") or "")
  local max = self.opts.max_upload or 2 * 1024 ^ 3
  if length and length > max then
    return send_error(stream, 413, ("the upload is over the limit of %d bytes (--max-upload)"):format(max), as_json)
  end
  if (headers:get("content-type") or ""):find("multipart/", 1, true) then
    return send_error(stream, 415, "send the file as the request body (fetch or curl --data-binary), not a form", as_json)
  end
  local entry, status, message = self.store:upload(function()
    return stream:get_next_chunk(self.opts.timeout or 60)
  end, query.name or headers:get("x-filename"))
  if not entry then return send_error(stream, status, message, as_json) end
  local duplicate = status
  local view = { id = entry.id, url = "/f/" .. entry.id .. "/", name = entry.name, format = entry.format,
    sha256 = entry.sha256, duplicate = duplicate }
  if as_json then return send_json(stream, duplicate and 200 or 201, view) end
  send(stream, 303, "text/plain", "", { location = view.url })
end

local function handle(self, stream)
  local headers = assert(stream:get_headers())
  local method = headers:get(":method")
  local target = headers:get(":path") or "/"
  local path, qs = target:match("^([^?]*)%??(.*)$")
  local query = {}
  for k, v in http_util.query_args(qs) do query[k] = v end
  local as_json = wants_json(headers, path)
  if self.token then
    local given = token_of(headers, query)
    if given ~= self.token then return send_error(stream, 401, "a token is needed (--token)", as_json) end
    if query.token then  -- keep it as a cookie, so links work
      return send(stream, 303, "text/plain", "", { location = path,
        ["set-cookie"] = "sift_token=" .. self.token .. "; HttpOnly; SameSite=Strict; Path=/" })
    end
  end
  if path == "/upload" and method == "POST" then return upload(self, stream, headers, query, as_json) end
  if method ~= "GET" and method ~= "HEAD" then return send_error(stream, 405, "method not allowed", as_json) end
  local view, render, status, message
  if path == "/" or path == "/index.json" or path == "/upload" then
    view, render = index_page(self)
  elseif path == "/finance" or path == "/finance.json" then
    view, render, message = finance_page(self, query)
    if not view then status = render end
  else
    local id, rest = path:match("^/f/(%x+)/?(.*)$")
    local entry = id and self.store:get(id)
    if not entry then return send_error(stream, 404, "no such file here", as_json) end
    local page, arg = rest:gsub("%.json$", ""):match("^([^/]*)/?(.*)$")
    if page == "index" then page = "" end
    local raw
    view, render, message, raw = self:file_page(entry, page, arg ~= "" and arg or nil, query)
    if raw then return send(stream, 200, raw.type, raw.body) end
    if not view then status = render end
  end
  if not view then return send_error(stream, status or 500, message or "failed", as_json) end
  if as_json then return send_json(stream, 200, view) end
  send(stream, 200, "text/html; charset=utf-8", render())
end

-- }======================================================

--- Listen (on the port asked, or any free one); returns the port.
function Server:listen()
  self.http = assert(http_server.listen {
    host = self.host, port = self.opts.port or 0, reuseaddr = true,
    onstream = function(_, stream)
      local ok, err = pcall(handle, self, stream)
      if not ok then
        io.stderr:write("sift serve: ", tostring(err), "\n")
        pcall(send_error, stream, 500, "the server failed on this request: " .. tostring(err):gsub("^.-:%d+: ", ""))
      end
    end,
    onerror = function(_, context, op, err)
      io.stderr:write(("sift serve: %s %s: %s\n"):format(tostring(context), tostring(op), tostring(err)))
    end,
  })
  assert(self.http:listen())
  local _, _, port = self.http:localname()
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
  if timeout then return self.http:loop(timeout) end
  return assert(self.http:loop())
end

function Server:close()
  if self.http then self.http:close() end
  if self.base_doc then self.base_doc:close() end
  for _, e in ipairs(self.store:list()) do
    if e.doc and e.doc.close then e.doc:close() end
  end
end

return M
