--- A file's workers: threads of their own (cqueues.thread, each a Lua
-- state of its own) that open the file (indexing a heap and building its
-- dominator tree, decoding a trace, parsing a statement) and make its
-- pages, while the server's loop goes on serving others. A file has up
-- to two (sift.serve decides which does what): its page thread, which
-- makes every page, and its compute thread, started on the file's first
-- long computation with its own open of the file, which computes the
-- results pages share (the histogram, the waste report...) one after
-- another, so that a long one never holds the page thread.
--
-- What a page function (sift.serve.heap, trace, ofx) is given and gives:
--
--     view, render = page(ctx, arg)     the page: view is its JSON twin,
--                                       render() its HTML
--     nil, status, message              an error page
--     _, _, _, _, raw                   raw = {type=, body=}: bytes as they are
--
-- ctx holds `entry`, `doc` (the open file), `query`, `model`, `server`,
-- `files` (the server's other files of this format: id, name, path; a
-- trace's diff picks its baseline among them) and `compute`. `ctx.compute(key, fn)` is how a page gets a result that
-- may take long: fn(progress) computes it (progress(label, done, total)
-- may report its stages), once per file; it is kept and given again to
-- every page that asks for the same key. The key names all a result
-- depends on ("waste:shark", not "waste" when the model matters); the
-- result is plain data (tables, strings, numbers, booleans; json.array
-- marks survive): it is copied between the threads. In the page thread a
-- key not computed yet stops the page (a Lua error: a page's own pcall
-- must not wrap ctx.compute); the server has the compute thread run the
-- same page up to that call, which computes it, shows its progress on
-- the page that asked, and then asks the page thread again.
--
-- The server and a worker talk over a socket, one line per message:
--
--     server → worker   open
--                       page \t name \t arg \t query \t json (1|0) \t may compute (1|0) \t files
--                         (files: the server's other files of this format, ctx.files)
--                       store \t key \t length, then the bytes (a result computed elsewhere)
--     worker → server   progress \t label \t done \t total
--                       computed \t key \t length, then the bytes
--                       needs \t key (the page waits for that result)
--                       result \t status \t content type \t length, then the bytes
--
-- `open` is answered with a result (200, or 422 and the reason as text).
--
-- @module sift.serve.worker

local sift = require "sift"
local json = require "sift.json"
local html = require "sift.serve.html"

local M = {}

-- the pages of each kind of file
local PAGES = {
  hprof = "sift.serve.heap", bmd = "sift.serve.heap", trace = "sift.serve.trace", ofx = "sift.serve.ofx",
}

--- The page `name` of a file of `format`: its function, or nil and why
-- not (the server asks before a file is open, the worker when it makes it).
function M.page(format, name)
  local module = PAGES[format]
  local page = module and require(module).pages[name]
  if not page then return nil, ("no page %q for a %s file"):format(name, format) end
  return page
end

local ARRAY = getmetatable(json.array {})

local function dec(s) return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end

local function query_args(qs)
  local out = {}
  for k, v in (qs or ""):gmatch("([^&=]+)=?([^&]*)") do out[dec(k)] = dec(v) end
  return out
end

-- the other files of this format the server shows (a page line's last
-- field, `id=name*path` items joined by &, percent-encoded): ctx.files
local function served_files(field, format)
  local out = {}
  for id, name, path in (field or ""):gmatch("(%x+)=([^*&]*)%*([^&]*)") do
    out[#out + 1] = { id = id, name = dec(name), path = dec(path), format = format }
  end
  return out
end

--- {======================================================
-- Results between threads: plain data written as a Lua table constructor
-- (exact integers and floats, which JSON would blur; `A{...}` for a
-- json.array) and read back with `load` in an environment holding only A
-- =======================================================

local function dump(v, out, depth)
  local t = type(v)
  if t == "table" then
    if depth > 100 then error("a computed result nests deeper than 100", 0) end
    out[#out + 1] = getmetatable(v) == ARRAY and "A{" or "{"
    local n = #v
    for i = 1, n do
      dump(v[i], out, depth + 1)
      out[#out + 1] = ","
    end
    for k, x in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= n) then
        out[#out + 1] = "["
        dump(k, out, depth + 1)
        out[#out + 1] = "]="
        dump(x, out, depth + 1)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
  elseif t == "string" or t == "number" or t == "boolean" then
    out[#out + 1] = ("%q"):format(v)
  else
    error(("a computed result holds a %s: results are plain data"):format(t), 0)
  end
end

--- A result as bytes (what `computed` and `store` carry).
function M.pack(value)
  local out = { "return " }
  dump(value, out, 0)
  return table.concat(out)
end

--- The result again, from M.pack's bytes.
function M.unpack(bytes)
  return assert(load(bytes, "=result", "t", { A = json.array }))()
end

-- }======================================================

local function reply(sock, status, ctype, body)
  sock:write(("result\t%d\t%s\t%d\n"):format(status, ctype, #body), body)
  sock:flush()
end

local function error_body(status, message, as_json)
  if as_json then return "application/json", json.encode { error = message, status = status } .. "\n" end
  return "text/html; charset=utf-8", html.page(("Error %d"):format(status), nil,
    ('<p class="err" id="error">%s</p>'):format(html.escape(message)))
end

-- a message as a client may see it: the server's paths (the file's, in
-- the data directory or where the command line named it; the spill
-- directory) replaced by what the client knows the file as
local function hide(message, entry, opts)
  message = tostring(message)
  local function replace(what, by)
    if not what or what == "" then return end
    local at = message:find(what, 1, true)
    while at do
      message = message:sub(1, at - 1) .. by .. message:sub(at + #what)
      at = message:find(what, at + #by, true)
    end
  end
  replace(entry.path, entry.name)
  replace(opts.spill_dir, "the spill directory")
  return message
end
M.hide = hide

-- what the pages see of the server: its options and the baseline dump
local function server_view(opts, progress)
  local view = { opts = opts }
  function view:baseline()
    if not opts.baseline then return nil end
    if not self.base_doc then
      local doc, msg = sift.open(opts.baseline, { strings = opts.strings, mapping = opts.mapping,
        progress = progress("baseline") })
      if not doc then return nil, msg end
      self.base_doc = doc
    end
    return self.base_doc
  end
  return view
end

-- open the file with progress; a heap gets its dominator tree too, so
-- that every page after this one is quick
local function open(entry, opts, progress)
  if entry.format == "ofx" then return require("sift.ofx").read(entry.path) end
  local doc, msg, code = sift.open(entry.path, { strings = opts.strings, mapping = opts.mapping,
    progress = progress("indexing") })
  if not doc then return nil, msg, code end
  if doc.dominators then
    doc._served_tree = doc:dominators { model = opts.model, progress = progress("dominator tree") }
  end
  return doc
end

--- What a thread is given: the file and the server's options, as lines
-- of `key \t value` (threads take strings only), and its share of the
-- spill threshold (`analyses` threads at once; a thread's big arrays
-- count against its own threshold, see csrc/core/lbudget.c).
function M.encode(entry, opts, analyses)
  local out = {}
  local dir, bytes = require("sift.core").spilling()
  if dir then out[#out + 1] = ("spill\t%d\t%s"):format(bytes // (analyses or 1), dir) end
  for _, k in ipairs { "path", "format", "name", "id", "description" } do
    out[#out + 1] = ("entry.%s\t%s"):format(k, entry[k] or "")
  end
  for _, k in ipairs { "model", "baseline", "mapping", "hold" } do
    if opts[k] then out[#out + 1] = ("opts.%s\t%s"):format(k, opts[k]) end
  end
  for _, jar in ipairs(opts.strings or {}) do out[#out + 1] = "strings\t" .. jar end
  return table.concat(out, "\n")
end

local function decode(text)
  local entry, opts = {}, {}
  for key, value in text:gmatch("([%w._]+)\t([^\n]*)") do
    local where, k = key:match("^(%a+)%.(.+)$")
    if key == "spill" then
      local bytes, dir = value:match("^(%d+)\t(.*)$")
      opts.spill_bytes, opts.spill_dir = tonumber(bytes), dir
    elseif key == "strings" then
      opts.strings = opts.strings or {}
      opts.strings[#opts.strings + 1] = value
    elseif where == "entry" then entry[k] = value
    else opts[k] = value end
  end
  return entry, opts
end

-- what a page raises when a result it needs is not here (page thread)
local Needs = { __name = "sift.serve.needs" }

--- The worker's loop, in its thread (what M.encode made is its setup).
function M.run(sock, setup)
  local entry, opts = decode(setup)
  if opts.spill_dir then require("sift.core").spill(opts.spill_dir, opts.spill_bytes) end
  sock:setmode("b", "b")
  local function send(line, bytes)
    sock:write(line, "\n", bytes or "")
    sock:flush()
  end
  local function progress(label)
    local last = -1
    return function(done, total)
      local pct = total and total > 0 and (100 * done // total) or 0
      if pct ~= last then
        last = pct
        send(("progress\t%s\t%d\t%d"):format(label, done, total or 0))
      end
      return true
    end
  end
  local server = server_view(opts, progress)
  local results = {}  -- key -> result (computed here, or stored from the other thread)
  local doc, why
  local may_compute = false
  -- (the file, the baselines: opened when first asked for, closed however the loop ends)
  local _ <close> = setmetatable({}, { __close = function()
    if doc and doc.close then doc:close() end
    if server.base_doc then server.base_doc:close() end
    if server.trace_baseline then server.trace_baseline.doc:close() end
  end })

  local function compute(key, fn)
    local r = results[key]
    if r ~= nil then return r end
    if not may_compute then error(setmetatable({ key = key }, Needs), 0) end
    -- the test option `hold`: a computation waits while that file exists,
    -- so that a spec sees one running for as long as it likes
    if opts.hold then
      local held = progress(key .. ": held (test option hold)")
      held(0, 1)
      while require("sift.core").stat(opts.hold) do require("cqueues").sleep(0.05) end
    end
    progress(key)(0, 1)
    local stages = {}
    local value = fn(function(label, done, total)
      stages[label] = stages[label] or progress(key .. ": " .. label)
      return stages[label](done, total)
    end)
    progress(key)(1, 1)
    local bytes = M.pack(value)
    results[key] = value
    send(("computed\t%s\t%d"):format(key, #bytes), bytes)
    return value
  end

  for line in sock:lines("*l") do
    local cmd = line:match("^%a+")
    if cmd == "store" then
      local key, len = line:match("^store\t([^\t]*)\t(%d+)$")
      results[key] = M.unpack(sock:read(tonumber(len)))
    elseif cmd == "open" then
      if not doc and not why then
        local ok, d, msg = pcall(open, entry, opts, progress)
        if ok and d then doc = d else why = hide(ok and msg or tostring(d), entry, opts) end
      end
      if doc then reply(sock, 200, "text/plain", "") else reply(sock, 422, "text/plain", why) end
    elseif cmd == "page" then
      local page, arg, qs, want, may, files = line:match("^page\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([01])\t([01])\t([^\t]*)$")
      local as_json = want == "1"
      may_compute = may == "1"
      local status, ctype, body
      if not doc then
        status = 422
        ctype, body = error_body(422, why or "the file is not open", as_json)
      elseif not M.page(entry.format, page) then
        status = 404
        ctype, body = error_body(404, select(2, M.page(entry.format, page)), as_json)
      else
        local ctx = { entry = entry, doc = doc, query = query_args(qs), model = opts.model, server = server,
          compute = compute, files = served_files(files, entry.format) }
        local ok, view, render, message, raw = pcall(M.page(entry.format, page), ctx, arg ~= "" and arg or nil)
        if ok and view and not as_json and not raw then
          local made, text = pcall(render)
          if made then render = text else ok, view = false, text end
        end
        if not ok and getmetatable(view) == Needs then
          status = "needs"
          send("needs\t" .. view.key)
        elseif not ok then
          status = 500
          ctype, body = error_body(500, "the page failed: " .. hide(tostring(view):gsub("^.-:%d+: ", ""), entry, opts),
            as_json)
        elseif raw then
          status, ctype, body = 200, raw.type, raw.body
        elseif not view then
          status = render
          ctype, body = error_body(status, hide(message, entry, opts), as_json)
        elseif as_json then
          status, ctype, body = 200, "application/json", json.encode(view) .. "\n"
        else
          status, ctype, body = 200, "text/html; charset=utf-8", render
        end
      end
      if status ~= "needs" then reply(sock, status, ctype, body) end
    end
  end
end

return M
