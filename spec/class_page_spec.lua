-- The class and class loaders pages of sift serve, as ahat's class view
-- and MAT's class inspector and Class Loader Explorer show them: the
-- superclass chain and subclasses linked, statics with their types and
-- values in declaration order, the class's sizes, the instances sorted by
-- retained or shallow size or in dump order, 100 a page, a page past the
-- last a 404; the loaders named and linked, their parents too, the class
-- two loaders defined with both loaders linked, an empty table said in
-- words. One server over the HeapPages jcmd dump made at test time
-- (spec/java/HeapPages.java) and Dalvik's dialer dump. The numbers come
-- from `sift path --retained --json` and `sift histogram --json`, the
-- statics from the Java source; the browser part reads headless
-- Chromium's DOM (#heavy).
require("sift.paths").older_lua()
local cjson = require "cjson"
local helper = require "spec.helper"

local SOURCE = "spec/java/HeapPages.java"
local DIALER = "hprof/android/perflib/dialer.android-hprof"

local get = helper.http_get

-- a page's JSON twin: status and view (a JSON client is answered once the
-- file is open)
local function page_json(base, page, query)
  local status, body = get(base .. page .. ".json" .. (query or ""), "application/json")
  return status, status == 200 and cjson.decode(body) or body
end

local cli_json = helper.sift_json

local function n(text) return tonumber((text:gsub(",", ""))) end

