--- Fleet mode: dumps and traces from many devices, analysed by workers and
-- grouped by leak signature (LeakCanary's: the same leak from many dumps is
-- one group). Two backends keep the queue and results: the embedded
-- default, a SQLite file in the data directory that the workers of one
-- machine share (`sift.fleet.sqlite`), and, for a fleet, a Redis Stream of
-- jobs with results in PostgreSQL that workers on any number of machines
-- share (`sift.fleet.engines`). Both give the same answers.
--
--     local fleet = require "sift.fleet"
--     local f = assert(fleet.open("/var/lib/sift"))   -- or open(dir, {redis = URL, postgres = URL})
--     for _, g in ipairs(f:groups()) do print(g.dumps, g.signature, g.description) end
-- @module sift.fleet

local cqueues = require "cqueues"  -- (its sleep: blocks here, yields inside a cqueues loop)
local core = require "sift.core"
local json = require "sift.json"
local root_description = require("sift.heap.fields").root_description

local M = {}

--- A job tried this many times (its workers died) is failed.
M.MAX_ATTEMPTS = 3

local Fleet = {}
Fleet.__index = Fleet
Fleet.__close = function(self) self:close() end  -- local f <close> = fleet.open(dir)

--- Open a fleet: with `opts.redis` and `opts.postgres` (URLs) the
-- engines' backend (its schema made first by `migrate`), else the SQLite
-- file in dir (created). opts: `retry` (seconds an engine may be away
-- before an operation fails, 300), `log` (a function of a line: retries).
function M.open(dir, opts)
  opts = opts or {}
  local queue, err, code
  if opts.redis or opts.postgres then
    if not (opts.redis and opts.postgres) then return nil, "the engines need both --redis and --postgres", "usage" end
    queue, err, code = require("sift.fleet.engines").open(opts, M.MAX_ATTEMPTS)
  else
    queue, err, code = require("sift.fleet.sqlite").open(dir, M.MAX_ATTEMPTS)
  end
  if not queue then return nil, err, code end
  return setmetatable({ queue = queue, dir = dir }, Fleet)
end

--- The backend's operations, the same for both:
-- `ingest(sha256, path, format, meta)` records an upload of a stored file
-- (see sift.serve.store) with its metadata (`app`, `version`, `device`,
-- `os`, `time`, `tags`) and queues a file seen for the first time; it
-- returns the upload's id and whether the file was known.
-- `claim(worker, lease_seconds)` takes a job (`{sha256, path, format}`): a
-- queued file, or one whose worker held it past its lease (killed
-- mid-job); one tried MAX_ATTEMPTS times is failed instead.
-- `finish(worker, job, results)` writes a job's results (from M.analyze)
-- if the job is still this worker's, and says whether it did: a file
-- analysed with warnings (cut, damaged records) is done with them, and its
-- leaks are `damaged`.
-- `fail(worker, job, message)` records a bad file: never retried.
-- `status()` counts files by state (`queued`, `running`, `done`, `failed`;
-- `done_with_warnings`, a part of `done`) and `uploads`; `failures()` lists
-- the failed files `{sha256, error}`; `warned()` the files done with
-- warnings `{sha256, warnings}`; `jobs()` every file's state, attempts and
-- worker; `mark_fixed(signature, version)`; `migrate()` makes or updates the
-- schema (the engines'; the SQLite file's is made on open); `close()`.
-- `symbols()` lists the symbol files recorded (see Fleet:add_symbols).
for _, name in ipairs { "ingest", "claim", "finish", "fail", "failures", "warned", "jobs", "mark_fixed",
    "migrate", "close", "symbols" } do
  Fleet[name] = function(self, ...) return self.queue[name](self.queue, ...) end
end

--- The queue's counts (see above), and `no_symbols`: the files analysed
-- without symbols, per message (`[{nameless = "no symbols for APP
-- VERSION", files = N}]`).
function Fleet:status()
  local st = self.queue:status()
  st.no_symbols = self.queue:nameless()
  return st
end

-- an app, version or platform as given: some printable text, not too long
local function label(what, v)
  if type(v) ~= "string" or v == "" then return nil, what .. " is missing" end
  if #v > 200 or v:find("[%c]") then return nil, what .. " must be printable text of at most 200 bytes" end
  return v
end

