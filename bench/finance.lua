-- Finance, for `make bench` (bench/run.lua): the categoriser's k-fold
-- accuracy on generated labelled data; `sift import` of 100 k and 1 M
-- transaction statements (bench/ofx_gen.lua, cached in build/bench/) and
-- `sift report` on them (targets: 1 M imported in under 30 s, reported in
-- under 2 s); and, in the same run, the monthly report against hledger
-- and ledger reading the same books (sift's own journal export).
local common = dofile("bench/common.lua")
local SIZES = common.sizes("BENCH_FINANCE_SIZES", "100000 1000000", "100000")
local PEER_MAX = tonumber(os.getenv("BENCH_FINANCE_PEER_MAX")) or 100000

print("\n== Finance: categoriser, sift import and sift report, against hledger and ledger ==")

local sh = common.sh

package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local sample = require "sift.finance.sample"
local learn = require "sift.finance.learn"

-- the categoriser
local examples, ncat = sample.examples { transactions = 6000 }
local started = os.clock()
local r = learn.evaluate(examples, 5)
print(("categoriser: %.1f%% accuracy, 5-fold cross-validation on %d generated transactions in %d categories "
  .. "(%.2f s; target >= 90%%)"):format(100 * r.accuracy, r.total, ncat, os.clock() - started))

local function label(n)
  return n >= 1000000 and ("%dm"):format(n // 1000000) or ("%dk"):format(n // 1000)
end

local have_hledger, have_ledger = sh("command -v hledger"), sh("command -v ledger")
print(("%-16s %12s %12s %12s %12s %12s %10s %10s"):format("statement", "import", "txns/s", "report", "hledger",
  "ledger", "hledger/", "ledger/"))
for _, n in ipairs(SIZES) do
  local path = ("build/bench/ofx-%s-v1.ofx"):format(label(n))
  if not common.exists(path) then assert(os.execute(("lua5.4 bench/ofx_gen.lua %d 1 > %s"):format(n, path))) end
  local db = ("build/bench/finance-%s.db"):format(label(n))
  os.remove(db) os.remove(db .. "-wal") os.remove(db .. "-shm")
  local ti = assert(common.best(("lua5.4 bin/sift import -q --db %s %s"):format(db, path), 1, true))
  local tr = assert(common.best(("lua5.4 bin/sift report --db %s"):format(db), 3, true))
  local th, tl
  if n <= PEER_MAX then
    local journal = db .. ".journal"
    assert(os.execute(("lua5.4 bin/sift journal ledger --db %s -o %s"):format(db, journal)))
    th = have_hledger and common.best("LC_ALL=C.UTF-8 hledger -f " .. journal .. " balance -M", 1, true)
    tl = have_ledger and common.best("ledger -f " .. journal .. " balance --monthly", 1, true)
    os.remove(journal)
  end
  print(("%-16s %11.2fs %12.0f %11.2fs %12s %12s %10s %10s"):format(path:match("[^/]+$"), ti, n / ti, tr,
    th and ("%.2fs"):format(th) or "-", tl and ("%.2fs"):format(tl) or "-",
    th and ("%.1fx"):format(th / tr) or "-", tl and ("%.1fx"):format(tl / tr) or "-"))
  os.remove(db) os.remove(db .. "-wal") os.remove(db .. "-shm")
end
print("(targets: import 1 M in under 30 s, report it in under 2 s; hledger and ledger read the same books "
  .. "as a journal, up to BENCH_FINANCE_PEER_MAX transactions)")
