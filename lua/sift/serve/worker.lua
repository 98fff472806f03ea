--- A file's worker: a thread of its own (cqueues.thread, a Lua state of
-- its own) that opens the file once (indexing a heap and building its
-- dominator tree, decoding a trace, parsing a statement) and then makes
-- its pages, while the server's loop goes on serving others. It talks to
-- the server over a socket, one line per message:
--
--     server → worker   page \t arg \t query \t json (1 or 0)
--     worker → server   progress \t label \t done \t total
--                       result \t status \t content type \t length, then the bytes
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

local function query_args(qs)
  local out = {}
  for k, v in (qs or ""):gmatch("([^&=]+)=?([^&]*)") do
    local function dec(s) return (s:gsub("+", " "):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end
    out[dec(k)] = dec(v)
  end
  return out
end

local function reply(sock, status, ctype, body)
  sock:write(("result\t%d\t%s\t%d\n"):format(status, ctype, #body), body)
  sock:flush()
end

local function error_body(status, message, as_json)
  if as_json then return "application/json", json.encode { error = message, status = status } .. "\n" end
  return "text/html; charset=utf-8", html.page(("Error %d"):format(status), nil,
    ('<p class="err" id="error">%s</p>'):format(html.escape(message)))
end

-- what the pages see of the server: its options and the baseline dump
local function server_view(opts, progress)
  local view = { opts = opts }
  function view:baseline()
    if not opts.baseline then return nil end
    if not self.base_doc then
      local doc, msg = sift.open(opts.baseline, { strings = opts.strings, progress = progress("baseline") })
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
  local doc, msg, code = sift.open(entry.path, { strings = opts.strings, progress = progress("indexing") })
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
  for _, k in ipairs { "model", "baseline" } do
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

--- The worker's loop, in its thread (what M.encode made is its setup).
function M.run(sock, setup)
  local entry, opts = decode(setup)
  if opts.spill_dir then require("sift.core").spill(opts.spill_dir, opts.spill_bytes) end
  sock:setmode("b", "b")
  local last = -1
  local function progress(label)
    return function(done, total)
      local pct = total and total > 0 and (100 * done // total) or 0
      if pct ~= last then
        last = pct
        sock:write(("progress\t%s\t%d\t%d\n"):format(label, done, total or 0))
        sock:flush()
      end
      return true
    end
  end
  local server = server_view(opts, progress)
  local pages = require(PAGES[entry.format]).pages
  local doc, why
  for line in sock:lines("*l") do
    local page, arg, qs, want = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([01])$")
    local as_json = want == "1"
    if not doc and not why then
      local ok, d, msg = pcall(open, entry, opts, progress)
      if ok and d then doc = d else why = ok and msg or tostring(d) end
    end
    local status, ctype, body
    if not doc then
      status = 422
      ctype, body = error_body(422, why, as_json)
    elseif page == "open" then  -- (only to open it)
      status, ctype, body = 200, "application/json", "{}\n"
    elseif not pages[page] then
      status = 404
      ctype, body = error_body(404, ("no page %q for a %s file"):format(page, entry.format), as_json)
    else
      local ctx = { entry = entry, doc = doc, query = query_args(qs), model = opts.model, server = server }
      local ok, view, render, message, raw = pcall(pages[page], ctx, arg ~= "" and arg or nil)
      if not ok then
        status = 500
        ctype, body = error_body(500, "the page failed: " .. tostring(view):gsub("^.-:%d+: ", ""), as_json)
      elseif raw then
        status, ctype, body = 200, raw.type, raw.body
      elseif not view then
        status = render
        ctype, body = error_body(status, message, as_json)
      elseif as_json then
        status, ctype, body = 200, "application/json", json.encode(view) .. "\n"
      else
        status, ctype, body = 200, "text/html; charset=utf-8", render()
      end
    end
    reply(sock, status, ctype, body)
  end
  if doc and doc.close then doc:close() end
  if server.base_doc then server.base_doc:close() end
end

return M