--- Add symbol files for an app version (`scope = {app, version}`) or a
-- platform (`scope = {platform}`: "jdk-17", "android-34"; its files name
-- what every BMD hashes: the platform's jars, dex). `files`: paths, or
-- `{path, name, move}` (move: rename it into the data directory, a
-- server's temporary upload). Each is sniffed (`sift.fleet.symbols`: apk,
-- jar, dex or class file, or an R8/ProGuard mapping; anything else is
-- refused, before any is stored), stored once by SHA-256 beside the dumps
-- and recorded; a new one queues again the files it may name (analysed
-- before it came). Returns `[{sha256, kind, what, name, new, requeued}]`,
-- or nil and why.
function Fleet:add_symbols(scope, files)
  local symbols = require "sift.fleet.symbols"
  local app, version, platform, why
  if scope.platform then
    if scope.app or scope.version then return nil, "symbols are for an app version or a platform, not both" end
    platform, why = label("the platform", scope.platform)
  else
    app, why = label("the app", scope.app)
    if app then version, why = label("the version", scope.version) end
  end
  if why then return nil, why end
  if #files == 0 then return nil, "no symbol files given" end
  local list = {}
  for i, f in ipairs(files) do
    list[i] = type(f) == "table" and f or { path = f }
    local kind, what = symbols.sniff(list[i].path, list[i].name)
    if not kind then return nil, what end
    if platform and kind == "mapping" then
      return nil, (list[i].name or list[i].path) .. ": a platform's symbols are its jars, apks or dex files "
        .. "(the names a BMD hashes), not a mapping"
    end
  end
  local out = json.array {}
  for i, f in ipairs(list) do
    local s, err = symbols.store(self.dir, f.path, { move = f.move, name = f.name })
    if not s then return nil, err end
    s.new, s.requeued = self.queue:add_symbols { app = app, version = version, platform = platform, kind = s.kind,
      sha256 = s.sha256, path = s.path, name = s.name }
    s.path = nil
    out[i] = s
  end
  return out
end

--- The leak groups, most dumps first (then by signature): `{signature,
-- kind, description, dumps (uploads, duplicates counted), damaged_dumps
-- (those of them whose file was analysed with warnings: cut, damaged
-- records), files, first_seen, last_seen, versions, devices,
-- retained_total, retained_median (bytes per upload: the middle one, or
-- the mean of the two middle ones rounded down), trace (its first
-- upload's), fixed_in, reopened}`. A group marked fixed in a version is
-- left out unless a dump from a later version has it (then it is
-- `reopened`), or opts.all. The backend aggregates them (SQL, on its
-- indexes) one page at a time: opts.limit groups (nil or 0: all) after the
-- first opts.offset (0). Returns the page (an array) and the number of
-- groups in all pages.
function Fleet:groups(opts)
  opts = opts or {}
  local fixes = self.queue:fixes()
  -- the groups marked fixed and not seen since in a later version: hidden
  local hidden = json.array {}
  if not opts.all and next(fixes) then
    local seen = self.queue:fixed_versions()
    for signature, version in pairs(fixes) do
      local reopened = false
      for _, v in ipairs(seen[signature] or {}) do
        if M.version_after(v, version) then reopened = true break end
      end
      if not reopened then hidden[#hidden + 1] = signature end
    end
    table.sort(hidden)
  end
  local limit = opts.limit and opts.limit > 0 and math.tointeger(opts.limit) or nil
  local page, total = self.queue:group_page(json.encode(hidden), limit, math.tointeger(opts.offset or 0) or 0)
  local names = json.array {}
  for i, g in ipairs(page) do names[i] = g.signature end
  local details = #names > 0 and self.queue:group_details(json.encode(names)) or {}
  local nameless = #names > 0 and self.queue:group_nameless(json.encode(names)) or {}
  local out = json.array {}
  for _, p in ipairs(page) do
    local d = details[p.signature]  -- (nil: a group counted and gone since, its file's results written again)
    if d then
      local g = { signature = p.signature, kind = d.kind, description = d.description, dumps = d.dumps,
        damaged_dumps = d.damaged_dumps, files = d.files, first_seen = d.first_seen, last_seen = d.last_seen,
        versions = d.versions, devices = d.devices, retained_total = d.retained_total,
        retained_median = d.retained_median, trace = d.trace, fixed_in = fixes[p.signature],
        no_symbols = nameless[p.signature] and json.array(nameless[p.signature]) }
      if g.fixed_in then
        for _, v in ipairs(g.versions) do
          if M.version_after(v, g.fixed_in) then g.reopened = true break end
        end
      end
      out[#out + 1] = g
    end
  end
  return out, total
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

--- {======================================================
-- The analysis: a pure function of the file
-- =======================================================

-- a leak trace (sift leaks --json's) as LeakCanary draws it, in text
local function trace_text(t)
  local lines = { "GC Root: " .. root_description(t.root) }
  for _, e in ipairs(t.elements or {}) do
    lines[#lines + 1] = ("├─ %s [%s]%s"):format(e.class or "?", e.status or "?", e.reason and (" " .. e.reason) or "")
    if e.ref then lines[#lines + 1] = "│    ↓ " .. e.ref end
  end
  return table.concat(lines, "\n")
end

--- How many folded stacks a trace's summary keeps (the heaviest), and
-- in how many bytes at most.
M.FOLDED_LINES, M.FOLDED_BYTES = 1000, 256 * 1024

--- Analyse a stored file: for a heap, its leaks (with signatures, kinds,
-- retained bytes and one trace each, drawn as text) and a histogram
-- summary (the 20 classes with the most shallow bytes); for a trace, its
-- 20 hottest methods and its folded stacks (cpu clock, the heaviest
-- FOLDED_LINES within FOLDED_BYTES). Returns results (with `warnings`:
-- what the lenient decoder said of a cut or damaged file, as `sift info`
-- does), or nil and why.
function M.analyze(path, format, opts)
  opts = opts or {}
  local sift = require "sift"
  -- (names recovered as sift leaks --strings and --mapping do: a BMD's
  -- hashes from the strings of jars, apks, dex; obfuscated names mapped back)
  local doc <close>, msg = sift.open(path, { mapping = opts.mapping,
    strings = format == "bmd" and opts.strings or nil })
  if not doc then return nil, msg end
  local results = { leaks = {}, summary = {}, warnings = json.array {} }
  local ok, err = pcall(function()
    local info = doc:info()
    for i, w in ipairs(info.warnings or {}) do results.warnings[i] = w end
    if format == "trace" then
      local top = json.array {}
      for i, r in ipairs(doc:profile { clock = "cpu" }) do
        if i > 20 then break end
        top[i] = { name = r.name, exclusive = r.exclusive, inclusive = r.inclusive, calls = r.calls }
      end
      -- the folded stacks (flamegraph.pl's input), the heaviest FOLDED_LINES of them
      local lines = {}
      for stack, weight in doc:fold { clock = "cpu" }:gmatch("([^\n]+) (%d+)\n") do
        lines[#lines + 1] = { stack, tonumber(weight) }
      end
      table.sort(lines, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
      local folded, bytes = {}, 0
      for i = 1, math.min(#lines, M.FOLDED_LINES) do
        folded[i] = lines[i][1] .. " " .. lines[i][2] .. "\n"
        bytes = bytes + #folded[i]
        if bytes > M.FOLDED_BYTES then folded[i] = nil break end
      end
      results.summary = { format = "trace", records = info.records, top = top, folded = table.concat(folded),
        stacks = #lines }
      return
    end
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
    local histogram = json.array {}
    for i, r in ipairs(doc:histogram()) do
      if i > 20 then break end
      histogram[i] = r
    end
    results.summary = { format = format, instances = info.instances, classes = info.classes,
      leaks = #results.leaks, histogram = histogram }
  end)
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

--- Where a worker finds a job's file: where the server stored it, or, with
-- `files`, in that directory (the same name: all workers mount the
-- server's data directory somewhere) or at that template's path, where
-- `{sha256}` and `{name}` (the stored file's name) are replaced.
function M.locate(job, files)
  if not files then return job.path end
  local name = job.path:match("[^/]*$")
  if files:find("{", 1, true) then
    return (files:gsub("{(%w+)}", { sha256 = job.sha256, name = name }))
  end
  return (files:gsub("/$", "")) .. "/" .. name
end

--- What a job's analysis recovers names with: `{strings = {paths},
-- mapping = path, nameless = "no symbols for APP VERSION" or nil}`. The
-- symbol files of the app versions its uploads name (the strings of all,
-- the newest mapping), and, for a BMD, every platform's files; `nameless`
-- when no app version of its uploads has symbols (a file's symbols are
-- found where the server stored them, or by `files` as the job's file).
function Fleet:names_for(job, files)
  local own, platform, releases = self.queue:symbols_for(job.sha256)
  local out = { strings = {} }
  local function where(path) return M.locate({ path = path, sha256 = path:match("(%x+)%.%a+$") }, files) end
  for _, s in ipairs(own) do
    if s.kind == "mapping" then out.mapping = where(s.path)
    else out.strings[#out.strings + 1] = where(s.path) end
  end
  if job.format == "bmd" then
    for _, s in ipairs(platform) do out.strings[#out.strings + 1] = where(s.path) end
  end
  if #own == 0 and job.format ~= "trace" then
    local r = releases[1] or {}
    out.nameless = (r.app and r.version) and ("no symbols for %s %s"):format(r.app, r.version)
      or "no symbols: the upload names no app and version"
  end
  return out
end

--- A worker's loop: take jobs, analyse, write results, until no job is
-- left (opts.once) or forever (waiting opts.poll seconds, 0.2, when idle).
-- opts: `name` (default host:pid), `lease` (seconds a job stays this
-- worker's, 600), `files` (see M.locate), `log` (a function of a line),
-- `parent` (a pid: stop when it is gone). Returns how many jobs it did.
function Fleet:work(opts)
  opts = opts or {}
  local name = opts.name or M.worker_name()
  local poll = opts.poll or 0.2
  local done = 0
  while true do
    local job = self.queue:claim(name, opts.lease or 600, poll)
    if job then
      local names = self:names_for(job, opts.files)
      local results, why = M.analyze(M.locate(job, opts.files), job.format, names)
      if results then
        results.nameless = names.nameless
        self.queue:finish(name, job, results)
      else self.queue:fail(name, job, why) end
      done = done + 1
      if opts.log then opts.log(("%s %s: %s"):format(job.sha256:sub(1, 12), job.format,
        results and (#results.leaks .. " leak(s)" .. (#results.warnings > 0 and ("; warnings: "
          .. table.concat(results.warnings, "; ")) or "") .. (results.nameless and ("; " .. results.nameless) or ""))
          or ("failed: " .. why))) end
    elseif opts.once then
      return done
    else
      if opts.parent and not core.kill(opts.parent, 0) then return done end
      if not self.queue.waits then cqueues.sleep(poll) end  -- (the engines wait in claim)
    end
  end
end

return M
