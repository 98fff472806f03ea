--- The fleet's embedded default: queue, results and groups in a SQLite
-- file (`DIR/fleet.db`, WAL) that every `sift worker` on the machine
-- shares. A job is a row of `files`; a worker claims it in one write
-- transaction with a lease, and a job whose lease ran out (its worker was
-- killed) is claimable again. Use it through `sift.fleet.open`.
-- @module sift.fleet.sqlite

local core = require "sift.core"
local json = require "sift.json"
local decode = require("cjson").decode  -- (the warnings kept as JSON arrays of strings)

local M = {}

local Queue = {}
Queue.__index = Queue

--- The schema, as migrations: each takes `PRAGMA user_version` from i - 1
-- to i, applied on open in one write transaction. The first is the schema
-- of the files sift made before it kept a version: at 0 with its tables
-- made, they are at 1.
M.MIGRATIONS = {
  [[
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
]],
  -- a file analysed with warnings (cut, damaged records) keeps them (a JSON
  -- array; NULL: none, or analysed before sift kept them), its leaks are `damaged`
  [[
ALTER TABLE files ADD COLUMN warnings TEXT;
ALTER TABLE leaks ADD COLUMN damaged INTEGER NOT NULL DEFAULT 0;
]],
  -- the groups, kept as uploads and results come: each one's dumps
  -- (leak_groups, for the order and the pages), each leak's file's uploads
  -- (how many, the first and the last), each group's versions and devices
  -- with their uploads (group_values); a page's groups read from the
  -- leaks' index (leaks_signature_sha, which holds what they need)
  [[
ALTER TABLE leaks ADD COLUMN uploads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leaks ADD COLUMN first_id INTEGER;
ALTER TABLE leaks ADD COLUMN first_at TEXT;
ALTER TABLE leaks ADD COLUMN last_at TEXT;
CREATE TABLE IF NOT EXISTS leak_groups (signature TEXT PRIMARY KEY, dumps INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS leak_groups_dumps ON leak_groups (dumps DESC, signature);
CREATE TABLE IF NOT EXISTS group_values (signature TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL,
  n INTEGER NOT NULL, PRIMARY KEY (signature, field, value)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS leaks_signature_sha ON leaks (signature, sha256, uploads, retained, damaged, first_id,
  first_at, last_at);
DROP INDEX IF EXISTS leaks_signature;
UPDATE leaks SET (uploads, first_id, first_at, last_at) = (SELECT count(*), min(id), min(received_at), max(received_at)
  FROM uploads u WHERE u.sha256 = leaks.sha256);
DELETE FROM leak_groups;
INSERT INTO leak_groups (signature, dumps) SELECT signature, sum(uploads) FROM leaks WHERE true GROUP BY signature;
DELETE FROM group_values;
INSERT INTO group_values (signature, field, value, n) SELECT l.signature, 'version', u.version, count(*)
  FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE u.version IS NOT NULL GROUP BY l.signature, u.version;
INSERT INTO group_values (signature, field, value, n) SELECT l.signature, 'device', u.device, count(*)
  FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE u.device IS NOT NULL GROUP BY l.signature, u.device;
]],
  -- each group's summary kept in its leak_groups row (summarize below): a
  -- page reads its groups' rows, their files and group_values, no leak's
  -- retained size or time
  [[
ALTER TABLE leak_groups ADD COLUMN damaged_dumps INTEGER;
ALTER TABLE leak_groups ADD COLUMN retained_total INTEGER;
ALTER TABLE leak_groups ADD COLUMN retained_median INTEGER;
ALTER TABLE leak_groups ADD COLUMN first_seen TEXT;
ALTER TABLE leak_groups ADD COLUMN last_seen TEXT;
ALTER TABLE leak_groups ADD COLUMN first_id INTEGER;
ALTER TABLE leak_groups ADD COLUMN kind TEXT;
ALTER TABLE leak_groups ADD COLUMN description TEXT;
ALTER TABLE leak_groups ADD COLUMN trace TEXT;
]],
  -- symbols: each app version's (and platform's) symbol files, stored by
  -- SHA-256; a file analysed without any says so (`nameless`: "no symbols
  -- for APP VERSION"), and so do its leaks (read per group by a partial index)
  [[
CREATE TABLE symbols (app TEXT NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '',
  platform TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, name TEXT,
  added_at TEXT NOT NULL, PRIMARY KEY (app, version, platform, sha256));
CREATE INDEX uploads_release ON uploads (app, version);
ALTER TABLE files ADD COLUMN nameless TEXT;
ALTER TABLE leaks ADD COLUMN nameless TEXT;
CREATE INDEX leaks_nameless ON leaks (signature, nameless) WHERE nameless IS NOT NULL;
]],
}

-- The statements that make the summary of the groups `where` says (SQL
-- on leak_groups: "true", or their signatures as a JSON array, `?`) from
-- their leaks, each leak row weighing its file's uploads: the dumps
-- damaged, the retained total, the first and last times, the first
-- upload's id and its leak's kind, description and trace, and the median
-- as sift's (the middle one, or the mean of the two middle ones, rounded
-- down; the k-th of a group in order is the first whose running sum of
-- uploads reaches k). Run in the transaction that changed the leaks.
local function summarize(where)
  return {
    ([[UPDATE leak_groups SET retained_median = NULL, (damaged_dumps, retained_total, first_seen, last_seen,
      first_id) = (SELECT sum(l.damaged * l.uploads), sum(coalesce(l.retained, 0) * l.uploads), min(l.first_at),
      max(l.last_at), min(l.first_id) FROM leaks l WHERE l.signature = leak_groups.signature AND l.uploads > 0)
      WHERE %s]]):format(where),
    ([[UPDATE leak_groups SET (kind, description, trace) = (SELECT l.kind, l.description, l.trace FROM leaks l
      WHERE l.signature = leak_groups.signature AND l.first_id = leak_groups.first_id ORDER BY l.rowid LIMIT 1)
      WHERE %s]]):format(where),
    ([[WITH r AS (SELECT signature AS s, coalesce(retained, 0) AS v, uploads AS w FROM leaks
        WHERE uploads > 0 AND signature IN (SELECT signature FROM leak_groups WHERE %s)),
      c AS (SELECT s, v, sum(w) OVER (PARTITION BY s ORDER BY v) AS c, sum(w) OVER (PARTITION BY s) AS n FROM r),
      m AS (SELECT s, (min(CASE WHEN c >= (n + 1) / 2 THEN v END) + min(CASE WHEN c >= n / 2 + 1 THEN v END)) / 2
        AS median FROM c GROUP BY s)
      UPDATE leak_groups SET retained_median = m.median FROM m WHERE m.s = leak_groups.signature]]):format(where),
  }
end
local SUMMARIZE_ALL = table.concat(summarize("true"), ";\n")
M.MIGRATIONS[4] = M.MIGRATIONS[4] .. SUMMARIZE_ALL
local SUMMARIZE = summarize("signature IN (SELECT value FROM json_each(?))")

-- One upload more of a file analysed already, in each group of its leaks
-- (after FILE_UPLOADS and count): the sums move on by its leaks, the
-- first and last times by the file's. Its id is greater than every other
-- upload's: the group's first upload, and so its trace, stay.
local ONE_MORE = [[UPDATE leak_groups SET (damaged_dumps, retained_total, first_seen, last_seen) = (SELECT
  leak_groups.damaged_dumps + sum(l.damaged), leak_groups.retained_total + sum(coalesce(l.retained, 0)),
  min(coalesce(leak_groups.first_seen, min(l.first_at)), min(l.first_at)),
  max(coalesce(leak_groups.last_seen, max(l.last_at)), max(l.last_at))
  FROM leaks l WHERE l.sha256 = ? AND l.signature = leak_groups.signature)
  WHERE signature IN (SELECT signature FROM leaks WHERE sha256 = ?)]]

-- the summaries of these groups (a list of signatures) made again
local function resummarize(db, signatures)
  if #signatures == 0 then return end
  local list = json.encode(json.array(signatures))
  for _, sql in ipairs(SUMMARIZE) do
    db:run(sql, list)
  end
end

-- the signatures of a file's leaks
local function signatures_of(db, sha256)
  local out = {}
  for row in db:rows("SELECT DISTINCT signature FROM leaks WHERE sha256 = ?", sha256) do out[#out + 1] = row.signature end
  return out
end

-- bring the file's schema to this sift's version; the number of migrations applied
local function migrate(db, path)
  db:exec("BEGIN IMMEDIATE")  -- (read and raised in one transaction: workers start together)
  local ok, applied = pcall(function()
    local version = db:first("PRAGMA user_version").user_version
    if version == 0 and db:first("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'files'") then
      version = 1  -- (made before sift kept a version)
    end
    if version > #M.MIGRATIONS then
      error(("%s: schema version %d is newer than this sift's (%d)"):format(path, version, #M.MIGRATIONS), 0)
    end
    for v = version + 1, #M.MIGRATIONS do
      db:exec(M.MIGRATIONS[v] .. ("; PRAGMA user_version = %d"):format(v))
    end
    return #M.MIGRATIONS - version
  end)
  if not ok then
    db:exec("ROLLBACK")
    return nil, applied
  end
  db:exec("COMMIT")
  return applied
end

-- add the uploads (sign: 1, or -1 to take them away) of a file to the
-- groups of each of its leaks: their dumps, versions and devices; `only`
-- (an upload's id): that upload alone, else all the file's
local function count(db, sha256, sign, only)
  local uploads = only and "u.id = ?" or "u.sha256 = ?"
  db:run(([[INSERT INTO leak_groups (signature, dumps) SELECT l.signature, ? * count(*)
    FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE l.sha256 = ? AND %s GROUP BY l.signature
    ON CONFLICT (signature) DO UPDATE SET dumps = dumps + excluded.dumps]]):format(uploads), sign, sha256,
    only or sha256)
  for _, field in ipairs { "version", "device" } do
    db:run(([[INSERT INTO group_values (signature, field, value, n) SELECT l.signature, '%s', u.%s, ? * count(*)
      FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE l.sha256 = ? AND %s AND u.%s IS NOT NULL
      GROUP BY l.signature, u.%s ON CONFLICT (signature, field, value) DO UPDATE SET n = n + excluded.n]]):format(
      field, field, uploads, field, field), sign, sha256, only or sha256)
  end
end

-- a file's leaks say how many uploads it has, its first and its last
local FILE_UPLOADS = [[UPDATE leaks SET (uploads, first_id, first_at, last_at) = (SELECT count(*), min(id),
  min(received_at), max(received_at) FROM uploads u WHERE u.sha256 = leaks.sha256) WHERE sha256 = ?]]

--- Open (and create, or bring up to date) the queue in a data directory.
function M.open(dir, max_attempts)
  local made, why_not = require("sift.private").directory(dir)  -- (0700, or refused: someone else's)
  if not made then return nil, why_not, "io" end
  local path = dir .. "/fleet.db"
  local db, err, code = core.sqlite(path)
  if not db then return nil, err, code end
  db:exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
  local applied, why = migrate(db, path)
  if not applied then
    db:close()
    return nil, why, "schema"
  end
  return setmetatable({ db = db, dir = dir, max_attempts = max_attempts, applied = applied }, Queue)
end

function Queue:close() self.db:close() end

-- the schema is brought up to date on open: the migrations it applied
function Queue:migrate() return self.applied end

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

function Queue:ingest(sha256, path, format, meta)
  return atomically(self.db, function()
    local known = self.db:first("SELECT sha256 FROM files WHERE sha256 = ?", sha256) ~= nil
    if not known then
      self.db:run("INSERT INTO files (sha256, path, format) VALUES (?, ?, ?)", sha256, path, format)
    end
    self.db:run([[INSERT INTO uploads (sha256, app, version, device, os, time, tags, received_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))]], sha256, meta.app, meta.version,
      meta.device, meta.os, meta.time, meta.tags)
    local id = self.db:last_id()
    if known then  -- (its leaks, if analysed: one dump more each)
      self.db:run(FILE_UPLOADS, sha256)
      count(self.db, sha256, 1, id)
      self.db:run(ONE_MORE, sha256, sha256)
      self.db:run(SUMMARIZE[3], json.encode(json.array(signatures_of(self.db, sha256))))
    end
    return id, known
  end)
end

function Queue:claim(worker, lease_seconds)
  return atomically(self.db, function()
    -- (seconds since 1970 with their fraction: leases can be short)
    local now = self.db:first("SELECT (julianday('now') - 2440587.5) * 86400.0 AS t").t
    self.db:run([[UPDATE files SET state = 'failed', error = 'abandoned after ' || attempts || ' attempts'
      WHERE state = 'running' AND lease_until < ? AND attempts >= ?]], now, self.max_attempts)
    local job = self.db:first([[SELECT sha256, path, format FROM files
      WHERE state = 'queued' OR (state = 'running' AND lease_until < ?) ORDER BY rowid LIMIT 1]], now)
    if not job then return nil end
    self.db:run([[UPDATE files SET state = 'running', worker = ?, lease_until = ?, attempts = attempts + 1
      WHERE sha256 = ?]], worker, now + lease_seconds, job.sha256)
    return job
  end)
end

function Queue:finish(worker, job, results)
  return atomically(self.db, function()
    local row = self.db:first("SELECT worker, state FROM files WHERE sha256 = ?", job.sha256)
    if not row or row.worker ~= worker or row.state ~= "running" then return false end
    local warnings = results.warnings and #results.warnings > 0 and json.encode(json.array(results.warnings)) or nil
    count(self.db, job.sha256, -1)  -- (results written before, were there any: no longer)
    local touched = signatures_of(self.db, job.sha256)
    self.db:run("DELETE FROM leaks WHERE sha256 = ?", job.sha256)
    for _, l in ipairs(results.leaks) do
      touched[#touched + 1] = l.signature
      self.db:run([[INSERT INTO leaks (sha256, signature, kind, description, retained, trace, damaged, nameless)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)]], job.sha256, l.signature, l.kind, l.description, l.retained, l.trace,
        warnings and 1 or 0, results.nameless)
    end
    self.db:run(FILE_UPLOADS, job.sha256)
    count(self.db, job.sha256, 1)
    resummarize(self.db, touched)
    self.db:run([[UPDATE files SET state = 'done', error = NULL, warnings = ?, summary = ?, nameless = ?,
      analysed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE sha256 = ?]], warnings, json.encode(results.summary),
      results.nameless, job.sha256)
    return true
  end)
end

function Queue:fail(worker, job, message)
  return atomically(self.db, function()
    self.db:run("UPDATE files SET state = 'failed', error = ? WHERE sha256 = ? AND worker = ?", message, job.sha256,
      worker)
  end)
end

function Queue:status()
  local out = { queued = 0, running = 0, done = 0, done_with_warnings = 0, failed = 0 }
  for row in self.db:rows("SELECT state, count(*) AS n FROM files GROUP BY state") do out[row.state] = row.n end
  out.done_with_warnings = self.db:first(
    "SELECT count(*) AS n FROM files WHERE state = 'done' AND warnings IS NOT NULL").n
  out.uploads = self.db:first("SELECT count(*) AS n FROM uploads").n
  return out
end

-- every row of a query, as a JSON array
local function all(db, sql, ...)
  local out = json.array {}
  for row in db:rows(sql, ...) do out[#out + 1] = row end
  return out
end

function Queue:failures()
  return all(self.db, "SELECT sha256, error FROM files WHERE state = 'failed' ORDER BY rowid")
end

function Queue:warned()
  local out = all(self.db,
    "SELECT sha256, warnings FROM files WHERE state = 'done' AND warnings IS NOT NULL ORDER BY rowid")
  for _, row in ipairs(out) do row.warnings = json.array(decode(row.warnings)) end
  return out
end

function Queue:leak_rows()
  local out = all(self.db, [[SELECT l.signature, l.kind, l.description, l.retained, l.trace, l.sha256, l.damaged,
      u.version, u.device, u.received_at FROM leaks l JOIN uploads u ON u.sha256 = l.sha256
      ORDER BY l.signature, u.id]])
  for _, row in ipairs(out) do row.damaged = row.damaged == 1 end
  return out
end

--- The leak groups, one page of them: the groups whose signature is not
-- in `hidden` (a JSON array), most dumps first (then by signature),
-- `limit` of them (nil: all) after the first `offset`, as `{signature,
-- dumps}`; and how many groups there are in all.
function Queue:group_page(hidden, limit, offset)
  local out = json.array {}
  for row in self.db:rows([[SELECT signature, dumps FROM leak_groups
      WHERE dumps > 0 AND signature NOT IN (SELECT value FROM json_each(?))
      ORDER BY dumps DESC, signature LIMIT ? OFFSET ?]], hidden, limit or -1, offset or 0) do
    out[#out + 1] = row
  end
  return out, self.db:first([[SELECT count(*) AS n FROM leak_groups
    WHERE dumps > 0 AND signature NOT IN (SELECT value FROM json_each(?))]], hidden).n
end

--- Count the groups' dumps again from the leaks and uploads (the
-- migration that made leak_groups does; so can a repair).
function Queue:recount()
  atomically(self.db, function()
    self.db:exec(M.MIGRATIONS[3]:match("UPDATE leaks SET %(uploads.*$") .. SUMMARIZE_ALL)
  end)
end

--- The versions the uploads of each group marked fixed came from:
-- `{signature = {version, ...}}` (whether they reopened it is sift's
-- comparison of versions, sift.fleet.version_after).
function Queue:fixed_versions()
  local out = {}
  -- (a search of group_values' key for each fixed group, not a scan of it)
  for row in self.db:rows([[SELECT signature, value AS version FROM group_values
      WHERE signature IN (SELECT signature FROM fixes) AND field = 'version' AND n > 0]]) do
    out[row.signature] = out[row.signature] or {}
    table.insert(out[row.signature], row.version)
  end
  return out
end

--- What sift.fleet's groups say of the groups named in `signatures` (a
-- JSON array): `{signature = {dumps, damaged_dumps, retained_total,
-- retained_median, first_seen, last_seen, kind, description, trace (of
-- its first upload), files, versions, devices (sorted, distinct)}}`. Read
-- from their leak_groups rows (the summaries kept), the files from their
-- leaks' index and the versions and devices from group_values.
function Queue:group_details(signatures)
  local out = {}
  for row in self.db:rows([[SELECT signature, dumps, damaged_dumps, retained_total, retained_median, first_seen,
      last_seen, kind, description, trace FROM leak_groups
      WHERE signature IN (SELECT value FROM json_each(?)) AND dumps > 0]], signatures) do
    row.files, row.versions, row.devices = json.array {}, json.array {}, json.array {}
    out[row.signature] = row
  end
  -- (in the index's order: a file's second leak in a group follows its first)
  for row in self.db:rows([[SELECT signature, sha256 FROM leaks
      WHERE signature IN (SELECT value FROM json_each(?)) AND uploads > 0 ORDER BY signature, sha256]], signatures) do
    local g = out[row.signature]
    if g and g.files[#g.files] ~= row.sha256 then g.files[#g.files + 1] = row.sha256 end
  end
  for row in self.db:rows([[SELECT signature, field, value FROM group_values
      WHERE signature IN (SELECT value FROM json_each(?)) AND n > 0 ORDER BY signature, field, value]], signatures) do
    local g = out[row.signature]
    if g then table.insert(g[row.field .. "s"], row.value) end
  end
  return out
end

function Queue:fixes()
  local out = {}
  for row in self.db:rows("SELECT signature, version FROM fixes") do out[row.signature] = row.version end
  return out
end

function Queue:mark_fixed(signature, version)
  self.db:run("INSERT INTO fixes (signature, version) VALUES (?, ?) ON CONFLICT (signature) DO UPDATE SET version = ?",
    signature, version, version)
end

--- Record a symbol file (`{app, version, platform, kind, sha256, path,
-- name}`: an app version's, or a platform's) once; a new one queues again
-- the files analysed already that it may name: those with an upload of
-- that app version, or, for a platform's, every BMD. Returns whether it
-- was new and how many files were queued again.
function Queue:add_symbols(s)
  return atomically(self.db, function()
    local new = self.db:run([[INSERT INTO symbols (app, version, platform, kind, sha256, path, name, added_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT DO NOTHING]],
      s.app or "", s.version or "", s.platform or "", s.kind, s.sha256, s.path, s.name)
    if new == 0 then return false, 0 end
    if s.platform then
      return true, self.db:run([[UPDATE files SET state = 'queued', attempts = 0, worker = NULL, lease_until = NULL
        WHERE state = 'done' AND format = 'bmd']])
    end
    return true, self.db:run([[UPDATE files SET state = 'queued', attempts = 0, worker = NULL, lease_until = NULL
        WHERE state = 'done' AND sha256 IN (SELECT sha256 FROM uploads WHERE app = ? AND version = ?)]],
        s.app, s.version)
  end)
end

--- Every symbol file recorded, by app, version, platform, kind and name.
function Queue:symbols()
  return all(self.db, [[SELECT app, version, platform, kind, sha256, path, name, added_at FROM symbols
    ORDER BY app, version, platform, kind, name, sha256]])
end

--- The symbol files for a stored file: its uploads' app versions' (`{app,
-- version, kind, path}`), and the releases its uploads name (`{app,
-- version}`, distinct; nil fields where an upload names none).
function Queue:symbols_for(sha256)
  local files = all(self.db, [[SELECT s.app, s.version, s.platform, s.kind, s.path FROM symbols s
    WHERE s.platform = '' AND EXISTS (SELECT 1 FROM uploads u WHERE u.sha256 = ? AND u.app = s.app
      AND u.version = s.version) ORDER BY s.added_at, s.sha256]], sha256)
  local platform = all(self.db, [[SELECT app, version, platform, kind, path FROM symbols WHERE platform <> ''
    ORDER BY platform, added_at, sha256]])
  local releases = all(self.db, [[SELECT DISTINCT app, version FROM uploads WHERE sha256 = ? ORDER BY id]], sha256)
  return files, platform, releases
end

--- The files analysed without symbols, per message ("no symbols for APP
-- VERSION"): `[{nameless, files}]`.
function Queue:nameless()
  return all(self.db, [[SELECT nameless, count(*) AS files FROM files WHERE nameless IS NOT NULL
    GROUP BY nameless ORDER BY nameless]])
end

--- Of the groups named (a JSON array), those with leaks of files analysed
-- without symbols: `{signature = {message, ...}}` (sorted, distinct).
function Queue:group_nameless(signatures)
  local out = {}
  for row in self.db:rows([[SELECT DISTINCT signature, nameless FROM leaks
      WHERE nameless IS NOT NULL AND signature IN (SELECT value FROM json_each(?)) AND uploads > 0
      ORDER BY signature, nameless]], signatures) do
    out[row.signature] = out[row.signature] or {}
    table.insert(out[row.signature], row.nameless)
  end
  return out
end

function Queue:jobs()
  return all(self.db, "SELECT sha256, state, attempts, worker FROM files ORDER BY rowid")
end

return M
