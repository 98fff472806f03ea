-- Heap dump indexing, for `make bench` (bench/run.lua).
-- Generates JVM dumps of about 100 MB and 1 GB with bench/java/HeapGen.java
-- and jcmd (cached in build/bench/), then opens each with sift (as `sift
-- info` does) and with VisualVM's heap library (bench/java/VisualVMIndex),
-- and prints time, throughput, index bytes per object and peak memory.
-- BENCH_HEAP_SIZES="100" limits the sizes (MB); QUICK=1 runs the 100 MB one.
local common = dofile("bench/common.lua")
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 3
local SIZES = common.sizes("BENCH_HEAP_SIZES", "100 1024", "100")
local JAR = "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"
local CLASSES = "build/bench/classes"

print("\n== heap dump indexing (sift.open + counts vs VisualVM HeapFactory.createHeap + counts) ==")

local sh, exists, best = common.sh, common.exists, common.best

-- the floor: a bare C walk of the same records (bench/hprof_walk.c), whole process
local WALK = "build/bench/hprof_walk"
local function walk(path)
  if not exists(WALK) then return nil end
  local t, res = best(WALK .. " " .. path, RUNS)
  return t, res
end

-- the floor under growth's tree: the same walk, then every reference
-- decoded with its id found and one plain BFS (its phases timed inside)
local function paths_floor(path)
  if not exists(WALK) then return nil end
  return best(WALK .. " --paths " .. path, RUNS)
end

local function fields(out)
  local t = {}
  for k, v in out:gmatch("([%w_]+)=(%d+)") do t[k] = tonumber(v) end
  return t
end

if not sh("command -v javac && command -v jcmd") then
  print("(skipped: no JDK; `apt-get install openjdk-17-jdk-headless`)")
  return
end
assert(os.execute("mkdir -p " .. CLASSES))
local ok, out = sh(("javac -encoding UTF-8 -d %s bench/java/HeapGen.java"):format(CLASSES))
assert(ok, out)
local have_visualvm = exists(JAR)
if have_visualvm then
  ok, out = sh(("javac -encoding UTF-8 -cp %s -d %s bench/java/VisualVMIndex.java bench/java/VisualVMRetained.java")
    :format(JAR, CLASSES))
  assert(ok, out)
else
  print("(VisualVM's heap library is missing: `apt-get install visualvm` for the comparison)")
end

local function generate(mb, path)
  if exists(path) then return true end
  io.write(("generating a ~%d MB JVM heap dump (cached in %s) ... "):format(mb, path))
  io.stdout:flush()
  local java = io.popen(("exec java -Xmx%dm -XX:+UseSerialGC -cp %s HeapGen %d"):format(
    mb * 2 + 256, CLASSES, mb))
  local pid = (java:read("l") or ""):match("^ready (%d+)$")
  if not pid then java:close() print("failed") return false end
  local dumped, msg = sh(("jcmd %s GC.heap_dump -all %s.tmp"):format(pid, path))
  os.execute("kill " .. pid)
  java:close()
  if not dumped then print("failed: " .. msg) return false end
  os.rename(path .. ".tmp", path)
  print("done")
  return true
end

print(("%-9s %10s %10s %9s %9s %8s %10s | %10s %10s %9s"):format("dump", "objects", "sift", "MB/s",
  "B/object", "index", "peak RSS", "VisualVM", "peak RSS", "VVM/sift"))
