--- Fleet mode: dumps and traces from many devices, analysed by workers and
-- grouped by leak signature (LeakCanary's: the same leak from many dumps is
-- one group). This is the embedded default: the queue, results and groups
-- in a SQLite file in the data directory, which any number of `sift worker`
-- processes on the machine share.
--
--     local fleet = require "sift.fleet"
--     local f = assert(fleet.open("/var/lib/sift"))
--     for _, g in ipairs(f:groups()) do print(g.dumps, g.signature, g.description) end
-- @module sift.fleet

local core = require "sift.core"
local json = require "sift.json"

local M = {}

local Fleet = {}
Fleet.__index = Fleet

local SCHEMA = [[
CREATE TABLE IF NOT EXISTS files (        -- one row per distinct file (SHA-256): its job
  sha256 TEXT PRIMARY KEY, path TEXT NOT NULL, format TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued',   -- queued, running, done, failed
  worker TEXT, lease_until REAL, attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT, analysed_at TEXT, summary TEXT);
CREATE INDEX IF NOT EXISTS files_state ON files (state, lease_until);
CREATE TABLE IF NOT EXISTS uploads (      -- every upload, duplicates included
  id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL REFERENCES files, app TEXT, version TEXT,
  device TEXT, os TEXT, time TEXT, tags TEXT, received_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS uploads_sha ON uploads (sha256);
CREATE TABLE IF NOT EXISTS leaks (        -- what the analysis of a file found
  sha256 TEXT NOT NULL REFERENCES files, signature TEXT NOT NULL, kind TEXT NOT NULL,
  description TEXT, retained INTEGER, trace TEXT);
CREATE INDEX IF NOT EXISTS leaks_signature ON leaks (signature);
CREATE INDEX IF NOT EXISTS leaks_sha ON leaks (sha256);
CREATE TABLE IF NOT EXISTS fixes (signature TEXT PRIMARY KEY, version TEXT NOT NULL);
]]

M.MAX_ATTEMPTS = 3

--- Open (and create) the fleet database in a data directory.
function M.open(dir)
  os.execute(("mkdir -p -m 700 '%s'"):format(dir:gsub("'", "'\\''")))
  local db, err, code = core.sqlite(dir .. "/fleet.db")
  if not db then return nil, err, code end
  db:exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
  db:exec(SCHEMA)
  return setmetatable({ db = db, dir = dir }, Fleet)
end

function Fleet:close() self.db:close() end

-- run fn in one write transaction
local function atomically(db, fn, ...)
  db:exec("BEGIN IMMEDIATE")
  local ok, a, b = pcall(fn, ...)
  if not ok then
    db:exec("ROLLBACK")
    error(a, 0)
  end
  db:exec("COMMIT")
  return a, b
end

--- Record an upload of a stored file (see sift.serve.store) with its
-- metadata (`app`, `version`, `device`, `os`, `time`, `tags`); a file seen
-- for the first time is queued. Returns the upload's id and whether the
-- file was known already.
function Fleet:ingest(sha256, path, format, meta)
  meta = meta or {}
  return atomically(self.db, function()
    local known = self.db:first("SELECT sha256 FROM files WHERE sha256 = ?", sha256) ~= nil
    if not known then
      self.db:run("INSERT INTO files (sha256, path, format) VALUES (?, ?, ?)", sha256, path, format)
    end
    self.db:run([[INSERT INTO uploads (sha256, app, version, device, os, time, tags, received_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))]], sha256, meta.app, meta.version,
      meta.device, meta.os, meta.time, meta.tags)
    return self.db:last_id(), known
  end)
end

--- Take a job for worker (a name): a queued file, or one whose worker's
-- lease ran out (a worker killed mid-job). A file tried MAX_ATTEMPTS times
-- is failed instead. Returns `{sha256, path, format}` or nil.
function Fleet:claim(worker, lease_seconds)
  return atomically(self.db, function()
    -- (seconds since 1970 with their fraction: leases can be short)
    local now = self.db:first("SELECT (julianday('now') - 2440587.5) * 86400.0 AS t").t
    self.db:run([[UPDATE files SET state = 'failed', error = 'abandoned after ' || attempts || ' attempts'
      WHERE state = 'running' AND lease_until < ? AND attempts >= ?]], now, M.MAX_ATTEMPTS)
    local job = self.db:first([[SELECT sha256, path, format FROM files
      WHERE state = 'queued' OR (state = 'running' AND lease_until < ?) ORDER BY rowid LIMIT 1]], now)
    if not job then return nil end
    self.db:run([[UPDATE files SET state = 'running', worker = ?, lease_until = ?, attempts = attempts + 1
      WHERE sha256 = ?]], worker, now + lease_seconds, job.sha256)
    return job
  end)
