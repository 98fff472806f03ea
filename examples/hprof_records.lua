-- Walk the top-level records of an HPROF file with sift's bounds-checked
-- reader and count them by tag. Every read either succeeds or returns
-- nil, message, code with the byte offset, so a truncated dump stops with
-- a clear message instead of garbage.
--
--   sift run examples/hprof_records.lua app.hprof
local core = require "sift.core"

local NAMES = {
  [0x01] = "STRING", [0x02] = "LOAD_CLASS", [0x03] = "UNLOAD_CLASS", [0x04] = "STACK_FRAME",
  [0x05] = "STACK_TRACE", [0x06] = "ALLOC_SITES", [0x07] = "HEAP_SUMMARY", [0x0A] = "START_THREAD",
  [0x0B] = "END_THREAD", [0x0C] = "HEAP_DUMP", [0x0D] = "CPU_SAMPLES", [0x0E] = "CONTROL_SETTINGS",
  [0x1C] = "HEAP_DUMP_SEGMENT", [0x2C] = "HEAP_DUMP_END",
}

local path = assert(arg[1], "usage: sift run examples/hprof_records.lua FILE.hprof")
local map <close> = assert(core.map(path))
local r = core.reader(map)

local header = assert(r:cstring())
local id_size = assert(r:u4be())
local stamp = assert(r:u8be())
print(("%s, %d-byte ids, dumped %s UTC"):format(header, id_size, os.date("!%Y-%m-%d %H:%M:%S", stamp // 1000)))

local counts, bytes = {}, {}
while r:remaining() > 0 do
  local at = r:tell()
  local tag, err = r:u1()
  local _, length
  if tag then _, err = r:u4be() end            -- microseconds since the header's time
  if tag and not err then length, err = r:u4be() end
  if not err then _, err = r:skip(length) end
  if err then
    print(("stopped at the record starting at byte %d: %s"):format(at, err))
    break
  end
  counts[tag] = (counts[tag] or 0) + 1
  bytes[tag] = (bytes[tag] or 0) + length
end

local tags = {}
for tag in pairs(counts) do tags[#tags + 1] = tag end
table.sort(tags)
for _, tag in ipairs(tags) do
  print(("  0x%02X %-18s %8d records %12d bytes"):format(tag, NAMES[tag] or "?", counts[tag], bytes[tag]))
end
