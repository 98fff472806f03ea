-- The Android corpus of sift lint: the real dex and apk files of Debian's androguard package
-- (its examples), fetched with `apt-get download` and unpacked with `dpkg -x` into build/ when
-- missing (CI starts from a clean checkout), each file pinned by SHA-256 (spec/lint/android.lua),
-- and sift lint's findings on each cached in build/lint-android/ by the file's SHA-256 and the
-- model's (the sources of sift.lint and of the C that reads dex files): a second run reads them.
local M = {}

M.DIR = "build/androguard"
M.ROOT = M.DIR .. "/usr/share/doc/androguard/examples"
M.CACHE = "build/lint-android"

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function run(cmd)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok = p:close()
  return ok and out or nil, out
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

--- The examples unpacked from the pinned package (data: spec/lint/android.lua's `package`), fetched
-- when missing; nil and why when apt-get cannot fetch it or the package is not the one pinned.
function M.ensure(package)
  if exists(M.ROOT .. "/" .. package.probe) then return true end
  local deb = ("%s/%s_%s_all.deb"):format(M.DIR, package.name, package.version:gsub(":", "%%3a"))
  if not exists(deb) then
    local ok, out = run(("mkdir -p %s && cd %s && apt-get download %s=%s 2>&1"):format(quote(M.DIR), quote(M.DIR),
      package.name, quote(package.version)))
    if not ok then return nil, "apt-get download " .. package.name .. " failed: " .. (out or ""):gsub("%s+$", "") end
  end
  local sum = run("sha256sum " .. quote(deb))
  if not (sum and sum:match("^(%x+)") == package.sha256) then
    return nil, ("%s: SHA-256 %s, not the pinned %s"):format(deb, sum and sum:match("^(%x+)") or "?", package.sha256)
  end
  if not run(("dpkg -x %s %s 2>&1"):format(quote(deb), quote(M.DIR))) then return nil, "dpkg -x failed" end
  return true
end

--- The SHA-256 of each path (relative to ROOT), in one sha256sum run.
function M.sums(paths)
  local list = {}
  for _, p in ipairs(paths) do list[#list + 1] = quote(M.ROOT .. "/" .. p) end
  local out = run("sha256sum " .. table.concat(list, " ") .. " 2>/dev/null") or ""
  local sums = {}
  for sha, path in out:gmatch("(%x+)  ([^\n]+)") do sums[path:sub(#M.ROOT + 2)] = sha end
  return sums
end

local model_key = nil
--- The model's key: the SHA-256 of the sources whose change can change a finding.
function M.model()
  if not model_key then
    local out = run("cat lua/sift/lint/*.lua csrc/lint/*.c csrc/lint/*.h | sha256sum")
    model_key = out:match("^(%x+)"):sub(1, 16)
  end
  return model_key
end

local FIELDS = { "rule", "criterion", "class", "method", "desc", "pc", "line", "instruction", "fingerprint" }

--- sift lint's findings on one file (a path, of SHA-256 sha) with the rules named (`lint.select`'s
-- syntax) and opts (`lint.check`'s): from the cache, or checked and cached. (The jar corpus's
-- specs share it: lint_corpus_spec and lint_findbugs_spec check the same jars.)
function M.findings_of(path, sha, names, opts)
  local lint = require "sift.lint"
  local dir = ("%s/%s"):format(M.CACHE, M.model())
  local file = ("%s/%s-%s%s.lua"):format(dir, sha, names:gsub("[^%w]", "_"), opts and opts.strict and "-strict" or "")
  local chunk = loadfile(file, "t", {})
  if chunk then return chunk() end
  local classes, problems = lint.load { path }
  local out = {}
  if #problems == 0 then out = lint.check(classes, lint.select(names), nil, opts) end
  local lines = { "return {" }
  for _, f in ipairs(out) do
    local parts = {}
    for _, k in ipairs(FIELDS) do
      local v = f[k]
      if v ~= nil then parts[#parts + 1] = ("%s = %s"):format(k, type(v) == "string" and ("%q"):format(v) or v) end
    end
    lines[#lines + 1] = "  { " .. table.concat(parts, ", ") .. " },"
  end
  lines[#lines + 1] = ("  classes = %d, unread = %d,"):format(#classes, #problems)
  lines[#lines + 1] = "}"
  os.execute("mkdir -p " .. quote(dir))
  local tmp = file .. ".tmp"
  local f = assert(io.open(tmp, "wb"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  os.rename(tmp, file)
  local result = out
  result.classes, result.unread = #classes, #problems
  return result
end

--- The same for a file of the androguard examples (path relative to ROOT).
function M.findings(path, sha, names, opts)
  return M.findings_of(M.ROOT .. "/" .. path, sha, names, opts)
end

return M