for _, mb in ipairs(SIZES) do
  local path = ("build/bench/heap-%dM.hprof"):format(mb)
  if generate(mb, path) then
    local size = common.size(path)
    sh("cat " .. path .. " > /dev/null")  -- page cache, as for the second look at a dump
    local t, res = best("lua5.4 bench/heap_index.lua " .. path, RUNS)
    if not t then print("sift failed: " .. tostring(res)) goto continue end
    local s = fields(res)
    local vt, vres
    if have_visualvm then
      vt, vres = best(("rm -rf %s.hwcache /tmp/NBProfiler*.gc; java -Xmx8g -cp %s:%s VisualVMIndex %s"):format(
        path, JAR, CLASSES, path), 2)
    end
    local v = vt and fields(vres) or {}
    print(("%-9s %10d %8.0fms %9.0f %9.1f %7.1fB %8.0fMB | %8s %10s %9s"):format(
      ("%dMB"):format(size // (1 << 20)), s.objects, t * 1e3, size / (1 << 20) / t,
      s.object_bytes, s.index_bytes / s.objects, s.peak_kb / 1024,
      vt and ("%.0fms"):format(vt * 1e3) or "-", v.peak_kb and ("%.0fMB"):format(v.peak_kb / 1024) or "-",
      vt and ("%.1fx"):format(vt / t) or "-"))
    local wt, wres = walk(path)
    if wt then
      local w = fields(wres)
      print(("          floor: a bare C walk of the records (bench/hprof_walk.c) %.0f ms, %d objects, %d references;"
        .. " sift's index %.1fx the walk"):format(wt * 1e3, w.objects or -1, w.refs or -1, t / wt))
    end
    if vt then
      local agree = v.instances == s.instances and v.classes == s.classes
      print(("          counts: sift %d instances, %d classes, %d roots; VisualVM %d, %d, %d%s"):format(
        s.instances, s.classes, s.roots, v.instances or -1, v.classes or -1, v.roots or -1,
        agree and " (instances and classes agree)" or " (DIFFER)"))
    end
  end
  ::continue::
end
print("B/object: bytes of the per-object index (ids + file offsets); index: every table of the index / objects")

-- the commands people run, as whole processes: peak memory per object
-- besides the mapped file (GNU time's maximum resident set size), on each
-- dump (issue 36 asks for the figure on one of 1 GB or more)
local first = ("build/bench/heap-%dM.hprof"):format(SIZES[1])
for _, mb in ipairs(SIZES) do
  local dump = ("build/bench/heap-%dM.hprof"):format(mb)
  if not (exists(dump) and exists("/usr/bin/time")) then goto next_dump end
  print(("\n== peak memory of sift path, top, dominators, loaders and growth (the dump against itself) on %s "
    .. "(whole processes) =="):format(dump))
  local size = common.size(dump)
  local _, info = sh("lua5.4 bin/sift info -q --json " .. dump)
  local objects = tonumber(info:match('"objects":(%d+)'))
  print(("%-58s %9s %10s %12s"):format("command", "time", "peak RSS", "B/object"))
  for _, cmd in ipairs {
    "path --class 'HeapGen$Node' --limit 1000 --json",
    "path --class 'HeapGen$Node' --limit 1000 --merge",
    "top -n 20 --model jvm",
    "dominators --depth 3 --model jvm",
    "loaders",
    ("growth %s"):format(dump),
  } do
    local t, timed = best(("/usr/bin/time -f peak_kb=%%M lua5.4 bin/sift %s -q %s > /dev/null"):format(cmd, dump), 1)
    local kb = timed and tonumber(timed:match("peak_kb=(%d+)"))
    if t and kb and objects then
      local own = kb * 1024 - size
      print(("%-58s %8.0fms %8.0fMB %12.1f"):format("sift " .. cmd, t * 1e3, kb / 1024, own / objects))
    else
      print(("%-58s failed: %s"):format("sift " .. cmd, tostring(timed):sub(1, 200)))
    end
  end
  print(("(%d objects; B/object = (peak RSS - the dump's %d MB, which is mapped) / objects; Eclipse MAT "
    .. "publishes 28.25 B/object for its parser's index)"):format(objects or 0, size // (1 << 20)))
  ::next_dump::
end

-- sift waste beside the index it needs (aim: the C pass within 2x the index), on each dump
print("\n== sift waste: its C pass over every object and its whole report, against the index time ==")
for _, mb in ipairs(SIZES) do
  local dump = ("build/bench/heap-%dM.hprof"):format(mb)
  if not exists(dump) then goto next_waste end
  local t, res = best("lua5.4 bench/heap_waste.lua " .. dump, RUNS)
  local wt = best(("lua5.4 bin/sift waste -q %s > /dev/null"):format(dump), RUNS)
  if t and wt then
    local s = fields(res)
    print(("%d objects: index %d ms; waste pass %d ms = %.2fx the index; whole report %d ms = %.2fx; "
      .. "whole process sift waste %.0f ms (%d duplicate strings, %d duplicate arrays)"):format(s.objects, s.index_ms,
      s.pass_ms, s.pass_ms / math.max(s.index_ms, 1), s.report_ms, s.report_ms / math.max(s.index_ms, 1), wt * 1e3,
      s.string_groups, s.array_groups))
  else
    print("sift failed: " .. tostring(res))
  end
  ::next_waste::
end

-- growth and the census beside the index they need (aim: each pass within
-- 2x the index), on each dump
print("\n== sift growth and the census: their passes over every object, against the index time ==")
for _, mb in ipairs(SIZES) do
  local dump = ("build/bench/heap-%dM.hprof"):format(mb)
  if not exists(dump) then goto next_census end
  local t, res = best("lua5.4 bench/heap_census_growth.lua " .. dump, RUNS)
  if t then
    local s = fields(res)
    local x = function(ms) return ms / math.max(s.index_ms, 1) end
    print(("%d objects: index %d ms; growth's tree of holder paths %d ms = %.2fx the index (%d nodes); "
      .. "growth of the dump against itself %d ms = %.2fx two indexes"):format(s.objects, s.index_ms, s.tree_ms,
      x(s.tree_ms), s.nodes, s.growth_ms, x(s.growth_ms) / 2))
    local ft, fres = paths_floor(dump)
    if ft then
      local f = fields(fres)
      local floor_ms = f.csr_ms + f.bfs_ms
      print(("          the tree's floor (bench/hprof_walk.c --paths, one thread): every reference decoded and its id "
        .. "found %d ms + one plain BFS %d ms = %d ms = %.2fx the index (%d references, %d reached); "
        .. "the tree %.2fx that floor"):format(f.csr_ms, f.bfs_ms, floor_ms, x(floor_ms), f.refs, f.reached,
        s.tree_ms / math.max(floor_ms, 1)))
    end
    print(("          after the dominator tree (%d ms = %.2fx): threads %d ms = %.2fx the index (%d threads); "
      .. "class loaders %d ms = %.2fx (%d loaders); retained by class %d ms = %.2fx (%d classes)"):format(
      s.dominators_ms, x(s.dominators_ms), s.threads_ms, x(s.threads_ms), s.threads, s.loaders_ms, x(s.loaders_ms),
      s.loaders, s.by_class_ms, x(s.by_class_ms), s.classes))
  else
    print("sift failed: " .. tostring(res))
  end
  ::next_census::
end

-- a dump whose analysis does not fit in memory: the same analysis in a
-- memory cgroup (v1) of a quarter of what the in-memory run needs, the
-- dump's pages included (its peak resident set), with the big arrays past
-- a seventh of that limit spilled to files: what stays in memory is the
-- kernel's choice (the page cache holds the arrays each phase reads at
-- random, the rest streams), not pinned by a large budget. Each run in a
-- cgroup of its own, the page cache dropped first so that the dump's pages
-- are read (and charged) there.
local CGROUP = "/sys/fs/cgroup/memory"
if exists(first) and exists(CGROUP .. "/memory.limit_in_bytes") then
  print("\n== a dump bigger than its memory: index + dominators + top, spilled, in a cgroup of a quarter of the need ==")
  local size = common.size(first)
  local spill = "build/bench/spill"
  os.execute("mkdir -p " .. spill)
  local t, res = best(("lua5.4 bench/heap_spill.lua %s %d %s"):format(first, 1 << 50, spill), RUNS)
  local s = t and fields(res)
  if s then
    local own = s.peak_kb * 1024 - size
    local limit = s.peak_kb * 1024 // 4
    local budget = limit // 7
    local cg = CGROUP .. "/sift-bench"
    local runs, bt, b, made = {}, math.huge, nil, true
    for _ = 1, 2 do
      os.execute("rmdir " .. cg .. " 2>/dev/null; mkdir -p " .. cg)
      local set = io.open(cg .. "/memory.limit_in_bytes", "w")
      made = set and set:write(limit) and set:close()
      if not made then break end
      sh("sync; echo 1 > /proc/sys/vm/drop_caches")
      local rt, rres = best(("sh -c 'echo $$ > %s/cgroup.procs; exec lua5.4 bench/heap_spill.lua %s %d %s'")
        :format(cg, first, budget, spill), 1)
      local f = io.open(cg .. "/memory.max_usage_in_bytes")
      local used = f and tonumber(f:read("l"))
      if f then f:close() end
      os.execute("rmdir " .. cg .. " 2>/dev/null")
      if not rt then b = nil res = rres break end
      runs[#runs + 1] = ("%.1f s"):format(rt)
      if rt < bt then bt, b = rt, fields(rres) b.used = used end
    end
    if b and b.top_retained == s.top_retained then
      print(("in memory:  %6.0f ms (index %d ms, dominators %d ms), peak %4.0f MB = the dump's %.0f MB + %.0f MB"
        .. " = %.1f B/object besides the dump"):format(t * 1e3, s.index_ms, s.dominators_ms, s.peak_kb / 1024,
        size / 2^20, own / 2^20, own / s.objects))
      print(("spilled:    %6.0f ms (index %d ms, dominators %d ms) = %.1fx the in-memory time (runs: %s), in a cgroup"
        .. " of %.0f MB = a quarter of the in-memory peak (the most it used: %.0f MB), spilling past %.1f MB;"
        .. " %.0f MB on disk = %.1f B/object"):format(bt * 1e3, b.index_ms, b.dominators_ms, bt / t,
        table.concat(runs, ", "), limit / 2^20, (b.used or 0) / 2^20, budget / 2^20, b.spilled_peak / 2^20,
        b.spilled_peak / b.objects))
    elseif not made then
      print("(skipped: cannot make a memory cgroup here)")
    else
      print("spilled run failed or differs: " .. tostring(res):sub(1, 300))
    end
  else
    print("sift failed: " .. tostring(res))
  end
end

-- the whole analysis on the largest dump: index, graph, BFS, dominators
local big = ("build/bench/heap-%dM.hprof"):format(SIZES[#SIZES])
if exists(big) then
  print("\n== heap analysis: index + references + shortest paths + dominator tree ==")
  local size = common.size(big)
  local t, res = best("lua5.4 bench/heap_graph.lua " .. big, 2)
  if t then
    local s = fields(res)
    -- peak RSS counts the mapped file's pages; the analysis's own memory is the rest
    local own = s.peak_kb * 1024 - size
    print(("sift: %d objects, %d references: index %d ms, shortest paths (one BFS) %d ms, graph (CSR) %d ms, "
      .. "dominators + retained %d ms;"):format(s.objects, s.edges, s.index_ms, s.bfs_ms, s.graph_ms, s.dominators_ms))
    print(("      whole process %.0f ms, peak memory %.0f MB besides the mapped file = %.1f bytes per object")
      :format(t * 1e3, own / 2^20, own / s.objects))
    local wt = walk(big)
    if wt then
      print(("      index + references %d ms = %.1fx the bare C walk of the records (%.0f ms, the floor)"):format(
        s.index_ms + s.graph_ms, (s.index_ms + s.graph_ms) / 1e3 / wt, wt * 1e3))
    end
    if have_visualvm then
      -- (VisualVM gets 15 minutes: on the 1.4 GB dump it had not answered after 15)
      local vt, vres = best(("rm -rf %s.hwcache; timeout 900 java -Xmx12g -cp %s:%s VisualVMRetained %s || true"):format(
        big, JAR, CLASSES, big), 1)
      local v = vt and fields(vres) or {}
      if vt and not v.top_retained then
        print(("VisualVM retained sizes: stopped after %.0f ms without an answer: more than %.1fx sift's time")
          :format(vt * 1e3, vt / t))
      elseif vt then
        -- (VisualVM's largest counts class objects as instances of java.lang.Class)
        print(("VisualVM retained sizes: %.0f ms  VisualVM/sift %.1fx; largest retained object: VisualVM %d, "
          .. "sift %d (visualvm model)%s"):format(vt * 1e3, vt / t, v.top_retained or -1, s.top_retained,
          v.top_retained == s.top_retained and ", equal" or ", DIFFER"))
      else
        print("VisualVM failed: " .. tostring(vres):sub(1, 200))
      end
    end
  else
    print("sift failed: " .. tostring(res))
  end
end

-- the full leak analysis beside the index-only time
if exists(big) then
  print("\n== leak analysis: finders + paths + inspectors + retained sizes + suspects ==")
  local size = common.size(big)
  local ti = best("lua5.4 bench/heap_index.lua " .. big, 2)
  local t, res = best("lua5.4 bench/heap_leaks.lua " .. big, 1)
  if t and ti then
    local s = fields(res)
    print(("sift leaks --suspects: %.0f ms (index only: %.0f ms), %d leak suspects (largest retains %d bytes), "
      .. "peak memory %.0f MB besides the mapped file"):format(t * 1e3, ti * 1e3, s.suspects,
      s.top_suspect_retained, (s.peak_kb * 1024 - size) / 2^20))
  else
    print("sift leaks failed: " .. tostring(res))
  end
end
