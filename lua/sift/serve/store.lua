--- The files a server shows: those named on the command line and those
-- uploaded to its data directory. An upload is streamed to the directory
-- under its SHA-256 (the same file twice is stored once), checked with
-- `sift.detect`, and refused (and deleted) when it is too big, decompresses
-- to too much, or is not a file sift serves. The name a client gives is
-- kept as text to show, never used as a path; no message an upload gets
-- names a path of the server's (its data directory, a temporary file).
-- @module sift.serve.store

local core = require "sift.core"
local detect = require "sift.detect"
local digest = require "openssl.digest"

local M = {}

local Store = {}
Store.__index = Store

-- what can be uploaded: the formats sift opens as a heap or a trace, and
-- statements (viewed like any file; importing them into a ledger is the
-- finance app's own endpoint)
local UPLOADABLE = { hprof = ".hprof", bmd = ".bmd", trace = ".trace", ofx = ".ofx" }

--- The 413 message of an upload over `max` bytes (said before its body is
-- read when its length is known, or when its bytes pass max).
function M.over_limit(max)
  return ("the upload is over the limit of %s bytes (--max-upload)"):format(require("sift.size").grouped(max))
end

local function hex(bytes)
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- a file name as text to show: its last part, printable, at most 120 bytes
local function display_name(name)
  name = tostring(name or ""):match("[^/\\]*$"):gsub("[%c\"<>]", "_")
  if #name > 120 then name = name:sub(1, 120) end
  return name ~= "" and name or "upload"
end
M.display_name = display_name

--- A store over a data directory (which `sift.private.directory` made
-- or checked), with the uploads earlier servers left there; temporary
-- files of uploads that never finished (a server killed mid-upload) are
-- removed.
-- @tparam string dir
-- @tparam table opts `max_upload` (bytes), `max_decompressed` (bytes)
function M.new(dir, opts)
  local names, why = core.listdir(dir)
  if not names then return nil, why end
  table.sort(names)
  local self = setmetatable({ dir = dir, files = {}, order = {}, opts = opts or {} }, Store)
  for _, name in ipairs(names) do
    local sha = name:match("^(%x+)%.meta$")
    if name:match("^%.upload%-") then
      os.remove(dir .. "/" .. name)
    elseif sha and #sha == 64 then
      local meta = {}
      for k, v in (read_file(dir .. "/" .. name) or ""):gmatch("([%w_]+)\t([^\n]*)") do meta[k] = v end
      local path = UPLOADABLE[meta.format] and dir .. "/" .. sha .. UPLOADABLE[meta.format]
      if path and core.stat(path) then
        self:add(path, { id = sha:sub(1, 16), name = meta.name, sha256 = sha, uploaded = true })
      end
    end
  end
  return self
end

--- Add a file: detected, given an id (uploads: their SHA-256's first 16
-- hex digits; others: a hash of the path). Returns the entry, or nil,
-- message, code.
function Store:add(path, fields)
  local info, msg, code = detect.detect(path, { bytes = false })
  if not info then return nil, msg, code end
  fields = fields or {}
  local id = fields.id or hex(digest.new("sha256"):final(path)):sub(1, 16)
  if self.files[id] then return self.files[id] end
  local entry = { id = id, path = path, name = fields.name or path:match("[^/]*$"), size = info.size,
    format = info.format, description = info.description, problem = info.problem, sha256 = fields.sha256,
    uploaded = fields.uploaded or false, compressed = info.compressed,
    results = {}, jobs = {} }  -- (what sift.serve computed for its pages)
  self.files[id] = entry
  self.order[#self.order + 1] = id
  return entry
end

--- The entries, in the order they were added.
function Store:list()
  local out = {}
  for i, id in ipairs(self.order) do out[i] = self.files[id] end
  return out
end

function Store:get(id) return self.files[id] end

--- What an upload is, checked where it lies: its format (one sift serves
-- as an upload) and, for a gzip or bzip2 HPROF, that it inflates to at
-- most `limit` bytes. Returns the format, or nil, HTTP status, message.
-- This is the slow part of an upload (a bomb inflates until its limit):
-- the server runs it in a thread (`check_aside`).
function M.check(path, limit)
  local info, msg = detect.detect(path, { bytes = false })
  if not info or not UPLOADABLE[info.format] then
    -- (the message names the upload, never the server's temporary file)
    local what = info and info.description or msg:gsub("^" .. path:gsub("%p", "%%%0") .. ":%s*", "")
    return nil, 415, ("not a heap dump, a method trace or an OFX statement: %s"):format(what)
  end
  if info.compressed then  -- a gzip or bzip2 HPROF: how much it decompresses to
    local map <close> = core.map(path)
    local out <close>, why, code = core.inflate(map, nil, limit)
    if not out then return nil, code == "too_big" and 413 or 422, "the compressed dump " .. why end
  end
  return info.format
end

-- the thread of check_aside (no upvalues: it is dumped into a Lua state
-- of its own)
local function check_thread(sock, lpath, cpath, path, limit)
  package.path, package.cpath = lpath, cpath
  local ok, format, status, message = pcall(require("sift.serve.store").check, path, tonumber(limit))
  if not ok then format, status, message = nil, 500, "the upload's check failed" end  -- (its error names server paths)
  sock:write(format and ("ok\t%s\n"):format(format) or ("fail\t%d\t%s\n"):format(status,
    (tostring(message):gsub("[\r\n]", " "))))
  sock:flush()
end

--- M.check in a thread of its own, waited for without stopping the
-- cqueues loop (every other request is served meanwhile).
function M.check_aside(path, limit)
  local thread = require "cqueues.thread"
  local th, sock = thread.start(check_thread, package.path, package.cpath, path, tostring(limit))
  local line = sock:read("*l")
  sock:close()
  th:join()
  local format = line and line:match("^ok\t(%w+)$")
  if format then return format end
  local status, message = (line or ""):match("^fail\t(%d+)\t(.*)$")
  if not status then return nil, 500, "the upload's check stopped" end
  return nil, tonumber(status), message
end

--- A message as a client may see it: the upload's temporary file named
-- as the client named it, the data directory as "the data directory".
function Store:hide(message, tmp, name)
  message = tostring(message)
  for _, p in ipairs { { tmp, display_name(name) }, { self.dir, "the data directory" } } do
    local what, by = p[1], p[2]
    local at = what and what ~= "" and message:find(what, 1, true)
    while at do
      message = message:sub(1, at - 1) .. by .. message:sub(at + #what)
      at = message:find(what, at + #by, true)
    end
  end
  return message
end

--- Take an upload: next_chunk() gives the body's pieces, then nil at its
-- end, or nil and a failure ({status, message}: a body that broke off);
-- name is what the client called it. A body that breaks off, or is too
-- big, or is not a dump sift serves, leaves nothing behind. Returns the
-- entry and whether it was there already, or nil, HTTP status, message.
function Store:upload(next_chunk, name)
  local max = self.opts.max_upload or 2 * 1024 ^ 3
  local tmp = ("%s/.upload-%d-%d"):format(self.dir, os.time(), math.random(1 << 30))
  local f = assert(io.open(tmp, "wb"))  -- (0600: the server runs with umask 077)
  local ok, status, message, sha = pcall(function()
    local digest_of, n = digest.new("sha256"), 0
    while true do
      local chunk, failure = next_chunk()
      if not chunk then
        if failure then return failure.status, failure.message end
        break
      end
      n = n + #chunk
      if n > max then return 413, M.over_limit(max) end
      digest_of:update(chunk)
      assert(f:write(chunk))
    end
    assert(f:close())
    if n == 0 then return 400, "the upload is empty" end
    return nil, n, digest_of:final()
  end)
  if not ok or status then
    pcall(f.close, f)
    os.remove(tmp)
    if not ok then error(status, 0) end
    return nil, status, self:hide(message, tmp, name)
  end
  local size = message
  local format, why_status, why = M.check_aside(tmp, self.opts.max_decompressed or 8 * max)
  if not format then
    os.remove(tmp)
    return nil, why_status, self:hide(why, tmp, name)
  end
  local digest_hex = hex(sha)
  local path = ("%s/%s%s"):format(self.dir, digest_hex, UPLOADABLE[format])
  local id = digest_hex:sub(1, 16)
  if self.files[id] then
    os.remove(tmp)
    return self.files[id], true
  end
  -- what the file was called and when it came (tab-separated lines), then
  -- the file under its name: a meta file never names a file not yet whole
  local meta = assert(io.open(("%s/%s.meta"):format(self.dir, digest_hex), "w"))
  meta:write(("name\t%s\nformat\t%s\nsize\t%d\nuploaded_at\t%d\n"):format(display_name(name), format, size,
    os.time()))
  meta:close()
  assert(os.rename(tmp, path))
  return self:add(path, { id = id, name = display_name(name), sha256 = digest_hex, uploaded = true }), false
end

return M
