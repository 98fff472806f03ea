--- The files a server shows: those named on the command line and those
-- uploaded to its data directory. An upload is streamed to the directory
-- under its SHA-256 (the same file twice is stored once), checked with
-- `sift.detect`, and refused (and deleted) when it is too big, decompresses
-- to too much, or is not a dump sift serves. The name a client gives is
-- kept as text to show, never used as a path.
-- @module sift.serve.store

local core = require "sift.core"
local detect = require "sift.detect"
local digest = require "openssl.digest"

local M = {}

local Store = {}
Store.__index = Store

-- what can be uploaded: the formats sift opens as a heap or a trace
local UPLOADABLE = { hprof = ".hprof", bmd = ".bmd", trace = ".trace" }

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

--- A store over a data directory (created 0700 when missing), with the
-- uploads earlier servers left there.
-- @tparam string dir
-- @tparam table opts `max_upload` (bytes), `max_decompressed` (bytes)
function M.new(dir, opts)
  assert(os.execute(("mkdir -p -m 700 '%s'"):format(dir:gsub("'", "'\\''"))), "cannot create " .. dir)
  local self = setmetatable({ dir = dir, files = {}, order = {}, opts = opts or {} }, Store)
  local p = io.popen(("ls -1 '%s'"):format(dir:gsub("'", "'\\''")))
  for name in p:lines() do
    local sha = name:match("^(%x+)%.meta$")
    if sha and #sha == 64 then
      local meta = {}
      for k, v in (read_file(dir .. "/" .. name) or ""):gmatch("([%w_]+)\t([^\n]*)") do meta[k] = v end
      if UPLOADABLE[meta.format] and io.open(dir .. "/" .. sha .. UPLOADABLE[meta.format], "rb") then
        self:add(dir .. "/" .. sha .. UPLOADABLE[meta.format], { id = sha:sub(1, 16), name = meta.name,
          sha256 = sha, uploaded = true })
      end
    end
  end
  p:close()
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
    uploaded = fields.uploaded or false, compressed = info.compressed }
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

--- Take an upload: next_chunk() gives the body's pieces (nil at the end);
-- name is what the client called it. Returns the entry and whether it was
-- there already, or nil, HTTP status, message.
function Store:upload(next_chunk, name)
  local max = self.opts.max_upload or 2 * 1024 ^ 3
  local tmp = ("%s/.upload-%d-%d"):format(self.dir, os.time(), math.random(1 << 30))
  local f = assert(io.open(tmp, "wb"))
  os.execute(("chmod 600 '%s'"):format(tmp))
  local sha, n = digest.new("sha256"), 0
  while true do
    local chunk, err = next_chunk()
    if not chunk then
      if err then f:close() os.remove(tmp) return nil, 400, "the upload broke off: " .. tostring(err) end
      break
    end
    n = n + #chunk
    if n > max then
      f:close()
      os.remove(tmp)
      return nil, 413, ("the upload is over the limit of %d bytes (--max-upload)"):format(max)
    end
    sha:update(chunk)
    f:write(chunk)
  end
  f:close()
  if n == 0 then os.remove(tmp) return nil, 400, "the upload is empty" end
  local info, msg = detect.detect(tmp, { bytes = false })
  if not info or not UPLOADABLE[info.format] then
    os.remove(tmp)
    return nil, 415, ("not a heap dump or a method trace: %s"):format(info and info.description or msg)
  end
  if info.compressed then  -- a gzip or bzip2 HPROF: how much it decompresses to
    local limit = self.opts.max_decompressed or 8 * max
    local map = core.map(tmp)
    local out, why, code = core.inflate(map, nil, limit)
    map:close()
    if out then out:close() end
    if not out then
      os.remove(tmp)
      return nil, code == "too_big" and 413 or 422, "the compressed dump " .. why
    end
  end
  local digest_hex = hex(sha:final())
  local path = ("%s/%s%s"):format(self.dir, digest_hex, UPLOADABLE[info.format])
  local id = digest_hex:sub(1, 16)
  if self.files[id] then
    os.remove(tmp)
    return self.files[id], true
  end
  assert(os.rename(tmp, path))
  -- what the file was called and when it came: tab-separated lines
  local meta = assert(io.open(("%s/%s.meta"):format(self.dir, digest_hex), "w"))
  meta:write(("name\t%s\nformat\t%s\nsize\t%d\nuploaded_at\t%d\n"):format(display_name(name), info.format, n,
    os.time()))
  meta:close()
  return self:add(path, { id = id, name = display_name(name), sha256 = digest_hex, uploaded = true }), false
end

return M
