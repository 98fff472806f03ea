-- The object page of sift serve, as ahat's object view shows one: fields
-- grouped by declaring class in declaration order with their types,
-- Strings' text beside their links, byte[] as a hex dump and text, char[]
-- as text, object arrays' elements with their sizes, referrers with the
-- field or index they refer through. One server over the HeapPages jcmd
-- dump made at test time (spec/java/HeapPages.java: the Customer planted
-- at HeapPages.planted) and Dalvik's dialer dump (its Bitmaps' pixels in
-- byte[] mBuffer). The field order is read from the Java source, the sizes
-- from `sift path --retained --json`, the hex dump's layout from xxd run on
-- the same bytes; the browser part reads headless Chromium's DOM (#heavy).
require("sift.paths").older_lua()
local cjson = require "cjson"
local helper = require "spec.helper"

local SOURCE = "spec/java/HeapPages.java"
local DIALER = "hprof/android/perflib/dialer.android-hprof"

local get = helper.http_get

-- an object page's JSON twin: its status and view (a JSON client is
-- answered once the file is open)
local function object(base, id, query)
  local status, body = get(base .. "object/" .. id .. ".json" .. (query or ""), "application/json")
  return status, cjson.decode(body)
end

local cli_json = helper.sift_json

-- the instance fields a class declares in the Java source, in order:
-- { name, type as HPROF says it (primitives by name, the rest "object") }
local function declared(class)
  local body = assert(helper.read(SOURCE):match("class " .. class .. "[^{]*{(.-)\n    }"), class)
  local out = {}
  for type_, name in body:gmatch("\n%s*final ([%w%[%]]+) (%w+)") do
    local primitive = type_:match("^(%l+)$")
    out[#out + 1] = { name = name, type = primitive or "object" }
  end
  return out
end

-- the bytes of a JSON hex string
local function unhex(h) return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end)) end