end

--- Write a job's results (from M.analyze), if the job is still this
-- worker's: a worker whose lease was taken over writes nothing.
function Fleet:finish(worker, sha256, results)
  return atomically(self.db, function()
    local row = self.db:first("SELECT worker, state FROM files WHERE sha256 = ?", sha256)
    if not row or row.worker ~= worker or row.state ~= "running" then return false end
    self.db:run("DELETE FROM leaks WHERE sha256 = ?", sha256)
    for _, l in ipairs(results.leaks) do
      self.db:run("INSERT INTO leaks (sha256, signature, kind, description, retained, trace) VALUES (?, ?, ?, ?, ?, ?)",
        sha256, l.signature, l.kind, l.description, l.retained, l.trace)
    end
    self.db:run([[UPDATE files SET state = 'done', error = NULL, summary = ?,
      analysed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE sha256 = ?]], json.encode(results.summary), sha256)
    return true
  end)
end

--- Record a job that failed (a bad file): never retried.
function Fleet:fail(worker, sha256, message)
  return atomically(self.db, function()
    self.db:run("UPDATE files SET state = 'failed', error = ? WHERE sha256 = ? AND worker = ?", message, sha256, worker)
  end)
end

--- Counts of files by state.
function Fleet:status()
  local out = { queued = 0, running = 0, done = 0, failed = 0 }
  for row in self.db:rows("SELECT state, count(*) AS n FROM files GROUP BY state") do out[row.state] = row.n end
  out.uploads = self.db:first("SELECT count(*) AS n FROM uploads").n
  return out
end

