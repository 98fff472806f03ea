-- OFX statements, for `make bench` (bench/run.lua): bank statements of 1 k to
-- 1 M transactions, v1 (SGML) and v2 (XML), from bench/ofx_gen.lua (cached
-- in build/bench/), read by sift (`sift ofx`, whole process) and, in the
-- same run, by the peers Debian packages: python3-ofxparse and libofx's
-- ofxdump. The peers are slow and grow faster than linearly, so they run
-- up to BENCH_OFX_PEER_MAX transactions (default 10000).
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
local PEER_MAX = tonumber(os.getenv("BENCH_OFX_PEER_MAX")) or 10000
local common = dofile("bench/common.lua")
local SIZES = common.sizes("BENCH_OFX_SIZES", "1000 10000 100000 1000000", "1000 10000")

print("\n== OFX statements: sift ofx vs ofxparse (python3-ofxparse) and ofxdump (libofx) ==")

local sh = common.sh
local function best(cmd, runs) return common.best(cmd, runs, true) end

local have_ofxparse = sh("/usr/bin/python3 -c 'import ofxparse'")
local have_ofxdump = sh("command -v ofxdump")
local OFXPARSE = "/usr/bin/python3 -c \"import ofxparse,sys; f=open(sys.argv[1],'rb'); "
  .. "o=ofxparse.OfxParser.parse(f); print(len(o.account.statement.transactions))\" %s"

print(("%-22s %10s %12s %10s %12s %12s %12s %10s %10s"):format("file", "sift", "txns/s", "--json", "txns/s",
  "ofxparse", "ofxdump", "ofxparse/", "ofxdump/"))
for _, n in ipairs(SIZES) do
  for _, v in ipairs { 1, 2 } do
    local label = (n >= 1000000 and ("%dm"):format(n // 1000000) or ("%dk"):format(n // 1000))
    local path = ("build/bench/ofx-%s-v%d.ofx"):format(label, v)
    if not io.open(path) then assert(os.execute(("lua5.4 bench/ofx_gen.lua %d %d > %s"):format(n, v, path))) end
    local runs = n >= 1000000 and 1 or RUNS
    local t = assert(best("lua5.4 bin/sift -q ofx " .. path, runs))
    local tj = assert(best("lua5.4 bin/sift -q ofx --json " .. path, runs))
    local tp = have_ofxparse and n <= PEER_MAX and best(OFXPARSE:format(path), runs)
    local td = have_ofxdump and n <= PEER_MAX and best("ofxdump " .. path, runs)
    print(("%-22s %9.2fs %12.0f %9.2fs %12.0f %12s %12s %10s %10s"):format(path:match("[^/]+$"), t, n / t, tj, n / tj,
      tp and ("%.2fs"):format(tp) or "-", td and ("%.2fs"):format(td) or "-",
      tp and ("%.1fx"):format(tp / t) or "-", td and ("%.1fx"):format(td / t) or "-"))
  end
end
-- the floor under sift's parse, on the largest v1 statement: reading the
-- file (cat), and LPeg matching its runs of elements with the grammar's
-- own pattern (bench/ofx_floor.lua); and what a Lua string per element
-- would add, which is why values stay positions in the text
local largest = SIZES[#SIZES]
if largest then
  local label = largest >= 1000000 and ("%dm"):format(largest // 1000000) or ("%dk"):format(largest // 1000)
  local path = ("build/bench/ofx-%s-v1.ofx"):format(label)
  local cat = best("cat " .. path .. " > /dev/null", RUNS)
  local p = io.popen("lua5.4 bench/ofx_floor.lua " .. path)
  local matched, strings = p:read("n", "n")
  p:close()
  if matched then
    print(("floor on %s (%d transactions): cat %.2fs; LPeg matching its runs %.2fs (%.0f k transactions/s at most); "
      .. "a string per element would add %.2fs"):format(path:match("[^/]+$"), largest, cat, matched,
      largest / matched / 1000, strings - matched))
  end
end
if not have_ofxparse or not have_ofxdump then
  print("(peers missing: apt-get install python3-ofxparse ofx)")
end