-- xxd -g1 over bytes (the peer of the byte[] page's dump)
local function xxd(bytes)
  local file = helper.tmpfile(bytes)
  local ok, out = helper.sh("xxd -g1 " .. helper.quote(file))
  os.remove(file)
  assert(ok, out)
  return (out:gsub("\n$", ""))
end

local function unescape(s)
  return (s:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&#39;", "'"):gsub("&amp;", "&"))
end

describe("the object page of sift serve", function()
  local jvm, why = helper.jvm_dump("HeapPages")
  local dialer = helper.fixture(DIALER)
  if not jvm or not dialer then
    it("needs a JDK and the fixtures", function() pending(why or "shared fixtures not found") end)
    return
  end
  local url, pid, dir, base, android, customer, orders
  setup(function()
    url, pid, dir = helper.serve { jvm, dialer }
    assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
    local _, index = get(url .. "index.json", "application/json")
    for _, f in ipairs(cjson.decode(index).files) do
      if f.name == jvm:match("[^/]+$") then base = url .. f.url:sub(2) else android = url .. f.url:sub(2) end
    end
    customer = cli_json { "path", "-q", "--json", "--retained", "--class", "HeapPages$Customer", jvm }
    assert.are.equal(1, #customer)
    customer = customer[1]
    orders = {}
    for _, o in ipairs(cli_json { "path", "-q", "--json", "--retained", "--limit", "0", "--class", "HeapPages$Order", jvm }) do
      orders[o.id] = o
    end
  end)
  teardown(function()
    if pid then os.execute("kill " .. pid) end
    if dir then os.execute("rm -rf " .. helper.quote(dir)) end
  end)

  -- the planted Customer's fields by name, from its page's JSON
  local function customer_fields()
    local status, view = object(base, customer.id)
    assert.are.equal(200, status)
    local by = {}
    for _, f in ipairs(view.fields) do by[f.name] = f end
    return view, by
  end

  it("JSON: fields by declaring class in source order with types, Strings' text, previews, sizes, referrers' via", function()
    local view, by = customer_fields()
    assert.are.same({ customer.id, customer.shallow, customer.retained }, { view.id, view.shallow, view.retained })
    -- the object's class's own fields first, then its superclass's (ahat's
    -- order), each class's in the order the source declares them
    local expected = {}
    for _, class in ipairs { "Customer", "Person" } do
      for _, f in ipairs(declared(class)) do
        expected[#expected + 1] = { name = f.name, type = f.type, declared_by = "HeapPages$" .. class }
      end
    end
    local shown = {}
    for i, f in ipairs(view.fields) do shown[i] = { name = f.name, type = f.type, declared_by = f.declared_by } end
    assert.are.same(expected, shown)
    assert.are.same({ "Ada Lovelace", "ada@example.org", 36, 3 },
      { by.name.value.string, by.email.value.string, by.age.value, by.tier.value })
    assert.are.same({ "java.lang.String", "byte[]", "char[]", "HeapPages$Order[]" },
      { by.name.value.class, by.notes.value.class, by.initials.value.class, by.orders.value.class })
    -- byte[] notes: the page's bytes as hex and as text; char[] as text
    local _, notes = object(base, by.notes.value.id)
    assert.are.same({ 0, "7669700001", "vip\0\1", 5, 1 },
      { notes.bytes.offset, notes.bytes.hex, notes.bytes.text, notes.length, notes.pages })
    local _, initials = object(base, by.initials.value.id)
    assert.are.equal("AL", initials.text)
    -- Order[3]: each element with the CLI's shallow and retained size
    local _, arr = object(base, by.orders.value.id)
    assert.are.equal(3, #arr.elements)
    for i, e in ipairs(arr.elements) do
      local cli = assert(orders[e.value.id], e.value.id)
      assert.are.same({ i - 1, "HeapPages$Order", cli.shallow, cli.retained },
        { e.index, e.value.class, e.shallow, e.retained })
    end
    assert.are_not.equal(arr.elements[1].retained, arr.elements[2].retained)
    -- referrers, with what they refer through
    local function via(list)
      local out = {}
      for _, r in ipairs(list) do out[r.class .. " " .. r.id] = table.concat(r.via, " ") end
      return out
    end
    local _, first = object(base, arr.elements[1].value.id)
    local refs = via(first.referrers)
    assert.are.equal("[0]", refs["HeapPages$Order[] " .. arr.id])
    local _, big = object(base, orders[arr.elements[1].value.id].path[#orders[arr.elements[1].value.id].path - 1].id)
    assert.are.equal(250, big.length)
    assert.are.equal("[0]", refs["HeapPages$Order[] " .. big.id])
    assert.are.equal(".orders", via(arr.referrers)["HeapPages$Customer " .. customer.id])
    assert.are.equal("static HeapPages.planted", via(view.referrers)["java.lang.Class " .. customer.path[#customer.path - 1].id])
    -- pages past the end: 404; the last page: 200
    assert.are.same({ 404, 404, 200 }, { (object(base, arr.id, "?page=2")), (object(base, by.notes.value.id, "?page=2")),
      (object(base, big.id, "?page=3")) })
    assert.are.equal(404, (object(base, big.id, "?page=4")))
  end)

  it("JSON on Dalvik's dump: a String's text, its char[] as text, a Bitmap's mBuffer paged by 4,096 bytes as xxd dumps them",
    function()
    local bitmaps = cli_json { "path", "-q", "--json", "--limit", "0", "--class", "android.graphics.Bitmap", dialer }
    local buffer, size
    for _, b in ipairs(bitmaps) do
      local _, view = object(android, b.id)
      for _, f in ipairs(view.fields) do
        if f.name == "mBuffer" and type(f.value) == "table" then
          local _, arr = object(android, f.value.id)
          if arr.length > 4096 * 2 and (not size or arr.length < size) then buffer, size = arr, arr.length end
        end
      end
    end
    assert.truthy(buffer, "no Bitmap of the dialer dump has an mBuffer over 8 kB")
    assert.are.same({ (size + 4095) // 4096, 4096 * 2, 0, 4095 },
      { buffer.pages, #buffer.bytes.hex, buffer.first, buffer.last })
    local status, last = object(android, buffer.id, "?page=" .. buffer.pages)
    assert.are.same({ 200, (buffer.pages - 1) * 4096, size - 1, 2 * (size - (buffer.pages - 1) * 4096) },
      { status, last.bytes.offset, last.last, #last.bytes.hex })
    assert.are.equal(404, (object(android, buffer.id, "?page=" .. buffer.pages + 1)))
    -- the HTML's dump of page 1 is xxd's of the same bytes
    local _, page = get(android .. "object/" .. buffer.id)
    assert.are.equal(xxd(unhex(buffer.bytes.hex)), unescape(assert(page:match('<pre id="hexdump">(.-)</pre>'))))
    -- a String of the dump: its text, and its value char[] holds it
    local _, strings = get(android .. "class.json?name=java.lang.String", "application/json")
    local checked = 0
    for _, row in ipairs(cjson.decode(strings).rows) do
      local _, s = object(android, row.id)
      local value
      for _, f in ipairs(s.fields) do if f.name == "value" then value = f.value end end
      if s.string and #s.string > 3 and type(value) == "table" then
        local _, chars = object(android, value.id)
        assert.truthy(chars.text:find(s.string, 1, true), s.string)
        assert.are.equal("java.lang.String", s.fields[1].declared_by)
        checked = checked + 1
      end
      if checked == 3 then break end
    end
    assert.are.equal(3, checked)
  end)

  it("in headless Chromium: the groups, the Strings' text, the hex dump, the sizes and the via column #heavy", function()
    if not helper.have_chromium() then return pending("chromium is not installed (apt-get install chromium)") end
    local href = base:match("^http://[^/]+(/.*)$")
    local _, by = customer_fields()
    local dom = helper.dom(base .. "object/" .. customer.id)
    local groups, names = {}, {}
    for class, body in dom:gmatch('<tbody class="declared" data%-class="([^"]+)">(.-)</tbody>') do
      groups[#groups + 1] = class
      for name in body:gmatch('<td class="mono">%w+</td><td>(%w+)</td>') do names[#names + 1] = name end
    end
    assert.are.same({ "HeapPages$Customer", "HeapPages$Person" }, groups)
    local expected = {}
    for _, class in ipairs { "Customer", "Person" } do
      for _, f in ipairs(declared(class)) do expected[#expected + 1] = f.name end
    end
    assert.are.same(expected, names)
    for field, text in pairs { name = "Ada Lovelace", email = "ada@example.org" } do
      local link = ('<td>%s</td><td><a href="%sobject/%s">java.lang.String@%s</a> <span class="str">"%s"</span></td>')
        :format(field, href, by[field].value.id, by[field].value.id, text)
      assert.truthy(dom:find(link, 1, true), link)
    end
    -- byte[] notes: xxd's line and the text; char[] initials
    local notes = helper.dom(base .. "object/" .. by.notes.value.id)
    local dump = assert(notes:match('<pre id="hexdump">(.-)</pre>'))
    assert.are.equal(xxd("vip\0\1"), dump)
    assert.truthy(dump:find("76 69 70 00 01 ", 1, true) and dump:find(" vip..$"), dump)
    assert.are.equal('"vip\\u0000\\u0001"', notes:match('<pre id="text">(.-)</pre>'))
    local initials = helper.dom(base .. "object/" .. by.initials.value.id)
    assert.are.equal('"AL"', initials:match('<pre id="text">(.-)</pre>'))
    -- Order[3]: each element's sizes, as sift path --retained says them
    local arr = helper.dom(base .. "object/" .. by.orders.value.id)
    local rows = 0
    for index, id, shallow, retained in arr:gmatch('<tr><td class="n"><span class="n">(%d+)</span></td><td><a href="[^"]*/object/(0x%x+)">'
        .. '[^<]*</a></td><td class="n"><span class="n">([%d,]+)</span></td><td class="n"><span class="n">([%d,]+)</span></td></tr>') do
      local cli = assert(orders[id], id)
      assert.are.same({ rows, cli.shallow, cli.retained }, { tonumber(index), tonumber((shallow:gsub(",", ""))),
        tonumber((retained:gsub(",", ""))) })
      rows = rows + 1
    end
    assert.are.equal(3, rows)
    assert.truthy(arr:find(('<a href="%sobject/%s">HeapPages$Customer@%s</a></td><td><span class="mono">.orders</span>')
      :format(href, customer.id, customer.id), 1, true))
    -- the first Order's referrers: both arrays, through [0]
    local first = arr:match('<td><a href="[^"]*/object/(0x%x+)">HeapPages$Order@')
    local order = helper.dom(base .. "object/" .. first)
    local referrers = assert(order:match('<table id="referrers">(.-)</table>'))
    local seen = {}
    for name, via in referrers:gmatch('>(HeapPages$Order%[%d+%])@0x%x+</a></td><td><span class="mono">([^<]*)</span>') do
      seen[#seen + 1] = name .. " " .. via
    end
    table.sort(seen)
    assert.are.same({ "HeapPages$Order[250] [0]", "HeapPages$Order[3] [0]" }, seen)
  end)
end)
