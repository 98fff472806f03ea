-- BMD, for `make bench` (bench/run.lua): crunch a JVM heap dump (the ~100 MB
-- one bench/hprof.lua generates, else the JDK 17 fixture), read the BMD,
-- analyse it, decrunch it; beside gzip, the usual way to ship a dump, on
-- the same input in the same run. Badoo's cruncher and decruncher are Java
-- programs that are not Debian packages (and refuse 8-byte ids), so they
-- cannot be timed here.
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3

print("\n== BMD: crunch, read, analyse, decrunch (vs gzip, the usual way to ship a dump) ==")

local common = dofile("bench/common.lua")
local sh, size = common.sh, common.size
local function best(cmd) return assert(common.best(cmd, RUNS, true)) end

local input = "build/bench/heap-100M.hprof"
if not io.open(input) then input = "../shared/fixtures/bmd/jdk17-sample.hprof" end
if not io.open(input) then print("(skipped: no heap dump; run BENCH_ONLY=hprof make bench first)") return end
local bmd, back, gz = "build/bench/bench.bmd", "build/bench/bench.decrunched.hprof", "build/bench/bench.hprof.gz"
local mb = size(input) / 1e6
print(("input: %s, %.1f MB"):format(input, mb))

local t_crunch = best(("lua5.4 bin/sift -q crunch %s %s"):format(input, bmd))
local t_gzip = best(("gzip -6 -c %s > %s"):format(input, gz))
local b_size, g_size = size(bmd), size(gz)
sh(("gzip -6 -c %s > %s.gz"):format(bmd, bmd))
local bg_size = size(bmd .. ".gz")
print(("%-44s %8.0f ms  %7.1f MB/s   %6.2f MB = %4.1f%% of the dump"):format("sift crunch", t_crunch * 1e3,
  mb / t_crunch, b_size / 1e6, 100 * b_size / size(input)))
print(("%-44s %8.0f ms  %7.1f MB/s   %6.2f MB = %4.1f%%   (gzip/sift time %.1fx)"):format("gzip -6 of the dump (peer)",
  t_gzip * 1e3, mb / t_gzip, g_size / 1e6, 100 * g_size / size(input), t_gzip / t_crunch))
print(("%-44s                          %6.2f MB = %4.1f%%   (%.1fx smaller than the gzipped dump)"):format(
  "gzip -6 of the BMD", bg_size / 1e6, 100 * bg_size / size(input), g_size / bg_size))

local t_info = best(("lua5.4 bin/sift -q info %s"):format(bmd))
print(("%-44s %8.0f ms  %7.1f MB/s of BMD"):format("sift info BMD (every record checked)", t_info * 1e3,
  b_size / 1e6 / t_info))
local t_open_b = best(("lua5.4 bin/sift -q histogram %s"):format(bmd))
local t_open_h = best(("lua5.4 bin/sift -q histogram %s"):format(input))
print(("%-44s %8.0f ms   (the HPROF itself: %.0f ms)"):format("sift histogram of the BMD", t_open_b * 1e3,
  t_open_h * 1e3))
local t_back = best(("lua5.4 bin/sift -q decrunch %s %s"):format(bmd, back))
print(("%-44s %8.0f ms  %7.1f MB/s of HPROF written (%.1f MB)"):format("sift decrunch", t_back * 1e3,
  size(back) / 1e6 / t_back, size(back) / 1e6))
os.remove(bmd .. ".gz")
os.remove(gz)
os.remove(back)
