-- The fleet's leak groups as sift aggregated them in Lua before the
-- backends did it in SQL (sift.fleet's Fleet:groups up to then): kept
-- here as the oracle the SQL groups are checked against
-- (spec/fleet_groups_spec.lua) and timed beside (bench/fleet.lua). Also a
-- generator of fleet rows (files, uploads, leaks) and loaders that put the
-- same rows into either backend.
local json = require "sift.json"
local version_after = require("sift.fleet").version_after

local M = {}

local function median(list)
  table.sort(list)
  local n = #list
  if n == 0 then return nil end
  if n % 2 == 1 then return list[(n + 1) // 2] end
  return (list[n // 2] + list[n // 2 + 1]) // 2
end

--- The groups of leak rows (`{signature, kind, description, retained,
-- trace, sha256, damaged, version, device, received_at}`, one per leak of
-- an upload's file, ordered by signature then upload id) and fixes
-- (`{signature = version}`); opts.all: the fixed ones too.
function M.groups(rows, fixes, opts)
  opts = opts or {}
  local groups, by_sig = json.array {}, {}
  for _, row in ipairs(rows) do
    local g = by_sig[row.signature]
    if not g then
      g = { signature = row.signature, kind = row.kind, description = row.description, dumps = 0, damaged_dumps = 0,
        files = {},
        first_seen = row.received_at, last_seen = row.received_at, versions = {}, devices = {},
        retained_total = 0, retained = {}, trace = row.trace }
      by_sig[row.signature] = g
      groups[#groups + 1] = g
    end
    g.dumps = g.dumps + 1
    if row.damaged then g.damaged_dumps = g.damaged_dumps + 1 end
    g.retained_total = g.retained_total + (row.retained or 0)
    g.retained[#g.retained + 1] = row.retained or 0
    if not g.files[row.sha256] then g.files[row.sha256] = true end
    if row.received_at < g.first_seen then g.first_seen = row.received_at end
    if row.received_at > g.last_seen then g.last_seen = row.received_at end
    if row.version then g.versions[row.version] = true end
    if row.device then g.devices[row.device] = true end
  end
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
        if version_after(v, g.fixed_in) then g.reopened = true end
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

local VERSIONS = { "1.2", "1.9", "1.10", "1.10.1", "2.0", "2.0-beta" }

--- Rows of a fleet, made up: `n` uploads (ids 1..n) of files with leaks
-- of `groups` signatures, a few groups holding many of them (the
-- signature of a file's leak is skewed towards the first ones); about 10 %
-- of the uploads send a file again, 15 % of the files have a second leak,
-- 2 % are damaged (analysed with warnings), 1 % of the leaks have no
-- retained size, 2 % of the uploads no version, no device. Deterministic
-- for a seed. Returns `{files = {{sha256, damaged}}, uploads = {{id,
-- sha256, version, device, received_at}}, leaks = {{sha256, signature,
-- kind, description, retained, trace, damaged}}, signatures = {...}}`.
function M.generate(n, groups, seed)
  collectgarbage("stop")  -- (nothing to collect while it makes them: 40 % faster)
  math.randomseed(seed or 36)
  local random = math.random
  local sigs = {}
  for k = 1, groups do sigs[k] = ("%08x%032x"):format((k * 2654435761) % 4294967296, k) end
  local function pick() return sigs[math.floor(groups * random() ^ 2) + 1] end
  local files, uploads, leaks = {}, {}, {}
  local base = 1767225600  -- 2026-01-01T00:00:00Z
  local date_of, date
  local devices = {}
  for k = 1, 500 do devices[k] = ("device-%d"):format(k) end
  for id = 1, n do
    local file
    if #files > 0 and random() < 0.1 then
      file = files[random(#files)]
    else
      file = { sha256 = ("%064x"):format(#files + 1), damaged = random() < 0.02 }
      files[#files + 1] = file
      local first = pick()
      local these = { first }
      if random() < 0.15 then
        local second = pick()
        if second ~= first then these[2] = second end
      end
      for _, sig in ipairs(these) do
        local k = tonumber(sig:sub(9), 16)
        leaks[#leaks + 1] = { sha256 = file.sha256, signature = sig, kind = k % 3 == 0 and "library" or "application",
          description = ("com.example.Leak%d instance"):format(k),
          retained = random() >= 0.01 and random(1000, 1000000) or nil,
          trace = ("GC Root: System class\n├─ com.example.Leak%d [LEAKING]\n│    ↓ file %d"):format(k, #files),
          damaged = file.damaged }
      end
    end
    local t = base + id * 3 + random(0, 600)  -- (received out of order, a little)
    local day, s = t // 86400, t % 86400
    if day ~= date_of then date_of, date = day, os.date("!%Y-%m-%dT", t) end
    uploads[id] = { id = id, sha256 = file.sha256,
      version = random() >= 0.02 and VERSIONS[random(#VERSIONS)] or nil,
      device = random() >= 0.02 and devices[random(500)] or nil,
      received_at = ("%s%02d:%02d:%02d.%03dZ"):format(date, s // 3600, s // 60 % 60, s % 60, random(0, 999)) }
  end
  collectgarbage("restart")
  return { files = files, uploads = uploads, leaks = leaks, signatures = sigs }
end

--- The leak rows of generated data, as the backends' leak_rows give them
-- (M.groups' input): each leak of each upload's file, by signature then upload id.
function M.rows(data)
  local by_sha = {}
  for _, l in ipairs(data.leaks) do
    by_sha[l.sha256] = by_sha[l.sha256] or {}
    table.insert(by_sha[l.sha256], l)
  end
  local rows = {}
  for _, u in ipairs(data.uploads) do
    for _, l in ipairs(by_sha[u.sha256] or {}) do
      rows[#rows + 1] = { signature = l.signature, kind = l.kind, description = l.description, retained = l.retained,
        trace = l.trace, sha256 = l.sha256, damaged = l.damaged, version = u.version, device = u.device,
        received_at = u.received_at, id = u.id }
    end
  end
  table.sort(rows, function(a, b)
    if a.signature ~= b.signature then return a.signature < b.signature end
    return a.id < b.id
  end)
  return rows
end

--- Put generated data into the embedded backend's database (the queue of
-- an open fleet), in one transaction; then `queue:recount()` counts its
-- groups (as for PostgreSQL).
function M.load_sqlite(queue, data)
  local db = queue.db
  db:exec("PRAGMA cache_size = -262144")  -- (256 MB while it loads: the indexes grow out of order)
  db:exec("BEGIN IMMEDIATE")
  for _, f in ipairs(data.files) do
    db:run([[INSERT INTO files (sha256, path, format, state, worker, attempts, warnings)
      VALUES (?, ?, 'hprof', 'done', 'gen:1', 1, ?)]], f.sha256, "/gen/" .. f.sha256 .. ".hprof",
      f.damaged and '["damaged"]' or nil)
  end
  for _, u in ipairs(data.uploads) do
    db:run([[INSERT INTO uploads (id, sha256, app, version, device, received_at) VALUES (?, ?, 'gen', ?, ?, ?)]],
      u.id, u.sha256, u.version, u.device, u.received_at)
  end
  for _, l in ipairs(data.leaks) do
    db:run([[INSERT INTO leaks (sha256, signature, kind, description, retained, trace, damaged)
      VALUES (?, ?, ?, ?, ?, ?, ?)]], l.sha256, l.signature, l.kind, l.description, l.retained, l.trace,
      l.damaged and 1 or 0)
  end
  db:exec("COMMIT")
  db:exec("PRAGMA cache_size = -2000")  -- (SQLite's default again)
end

-- a CSV field: empty (NULL) for nil, quoted otherwise
local function csv(v)
  if v == nil then return "" end
  return '"' .. tostring(v):gsub('"', '""') .. '"'
end

--- Put generated data into PostgreSQL (a migrated database of
-- spec/engines.lua's `e`, at url): CSV files written in dir, copied in by
-- psql (\copy) in one transaction.
function M.load_postgres(e, url, data, dir)
  local function write(name, list, fields)
    local path = ("%s/%s.csv"):format(dir, name)
    local f = assert(io.open(path, "w"))
    local buf = {}
    for i, row in ipairs(list) do
      local line = {}
      for j, field in ipairs(fields) do line[j] = csv(field(row)) end
      buf[#buf + 1] = table.concat(line, ",")
      if i % 10000 == 0 then
        f:write(table.concat(buf, "\n"), "\n")
        buf = {}
      end
    end
    if #buf > 0 then f:write(table.concat(buf, "\n"), "\n") end
    f:close()
    return path
  end
  local files = write("files", data.files, {
    function(r) return r.sha256 end, function(r) return "/gen/" .. r.sha256 .. ".hprof" end,
    function() return "hprof" end, function() return "done" end, function() return "gen:1" end,
    function() return 1 end, function(r) return r.damaged and '["damaged"]' or nil end })
  local uploads = write("uploads", data.uploads, {
    function(r) return r.id end, function(r) return "k" .. r.id end, function(r) return r.sha256 end,
    function() return "gen" end, function(r) return r.version end, function(r) return r.device end,
    function(r) return r.received_at end })
  local leaks = write("leaks", data.leaks, {
    function(r) return r.sha256 end, function(r) return r.signature end, function(r) return r.kind end,
    function(r) return r.description end, function(r) return r.retained end, function(r) return r.trace end,
    function(r) return r.damaged and "t" or "f" end })
  local helper = require "spec.helper"
  local copies = {
    ("\\copy files (sha256, path, format, state, worker, attempts, warnings) FROM '%s' WITH (FORMAT csv)"):format(files),
    ("\\copy uploads (id, key, sha256, app, version, device, received_at) FROM '%s' WITH (FORMAT csv)"):format(uploads),
    ("\\copy leaks (sha256, signature, kind, description, retained, trace, damaged) FROM '%s' WITH (FORMAT csv)")
      :format(leaks),
  }
  local cmd = { ("/usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -p %d -U sift -d %s -v ON_ERROR_STOP=1 -q -1"):format(
    e.pg_port, url:match("/([^/]*)$")) }
  for _, c in ipairs(copies) do cmd[#cmd + 1] = "-c " .. helper.quote(c) end
  local ok, out = helper.sh(table.concat(cmd, " "))
  assert(ok, out)
  e.psql(url, "SELECT setval('uploads_id_seq', (SELECT max(id) FROM uploads))")  -- (ids given here)
  e.psql(url, "ANALYZE")
  os.remove(files)
  os.remove(uploads)
  os.remove(leaks)
end

return M
