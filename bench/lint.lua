-- sift lint beside FindBugs, for `make bench` (bench/run.lua): classes per
-- second of `sift lint --rules closeable` and of FindBugs 3.1 (`-textui
-- -effort:max -low`: its whole analysis, and its two open-resource
-- detectors alone, `-visitors FindOpenStream,FindUnsatisfiedObligation`,
-- the fairer peer of one rule) on the same jars of the lint corpus
-- (spec/lint/corpus.lua), in the same run. FindBugs needs JDK 8's class
-- signatures on its aux classpath: made from the JDK's ct.sym (release 8)
-- into build/findbugs/jdk8-ct.jar, once. BENCH_LINT_JARS=name,name picks
-- the jars (default: three small ones; FindBugs takes about 30 s a jar).
local common = dofile("bench/common.lua")
local corpus = dofile("spec/lint/corpus.lua")
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
print("\n== lint (closeable rule) beside FindBugs ==")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local wanted = {}
for name in (os.getenv("BENCH_LINT_JARS") or "commons-io,dom4j-2.1.1,antlr3-runtime"):gmatch("[^,]+") do
  wanted[name] = true
end
local jars = {}
for _, jar in ipairs(corpus.jars) do
  if wanted[jar.name] and common.exists(jar.path) then jars[#jars + 1] = jar end
end
if #jars == 0 then return print("no corpus jar installed: skipped") end

-- classes in the jars, as sift reads them
local LUA = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' SIFT_CPATH=build/?.so lua5.4"
local paths = {}
for i, jar in ipairs(jars) do paths[i] = q(jar.path) end
local _, out = common.sh(LUA .. " bin/sift lint --rules closeable " .. table.concat(paths, " "))
local classes = tonumber(out:match("in (%d+) class")) or 0

local sift_s = common.best(LUA .. " bin/sift lint --rules closeable " .. table.concat(paths, " "), RUNS, true)
print(("%-36s %5d classes in %d jars  %8.2f s  %8.0f classes/s"):format("sift lint", classes, #jars, sift_s,
  classes / sift_s))

local ct = "/usr/lib/jvm/java-17-openjdk-amd64/lib/ct.sym"
local boot = "build/findbugs/jdk8-ct.jar"
if not os.execute("command -v findbugs >/dev/null 2>&1") or not common.exists(ct) then
  return print("FindBugs or the JDK's ct.sym missing: no ratio")
end
if not common.exists(boot) then
  local ok, why = common.sh(("mkdir -p build/findbugs && python3 spec/lint/ct8.py %s %s"):format(q(ct), q(boot)))
  if not ok then return print("could not make JDK 8's classes from ct.sym: " .. why) end
end
for _, run in ipairs {
  { "FindBugs (all detectors)", "" },
  { "FindBugs (open-resource detectors)", "-visitors FindOpenStream,FindUnsatisfiedObligation " },
} do
  local fb_s = common.best(("env -u LD_PRELOAD findbugs -textui -effort:max -low %s-auxclasspath %s %s"):format(run[2],
    boot, table.concat(paths, " ")), 1, true)
  print(("%-36s %5d classes in %d jars  %8.2f s  %8.0f classes/s   FindBugs/sift %.1fx"):format(run[1], classes,
    #jars, fb_s, classes / fb_s, fb_s / sift_s))
end
