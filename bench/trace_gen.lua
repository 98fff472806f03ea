-- A deterministic regular dual-clock trace for `make bench`: an app's
-- startup as 20 threads and 3000 methods, N records (default 4 M).
--   lua5.4 bench/trace_gen.lua OUT [records]
local out_path, total = arg[1], tonumber(arg[2]) or 4000000
local NTHREADS, NMETHODS = 20, 3000
local seed = 12345
local function rand(n)  -- a 31-bit LCG: the same file on every machine
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed % n
end
local head = { "*version", "3", "data-file-overflow=false", "clock=dual", "vm=art", "pid=4242", "*threads" }
for t = 1, NTHREADS do head[#head + 1] = ("%d\t%s"):format(t, t == 1 and "main" or ("worker-" .. t)) end
head[#head + 1] = "*methods"
local packages = { "com.example.app", "com.example.app.ui", "android.view", "android.os", "java.util", "kotlin.collections" }
for m = 0, NMETHODS - 1 do
  head[#head + 1] = ("%#x\t%s.C%d\tm%d\t()V\tC%d.java"):format(m * 4 + 4, packages[m % #packages + 1], m // 7, m, m // 7)
end
head[#head + 1] = "*end"
local out = assert(io.open(out_path, "wb"))
out:write(table.concat(head, "\n"), "\n", "SLOW", string.pack("<I2I2I8I2", 3, 32, 0, 14), ("\0"):rep(14))
local stacks, cpu, wall = {}, {}, {}
for t = 1, NTHREADS do stacks[t], cpu[t], wall[t] = {}, 0, 0 end
local chunk, n = {}, 0
for _ = 1, total do
  local t = rand(NTHREADS) == 0 and 1 + rand(NTHREADS) or 1   -- the main thread does most
  local st = stacks[t]
  cpu[t] = cpu[t] + 1 + rand(20)
  wall[t] = wall[t] + 1 + rand(30)
  local word
  if #st == 0 or (#st < 60 and rand(100) < 50) then
    -- a caller calls a few callees of its own (loops over them), now and
    -- then something else
    local caller = st[#st] or t
    local m = rand(50) == 0 and rand(NMETHODS) or (caller * 31 + rand(3)) % NMETHODS
    st[#st + 1] = m
    word = (m * 4 + 4)
  else
    word = (table.remove(st) * 4 + 4) | 1
  end
  n = n + 1
  chunk[n] = string.pack("<I2I4I4I4", t, word, cpu[t], wall[t])
  if n == 8192 then out:write(table.concat(chunk)); chunk, n = {}, 0 end
end
out:write(table.concat(chunk, "", 1, n))
out:close()
