--- The fleet's symbol files: what a worker needs to give a release
-- build's dump its names back. Two kinds, told apart by their bytes:
-- `strings`, the app's apk, jar, dex or class files (the names a BMD keeps
-- only as hashes: `sift leaks --strings`; a JDK's modules, `jmods/*.jmod`,
-- stored as the zips they hold), and `mapping`, an R8/ProGuard
-- mapping (obfuscated names mapped back: `sift leaks --mapping`). Each
-- file is stored once, under its SHA-256, in the data directory beside the
-- dumps (`SHA256.strings`, `SHA256.mapping`; private as they are).
-- @module sift.fleet.symbols

local digest = require "openssl.digest"

local M = {}

local function hex(bytes)
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- a message about path as about name (what its sender called it)
local function renamed(message, path, name)
  message = tostring(message)
  local at = message:find(path, 1, true)
  if at then message = message:sub(1, at - 1) .. name .. message:sub(at + #path) end
  return message
end

--- The kind of a symbol file: "strings" (a zip: jar or apk; a dex; a
-- class file) or "mapping" (R8/ProGuard: `# comments`, then lines
-- `com.example.Foo -> a.b:`), with what it is ("jar or apk", "dex",
-- "class", "mapping"); or nil and why not. Each is read as a worker will
-- read it (the strings of a jar, the lines of a mapping), so that a file
-- that would fail every analysis it is for is refused when it comes.
function M.sniff(path, name)
  name = name or path
  local kind, what = M.kind(path, name)
  if not kind then return nil, what end
  if what == "jmod" then return kind, what end  -- (read once stored: store)
  local ok, err
  if kind == "mapping" then ok, err = require("sift.heap").read_mapping(path)
  else ok, err = require("sift.heap.bmd").dictionary({ path }, { analysis_names = false }) end
  if not ok then return nil, renamed(err, path, name) end
  return kind, what
end

--- The kind a file's first bytes say (see sniff), unchecked.
function M.kind(path, name)
  name = name or path
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local head = f:read(8192) or ""
  f:close()
  if head == "" then return nil, name .. ": empty" end
  if head:sub(1, 4) == "PK\3\4" then return "strings", "jar or apk" end
  if head:match("^dex\n%d%d%d%z") then return "strings", "dex" end
  if head:sub(1, 4) == "\xCA\xFE\xBA\xBE" then return "strings", "class" end
  -- a JDK module (jmods/*.jmod): "JM", 1, 0, then a zip
  if head:sub(1, 4) == "JM\1\0" and head:sub(5, 8) == "PK\3\4" then return "strings", "jmod" end
  -- a mapping: text whose first line that is not a comment maps a class
  for line in head:gmatch("[^\n]*") do
    line = line:gsub("\r$", "")
    if line:find("%S") and not line:match("^%s*#") then
      if line:match("^[%w_$.]+ %-> [%w_$.]+:$") then return "mapping", "mapping" end
      break
    end
  end
  return nil, name .. ": neither an apk, jar, dex or class file nor an R8/ProGuard mapping (whose lines read "
    .. "`com.example.Foo -> a.b:`)"
end

--- The SHA-256 of a file, in hex.
function M.sha256(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local d = digest.new("sha256")
  while true do
    local chunk = f:read(1 << 16)
    if not chunk then break end
    d:update(chunk)
  end
  f:close()
  return hex(d:final())
end

-- copy path's bytes from offset `skip` to a new file `to` (0600: fleet
-- processes run with umask 077): true, or nil and why
local function copy(path, skip, to)
  local src, err = io.open(path, "rb")
  if not src then return nil, err end
  local out
  out, err = io.open(to, "wb")
  if not out then src:close() return nil, err end
  src:seek("set", skip)
  while true do
    local chunk = src:read(1 << 16)
    if not chunk then break end
    local ok, why = out:write(chunk)
    if not ok then src:close() out:close() os.remove(to) return nil, why end
  end
  src:close()
  local ok, why = out:close()
  if not ok then os.remove(to) return nil, why end
  return true
end

--- Store a symbol file in the data directory: sniffed, hashed and copied
-- (or, with opts.move, renamed: a server's temporary upload) to
-- `DIR/SHA256.KIND`, unless it is there already. Returns `{sha256, kind,
-- what, path, name}` or nil and why.
function M.store(dir, path, opts)
  opts = opts or {}
  local name = opts.name or path:match("[^/]*$")
  local kind, what = M.sniff(path, name)
  if not kind then return nil, what end
  local sha, err = M.sha256(path)
  if not sha then return nil, err end
  local dest = ("%s/%s.%s"):format(dir, sha, kind)
  local there = io.open(dest, "rb")
  if there then
    there:close()
    if opts.move then os.remove(path) end
  elseif what == "jmod" then  -- (stored as the zip it holds, which the workers read as a jar)
    local tmp = dest .. ".part"
    local ok, why = copy(path, 4, tmp)
    if not ok then return nil, why end
    ok, why = require("sift.heap.bmd").dictionary({ tmp }, { analysis_names = false })
    if not ok then
      os.remove(tmp)
      return nil, renamed(why, tmp, name)
    end
    ok, why = os.rename(tmp, dest)
    if not ok then return nil, why end
    if opts.move then os.remove(path) end
  elseif opts.move then
    local ok, why = os.rename(path, dest)
    if not ok then return nil, why end
  else
    local tmp = dest .. ".part"
    local ok, why = copy(path, 0, tmp)
    if not ok then return nil, why end
    ok, why = os.rename(tmp, dest)
    if not ok then return nil, why end
  end
  return { sha256 = sha, kind = kind, what = what, path = dest, name = name }
end

return M