--- The files that failed: `{sha256, error}`.
function Fleet:failures()
  local out = json.array {}
  for row in self.db:rows("SELECT sha256, error FROM files WHERE state = 'failed' ORDER BY rowid") do
    out[#out + 1] = row
  end
  return out
end

local function median(list)
  table.sort(list)
  local n = #list
  if n == 0 then return nil end
  if n % 2 == 1 then return list[(n + 1) // 2] end
  return (list[n // 2] + list[n // 2 + 1]) // 2
end

--- The leak groups, most dumps first: `{signature, kind, description,
-- dumps (uploads, duplicates counted), files, first_seen, last_seen,
-- versions, devices, retained_total, retained_median, trace, fixed_in,
-- reopened}`. A group marked fixed in a version is left out unless a dump
-- from a later version has it (then it is `reopened`).
function Fleet:groups(opts)
  opts = opts or {}
  local groups, by_sig = json.array {}, {}
  for row in self.db:rows([[SELECT l.signature, l.kind, l.description, l.retained, l.trace, l.sha256,
      u.version, u.device, u.received_at FROM leaks l JOIN uploads u ON u.sha256 = l.sha256
      ORDER BY l.signature, u.id]]) do
    local g = by_sig[row.signature]
    if not g then
      g = { signature = row.signature, kind = row.kind, description = row.description, dumps = 0, files = {},
        first_seen = row.received_at, last_seen = row.received_at, versions = {}, devices = {},
        retained_total = 0, retained = {}, trace = row.trace }
      by_sig[row.signature] = g
      groups[#groups + 1] = g
    end
    g.dumps = g.dumps + 1
    g.retained_total = g.retained_total + (row.retained or 0)
    g.retained[#g.retained + 1] = row.retained or 0
    if not g.files[row.sha256] then g.files[row.sha256] = true end
    if row.received_at < g.first_seen then g.first_seen = row.received_at end
    if row.received_at > g.last_seen then g.last_seen = row.received_at end
    if row.version then g.versions[row.version] = true end
    if row.device then g.devices[row.device] = true end
  end
  local fixes = {}
  for row in self.db:rows("SELECT signature, version FROM fixes") do fixes[row.signature] = row.version end
  local out = json.array {}
  for _, g in ipairs(groups) do
    local function keys(set)
      local list = json.array {}
      for k in pairs(set) do list[#list + 1] = k end
      table.sort(list)
      return list
    end
    local files = keys(g.files)
    g.files = files
    g.versions, g.devices = keys(g.versions), keys(g.devices)
    g.retained_median = median(g.retained)
    g.retained = nil
    g.fixed_in = fixes[g.signature]
    if g.fixed_in then
      for _, v in ipairs(g.versions) do
        if M.version_after(v, g.fixed_in) then g.reopened = true end
      end
    end
    if not g.fixed_in or g.reopened or opts.all then out[#out + 1] = g end
  end
  table.sort(out, function(x, y)
    if x.dumps ~= y.dumps then return x.dumps > y.dumps end
    return x.signature < y.signature
  end)
  return out
end

--- Whether version a comes after b ("1.10" after "1.9"): numbers compared
-- as numbers, the rest as text.
function M.version_after(a, b)
  local pa, pb = {}, {}
  for part in a:gmatch("[^.%-]+") do pa[#pa + 1] = part end
  for part in b:gmatch("[^.%-]+") do pb[#pb + 1] = part end
  for i = 1, math.max(#pa, #pb) do
    local x, y = pa[i], pb[i]
    if x == nil then return false end
    if y == nil then return true end
    local nx, ny = tonumber(x), tonumber(y)
    if nx and ny then
      if nx ~= ny then return nx > ny end
    elseif x ~= y then
      return x > y
    end
  end
  return false
end

--- Mark a group fixed in a version (it reopens if a later version has it).
function Fleet:mark_fixed(signature, version)
  self.db:run("INSERT INTO fixes (signature, version) VALUES (?, ?) ON CONFLICT (signature) DO UPDATE SET version = ?",
    signature, version, version)
end

--- {======================================================
-- The analysis: a pure function of the file
-- =======================================================

-- a leak trace (sift leaks --json's) as LeakCanary draws it, in text
local function trace_text(t)
  local lines = { "GC Root: " .. tostring(t.root or "?"):gsub("_", " ") }
  for _, e in ipairs(t.elements or {}) do
    lines[#lines + 1] = ("├─ %s [%s]%s"):format(e.class or "?", e.status or "?", e.reason and (" " .. e.reason) or "")
    if e.ref then lines[#lines + 1] = "│    ↓ " .. e.ref end
  end
  return table.concat(lines, "\n")
end

--- Analyse a stored file: for a heap, its leaks (with signatures, kinds,
-- retained bytes and one trace each, drawn as text) and a histogram
-- summary; for a trace, its top methods. Returns results, or nil and why.
function M.analyze(path, format)
  local sift = require "sift"
  local doc, msg = sift.open(path)
  if not doc then return nil, msg end
  local results = { leaks = {}, summary = {} }
  local ok, err = pcall(function()
    if format == "trace" then
      local top = json.array {}
      for i, r in ipairs(doc:profile { clock = "cpu" }) do
        if i > 20 then break end
        top[i] = { name = r.name, exclusive = r.exclusive, inclusive = r.inclusive, calls = r.calls }
      end
      results.summary = { format = "trace", records = doc:info().records, top = top }
      return
    end
    local info = doc:info()
    if info.dumps == 0 then  -- nothing to analyse: say what the file lacks, as the CLI does
      error("holds no heap dump" .. (#info.warnings > 0 and (": " .. table.concat(info.warnings, "; ")) or ""), 0)
    end
    local leaks = require "sift.heap.leaks"
    local report = leaks.to_json(leaks.analyze(doc, {}))
    for _, kind in ipairs { "application_leaks", "library_leaks" } do
      for _, l in ipairs(report[kind]) do
        results.leaks[#results.leaks + 1] = { signature = l.signature, kind = kind:match("^%a+"),
          description = l.description, retained = l.retained, trace = l.traces[1] and trace_text(l.traces[1]) }
      end
    end
    results.summary = { format = format, instances = info.instances, classes = info.classes,
      leaks = #results.leaks }
  end)
  doc:close()
  if not ok then return nil, (tostring(err):gsub("^.-:%d+: ", "")) end
  return results
end

-- }======================================================

--- This process's name as a worker: host:pid.
function M.worker_name()
  local function first(path, fmt)
    local f = io.open(path)
    if not f then return nil end
    local v = f:read(fmt)
    f:close()
    return v
  end
  return ("%s:%d"):format(first("/etc/hostname", "l") or "host", first("/proc/self/stat", "n") or 0)
end

--- A worker's loop: take jobs, analyse, write results, until no job is
-- left (opts.once) or forever (polling every opts.poll seconds, 0.2).
-- opts: `name` (default host:pid), `lease` (seconds a job stays this
-- worker's, 600), `log` (a function of a line), `parent` (a pid: stop
-- when it is gone). Returns how many jobs it did.
function Fleet:work(opts)
  opts = opts or {}
  local name = opts.name or M.worker_name()
  local done = 0
  while true do
    local job = self:claim(name, opts.lease or 600)
    if job then
      local results, why = M.analyze(job.path, job.format)
      if results then self:finish(name, job.sha256, results)
      else self:fail(name, job.sha256, why) end
      done = done + 1
      if opts.log then opts.log(("%s %s: %s"):format(job.sha256:sub(1, 12), job.format,
        results and (#results.leaks .. " leak(s)") or ("failed: " .. why))) end
    elseif opts.once then
      return done
    else
      if opts.parent and not os.execute(("kill -0 %d 2>/dev/null"):format(opts.parent)) then return done end
      os.execute(("sleep %g"):format(opts.poll or 0.2))
    end
  end
end

return M
