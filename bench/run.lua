-- `make bench`: whole-process timings of sift and its peers on the same
-- inputs in the same run, printed as ratios and throughput. Each section
-- is a script of its own; BENCH_ONLY="hprof fleet" runs those. QUICK=1
-- runs each on its small inputs (the same ratios, in minutes).
local only
for name in (os.getenv("BENCH_ONLY") or ""):gmatch("[%w_]+") do
  only = only or {}
  only[name] = true
end
print("sift benchmarks: best of several whole-process runs; peer/sift > 1 means sift is faster")
for _, section in ipairs { "detect", "hprof", "trace", "bmd", "ofx", "finance", "fleet", "lint" } do
  if not only or only[section] then dofile("bench/" .. section .. ".lua") end
end