-- the statics Shape declares in the Java source, in order: { name, type
-- (HPROF's: primitives by name, the rest "object"), literal }
local function shape_statics()
  local body = assert(helper.read(SOURCE):match("class Shape {(.-)\n    }"))
  local out = {}
  for type_, name, literal in body:gmatch("\n%s*static ([%w<>]+) (%w+) = ([^;]+);") do
    out[#out + 1] = { name = name, type = type_:match("^%l+$") or "object", literal = literal }
  end
  return out
end

-- the instance rows of a class page's DOM: { rank, id, shallow, retained }
local function instance_rows(dom)
  local rows = {}
  local t = dom:match('<table id="instances">(.-)</table>')
  for rank, id, shallow, retained in (t or ""):gmatch('<tr><td class="n"><span class="n">([%d,]+)</span></td>'
      .. '<td><a href="[^"]*/object/(0x%x+)">[^<]*</a></td><td class="n"><span class="n">([%d,]+)</span></td>'
      .. '<td class="n"><span class="n">([%d,]+)</span></td></tr>') do
    rows[#rows + 1] = { rank = n(rank), id = id, shallow = n(shallow), retained = n(retained) }
  end
  return rows
end

describe("the class and class loaders pages of sift serve", function()
  local jvm, why = helper.jvm_dump("HeapPages")
  local dialer = helper.fixture(DIALER)
  if not jvm or not dialer then
    it("needs a JDK and the fixtures", function() pending(why or "shared fixtures not found") end)
    return
  end
  local url, pid, dir, base, android
  local orders, by_retained, histogram
  setup(function()
    url, pid, dir = helper.serve { jvm, dialer }
    assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
    local _, index = get(url .. "index.json", "application/json")
    for _, f in ipairs(cjson.decode(index).files) do
      if f.name == jvm:match("[^/]+$") then base = url .. f.url:sub(2) else android = url .. f.url:sub(2) end
    end
    -- the Orders as the CLI lists them (dump order), then largest retained
    -- first (ties in dump order)
    orders = cli_json { "path", "-q", "--json", "--retained", "--limit", "0", "--class", "HeapPages$Order", jvm }
    by_retained = {}
    for i, o in ipairs(orders) do
      o.at = i
      by_retained[i] = o
    end
    table.sort(by_retained, function(a, b)
      if a.retained ~= b.retained then return a.retained > b.retained end
      return a.at < b.at
    end)
    histogram = {}
    for _, r in ipairs(cli_json { "histogram", "-q", "--json", "--top", "0", jvm }.rows) do histogram[r.class] = r end
  end)
  teardown(function()
    if pid then os.execute("kill " .. pid) end
    if dir then os.execute("rm -rf " .. helper.quote(dir)) end
  end)

  it("JSON: instances sorted by retained or shallow size or dump order, 100 a page, past the last a 404", function()
    assert.are.equal(250, #orders)
    local status, view = page_json(base, "class", "?name=HeapPages%24Order&sort=retained")
    assert.are.equal(200, status, view)
    assert.are.same({ 250, 3, 1, "retained" }, { view.instances, view.pages, view.page, view.sort })
    -- the instances' shallow bytes, and what they retain together (no Order
    -- holds another: the sum of theirs)
    local shallow, retained = 0, 0
    for _, o in ipairs(orders) do shallow, retained = shallow + o.shallow, retained + o.retained end
    assert.are.same({ shallow, retained }, { view.shallow, view.instances_retained })
    for page, first in pairs { [1] = 1, [3] = 201 } do
      local _, p = page_json(base, "class", "?name=HeapPages%24Order&sort=retained&page=" .. page)
      assert.are.equal(page == 3 and 50 or 100, #p.rows)
      for i, r in ipairs(p.rows) do
        local cli = by_retained[first + i - 1]
        assert.are.same({ first + i - 1, cli.id, cli.shallow, cli.retained }, { r.rank, r.id, r.shallow, r.retained })
      end
    end
    assert.are_not.equal(by_retained[1].retained, by_retained[2].retained)
    -- dump order: the CLI's order; shallow: all equal, so dump order too
    for _, sort in ipairs { "id", "shallow" } do
      local _, p = page_json(base, "class", "?name=HeapPages%24Order&page=2&sort=" .. sort)
      for i, r in ipairs(p.rows) do assert.are.equal(orders[100 + i].id, r.id) end
      assert.are.equal(100, #p.rows)
    end
    -- past the last page: 404 saying which is the last; not a number: page 1
    local gone, body = page_json(base, "class", "?name=HeapPages%24Order&page=4")
    assert.are.equal(404, gone)
    assert.truthy(body:find("its last is 3", 1, true), body)
    for _, bad in ipairs { "0", "-2", "x" } do
      local ok, p = page_json(base, "class", "?name=HeapPages%24Order&page=" .. bad)
      assert.are.same({ 200, 1, by_retained[1].id }, { ok, p.page, p.rows[1].id })
    end
    -- a class without instances: one page, empty; its page 2 is a 404
    local _, shape = page_json(base, "class", "?name=HeapPages%24Shape")
    assert.are.same({ 0, 1, 0 }, { shape.instances, shape.pages, #shape.rows })
    assert.are.equal(404, (page_json(base, "class", "?name=HeapPages%24Shape&page=2")))
  end)

  it("JSON: superclasses, subclasses, loader and statics with their types in declaration order", function()
    local _, customer = page_json(base, "class", "?name=HeapPages%24Customer")
    local supers = {}
    for i, s in ipairs(customer.supers) do supers[i] = s.name end
    assert.are.same({ "HeapPages$Person", "java.lang.Object" }, supers)
    assert.are.equal('jdk.internal.loader.ClassLoaders$AppClassLoader "app"', customer.loader.name)
    local _, shape = page_json(base, "class", "?name=HeapPages%24Shape")
    local subs = {}
    for i, s in ipairs(shape.subclasses) do
      subs[i] = { s.name, s.instances }
      assert.are.equal(histogram[s.name].count, s.instances)
    end
    assert.are.same({ { "HeapPages$Circle", 2 }, { "HeapPages$Square", 1 } }, subs)
    -- statics: the source's, in its order, typed, with their values
    local declared = shape_statics()
    assert.are.equal(6, #declared)
    for i, d in ipairs(declared) do
      local s = shape.statics[i]
      assert.are.same({ d.name, d.type }, { s.name, s.type })
      if d.type == "boolean" then assert.are.equal(d.literal == "true", s.value)
      elseif d.type ~= "object" then assert.are.equal(tonumber((d.literal:gsub("L$", ""))), s.value)
      elseif d.literal:match('^"') then assert.are.same({ "java.lang.String", d.literal:sub(2, -2) }, { s.value.class, s.value.string })
      else assert.are.equal("java.util." .. d.literal:match("new (%w+)"), s.value.class)
      end
    end
    -- the class object: its retained size is its object page's (statics
    -- and what only they hold: more than its own bytes here)
    local _, mirror = page_json(base, "object/" .. shape.id)
    assert.are.same({ mirror.retained, mirror.shallow }, { shape.retained, shape.class_shallow })
    assert.is_true(shape.retained > shape.class_shallow)
    -- the loaders page's JSON twin is `sift loaders --json`
    local _, loaders = page_json(base, "loaders")
    assert.are.same(cli_json { "loaders", "--json", "-q", jvm }, loaders)
    -- the other HeapPages$Order, by its class object's id
    local _, order = page_json(base, "class", "?name=HeapPages%24Order")
    assert.are.equal(1, #order.same_name)
    local _, other = page_json(base, "class", "?id=" .. order.same_name[1].id)
    assert.are.same({ "HeapPages$Order", 1, 'HeapPages$ChildFirst "child-first"' },
      { other.name, other.instances, other.loader.name })
    assert.are.equal(histogram["HeapPages$Order"].count, order.instances + other.instances)
  end)

  it("heap:ranked_instances ranks as a sort of every instance does, and names a wrong argument", function()
    local heap <close> = assert(require("sift").open(jvm))
    heap:dominators()
    for _, name in ipairs { "HeapPages$Order", "byte[]", "java.lang.String" } do
      local cls = assert(heap:class(name))
      local all = {}
      for obj in cls:instances() do all[#all + 1] = { obj = obj, at = #all + 1 } end
      assert.is_true(#all > 100, name)
      for _, by in ipairs { "retained", "shallow", "id" } do
        local sorted = {}
        for i, x in ipairs(all) do
          sorted[i] = { obj = x.obj, at = x.at, key = by == "id" and 0 or by == "shallow" and heap:shallow(x.obj)
            or heap:retained(x.obj) or -1 }
        end
        table.sort(sorted, function(a, b)
          if a.key ~= b.key then return a.key > b.key end
          return a.at < b.at
        end)
        for _, skip in ipairs { 0, 37, #all - 5, #all } do
          local got = heap:ranked_instances(cls, { by = by, skip = skip, count = 10 })
          assert.are.equal(math.min(10, #all - skip), #got, name .. " " .. by .. " " .. skip)
          for i, obj in ipairs(got) do assert.are.equal(sorted[skip + i].obj, obj, name .. " " .. by .. " " .. skip) end
        end
      end
    end
    local order = heap:class("HeapPages$Order")
    assert.has_error(function() heap:ranked_instances("HeapPages$Order") end,
      "bad argument #1 to 'ranked_instances' (class expected, got string)")
    assert.has_error(function() heap:ranked_instances(order, { by = "size" }) end,
      "bad argument #2 to 'ranked_instances' (by = 'retained', 'shallow' or 'id' expected, got string)")
    assert.has_error(function() heap:ranked_instances(order, { skip = -1 }) end,
      "bad argument #2 to 'ranked_instances' (skip and count (integers, 0 or more) expected, got number)")
  end)

  it("in headless Chromium: sorted instances, pages, links, statics and the loaders #heavy", function()
    if not helper.have_chromium() then return pending("chromium is not installed (apt-get install chromium)") end
    local href = base:match("^http://[^/]+(/.*)$")
    local dom = helper.dom(base .. "class?name=HeapPages%24Order&sort=retained")
    local rows = instance_rows(dom)
    assert.are.equal(100, #rows)
    for i, r in ipairs(rows) do
      local cli = by_retained[i]
      assert.are.same({ i, cli.id, cli.shallow, cli.retained }, { r.rank, r.id, r.shallow, r.retained })
      if i > 1 then assert.is_true(r.retained < rows[i - 1].retained) end
    end
    assert.truthy(dom:find(('<a href="%sclass?name=HeapPages%%24Order&amp;sort=shallow">shallow size</a>'):format(href),
      1, true), dom)
    assert.are.equal(50, #instance_rows(helper.dom(base .. "class?name=HeapPages%24Order&sort=retained&page=3")))
    local status = get(base .. "class?name=HeapPages%24Order&sort=retained&page=4")
    assert.are.equal(404, status)
    -- Shape: subclasses and statics; Customer: its superclass's link
    local shape = helper.dom(base .. "class?name=HeapPages%24Shape")
    for _, sub in ipairs { "Circle", "Square" } do
      local link = ('<a href="%sclass?name=HeapPages%%24%s">HeapPages$%s</a>'):format(href, sub, sub)
      assert.truthy(shape:find(link, 1, true), link)
    end
    local statics = assert(shape:match('<table id="statics">(.-)</table>'))
    local shown = {}
    for type_, name, value in statics:gmatch('<tr><td><span class="mono">(%w+)</span></td><td>(%w+)</td><td>(.-)</td></tr>') do
      shown[name] = { type_, value }
    end
    assert.are.same({ { "int", "7" }, { "boolean", "true" }, { "double", "0.5" } },
      { shown.created, shown.frozen, shown.ratio })
    assert.are.equal("long", shown.biggest[1])
    assert.truthy(shown.label[2]:find('<span class="str">"shapes"</span>', 1, true), shown.label[2])
    assert.truthy(shape:find('<p class="muted empty" id="instances">No instances.</p>', 1, true))
    local customer = helper.dom(base .. "class?name=HeapPages%24Customer")
    assert.truthy(customer:find(('<td>superclass</td><td><a href="%sclass?name=HeapPages%%24Person">HeapPages$Person</a>')
      :format(href), 1, true), customer)
    -- loaders: the duplicate class with both its loaders linked
    local cli = cli_json { "loaders", "--json", "-q", jvm }
    local loaders = helper.dom(base .. "loaders")
    local dups = assert(loaders:match('<table id="duplicates">(.-)</table>'), loaders)
    local row = assert(dups:match('<tr><td><a href="[^"]*">HeapPages$Order</a></td><td>(.-)</td></tr>'), dups)
    assert.are.equal(1, #cli.duplicates)
    for _, l in ipairs(cli.duplicates[1].loaders) do
      local link = ('<a href="%sobject/%s">%s</a>'):format(href, l.id, l.name:gsub("&", "&amp;"))
      assert.truthy(row:find(link, 1, true), link .. " in " .. row)
    end
    -- Dalvik's dialer: the PathClassLoader's parent is a link; no class is
    -- loaded twice, which the page says in words
    local android_href = android:match("^http://[^/]+(/.*)$")
    local dl = cli_json { "loaders", "--json", "-q", dialer }
    local path_loader
    for _, l in ipairs(dl.loaders) do if l.parent then path_loader = l end end
    local adom = helper.dom(android .. "loaders")
    local parent = ('<td><a href="%sobject/%s">java.lang.BootClassLoader</a></td>'):format(android_href, path_loader.parent)
    assert.truthy(adom:find(parent, 1, true), parent)
    assert.truthy(adom:find('<p class="muted empty" id="duplicates">No class is defined by more than one loader.</p>',
      1, true))
  end)
end)
