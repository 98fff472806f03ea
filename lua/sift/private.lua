--- Private files for the processes that keep other people's dumps: `sift
-- serve`, `sift worker` and `sift fleet`. They run with umask 077 (every
-- file they write 0600, every directory 0700), or with `--group NAME` 027
-- (0640 and 0750, the directory in that group) for workers of that group
-- on other machines. Their data directory is per user by default, and one
-- that another user owns or could write is refused.
-- @module sift.private

local core = require "sift.core"

local M = {}

--- The default data directory: `$XDG_DATA_HOME/sift/serve`, else
-- `~/.local/share/sift/serve` (never a fixed name in /tmp, which another
-- local user could make first).
function M.data_dir()
  local xdg = os.getenv("XDG_DATA_HOME")
  if xdg and xdg:match("^/") then return xdg .. "/sift/serve" end
  local home = os.getenv("HOME")
  if not home or home == "" then return nil, "HOME is not set: give --data DIR" end
  return home .. "/.local/share/sift/serve"
end

--- The modes of a process's files: { file, dir, umask } for a group or not.
local function modes(group)
  if group then return { file = 416, dir = 1512, umask = 23 } end  -- 0640, 02750 (group kept), 027
  return { file = 384, dir = 448, umask = 63 }                      -- 0600, 0700, 077
end

--- From now on, what this process creates is private (umask 077; 027
-- with a group). Returns the group's id (true without one), or nil and a
-- message.
function M.restrict(group)
  local gid, why = true, nil
  if group then gid, why = core.group(group) end
  if not gid then return nil, why end
  core.umask(modes(group).umask)
  return gid
end

--- Whether a file name in a data directory is one sift writes there
-- (uploads and their metadata by SHA-256, the fleet's database, temporary
-- uploads): only those are ever made private in a directory that existed.
function M.is_ours(name)
  return name:match("^%x+%.%a+$") ~= nil or name:match("^fleet%.") ~= nil or name:match("^%.upload%-") ~= nil
end

local function octal(mode) return ("%04o"):format(mode) end

--- Make sure `dir` is a directory of this user's that no one else can
-- write: created (with its missing parents) 0700, or 02750 in `group`; an
-- existing one is refused when another user owns it or others (or, without
-- a group, the group) may write it (its mode is left as it is). Files of
-- sift's in it that others could read (left by an older sift) are made
-- private too.
-- @return true, or nil and a message saying how to fix it
function M.directory(dir, group)
  local gid, why = true, nil
  if group then gid, why = core.group(group) end
  if not gid then return nil, why end
  if gid == true then gid = nil end
  local st = core.stat(dir)
  if not st then
    local ok
    ok, why = core.private(dir, "dir")
    if not ok then return nil, why end
    if gid then assert(core.chown_group(dir, gid)) end
    assert(core.chmod(dir, modes(group).dir))
    return true
  end
  if not st.dir then return nil, dir .. ": not a directory" end
  if st.uid ~= core.euid() then
    return nil, ("%s: owned by another user (uid %d): keep the data in a directory of your own (--data DIR)")
      :format(dir, st.uid)
  end
  local open = group and 2 or 18  -- others may write (o+w); without a group, g+w too
  if st.mode & open ~= 0 then
    return nil, ("%s: others may write to it (mode %s): chmod %s %s, or give another --data"):format(dir,
      octal(st.mode), group and "2750" or "700", dir)
  end
  if gid and st.gid ~= gid then
    local ok
    ok, why = core.chown_group(dir, gid)
    if not ok then return nil, why end
  end
  -- (a directory set up for a group, setgid, keeps its files' group bits
  -- when a command without --group opens it)
  local keep = (group or st.mode & 1024 ~= 0) and 416 or 384  -- 0640 or 0600
  for _, name in ipairs(assert(core.listdir(dir))) do
    if M.is_ours(name) then
      local path = dir .. "/" .. name
      local fst = core.stat(path)
      if fst and not fst.dir and fst.uid == st.uid and fst.mode & 511 & ~keep ~= 0 then
        core.chmod(path, fst.mode & keep)
      end
    end
  end
  return true
end

--- A secret kept in a file (a token): its first line, when only its
-- owner may read the file (as ssh asks of its keys). Returns the secret,
-- or nil and why (the secret itself is never in the message).
function M.read_secret(path)
  local st, why = core.stat(path)
  if not st then return nil, why end
  if st.mode & 63 ~= 0 then
    return nil, ("%s: others may read it (mode %s): chmod 600 %s"):format(path, octal(st.mode), path)
  end
  local f = io.open(path, "rb")
  if not f then return nil, path .. ": cannot be read" end
  local line = (f:read("l") or ""):match("^%s*(.-)%s*$")
  f:close()
  if line == "" then return nil, path .. ": holds no token (its first line is empty)" end
  return line
end

return M
