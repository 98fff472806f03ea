--- Writes small dex files (version 035) for specs: classes of static
-- methods whose code is given as Dalvik instructions, with try blocks,
-- catch handlers and line numbers. The file is complete (sorted id
-- tables, map list, Adler-32 checksum, SHA-1 signature), so Android's own
-- `dexdump` reads it: the specs use it as the second opinion. Debian 12
-- has no d8 or dx to compile Java to dex; this is the producer instead.
--
--   local w = writer.new()
--   w:class { name = "Lsample/A;", source = "A.java", methods = { {
--     name = "f", params = { "I" }, ret = "I", registers = 1,
--     code = { { "return", 0 } }, lines = { { 0, 3 } } } } }
--   local bytes = w:bytes()
local sha1 = require "sift.sha1"

local writer = {}
writer.__index = writer

-- opcodes and their formats, as the writer encodes them
local OPS = {
  ["const/4"] = { 0x12, "11n" }, ["const-string"] = { 0x1a, "21c:s" }, ["new-instance"] = { 0x22, "21c:t" },
  ["move-result"] = { 0x0a, "11x" }, ["move-result-object"] = { 0x0c, "11x" }, ["move-exception"] = { 0x0d, "11x" },
  ["return-void"] = { 0x0e, "10x" }, ["return"] = { 0x0f, "11x" }, ["return-object"] = { 0x11, "11x" },
  ["throw"] = { 0x27, "11x" }, ["goto"] = { 0x28, "10t" }, ["if-eqz"] = { 0x38, "21t" },
  ["sput-object"] = { 0x69, "21c:f" },
  ["invoke-virtual"] = { 0x6e, "35c" }, ["invoke-direct"] = { 0x70, "35c" }, ["invoke-static"] = { 0x71, "35c" },
  ["invoke-interface"] = { 0x72, "35c" },
}

function writer.new()
  return setmetatable({ classes = {} }, writer)
end

