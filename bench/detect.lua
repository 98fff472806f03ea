-- Format detection, for `make bench` (bench/run.lua):
--   * `sift info` on every shared fixture vs `file` (libmagic) on the same files;
--   * `sift info` on a generated 256 MB streaming trace, which sift walks
--     record by record (its summary is at the end) vs `file`, which reads
--     only the first bytes — a floor, not equal work.
local fixtures = os.getenv("SIFT_FIXTURES") or "../shared/fixtures"
local RUNS = tonumber(os.getenv("BENCH_RUNS")) or 5
print("\n== format detection ==")

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- best wall-clock seconds of `cmd` over RUNS runs, output discarded
local function best(cmd)
  local t = math.huge
  for _ = 1, RUNS do
    local p = io.popen(("s=$(date +%%s%%N); %s >/dev/null 2>&1; e=$(date +%%s%%N); echo $((e - s))"):format(cmd))
    local ns = tonumber(p:read("a"))
    p:close()
    t = math.min(t, ns / 1e9)
  end
  return t
end

local function have(cmd) return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") end

local function row(what, sift_s, peer, peer_s, extra)
  local ratio = peer_s and ("%6.2fx"):format(peer_s / sift_s) or "   n/a"
  print(("%-44s sift %8.1f ms   %-6s %8s   peer/sift %s  %s"):format(what, sift_s * 1e3, peer or "-",
    peer_s and ("%.1f ms"):format(peer_s * 1e3) or "-", ratio, extra or ""))
end


-- 1. every fixture file
local files = {}
local p = io.popen(("find %s -type f 2>/dev/null | sort"):format(sh_quote(fixtures)))
for f in p:lines() do files[#files + 1] = sh_quote(f) end
p:close()
if #files > 0 then
  local list = table.concat(files, " ")
  local s = best("lua5.4 bin/sift --quiet info --header " .. list)
  local f = have("file") and best("file -b " .. list) or nil
  row(("detect %d fixture files"):format(#files), s, "file", f)
  s = best("lua5.4 bin/sift --quiet info --header --json " .. list)
  row(("detect %d fixture files, --json"):format(#files), s, "file", f)
else
  print("(no fixtures at " .. fixtures .. ")")
end

-- 2. a big streaming trace, generated once
os.execute("mkdir -p build/bench")
local big = "build/bench/streaming-256M.trace"
local probe = io.open(big, "rb")
if not probe then
  local out = assert(io.open(big, "wb"))
  out:write(string.pack("<c4I2I2I8I2", "SLOW", 0xF3, 32, 0, 14), ("\0"):rep(14))
  out:write(string.pack("<I2BI2s2", 0, 2, 1, "main"), string.pack("<I2Bs2", 0, 1, "0x10\tA\tb\t()V\tA.java"))
  local chunk = {}
  for i = 1, 4096 do chunk[i] = string.pack("<I2I4I4I4", 1, 0x10 | (i & 1), i, i) end
  chunk = table.concat(chunk)
  for _ = 1, (256 << 20) // #chunk do out:write(chunk) end
  out:write(string.pack("<I2Bs4", 0, 3, "*version\n3\nclock=dual\n*threads\n1\tmain\n*methods\n*end\n"))
  out:close()
else
  probe:close()
end
local size = io.open(big, "rb"):seek("end")
local s = best("lua5.4 bin/sift --quiet info " .. big)
local f = have("file") and best("file -b " .. big) or nil
row("detect + walk a 256 MB streaming trace", s, "file", f,
  ("%.0f MB/s"):format(size / (1 << 20) / s))
