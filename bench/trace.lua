-- Android method traces, for `make bench` (bench/run.lua): a generated
-- 4-million-record dual-clock trace (bench/trace_gen.lua, deterministic):
-- reading the file, decode + call trees, trace -> SVG, folded text, peak
-- memory. No peer is packaged for Debian (dmtracedump is AOSP's,
-- flamegraph.pl is not in Debian 12): the figures the issue quotes for
-- them on this machine are printed beside ours, marked as quoted.
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
print("\n== Android method traces ==")

local function best(cmd)
  local t = math.huge
  for _ = 1, RUNS do
    local p = io.popen(("s=$(date +%%s%%N); %s >/dev/null 2>&1; e=$(date +%%s%%N); echo $((e - s))"):format(cmd))
    t = math.min(t, tonumber(p:read("a")) / 1e9)
    p:close()
  end
  return t
end

local function size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

os.execute("mkdir -p build/bench")
local trace = "build/bench/startup-4M.trace"
if not size(trace) then
  print("generating " .. trace .. " (4 M records)")
  assert(os.execute("lua5.4 bench/trace_gen.lua " .. trace .. " 4000000"))
end
local mb = size(trace) / 1e6

local read = best("cat " .. trace)
print(("%-44s %8.0f ms   %7.0f MB/s"):format("read the file (cat, the floor)", read * 1e3, mb / read))

local p = io.popen("lua5.4 bench/trace_decode.lua " .. trace)
local facts = p:read("a")
p:close()
local decode_ms, records, nodes, peak = facts:match("decode_ms=(%d+) records=(%d+) nodes=(%d+) peak_kb=(%d+)")
local decode = best("lua5.4 bench/trace_decode.lua " .. trace)
print(("%-44s %8.0f ms   %7.1f M records/s  (%s call-tree nodes; in-process %s ms)"):format(
  "decode + call trees (whole process)", decode * 1e3, records / decode / 1e6, nodes, decode_ms))
print(("%-44s %8.0f MB   %7.2fx the trace's size (target <= 2x)"):format("peak memory (RSS, incl. the mapped file)",
  peak / 1024, peak * 1024 / size(trace)))
print(("%-44s %8s      dmtracedump's profile: ~1200 ms (quoted) -> %.1fx"):format("", "", 1.2 / decode))

-- sift profile, the whole process, beside the read; and how it grows from
-- 1 M to 16 M records (traces of the same generator, cached)
local profile = best("lua5.4 bin/sift --quiet profile " .. trace)
print(("%-44s %8.0f ms   %7.1fx the read (goal <= 2x)"):format("sift profile (whole process)", profile * 1e3,
  profile / read))
for _, m in ipairs { 1, 4, 16 } do
  local path = ("build/bench/startup-%dM.trace"):format(m)
  if not size(path) then assert(os.execute(("lua5.4 bench/trace_gen.lua %s %d"):format(path, m * 1000000))) end
  local t = best("lua5.4 bin/sift --quiet profile " .. path)
  local r = best("cat " .. path)
  print(("%-44s %8.0f ms   %7.1f M records/s, %.1fx the read (%.0f ms)"):format(
    ("  profile of %d M records"):format(m), t * 1e3, m / t, t / r, r * 1e3))
end

local svg = best("lua5.4 bin/sift --quiet flame " .. trace .. " -o build/bench/startup.svg")
print(("%-44s %8.0f ms   %7.1f MB SVG   (script + flamegraph.pl: ~28 s, 1.2 GB, quoted -> %.0fx)"):format(
  "trace -> interactive SVG (end to end)", svg * 1e3, size("build/bench/startup.svg") / 1e6, 28 / svg))

local fold = best("lua5.4 bin/sift --quiet fold " .. trace .. " -o build/bench/startup.folded")
local folded = size("build/bench/startup.folded")
print(("%-44s %8.0f ms   %7.0f MB/s of folded text (%.0f MB; target >= 200 MB/s)"):format(
  "trace -> folded text (end to end)", fold * 1e3, folded / 1e6 / fold, folded / 1e6))
os.remove("build/bench/startup.folded")
