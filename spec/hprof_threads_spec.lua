-- Two threads read a dump's heap records as one does (csrc/heap/hprof_split.c):
-- on every HPROF fixture, and on a dump cut or damaged in the part the
-- second thread reads, the index of two threads equals the index of one,
-- object by object, with the same warnings and the same error.
local core = require "sift.core"
local helper = require "spec.helper"

-- every fact of an index, object by object, as a comparable table
local function facts(h)
  local out = { info = h:info(), heaps = h:heaps(), roots = h:roots(), objects = {}, classes = {} }
  for num = 1, h:count() do out.objects[num] = { h:object(num) } end
  for c = 1, h:nclasses() do
    local cls = h:class(c)
    out.classes[c] = { cls.id, cls.name, cls.super, cls.loader, cls.instance_size, #cls.fields, h:group_size(c) }
  end
  return out
end

-- the heap dump records of an HPROF file: their count and where the last begins
local function records(bytes)
  local at = bytes:find("\0", 1, true) + 13
  local n, last = 0, nil
  while at + 8 <= #bytes do
    local tag, len = string.unpack(">B", bytes, at), string.unpack(">I4", bytes, at + 5)
    if tag == 0x0C or tag == 0x1C then n, last = n + 1, at - 1 end
    at = at + 9 + len
  end
  return n, last
end

describe("two threads reading a dump's heap records", function()
  local fixtures = {}
  if helper.fixtures() then
    local p = io.popen("find " .. helper.quote(helper.fixtures() .. "/hprof") .. " -name '*.hprof' | sort")
    for path in p:lines() do fixtures[#fixtures + 1] = path end
    p:close()
  end

  it("index every fixture of two records or more exactly as one thread does", function()
    if #fixtures == 0 then return pending("no fixtures") end
    local split = 0
    for _, path in ipairs(fixtures) do
      local bytes = helper.read(path)
      if records(bytes) >= 2 then
        split = split + 1
        local one, two = assert(core.hprof(bytes, 0, nil, 1)), assert(core.hprof(bytes, 0, nil, 2))
        assert.are.same(facts(one), facts(two), path)
      end
    end
    assert.are.equal(9, split, "fixtures of several records")
  end)

  it("say the same about a dump cut, or damaged, where the second thread reads", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_all.hprof")
    if not path then return end
    local bytes = helper.read(path)
    local n, last = records(bytes)
    assert.are.equal(4, n)
    local cut = bytes:sub(1, last + 5000)   -- inside the last record, read by the second thread
    local one, two = assert(core.hprof(cut, 0, nil, 1)), assert(core.hprof(cut, 0, nil, 2))
    local info = two:info()
    assert.are.same(facts(one), facts(two))
    assert.is_true(info.truncated_at > last, info.truncated_at)
    assert.matches("indexed up to byte " .. info.truncated_at, table.concat(info.warnings, "\n"), 1, true)
    -- a sub-record tag no HPROF has, at the start of the last record's body
    local bad = bytes:sub(1, last + 9) .. "\xEE" .. bytes:sub(last + 11)
    local _, msg1, code1 = core.hprof(bad, 0, nil, 1)
    local ok, msg2, code2 = core.hprof(bad, 0, nil, 2)
    assert.is_nil(ok)
    assert.are.same({ "unknown heap dump sub-record tag 0xEE at byte " .. (last + 9), "bad_tag" }, { msg2, code2 })
    assert.are.same({ msg1, code1 }, { msg2, code2 })
  end)
end)
