-- Two threads read a dump's heap records as one does (csrc/heap/hprof_split.c):
-- on every HPROF fixture, and on a dump cut or damaged in the part the
-- second thread reads, the index of two threads equals the index of one,
-- object by object, with the same warnings and the same error. And two
-- threads build the reference graph's arrays as one does (build_csr in
-- csrc/heap/dominators.c): the same offsets and references, the same
-- referrers of every object (hg_referrers in csrc/heap/graph.c), and the
-- same VisualVM dominator tree, whose own arrays are built the same way.
local core = require "sift.core"
local sift = require "sift"
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

-- the reference graph of a dump opened with `threads`: its CSR arrays (the
-- strong graph under the default rules), every object's referrers (every
-- reference turned around: hg_referrers), then VisualVM's dominator tree
-- (immediate dominator and retained size of every object), whose arrays
-- build_csr makes apart
local function graph(source, threads, no_tree)
  local heap = assert(sift.open(source, { threads = threads }))
  heap:reference_rules {}
  local edges = heap.index:build_graph()
  local first, succ = heap.index:graph_arrays()
  local out = { edges = edges, first = first, succ = succ, objects = heap.index:count() }
  if no_tree then return out end
  local referrers = {}
  for num = 1, out.objects do referrers[num] = table.concat(heap.index:referrers(num), " ") end
  out.referrers = table.concat(referrers, ",")
  out.reachable = assert(heap:dominators { model = "visualvm" })
  local idom, retained = {}, {}
  for num = 1, out.objects do
    idom[num] = heap.index:idom(num) or "-"
    retained[num] = heap.index:retained(num) or "-"
  end
  out.idom, out.retained = table.concat(idom, ","), table.concat(retained, ",")
  return out
end

-- a's graph equals b's, said by what differs first
local function same_graph(a, b, what)
  assert.are.same({ a.edges, a.objects, #a.first, #a.succ }, { b.edges, b.objects, #b.first, #b.succ }, what)
  assert.is_true(a.first == b.first, what .. ": offsets")
  assert.is_true(a.succ == b.succ, what .. ": references")
  assert.is_true(a.referrers == b.referrers, what .. ": referrers")
  assert.are.same(a.reachable, b.reachable, what)
  assert.is_true(a.idom == b.idom, what .. ": immediate dominators")
  assert.is_true(a.retained == b.retained, what .. ": retained sizes")
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

  it("build every fixture's reference graph on two threads as on one", function()
    if #fixtures == 0 then return pending("no fixtures") end
    local edges, objects = 0, 0
    for _, path in ipairs(fixtures) do
      local one, two = graph(path, 1), graph(path, 2)
      same_graph(one, two, path)
      assert.are.equal(4 * (one.objects + 1), #one.first, path)
      assert.are.equal(4 * one.edges, #one.succ, path)
      assert.are.equal(one.edges, string.unpack("=I4", one.first, #one.first - 3), path)  -- n + 1's offset
      edges, objects = edges + one.edges, objects + one.objects
    end
    -- more references than objects: each half's array, begun at a quarter
    -- of the objects, was grown and its part went on
    assert.are.same({ 20, 617846, 285998 }, { #fixtures, edges, objects })
  end)

  it("build the same graph of a dump cut, or whose second half points at ids it lacks", function()
    local path = helper.fixture("hprof/generated-jdk17/leaky_jdk17_all.hprof")
    if not path then return end
    local bytes = helper.read(path)
    local _, last = records(bytes)
    local cut = helper.tmpfile(bytes:sub(1, last + 5000))
    local one, two = graph(cut, 1), graph(cut, 2)
    same_graph(one, two, "cut")
    local whole = graph(path, 1, true)
    assert.are.same({ 53947, 57816 }, { one.edges, whole.edges })
    -- the elements of the object arrays in the second thread's half (the
    -- objects numbered past half) turned to ids the dump does not have
    local heap = assert(sift.open(path))
    local n, spans = heap.index:count(), {}
    for num = n // 2 + 1, n do
      local id, kind, _, _, length = heap.index:object(num)
      if kind == "object_array" and length > 0 then
        local at = bytes:find("\x22" .. string.pack(">I8", id), 1, true)
        while string.unpack(">I4", bytes, at + 13) ~= length do  -- the id's bytes inside other data
          at = bytes:find("\x22" .. string.pack(">I8", id), at + 1, true)
        end
        spans[#spans + 1] = { at + 1 + 8 + 4 + 4 + 8, 8 * length }  -- past tag, id, serial, length, class id
      end
    end
    table.sort(spans, function(x, y) return x[1] < y[1] end)
    local pieces, from = {}, 1
    for _, sp in ipairs(spans) do
      pieces[#pieces + 1] = bytes:sub(from, sp[1] - 1) .. ("\x7F"):rep(sp[2])
      from = sp[1] + sp[2]
    end
    pieces[#pieces + 1] = bytes:sub(from)
    local bad, damaged_arrays = table.concat(pieces), #spans
    assert.are.equal(#bytes, #bad)
    assert.are.equal(1809, damaged_arrays)
    local damaged = helper.tmpfile(bad)
    local d1, d2 = graph(damaged, 1), graph(damaged, 2)
    same_graph(d1, d2, "damaged")
    assert.are.same({ 51184, 57816 }, { d1.edges, whole.edges })
  end)

  it("find the same waste on two threads as on one", function()
    if #fixtures == 0 then return pending("no fixtures") end
    -- the walk over every object (hw_waste in csrc/heap/waste.c) in two
    -- halves: strings, arrays, zeros, boxes and collections joined
    local waste = require "sift.heap.waste"
    local totals = { 0, 0, 0, 0, 0 }
    for _, path in ipairs(fixtures) do
      local one = waste.report(assert(sift.open(path, { threads = 1 })))
      local two = waste.report(assert(sift.open(path, { threads = 2 })))
      assert.are.same(one, two, path)
      local t = one.totals
      totals[1] = totals[1] + t.duplicate_strings.groups
      totals[2] = totals[2] + t.duplicate_arrays.groups
      totals[3] = totals[3] + #one.zero_arrays
      totals[4] = totals[4] + #one.boxed
      totals[5] = totals[5] + #one.collections
    end
    assert.are.same({ 4392, 2354, 67, 64, 115 }, totals)
  end)
end)
