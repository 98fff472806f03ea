-- The groups' summaries the backends keep (leak_groups: dumps, damaged
-- dumps, retained total and median, first and last seen, the first
-- upload's leak) stay what aggregating every leak row of every upload
-- gives (spec/fleet_groups_oracle.lua) after ingests of analysed files, a
-- new file's result, a file analysed again (its groups losing it, one of
-- them its first upload, one emptied), and counting again; a page reads
-- them as kept; a database at schema 3 gets them when migrated. On
-- SQLite, and on PostgreSQL (started by spec/engines.lua, #heavy).
require("sift.paths").older_lua()
local fleet_mod = require "sift.fleet"
local json = require "sift.json"
local core = require "sift.core"
local helper = require "spec.helper"
local engines_mod = require "spec.engines"
local oracle = require "spec.fleet_groups_oracle"

local data = oracle.generate(800, 20, 7)
local sigs = data.signatures

-- every group as the backend gives it, equal to the aggregate of its rows
local function check(fleet, when)
  local want = oracle.groups(fleet.queue:leak_rows(), {}, { all = true })
  local got, total = fleet:groups { all = true }
  assert(#want == #got and total == #want, ("%s: %d groups (total %d), the aggregate has %d"):format(when, #got,
    total, #want))
  for i, w in ipairs(want) do
    for _, k in ipairs { "signature", "dumps", "damaged_dumps", "retained_total", "retained_median", "first_seen",
        "last_seen", "kind", "description", "trace", "files", "versions", "devices" } do
      local a, b = json.encode(w[k]), json.encode(got[i][k])
      assert(a == b, ("%s: group %d (%s): %s is %s, the aggregate says %s"):format(when, i, w.signature, k, b, a))
    end
  end
  return got
end

local function by_signature(groups, sig)
  for _, g in ipairs(groups) do if g.signature == sig then return g end end
end

-- the scenario on a fleet holding `data`, counted; sql(statement) runs SQL on its database
local function scenario(fleet, sql)
  local groups = check(fleet, "loaded")
  -- a page reads the kept summary: changed in the table, the page says so
  sql(("UPDATE leak_groups SET retained_total = 7 WHERE signature = '%s'"):format(groups[1].signature))
  assert.are.equal(7, fleet:groups { limit = 1 }[1].retained_total)
  fleet.queue:recount()
  check(fleet, "counted again")

  -- uploads of analysed files: a damaged one, one with a leak of no
  -- retained size, one with two leaks; and a file not seen before
  local damaged, unsized, two
  local leaks_of = {}
  for _, l in ipairs(data.leaks) do leaks_of[l.sha256] = (leaks_of[l.sha256] or 0) + 1 end
  for _, l in ipairs(data.leaks) do
    if l.damaged then damaged = damaged or l.sha256 end
    if l.retained == nil then unsized = unsized or l.sha256 end
    if leaks_of[l.sha256] == 2 then two = two or l.sha256 end
  end
  assert(damaged and unsized and two, "the generated rows have each kind of file")
  for i, sha in ipairs { damaged, unsized, two, damaged } do
    fleet:ingest(sha, "/gen/again.hprof", "hprof", { version = "3." .. i, device = "again" })
  end
  local new = ("f"):rep(64)
  fleet:ingest(new, "/gen/new.hprof", "hprof", { version = "1.0", device = "new" })
  fleet:ingest(new, "/gen/new.hprof", "hprof", { version = "1.1", device = "new" })
  local before = groups
  groups = check(fleet, "after ingests")
  local sig_damaged
  for _, l in ipairs(data.leaks) do if l.sha256 == damaged then sig_damaged = l.signature break end end
  assert.are.equal(by_signature(before, sig_damaged).damaged_dumps + 2, by_signature(groups, sig_damaged).damaged_dumps)

  -- the new file's result: a known leak and a new one, with warnings
  local job = assert(fleet.queue:claim("spec:1", 600, 0.1))
  while job.sha256 ~= new do job = assert(fleet.queue:claim("spec:1", 600, 0.1)) end
  assert.is_true(fleet.queue:finish("spec:1", job, { leaks = {
    { signature = sigs[1], kind = "application", description = "again", retained = 10, trace = "t" },
    { signature = ("e"):rep(40), kind = "library", description = "new", retained = 20, trace = "u" },
  }, summary = {}, warnings = { "cut" } }))
  groups = check(fleet, "after a result")
  assert.are.same({ 2, 2, 40 }, { by_signature(groups, ("e"):rep(40)).dumps,
    by_signature(groups, ("e"):rep(40)).damaged_dumps, by_signature(groups, ("e"):rep(40)).retained_total })

  -- analysed again: the fleet's first upload's file now has another leak
  -- (its group's first upload, trace and times move to the next file's);
  -- the new file none (its new group is gone)
  local first = data.uploads[1].sha256
  local first_sig
  for _, l in ipairs(data.leaks) do if l.sha256 == first then first_sig = l.signature break end end
  local was = by_signature(groups, first_sig)
  for _, sha in ipairs { first, new } do
    sql(("UPDATE files SET state = 'running', worker = 'spec:2' WHERE sha256 = '%s'"):format(sha))
  end
  assert.is_true(fleet.queue:finish("spec:2", { sha256 = first, id = "0-1" }, { leaks = {
    { signature = ("d"):rep(40), kind = "application", description = "moved", retained = 1, trace = "v" },
  }, summary = {}, warnings = {} }))
  assert.is_true(fleet.queue:finish("spec:2", { sha256 = new, id = "0-1" }, { leaks = {}, summary = {},
    warnings = {} }))
  groups = check(fleet, "after analysing again")
  local now = by_signature(groups, first_sig)
  assert(now.first_seen > was.first_seen and now.trace ~= was.trace, "the group's first upload moved")
  assert.is_nil(by_signature(groups, ("e"):rep(40)))
  assert.are.equal(1, by_signature(groups, ("d"):rep(40)).retained_median)

  -- and counting it all again changes nothing
  fleet.queue:recount()
  assert.are.same(json.encode(groups), json.encode(check(fleet, "counted again at the end")))
end

describe("the fleet's group summaries", function()
  it("on SQLite: equal to the aggregate after ingests, results and analyses again", function()
    local dir = helper.tmpdir()
    local fleet = assert(fleet_mod.open(dir))
    oracle.load_sqlite(fleet.queue, data)
    fleet.queue:recount()
    scenario(fleet, function(s) fleet.queue.db:exec(s) end)
    fleet:close()
  end)

  it("on SQLite: a database at schema 3 gets them when opened", function()
    local dir = helper.tmpdir()
    local sqlite = require "sift.fleet.sqlite"
    local db = assert(core.sqlite(dir .. "/fleet.db"))
    for v = 1, 3 do db:exec(sqlite.MIGRATIONS[v] .. ("; PRAGMA user_version = %d"):format(v)) end
    oracle.load_sqlite({ db = db }, data)
    db:exec(sqlite.MIGRATIONS[3]:match("UPDATE leaks SET %(uploads.*$"))  -- (schema 3's counts)
    db:close()
    local fleet = assert(fleet_mod.open(dir))
    assert.are.equal(2, fleet:migrate())  -- (4, the summaries; 5, the symbols)
    check(fleet, "migrated")
    fleet:close()
  end)

  it("on PostgreSQL: the same, and schema 3 migrated #heavy", function()
    local e = assert(engines_mod.start())
    local ok, err = pcall(function()
      local redis, postgres = e.fresh()
      local fleet = assert(fleet_mod.open(nil, { redis = redis, postgres = postgres, migrating = true }))
      fleet:migrate()
      oracle.load_postgres(e, postgres, data, helper.tmpdir())
      fleet.queue:recount()
      scenario(fleet, function(s) e.psql(postgres, s) end)
      fleet:close()
      -- schema 3, counted as it counted, then migrated
      local engines = require "sift.fleet.engines"
      redis, postgres = e.fresh()
      local five = table.remove(engines.MIGRATIONS, 5)
      local four = table.remove(engines.MIGRATIONS, 4)
      local migrated = pcall(function()
        local f3 = assert(fleet_mod.open(nil, { redis = redis, postgres = postgres, migrating = true }))
        assert.are.equal(3, f3:migrate())
        f3:close()
      end)
      engines.MIGRATIONS[4], engines.MIGRATIONS[5] = four, five
      assert(migrated, "schema 3 made")
      oracle.load_postgres(e, postgres, data, helper.tmpdir())
      e.psql(postgres, engines.MIGRATIONS[3]:match("UPDATE leaks SET %(uploads.*$"))
      fleet = assert(fleet_mod.open(nil, { redis = redis, postgres = postgres, migrating = true }))
      assert.are.equal(2, fleet:migrate())  -- (4, the summaries; 5, the symbols)
      fleet:close()
      fleet = assert(fleet_mod.open(nil, { redis = redis, postgres = postgres }))
      check(fleet, "migrated")
      fleet:close()
    end)
    e.stop()
    assert(ok, err)
  end)
end)
