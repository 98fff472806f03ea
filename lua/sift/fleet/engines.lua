--- The fleet on engines a company already runs: jobs on a Redis Stream
-- read by a consumer group, results and groups in PostgreSQL. Any number
-- of `sift worker --redis URL --postgres URL` on any number of machines
-- share them; the files are in a directory they all mount.
--
-- The stream `sift:jobs` holds one entry per distinct file (sha256, path,
-- format), added when the server first sees it; workers of the group
-- `sift:workers` read entries with XREADGROUP and acknowledge them with
-- XACK once the results are committed. An entry a worker took and did not
-- acknowledge within its lease (the worker was killed) is taken by another
-- with XAUTOCLAIM. PostgreSQL says which worker holds a file and how often
-- it was tried, so a result is written once, by the worker holding the job.
--
-- Clients are Debian's: lua-redis (which predates streams: XADD,
-- XREADGROUP, XACK, XAUTOCLAIM and XGROUP are declared with its
-- `define_command`, its own way to add commands) and lua-dbi-postgresql.
-- lua-dbi reads a bigint column as a 32-bit integer, so bigints are
-- selected as text. An engine that goes away (PostgreSQL restarted) is
-- reconnected to and the whole operation tried again, for `retry` seconds.
-- @module sift.fleet.engines

local cqueues = require "cqueues"  -- (its sleep: blocks here, yields inside a cqueues loop)
local json = require "sift.json"
local decode = require("cjson").decode  -- (the warnings kept as JSON arrays of strings)

local M = {}

local STREAM, GROUP = "sift:jobs", "sift:workers"

--- Seconds a worker waits for the upload of an entry it read to commit
-- (the entry is added just before the commit) before it drops the entry.
M.COMMIT_WAIT = 30