--- A class: name and super (descriptors; super defaults to
-- Ljava/lang/Object;), source, methods (each: name, params, ret,
-- registers, code, tries ({start, count, handlers = {{type, addr}},
-- catch_all = addr}), lines ({pc, line}...), locals ({reg, name, type,
-- start, stop}...)). Every method is public static.
function writer:class(c)
  c.super = c.super or "Ljava/lang/Object;"
  self.classes[#self.classes + 1] = c
end

local SHORTY = { V = "V", Z = "Z", B = "B", S = "S", C = "C", I = "I", J = "J", F = "F", D = "D" }
local function shorty(ret, params)
  local s = { SHORTY[ret] or "L" }
  for _, p in ipairs(params) do s[#s + 1] = SHORTY[p] or "L" end
  return table.concat(s)
end

local function uleb(v)
  local out = {}
  repeat
    local b = v & 0x7f
    v = v >> 7
    out[#out + 1] = string.char(v ~= 0 and (b | 0x80) or b)
  until v == 0
  return table.concat(out)
end

local function sleb(v)
  local out = {}
  while true do
    local b = v & 0x7f
    v = v >> 7  -- (arithmetic enough for the small values specs use)
    if v >= (1 << 56) then v = v - (1 << 57) end
    local done = (v == 0 and b & 0x40 == 0) or (v == -1 and b & 0x40 ~= 0)
    out[#out + 1] = string.char(done and b or (b | 0x80))
    if done then return table.concat(out) end
  end
end

local function adler32(s)
  local a, b = 1, 0
  for i = 1, #s do
    a = (a + s:byte(i)) % 65521
    b = (b + a) % 65521
  end
  return (b << 16) | a
end

local function sorted_keys(set, less)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out, less)
  return out
end

function writer:bytes()
  -- every string, type, proto and method the classes use
  local strings, types, protos, methods, fields = {}, {}, {}, {}, {}
  local function use_type(t) types[t] = true strings[t] = true end
  local function proto_key(ret, params) return ret .. "(" .. table.concat(params, ",") end
  local function use_proto(ret, params)
    use_type(ret)
    for _, p in ipairs(params) do use_type(p) end
    strings[shorty(ret, params)] = true
    protos[proto_key(ret, params)] = { ret = ret, params = params }
  end
  local function method_key(m) return m.class .. "\0" .. m.name .. "\0" .. proto_key(m.ret, m.params) end
  local function use_method(m)
    use_type(m.class)
    strings[m.name] = true
    use_proto(m.ret, m.params)
    methods[method_key(m)] = m
  end
  for _, c in ipairs(self.classes) do
    use_type(c.name)
    use_type(c.super)
    if c.source then strings[c.source] = true end
    for _, m in ipairs(c.methods) do
      m.class = c.name
      use_method(m)
      for _, ins in ipairs(m.code) do
        local fmt = OPS[ins[1]][2]
        if fmt == "35c" then use_method(ins[3])
        elseif fmt == "21c:s" then strings[ins[3]] = true
        elseif fmt == "21c:t" then use_type(ins[3])
        elseif fmt == "21c:f" then
          use_type(ins[3].class)
          use_type(ins[3].type)
          strings[ins[3].name] = true
          fields[ins[3].class .. "\0" .. ins[3].name .. "\0" .. ins[3].type] = ins[3]
        end
      end
      for _, t in ipairs(m.tries or {}) do
        for _, h in ipairs(t.handlers or {}) do use_type(h[1]) end
      end
      for _, l in ipairs(m.locals or {}) do
        strings[l.name] = true
        use_type(l.type)
      end
    end
  end
  -- the id tables, sorted as the format requires
  local string_list = sorted_keys(strings)
  local string_idx = {}
  for i, s in ipairs(string_list) do string_idx[s] = i - 1 end
  local type_list = sorted_keys(types, function(a, b) return string_idx[a] < string_idx[b] end)
  local type_idx = {}
  for i, t in ipairs(type_list) do type_idx[t] = i - 1 end
  local function params_less(a, b)
    for i = 1, math.max(#a, #b) do
      if a[i] == nil then return true end
      if b[i] == nil then return false end
      if a[i] ~= b[i] then return type_idx[a[i]] < type_idx[b[i]] end
    end
    return false
  end
  local proto_list = sorted_keys(protos, function(a, b)
    local x, y = protos[a], protos[b]
    if x.ret ~= y.ret then return type_idx[x.ret] < type_idx[y.ret] end
    return params_less(x.params, y.params)
  end)
  local proto_idx = {}
  for i, k in ipairs(proto_list) do proto_idx[k] = i - 1 end
  local field_list = sorted_keys(fields, function(a, b)
    local x, y = fields[a], fields[b]
    if x.class ~= y.class then return type_idx[x.class] < type_idx[y.class] end
    if x.name ~= y.name then return string_idx[x.name] < string_idx[y.name] end
    return type_idx[x.type] < type_idx[y.type]
  end)
  local field_idx = {}
  for i, k in ipairs(field_list) do field_idx[k] = i - 1 end
  local method_list = sorted_keys(methods, function(a, b)
    local x, y = methods[a], methods[b]
    if x.class ~= y.class then return type_idx[x.class] < type_idx[y.class] end
    if x.name ~= y.name then return string_idx[x.name] < string_idx[y.name] end
    return proto_idx[proto_key(x.ret, x.params)] < proto_idx[proto_key(y.ret, y.params)]
  end)
  local method_idx = {}
  for i, k in ipairs(method_list) do method_idx[k] = i - 1 end

  -- the data section: code items, debug info, type lists, string data, class data, map
  local header_size = 0x70
  local ids_size = 4 * #string_list + 4 * #type_list + 12 * #proto_list + 8 * #field_list + 8 * #method_list
    + 32 * #self.classes
  local data_off = header_size + ids_size
  local data, at = {}, data_off
  local function put(s) data[#data + 1] = s at = at + #s end
  local function align4() if at % 4 ~= 0 then put(("\0"):rep(4 - at % 4)) end end
  local function encode(ins)
    local op, fmt = OPS[ins[1]][1], OPS[ins[1]][2]
    if fmt == "10x" then return string.pack("<I2", op) end
    if fmt == "11x" then return string.pack("<BB", op, ins[2]) end
    if fmt == "11n" then return string.pack("<BB", op, ((ins[3] & 0xf) << 4) | ins[2]) end
    if fmt == "10t" then return string.pack("<Bb", op, ins[2]) end
    if fmt == "21t" then return string.pack("<BBi2", op, ins[2], ins[3]) end
    if fmt == "21c:s" then return string.pack("<BBI2", op, ins[2], string_idx[ins[3]]) end
    if fmt == "21c:t" then return string.pack("<BBI2", op, ins[2], type_idx[ins[3]]) end
    if fmt == "21c:f" then
      local f = ins[3]
      return string.pack("<BBI2", op, ins[2], field_idx[f.class .. "\0" .. f.name .. "\0" .. f.type])
    end
    local regs = ins[2]  -- 35c: {C, D, E, F, G}
    local r = { 0, 0, 0, 0, 0 }
    for i, v in ipairs(regs) do r[i] = v end
    return string.pack("<BBI2I2", op, (#regs << 4) | r[5], method_idx[method_key(ins[3])],
      r[1] | (r[2] << 4) | (r[3] << 8) | (r[4] << 12))
  end
  local code_off, items = {}, { code = 0, debug = 0, types = 0, strings = 0, classes = 0 }
  local code_start = at
  for _, c in ipairs(self.classes) do
    for _, m in ipairs(c.methods) do
      align4()
      code_off[m] = at
      items.code = items.code + 1
      local insns = {}
      for i, ins in ipairs(m.code) do insns[i] = encode(ins) end
      insns = table.concat(insns)
      local tries = m.tries or {}
      local outs = 0
      for _, ins in ipairs(m.code) do
        if OPS[ins[1]][2] == "35c" and #ins[2] > outs then outs = #ins[2] end
      end
      m.debug_patch = #data + 1  -- (its debug_info_off, written below)
      put(string.pack("<I2I2I2I2", m.registers, #m.params, outs, #tries))
      put("\0\0\0\0")
      put(string.pack("<I4", #insns // 2) .. insns)
      if #tries > 0 then
        if (#insns // 2) % 2 == 1 then put("\0\0") end
        local handlers, offsets = { uleb(#tries) }, {}
        local size = #handlers[1]
        for i, t in ipairs(tries) do
          offsets[i] = size
          local h = { sleb(t.catch_all and -#(t.handlers or {}) or #(t.handlers or {})) }
          for _, pair in ipairs(t.handlers or {}) do h[#h + 1] = uleb(type_idx[pair[1]]) .. uleb(pair[2]) end
          if t.catch_all then h[#h + 1] = uleb(t.catch_all) end
          h = table.concat(h)
          handlers[#handlers + 1] = h
          size = size + #h
        end
        for i, t in ipairs(tries) do put(string.pack("<I4I2I2", t.start, t.count, offsets[i])) end
        put(table.concat(handlers))
      end
    end
  end
  local debug_start = at
  for _, c in ipairs(self.classes) do
    for _, m in ipairs(c.methods) do
      if m.lines and #m.lines > 0 then
        m.debug_off = at
        items.debug = items.debug + 1
        local line, pc = m.lines[1][2], 0
        local d = { uleb(line), uleb(#m.params) }
        for _ in ipairs(m.params) do d[#d + 1] = uleb(0) end  -- (no parameter names)
        -- the events in address order: locals ending, locals starting, positions
        local events = {}
        for _, l in ipairs(m.locals or {}) do
          events[#events + 1] = { l.start, 2, "\3" .. uleb(l.reg) .. uleb(string_idx[l.name] + 1) .. uleb(type_idx[l.type] + 1) }
          events[#events + 1] = { l.stop, 1, "\5" .. uleb(l.reg) }
        end
        for _, e in ipairs(m.lines) do events[#events + 1] = { e[1], 3, e[2] } end
        table.sort(events, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
        for _, e in ipairs(events) do
          if e[1] ~= pc then d[#d + 1] = "\1" .. uleb(e[1] - pc) pc = e[1] end
          if e[2] ~= 3 then d[#d + 1] = e[3]
          else
            if e[3] ~= line then d[#d + 1] = "\2" .. sleb(e[3] - line) line = e[3] end
            d[#d + 1] = string.char(0x0a + 4)  -- a position entry: line +0, address +0
          end
        end
        d[#d + 1] = "\0"
        put(table.concat(d))
      end
    end
  end
  for _, c in ipairs(self.classes) do  -- the code items' debug_info_off, now known
    for _, m in ipairs(c.methods) do data[m.debug_patch + 1] = string.pack("<I4", m.debug_off or 0) end
  end
  align4()
  local types_start, type_list_off = at, {}
  for _, k in ipairs(proto_list) do
    local p = protos[k]
    if #p.params > 0 then
      align4()
      type_list_off[k] = at
      items.types = items.types + 1
      local t = { string.pack("<I4", #p.params) }
      for _, param in ipairs(p.params) do t[#t + 1] = string.pack("<I2", type_idx[param]) end
      put(table.concat(t))
    end
  end
  local strings_start, string_off = at, {}
  for i, s in ipairs(string_list) do
    string_off[i] = at
    items.strings = items.strings + 1
    put(uleb(#s) .. s .. "\0")
  end
  local classes_start, class_data_off = at, {}
  for _, c in ipairs(self.classes) do
    class_data_off[c] = at
    items.classes = items.classes + 1
    local ms = {}
    for _, m in ipairs(c.methods) do ms[#ms + 1] = m end
    table.sort(ms, function(a, b) return method_idx[method_key(a)] < method_idx[method_key(b)] end)
    local d, last = { uleb(0), uleb(0), uleb(#ms), uleb(0) }, 0
    for _, m in ipairs(ms) do
      local idx = method_idx[method_key(m)]
      d[#d + 1] = uleb(idx - last) .. uleb(0x0009) .. uleb(code_off[m])
      last = idx
    end
    put(table.concat(d))
  end
  align4()
  local map_off = at
  local map = {
    { 0x0000, 1, 0 }, { 0x0001, #string_list, header_size },
    { 0x0002, #type_list, header_size + 4 * #string_list },
    { 0x0003, #proto_list, header_size + 4 * #string_list + 4 * #type_list },
  }
  local off = header_size + 4 * #string_list + 4 * #type_list + 12 * #proto_list
  if #field_list > 0 then map[#map + 1] = { 0x0004, #field_list, off } end
  off = off + 8 * #field_list
  map[#map + 1] = { 0x0005, #method_list, off }
  map[#map + 1] = { 0x0006, #self.classes, off + 8 * #method_list }
  map[#map + 1] = { 0x2001, items.code, code_start }
  if items.debug > 0 then map[#map + 1] = { 0x2003, items.debug, debug_start } end
  if items.types > 0 then map[#map + 1] = { 0x1001, items.types, types_start } end
  map[#map + 1] = { 0x2002, items.strings, strings_start }
  map[#map + 1] = { 0x2000, items.classes, classes_start }
  map[#map + 1] = { 0x1000, 1, map_off }
  local m = { string.pack("<I4", #map) }
  for _, e in ipairs(map) do m[#m + 1] = string.pack("<I2I2I4I4", e[1], 0, e[2], e[3]) end
  put(table.concat(m))
  local file_size = at

  -- the id tables
  local ids = {}
  for i = 1, #string_list do ids[#ids + 1] = string.pack("<I4", string_off[i]) end
  for _, t in ipairs(type_list) do ids[#ids + 1] = string.pack("<I4", string_idx[t]) end
  for _, k in ipairs(proto_list) do
    local p = protos[k]
    ids[#ids + 1] = string.pack("<I4I4I4", string_idx[shorty(p.ret, p.params)], type_idx[p.ret], type_list_off[k] or 0)
  end
  for _, k in ipairs(field_list) do
    local f = fields[k]
    ids[#ids + 1] = string.pack("<I2I2I4", type_idx[f.class], type_idx[f.type], string_idx[f.name])
  end
  for _, k in ipairs(method_list) do
    local x = methods[k]
    ids[#ids + 1] = string.pack("<I2I2I4", type_idx[x.class], proto_idx[proto_key(x.ret, x.params)],
      string_idx[x.name])
  end
  for _, c in ipairs(self.classes) do
    ids[#ids + 1] = string.pack("<I4I4I4I4I4I4I4I4", type_idx[c.name], 0x0001, type_idx[c.super], 0,
      c.source and string_idx[c.source] or 0xFFFFFFFF, 0, class_data_off[c], 0)
  end
  local body = table.concat(ids) .. table.concat(data)
  local function header(checksum, signature)
    local counts = string.pack("<I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4I4",
      file_size, header_size, 0x12345678, 0, 0, map_off,
      #string_list, header_size, #type_list, header_size + 4 * #string_list,
      #proto_list, header_size + 4 * #string_list + 4 * #type_list,
      #field_list, #field_list > 0 and header_size + 4 * #string_list + 4 * #type_list + 12 * #proto_list or 0,
      #method_list, off, #self.classes, off + 8 * #method_list, file_size - data_off, data_off)
    return "dex\n035\0" .. string.pack("<I4", checksum) .. signature .. counts
  end
  local unsigned = header(0, ("\0"):rep(20)):sub(33) .. body
  local signature = sha1.hex(unsigned):gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
  local signed = signature .. unsigned
  return "dex\n035\0" .. string.pack("<I4", adler32(signed)) .. signed
end

return writer
