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

function helper.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
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

--- Lines of a text.
function helper.lines(s)
  local t = {}
  for line in s:gmatch("[^\n]+") do t[#t + 1] = line end
  return t
end

return helper