--- The schema, as migrations: `sift fleet migrate` applies those after
-- the version in `sift_schema`.
M.MIGRATIONS = {
  [[
CREATE TABLE files (                      -- one row per distinct file (SHA-256): its job
  sha256 text PRIMARY KEY, path text NOT NULL, format text NOT NULL,
  state text NOT NULL DEFAULT 'queued',   -- queued, running, done, failed
  worker text, attempts integer NOT NULL DEFAULT 0, error text,
  queued_at timestamptz NOT NULL DEFAULT now(), analysed_at timestamptz, summary text);
CREATE INDEX files_state ON files (state);
CREATE TABLE uploads (                    -- every upload, duplicates included
  id bigserial PRIMARY KEY, key text NOT NULL UNIQUE, sha256 text NOT NULL REFERENCES files,
  app text, version text, device text, os text, time text, tags text,
  received_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX uploads_sha ON uploads (sha256);
CREATE TABLE leaks (                      -- what the analysis of a file found
  sha256 text NOT NULL REFERENCES files, signature text NOT NULL, kind text NOT NULL,
  description text, retained bigint, trace text);
CREATE INDEX leaks_signature ON leaks (signature);
CREATE INDEX leaks_sha ON leaks (sha256);
CREATE TABLE fixes (signature text PRIMARY KEY, version text NOT NULL);
]],
  -- a file analysed with warnings (cut, damaged records) keeps them (a JSON
  -- array; NULL: none, or analysed before sift kept them), its leaks are `damaged`
  [[
ALTER TABLE files ADD COLUMN warnings text;
ALTER TABLE leaks ADD COLUMN damaged boolean NOT NULL DEFAULT false;
]],
  -- the groups, kept as uploads and results come: each one's dumps
  -- (leak_groups, for the order and the pages), each leak's file's uploads
  -- (how many, the first and the last), each group's versions and devices
  -- with their uploads (group_values); a page's groups read from the
  -- leaks' index (leaks_signature_sha, which includes what they need)
  [[
ALTER TABLE leaks ADD COLUMN uploads bigint NOT NULL DEFAULT 0;
ALTER TABLE leaks ADD COLUMN first_id bigint;
ALTER TABLE leaks ADD COLUMN first_at timestamptz;
ALTER TABLE leaks ADD COLUMN last_at timestamptz;
CREATE TABLE leak_groups (signature text PRIMARY KEY, dumps bigint NOT NULL);
CREATE INDEX leak_groups_dumps ON leak_groups (dumps DESC, signature COLLATE "C");
CREATE TABLE group_values (signature text NOT NULL, field text NOT NULL, value text NOT NULL, n bigint NOT NULL,
  PRIMARY KEY (signature, field, value));
CREATE INDEX leaks_signature_sha ON leaks (signature, sha256) INCLUDE (uploads, retained, damaged, first_id, first_at,
  last_at);
DROP INDEX leaks_signature;
UPDATE leaks SET (uploads, first_id, first_at, last_at) = (SELECT count(*), min(id), min(received_at), max(received_at)
  FROM uploads u WHERE u.sha256 = leaks.sha256);
DELETE FROM leak_groups;
INSERT INTO leak_groups (signature, dumps) SELECT signature, sum(uploads) FROM leaks GROUP BY signature;
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
ALTER TABLE leak_groups ADD COLUMN damaged_dumps bigint, ADD COLUMN retained_total bigint,
  ADD COLUMN retained_median bigint, ADD COLUMN first_seen timestamptz, ADD COLUMN last_seen timestamptz,
  ADD COLUMN first_id bigint, ADD COLUMN kind text, ADD COLUMN description text, ADD COLUMN trace text;
]],
  -- symbols: each app version's (and platform's) symbol files, stored by
  -- SHA-256; a file analysed without any says so (`nameless`: "no symbols
  -- for APP VERSION"), and so do its leaks (read per group by a partial index)
  [[
CREATE TABLE symbols (app text NOT NULL DEFAULT '', version text NOT NULL DEFAULT '',
  platform text NOT NULL DEFAULT '', kind text NOT NULL, sha256 text NOT NULL, path text NOT NULL, name text,
  added_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (app, version, platform, sha256));
CREATE INDEX uploads_release ON uploads (app, version);
ALTER TABLE files ADD COLUMN nameless text;
ALTER TABLE leaks ADD COLUMN nameless text;
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
-- uploads reaches k). Run in the transaction that changed the leaks, which
-- holds these groups' rows (count's upserts): the statements see every
-- other transaction's change to their leaks, committed before, or wait.
local function summarize(where)
  return {
    ([[UPDATE leak_groups SET retained_median = NULL, (damaged_dumps, retained_total, first_seen, last_seen,
      first_id) = (SELECT sum(CASE WHEN l.damaged THEN l.uploads ELSE 0 END)::bigint,
      sum(coalesce(l.retained, 0) * l.uploads)::bigint, min(l.first_at), max(l.last_at), min(l.first_id)
      FROM leaks l WHERE l.signature = leak_groups.signature AND l.uploads > 0) WHERE %s]]):format(where),
    ([[UPDATE leak_groups SET (kind, description, trace) = (SELECT l.kind, l.description, l.trace FROM leaks l
      WHERE l.signature = leak_groups.signature AND l.first_id = leak_groups.first_id ORDER BY l.sha256 COLLATE "C"
      LIMIT 1) WHERE %s]]):format(where),
    ([[WITH r AS (SELECT signature AS s, coalesce(retained, 0) AS v, uploads AS w FROM leaks
        WHERE uploads > 0 AND signature IN (SELECT signature FROM leak_groups WHERE %s)),
      c AS (SELECT s, v, (sum(w) OVER (PARTITION BY s ORDER BY v))::bigint AS c,
        (sum(w) OVER (PARTITION BY s))::bigint AS n FROM r),
      m AS (SELECT s, (min(CASE WHEN c >= (n + 1) / 2 THEN v END) + min(CASE WHEN c >= n / 2 + 1 THEN v END)) / 2
        AS median FROM c GROUP BY s)
      UPDATE leak_groups SET retained_median = m.median FROM m WHERE m.s = leak_groups.signature]]):format(where),
  }
end
local SUMMARIZE_ALL = table.concat(summarize("true"), ";\n")
M.MIGRATIONS[4] = M.MIGRATIONS[4] .. SUMMARIZE_ALL
local SUMMARIZE = summarize("signature IN (SELECT json_array_elements_text(?::json))")

local now = os.time

--- The parts of a URL: scheme://user:password@host:port/path.
function M.parse_url(url)
  local scheme, rest = url:match("^(%w+)://(.*)$")
  -- (the text is not quoted: a mistyped URL still holds its password)
  if not scheme then return nil, "not a URL (scheme://host:port, with a user and password before the host)" end
  local auth, hostport, path = rest:match("^([^@/]*)@([^/]*)(.*)$")
  if not auth then hostport, path = rest:match("^([^/]*)(.*)$") end
  local user, password
  if auth then
    user, password = auth:match("^([^:]*):(.*)$")
    user = user or auth
  end
  local host, port = hostport:match("^%[(.-)%]:?(%d*)$")
  if not host then host, port = hostport:match("^([^:]*):?(%d*)$") end
  local unescape = function(s) return s and (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end
  return { scheme = scheme, user = unescape(user ~= "" and user or nil), password = unescape(password),
    host = host ~= "" and host or "127.0.0.1", port = tonumber(port), path = unescape(path:gsub("^/", "")) }
end

local Queue = {}
Queue.__index = Queue
Queue.waits = true  -- claim waits for a job (XREADGROUP BLOCK)

local function redis_connect(self)
  require("sift.paths").older_lua()
  local redis = require "redis"
  local u = self.redis_url
  local ok, client = pcall(redis.connect, u.host, u.port or 6379)
  if not ok then error(("cannot reach Redis at %s:%d: %s"):format(u.host, u.port or 6379, client), 0) end
  for _, name in ipairs { "xadd", "xreadgroup", "xack", "xautoclaim", "xgroup" } do client:define_command(name) end
  if u.password then client:auth(u.password) end
  if u.path ~= "" and tonumber(u.path) then client:select(tonumber(u.path)) end
  local made, why = pcall(client.xgroup, client, "CREATE", STREAM, GROUP, "0", "MKSTREAM")
  if not made and not tostring(why):find("BUSYGROUP", 1, true) then error(why, 0) end
  self.redis = client
end

local function pg_connect(self)
  local DBI = require "DBI"
  local u = self.pg_url
  local conn, err = DBI.Connect("PostgreSQL", u.path ~= "" and u.path or "postgres", u.user or "postgres",
    u.password or "", u.host, u.port or 5432)
  if not conn then error(("cannot reach PostgreSQL at %s:%d: %s"):format(u.host, u.port or 5432, err), 0) end
  conn:autocommit(false)
  self.pg, self.statements = conn, {}
end

-- close the PostgreSQL connection, its prepared statements first: lua-dbi
-- 0.7's statement keeps the connection's libpq handle, and one collected
-- after its connection was closed uses the freed handle (a segfault in
-- PQexec, whenever the collector gets to it)
local function pg_close(self)
  for _, st in pairs(self.statements or {}) do pcall(st.close, st) end
  if self.pg then pcall(self.pg.close, self.pg) end
  self.pg, self.statements = nil, {}
end

-- run one statement; the statement (rows are read with st:rows(true))
local function q(self, sql, ...)
  local st = self.statements[sql]
  if not st then
    local err
    st, err = self.pg:prepare(sql)
    if not st then error(err, 0) end
    self.statements[sql] = st
  end
  self.pending = true  -- (a transaction to commit)
  local ok, err = st:execute(...)
  if not ok then error(err, 0) end
  return st
end

local function first(self, sql, ...)
  return q(self, sql, ...):fetch(true)
end

-- add the uploads (sign: 1, or -1 to take them away) of a file to the
-- groups of each of its leaks: their dumps, versions and devices; `only`
-- (an upload's id): that upload alone, else all the file's
local function count(self, sha256, sign, only)
  local uploads = only and "u.id = ?::bigint" or "u.sha256 = ?"
  q(self, ([[INSERT INTO leak_groups (signature, dumps) SELECT l.signature, ?::bigint * count(*)
    FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE l.sha256 = ? AND %s GROUP BY l.signature
    ON CONFLICT (signature) DO UPDATE SET dumps = leak_groups.dumps + EXCLUDED.dumps]]):format(uploads), sign, sha256,
    only or sha256)
  for _, field in ipairs { "version", "device" } do
    q(self, ([[INSERT INTO group_values (signature, field, value, n) SELECT l.signature, '%s', u.%s, ?::bigint * count(*)
      FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 WHERE l.sha256 = ? AND %s AND u.%s IS NOT NULL
      GROUP BY l.signature, u.%s ON CONFLICT (signature, field, value) DO UPDATE SET n = group_values.n + EXCLUDED.n]])
      :format(field, field, uploads, field, field), sign, sha256, only or sha256)
  end
end

-- One upload more of a file analysed already, in each group of its leaks
-- (after FILE_UPLOADS and count): the sums move on by its leaks, the
-- first and last times by the file's. Its id is greater than every other
-- upload's: the group's first upload, and so its trace, stay.
local ONE_MORE = [[UPDATE leak_groups SET (damaged_dumps, retained_total, first_seen, last_seen) = (SELECT
  leak_groups.damaged_dumps + sum(CASE WHEN l.damaged THEN 1 ELSE 0 END), leak_groups.retained_total + sum(coalesce(l.retained, 0)),
  least(coalesce(leak_groups.first_seen, min(l.first_at)), min(l.first_at)),
  greatest(coalesce(leak_groups.last_seen, max(l.last_at)), max(l.last_at))
  FROM leaks l WHERE l.sha256 = ? AND l.signature = leak_groups.signature)
  WHERE signature IN (SELECT signature FROM leaks WHERE sha256 = ?)]]

-- the summaries of these groups (a list of signatures) made again
local function resummarize(self, signatures)
  if #signatures == 0 then return end
  local list = json.encode(json.array(signatures))
  for _, sql in ipairs(SUMMARIZE) do q(self, sql, list) end
end

-- the signatures of a file's leaks
local function signatures_of(self, sha256)
  local out = {}
  for row in q(self, "SELECT DISTINCT signature FROM leaks WHERE sha256 = ?", sha256):rows(true) do
    out[#out + 1] = row.signature
  end
  return out
end

-- a file's leaks say how many uploads it has, its first and its last
local FILE_UPLOADS = [[UPDATE leaks SET (uploads, first_id, first_at, last_at) = (SELECT count(*), min(id),
  min(received_at), max(received_at) FROM uploads u WHERE u.sha256 = leaks.sha256) WHERE sha256 = ?]]

-- run fn as one PostgreSQL transaction (and its Redis commands); when an
-- engine went away, reconnect and run it again, for self.retry seconds
local function engines(self, fn)
  local deadline, wait = now() + self.retry, 0.1
  while true do
    local ok, a, b = pcall(function()
      if not self.pg then pg_connect(self) end
      if not self.redis then redis_connect(self) end
      local x, y = fn()
      if self.pending then
        local done, err = self.pg:commit()
        if not done then error(err or "commit failed", 0) end
        self.pending = false
      end
      return x, y
    end)
    if ok then return a, b end
    if self.pg then pcall(self.pg.rollback, self.pg) end
    self.pending = false
    -- a real error (the engines answer): say it; else they went away
    local pg_up = self.pg and self.pg:ping()
    local redis_up = self.redis and pcall(self.redis.ping, self.redis)
    if pg_up and redis_up then error(a, 0) end
    if now() > deadline then error(("gave up after %g s: %s"):format(self.retry, tostring(a)), 0) end
    if self.log then self.log(("engine away (%s): retrying in %g s"):format(tostring(a):gsub("%s+$", ""), wait)) end
    if not pg_up and self.pg then pg_close(self) end
    if not redis_up then self.redis = nil end
    cqueues.sleep(wait)
    wait = math.min(wait * 2, 2)
  end
end

--- Connect to the engines. opts: `redis`, `postgres` (URLs), `retry`
-- (seconds, 300), `log`; the schema must be at this sift's version
-- (`migrate`), except for `migrate` itself (opts.migrating).
function M.open(opts, max_attempts)
  local redis_url, err = M.parse_url(opts.redis)
  if not redis_url then return nil, "--redis: " .. err, "usage" end
  local pg_url
  pg_url, err = M.parse_url(opts.postgres)
  if not pg_url then return nil, "--postgres: " .. err, "usage" end
  local self = setmetatable({ redis_url = redis_url, pg_url = pg_url, retry = opts.retry or 300, log = opts.log,
    max_attempts = max_attempts }, Queue)
  local ok, why = pcall(function()
    pg_connect(self)
    redis_connect(self)
  end)
  if not ok then return nil, why, "engine" end
  if not opts.migrating then
    local version = self:schema_version()
    if version ~= #M.MIGRATIONS then
      self:close()
      return nil, ("the PostgreSQL schema is at version %d, this sift needs %d: run sift fleet migrate"):format(
        version, #M.MIGRATIONS), "schema"
    end
  end
  return self
end

function Queue:close()
  pg_close(self)
  if self.redis then pcall(self.redis.quit, self.redis) end
  self.redis = nil
end

function Queue:schema_version()
  return engines(self, function()
    local row = first(self, "SELECT to_regclass('sift_schema') IS NOT NULL AS present")
    if not row.present then return 0 end
    return first(self, "SELECT version FROM sift_schema").version
  end)
end

--- Bring the schema to this sift's version (one transaction, under an
-- advisory lock: two migrations at once wait for each other). Returns the
-- number of migrations applied.
function Queue:migrate()
  return engines(self, function()
    q(self, "SELECT pg_advisory_xact_lock(7415)")  -- (any constant: sift's lock)
    if not first(self, "SELECT to_regclass('sift_schema') IS NOT NULL AS present").present then
      q(self, "CREATE TABLE sift_schema (version integer NOT NULL)")
      q(self, "INSERT INTO sift_schema VALUES (0)")
    end
    local from = first(self, "SELECT version FROM sift_schema").version
    for i = from + 1, #M.MIGRATIONS do
      for statement in M.MIGRATIONS[i]:gmatch("[^;]+") do
        if statement:find("%S") then q(self, statement) end
      end
    end
    q(self, "UPDATE sift_schema SET version = ?", #M.MIGRATIONS)
    return #M.MIGRATIONS - from
  end)
end

local function random_key()
  local f = io.open("/dev/urandom", "rb")
  local bytes = f:read(16)
  f:close()
  return (bytes:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

-- (one key per upload: an ingest tried again after a lost connection is
-- not counted twice)
function Queue:ingest(sha256, path, format, meta)
  local key = random_key()
  return engines(self, function()
    local new = first(self, [[INSERT INTO files (sha256, path, format) VALUES (?, ?, ?)
      ON CONFLICT (sha256) DO NOTHING RETURNING sha256]], sha256, path, format)
    -- (the file's row held while its leaks are counted: a worker finishing
    -- it waits, or is waited for, so this upload is counted once)
    q(self, "SELECT sha256 FROM files WHERE sha256 = ? FOR SHARE", sha256)
    local row = first(self, [[INSERT INTO uploads (key, sha256, app, version, device, os, time, tags)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key
      RETURNING id::text AS id, (xmax = 0)::int AS inserted]],
      key, sha256, meta.app, meta.version, meta.device, meta.os, meta.time, meta.tags)
    -- (its leaks, if analysed: one dump more each; not again for an upload retried after its commit)
    if not new and row.inserted == 1 then
      q(self, FILE_UPLOADS, sha256)
      count(self, sha256, 1, row.id)
      q(self, ONE_MORE, sha256, sha256)
      q(self, SUMMARIZE[3], json.encode(json.array(signatures_of(self, sha256))))
    end
    -- queued before the commit: were the commit lost, a worker finds no
    -- file for the entry and drops it
    if new then self.redis:xadd(STREAM, "*", "sha256", sha256, "path", path, "format", format) end
    return tonumber(row.id), new == nil
  end)
end

local function entry_job(entry)
  local job = { id = entry[1] }
  local fields = entry[2] or {}
  for i = 1, #fields, 2 do job[fields[i]] = fields[i + 1] end
  return job
end

-- the next entry for worker: one a dead worker left (idle past the lease;
-- looked for at most once a second, and whenever no new entry is there),
-- else a new one, waiting up to `wait` seconds
local function next_entry(self, worker, lease, wait)
  local function reclaim()
    self.reclaimed_at = os.time()
    local claimed = self.redis:xautoclaim(STREAM, GROUP, worker, math.floor(lease * 1000), "0-0", "COUNT", 1)
    return claimed and claimed[2] and claimed[2][1]
  end
  local entry = os.time() ~= self.reclaimed_at and reclaim()
  if entry then return entry end
  local got = self.redis:xreadgroup("GROUP", GROUP, worker, "COUNT", 1, "BLOCK", math.max(1, math.floor(wait * 1000)),
    "STREAMS", STREAM, ">")
  return got and got[1] and got[1][2] and got[1][2][1] or reclaim()
end

function Queue:claim(worker, lease, wait)
  while true do
    -- (the entry first, then the file: were PostgreSQL away, the entry
    -- taken stays this worker's while it retries)
    local entry = engines(self, function() return next_entry(self, worker, lease, wait or 0.2) or false end)
    if not entry then return nil end
    local job = entry_job(entry)
    local read_at, pause, taken = now(), 0.02, "absent"
    while taken == "absent" do
      taken = job.sha256 and engines(self, function()
        local row = first(self, [[UPDATE files SET state = 'running', worker = ?, attempts = attempts + 1
          WHERE sha256 = ? AND state IN ('queued', 'running') RETURNING attempts]], worker, job.sha256)
        if row and row.attempts > self.max_attempts then
          q(self, "UPDATE files SET state = 'failed', error = ? WHERE sha256 = ?",
            ("abandoned after %d attempts"):format(row.attempts - 1), job.sha256)
          return false
        end
        if row then return true end
        local file = first(self, "SELECT state FROM files WHERE sha256 = ?", job.sha256)
        if file and (file.state == "done" or file.state == "failed") then return false end
        return "absent"  -- (or committed since the UPDATE looked: each statement sees the commits before it)
      end)
      -- no file: the entry is added before the upload's transaction commits,
      -- so a worker waiting on the stream may read it first; wait for the
      -- commit, up to COMMIT_WAIT seconds (then the upload never committed)
      if taken == "absent" then
        if now() - read_at > M.COMMIT_WAIT then taken = false
        else
          cqueues.sleep(pause)
          pause = math.min(pause * 2, 0.5)
        end
      end
    end
    if taken then return job end
    -- done, failed, or its upload never committed: nothing to do
    engines(self, function() self.redis:xack(STREAM, GROUP, job.id) end)
  end
end

function Queue:finish(worker, job, results)
  local written = engines(self, function()
    local row = first(self, "SELECT worker, state FROM files WHERE sha256 = ? FOR UPDATE", job.sha256)
    if not row or row.worker ~= worker then return false end
    if row.state == "done" then return true end  -- (our commit went through; its answer was lost)
    if row.state ~= "running" then return false end
    local warnings = results.warnings and #results.warnings > 0 and json.encode(json.array(results.warnings)) or nil
    count(self, job.sha256, -1)  -- (results written before, were there any: no longer)
    local touched = signatures_of(self, job.sha256)
    q(self, "DELETE FROM leaks WHERE sha256 = ?", job.sha256)
    for _, l in ipairs(results.leaks) do
      touched[#touched + 1] = l.signature
      q(self, [[INSERT INTO leaks (sha256, signature, kind, description, retained, trace, damaged, nameless)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)]], job.sha256, l.signature, l.kind, l.description, l.retained, l.trace,
        warnings ~= nil, results.nameless)
    end
    q(self, FILE_UPLOADS, job.sha256)
    count(self, job.sha256, 1)
    resummarize(self, touched)
    q(self, [[UPDATE files SET state = 'done', error = NULL, warnings = ?, summary = ?, nameless = ?,
      analysed_at = now() WHERE sha256 = ?]], warnings, json.encode(results.summary), results.nameless, job.sha256)
    return true
  end)
  -- acknowledged once committed; were this lost, the entry comes back and
  -- is dropped as done
  if written then engines(self, function() self.redis:xack(STREAM, GROUP, job.id) end) end
  return written
end

function Queue:fail(worker, job, message)
  engines(self, function()
    q(self, "UPDATE files SET state = 'failed', error = ? WHERE sha256 = ? AND worker = ?", message, job.sha256, worker)
  end)
  engines(self, function() self.redis:xack(STREAM, GROUP, job.id) end)
end

function Queue:status()
  return engines(self, function()
    local out = { queued = 0, running = 0, done = 0, done_with_warnings = 0, failed = 0 }
    for row in q(self, "SELECT state, count(*)::text AS n FROM files GROUP BY state"):rows(true) do
      out[row.state] = tonumber(row.n)
    end
    out.done_with_warnings = tonumber(first(self,
      "SELECT count(*)::text AS n FROM files WHERE state = 'done' AND warnings IS NOT NULL").n)
    out.uploads = tonumber(first(self, "SELECT count(*)::text AS n FROM uploads").n)
    return out
  end)
end

local function all(self, sql, convert)
  return (engines(self, function()
    local out = json.array {}
    for row in q(self, sql):rows(true) do
      out[#out + 1] = convert and convert(row) or row
    end
    return out
  end))
end

function Queue:failures()
  return all(self, "SELECT sha256, error FROM files WHERE state = 'failed' ORDER BY queued_at, sha256")
end

function Queue:warned()
  return all(self, [[SELECT sha256, warnings FROM files WHERE state = 'done' AND warnings IS NOT NULL
      ORDER BY queued_at, sha256]], function(row)
    row.warnings = json.array(decode(row.warnings))
    return row
  end)
end

function Queue:jobs()
  return all(self, "SELECT sha256, state, attempts, worker FROM files ORDER BY queued_at, sha256")
end

function Queue:leak_rows()
  return all(self, [[SELECT l.signature, l.kind, l.description, l.retained::text AS retained, l.trace, l.sha256,
      l.damaged::int AS damaged, u.version, u.device,
      to_char(u.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS received_at
      FROM leaks l JOIN uploads u ON u.sha256 = l.sha256 ORDER BY l.signature, u.id]], function(row)
    row.retained = math.tointeger(tonumber(row.retained))
    row.damaged = row.damaged == 1
    return row
  end)
end

--- The leak groups, one page of them: the groups whose signature is not
-- in `hidden` (a JSON array), most dumps first (then by signature),
-- `limit` of them (nil: all) after the first `offset`, as `{signature,
-- dumps}`; and how many groups there are in all.
function Queue:group_page(hidden, limit, offset)
  return engines(self, function()
    local out = json.array {}
    for row in q(self, [[SELECT signature, dumps::text AS n FROM leak_groups
        WHERE dumps > 0 AND signature NOT IN (SELECT json_array_elements_text(?::json))
        ORDER BY dumps DESC, signature COLLATE "C" LIMIT ?::bigint OFFSET ?::bigint]], hidden, limit, offset or 0)
        :rows(true) do
      out[#out + 1] = { signature = row.signature, dumps = math.tointeger(tonumber(row.n)) }
    end
    local total = first(self, [[SELECT count(*)::text AS n FROM leak_groups
      WHERE dumps > 0 AND signature NOT IN (SELECT json_array_elements_text(?::json))]], hidden).n
    return out, math.tointeger(tonumber(total))
  end)
end

--- Count the groups' dumps again from the leaks and uploads (the
-- migration that made leak_groups does; so can a repair).
function Queue:recount()
  engines(self, function()
    q(self, "LOCK TABLE leak_groups")
    for statement in (M.MIGRATIONS[3]:match("UPDATE leaks SET %(uploads.*$") .. SUMMARIZE_ALL):gmatch("[^;]+") do
      if statement:find("%S") then q(self, statement) end
    end
  end)
end

--- The versions the uploads of each group marked fixed came from:
-- `{signature = {version, ...}}` (whether they reopened it is sift's
-- comparison of versions, sift.fleet.version_after).
function Queue:fixed_versions()
  local out = {}
  -- (a search of group_values' key for each fixed group, not a scan of it)
  for _, row in ipairs(all(self, [[SELECT signature, value AS version FROM group_values
      WHERE signature IN (SELECT signature FROM fixes) AND field = 'version' AND n > 0]])) do
    out[row.signature] = out[row.signature] or {}
    table.insert(out[row.signature], row.version)
  end
  return out
end

local function integer(text) return math.tointeger(tonumber(text)) end

--- What sift.fleet's groups say of the groups named in `signatures` (a
-- JSON array): `{signature = {dumps, damaged_dumps, retained_total,
-- retained_median, first_seen, last_seen, kind, description, trace (of
-- its first upload), files, versions, devices (sorted, distinct)}}`. Read
-- from their leak_groups rows (the summaries kept), the files from their
-- leaks' index and the versions and devices from group_values.
function Queue:group_details(signatures)
  return engines(self, function()
    local out = {}
    for row in q(self, [[SELECT signature, dumps::text AS dumps, damaged_dumps::text AS damaged_dumps,
        retained_total::text AS retained_total, retained_median::text AS retained_median,
        to_char(first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS first_seen,
        to_char(last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_seen, kind, description, trace
        FROM leak_groups WHERE signature = ANY (ARRAY(SELECT json_array_elements_text(?::json))) AND dumps > 0]], signatures)
        :rows(true) do
      out[row.signature] = { signature = row.signature, dumps = integer(row.dumps),
        damaged_dumps = integer(row.damaged_dumps), retained_total = integer(row.retained_total),
        retained_median = integer(row.retained_median), first_seen = row.first_seen, last_seen = row.last_seen,
        kind = row.kind, description = row.description, trace = row.trace,
        files = json.array {}, versions = json.array {}, devices = json.array {} }
    end
    -- (a row per group and list, its values a JSON array: a row fetched
    -- costs more than the decoding of its part of an array; the groups an
    -- array, `= ANY`, searched in each index: as a set, `IN`, the planner
    -- may hash them and scan all of group_values)
    for row in q(self, [[SELECT signature, json_agg(DISTINCT sha256 COLLATE "C" ORDER BY sha256 COLLATE "C")::text
        AS files FROM leaks WHERE signature = ANY (ARRAY(SELECT json_array_elements_text(?::json))) AND uploads > 0
        GROUP BY signature]], signatures):rows(true) do
      local g = out[row.signature]
      if g then g.files = json.array(decode(row.files)) end
    end
    for row in q(self, [[SELECT signature, field, json_agg(value ORDER BY value COLLATE "C")::text AS list
        FROM group_values WHERE signature = ANY (ARRAY(SELECT json_array_elements_text(?::json))) AND n > 0
        GROUP BY signature, field]], signatures):rows(true) do
      local g = out[row.signature]
      if g then g[row.field .. "s"] = json.array(decode(row.list)) end
    end
    return out
  end)
end

-- every row of a query with parameters
local function rows(self, sql, ...)
  local args = table.pack(...)
  return (engines(self, function()
    local out = json.array {}
    for row in q(self, sql, table.unpack(args, 1, args.n)):rows(true) do out[#out + 1] = row end
    return out
  end))
end

--- Record a symbol file once (as sift.fleet.sqlite's); the files queued
-- again are added to the stream (after the commit would be too late for
-- an entry lost with the connection: before it, as ingest does, and a
-- worker that reads one first waits for the commit).
function Queue:add_symbols(s)
  return engines(self, function()
    local new = first(self, [[INSERT INTO symbols (app, version, platform, kind, sha256, path, name)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING sha256]],
      s.app or "", s.version or "", s.platform or "", s.kind, s.sha256, s.path, s.name)
    if not new then return false, 0 end
    local again
    if s.platform then
      again = q(self, [[UPDATE files SET state = 'queued', attempts = 0, worker = NULL
        WHERE state = 'done' AND format = 'bmd' RETURNING sha256, path, format]])
    else
      again = q(self, [[UPDATE files SET state = 'queued', attempts = 0, worker = NULL
        WHERE state = 'done' AND sha256 IN (SELECT sha256 FROM uploads WHERE app = ? AND version = ?)
        RETURNING sha256, path, format]], s.app, s.version)
    end
    local n = 0
    for row in again:rows(true) do
      n = n + 1
      self.redis:xadd(STREAM, "*", "sha256", row.sha256, "path", row.path, "format", row.format)
    end
    return true, n
  end)
end

function Queue:symbols()
  return rows(self, [[SELECT app, version, platform, kind, sha256, path, name,
    to_char(added_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS added_at FROM symbols
    ORDER BY app COLLATE "C", version COLLATE "C", platform COLLATE "C", kind, name COLLATE "C", sha256]])
end

-- (one transaction: a worker asks before each job)
function Queue:symbols_for(sha256)
  local out = engines(self, function()
    local lists = {}
    for i, query in ipairs {
      { [[SELECT s.app, s.version, s.platform, s.kind, s.path FROM symbols s
        WHERE s.platform = '' AND EXISTS (SELECT 1 FROM uploads u WHERE u.sha256 = ? AND u.app = s.app
        AND u.version = s.version) ORDER BY s.added_at, s.sha256]], sha256 },
      { [[SELECT app, version, platform, kind, path FROM symbols WHERE platform <> ''
        ORDER BY platform, added_at, sha256]] },
      { [[SELECT app, version FROM uploads WHERE sha256 = ? GROUP BY app, version ORDER BY min(id)]], sha256 },
    } do
      lists[i] = json.array {}
      for row in q(self, table.unpack(query)):rows(true) do lists[i][#lists[i] + 1] = row end
    end
    return lists
  end)
  return out[1], out[2], out[3]
end


function Queue:nameless()
  local out = rows(self, [[SELECT nameless, count(*)::text AS files FROM files WHERE nameless IS NOT NULL
    GROUP BY nameless ORDER BY nameless COLLATE "C"]])
  for _, row in ipairs(out) do row.files = integer(row.files) end
  return out
end

function Queue:group_nameless(signatures)
  local out = {}
  for _, row in ipairs(rows(self, [[SELECT DISTINCT signature, nameless FROM leaks
      WHERE nameless IS NOT NULL AND signature = ANY (ARRAY(SELECT json_array_elements_text(?::json)))
      AND uploads > 0 ORDER BY signature, nameless]], signatures)) do
    out[row.signature] = out[row.signature] or {}
    table.insert(out[row.signature], row.nameless)
  end
  return out
end

function Queue:fixes()
  local out = {}
  for _, row in ipairs(all(self, "SELECT signature, version FROM fixes")) do out[row.signature] = row.version end
  return out
end

function Queue:mark_fixed(signature, version)
  engines(self, function()
    q(self, "INSERT INTO fixes (signature, version) VALUES (?, ?) ON CONFLICT (signature) DO UPDATE SET version = ?",
      signature, version, version)
  end)
end

return M
