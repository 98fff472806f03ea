-- Writes regular Android method traces (text header, "SLOW" v3 header,
-- 14-byte dual-clock records) for specs and the benchmark generator.
--
--   local w = writer.new()
--   local run = w:method("com.example.App", "run", "()V")
--   w:enter(1, run, 0, 0); w:exit(1, run, 10, 12)
--   local bytes = w:bytes()
local writer = {}
writer.__index = writer

function writer.new(opts)
  opts = opts or {}
  return setmetatable({ methods = {}, threads = opts.threads or { { 1, "main" } },
    records = {}, clock = opts.clock or "dual" }, writer)
end

--- A method; returns its id.
function writer:method(class, name, sig, source)
  local id = #self.methods * 4 + 4
  self.methods[#self.methods + 1] = ("0x%x\t%s\t%s\t%s\t%s"):format(id, class, name, sig or "()V", source or "A.java")
  return id
end

local function record(self, tid, id, action, cpu, wall)
  self.records[#self.records + 1] = string.pack("<I2I4I4I4", tid, id | action, cpu, wall or cpu)
end

function writer:enter(tid, id, cpu, wall) record(self, tid, id, 0, cpu, wall) end
function writer:exit(tid, id, cpu, wall) record(self, tid, id, 1, cpu, wall) end

function writer:bytes()
  local head = { "*version", "3", "data-file-overflow=false", "clock=" .. self.clock, "vm=art", "*threads" }
  for _, t in ipairs(self.threads) do head[#head + 1] = t[1] .. "\t" .. t[2] end
  head[#head + 1] = "*methods"
  for _, m in ipairs(self.methods) do head[#head + 1] = m end
  head[#head + 1] = "*end"
  local binary = "SLOW" .. string.pack("<I2I2I8I2", 3, 32, 0, 14) .. ("\0"):rep(14)
  return table.concat(head, "\n") .. "\n" .. binary .. table.concat(self.records)
end

return writer
