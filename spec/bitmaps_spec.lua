-- Android bitmaps (sift.heap.bitmaps, `sift bitmaps`, the bitmaps page):
-- on the Dalvik 4.4 fixtures, whose Bitmaps keep their pixels in the byte[]
-- mBuffer, every Bitmap `sift histogram` counts is listed, and each PNG
-- `sift bitmaps --png` writes is read back by spec/bitmap_png.py (a PNG
-- reader apart from sift's encoder: signature, CRCs, all five filters) and
-- compared pixel by pixel with the buffer as the library reads it;
-- duplicates are checked against a comparison of every pair of buffers'
-- bytes. ahat's test dump (with its R8 mapping) has two Bitmaps whose
-- pixels are in Bitmap.dumpData as "image/png" but are no PNG
-- (MANIFEST.md); a JVM dump has none. The server serves each picture as
-- image/png; the browser part (#heavy) loads the page in headless
-- Chromium and reads each <img>'s natural size.
require("sift.paths").older_lua()
local cjson = require "cjson"
local sift = require "sift"
local helper = require "spec.helper"

local DIALER = "hprof/android/perflib/dialer.android-hprof"
local BINDER = "hprof/android/leakcanary-1.x/leak_service_binder.hprof"
local AHAT, AHAT_MAP = "hprof/android/ahat/test-dump.hprof", "hprof/android/ahat/test-dump.map"
local JVM = "hprof/generated-jdk17/leaky_jdk17_live.hprof"

local cli_json = helper.sift_json

local function histogram_count(path, class)
  for _, row in ipairs(cli_json({ "histogram", "--json", "--top", "0", "-q", path }).rows) do
    if row.class == class then return row.count end
  end
  return 0
end

-- the Bitmaps of a dump as the library's objects read them: id -> facts
local function bitmap_fields(path)
  local heap = assert(sift.open(path))
  local out = {}
  for obj in heap:class("android.graphics.Bitmap"):instances() do
    out[("0x%x"):format(obj:id())] = { width = obj.mWidth, height = obj.mHeight, buffer = obj.mBuffer:bytes(),
      premultiplied = obj.mIsPremultiplied, heap = obj:heap() }
  end
  heap:close()
  return out
end

local function mode(path)
  local _, out = helper.sh("stat -c %a " .. helper.quote(path))
  return out:match("%d+")
end

describe("sift bitmaps", function()
  for _, rel in ipairs { DIALER, BINDER } do
    it("lists every Bitmap of " .. rel:match("[^/]+$") .. " and draws it: the PNG is the buffer's pixels", function()
      local path = helper.fixture(rel)
      if not path then return end
      local fields = bitmap_fields(path)
      local dir = helper.tmpdir() .. "/pictures"
      local report = cli_json { "bitmaps", "--json", "-q", "--png", dir, path }
      -- as many as `sift histogram` counts (24 in the dialer, 26 in the binder dump)
      local count = histogram_count(path, "android.graphics.Bitmap")
      assert.are.equal(rel == DIALER and 24 or 26, count)
      assert.are.equal(count, report.count)
      assert.are.equal(count, #report.bitmaps)
      local list, translucent = {}, 0
      for _, b in ipairs(report.bitmaps) do
        local f = assert(fields[b.id], b.id)
        assert.are.same({ f.width, f.height, #f.buffer, f.heap }, { b.width, b.height, b.bytes, b.heap })
        -- 4 bytes a pixel: ARGB_8888 (Dalvik keeps no config; the size says it)
        assert.are.same({ "ARGB_8888", "java heap", "image/png", true }, { b.config, b.pixels, b.format, b.picture })
        assert.are.equal(4 * b.width * b.height, b.bytes)
        local raw = helper.tmpfile(f.buffer)
        local png = ("%s/%s.png"):format(dir, b.id)
        list[#list + 1] = ("%s %s %d %d ARGB_8888 %d"):format(png, raw, f.width, f.height, f.premultiplied and 1 or 0)
        assert.are.equal("600", mode(png))
        for i = 4, #f.buffer, 4 do
          local a = f.buffer:byte(i)
          if a > 0 and a < 255 then translucent = translucent + 1 end
        end
      end
      assert.are.equal("700", mode(dir))
      -- premultiplied pixels with 0 < alpha < 255 are there to un-premultiply
      assert.is_true(translucent > 100, "translucent pixels: " .. translucent)
      local manifest = helper.tmpfile(table.concat(list, "\n") .. "\n")
      local ok, out = helper.sh("python3 spec/bitmap_png.py " .. manifest)
      assert(ok, out)
      local lines = helper.lines(out)
      assert.are.equal(count, #lines)
      for i, b in ipairs(report.bitmaps) do
        assert.are.equal(("ok %d %d"):format(b.width, b.height), lines[i])
      end
    end)
  end

  it("groups bitmaps with the same pixels: as a comparison of every pair of buffers finds them", function()
    for _, rel in ipairs { DIALER, BINDER } do
      local path = helper.fixture(rel)
      if not path then return end
      local fields = bitmap_fields(path)
      local expect, by_key, sizes = {}, {}, {}
      for id, f in pairs(fields) do
        local key = f.width .. "x" .. f.height .. ":" .. f.buffer
        by_key[key] = by_key[key] or {}
        table.insert(by_key[key], id)
        sizes[f.width .. "x" .. f.height] = (sizes[f.width .. "x" .. f.height] or 0) + 1
      end
      for _, ids in pairs(by_key) do
        if #ids > 1 then
          table.sort(ids)
          expect[#expect + 1] = table.concat(ids, " ")
        end
      end
      table.sort(expect)
      local got = {}
      local report = cli_json { "bitmaps", "--json", "-q", path }
      for _, g in ipairs(report.duplicates) do
        local ids = { table.unpack(g.bitmaps) }
        table.sort(ids)
        got[#got + 1] = table.concat(ids, " ")
        assert.are.equal(#ids, g.count)
        assert.are.equal((g.buffers - 1) * g.bytes, g.wasted)  -- byte[] shallow = its length (the dump's sizes)
      end
      table.sort(got)
      assert.are.same(expect, got)
      -- the many 44x64 bitmaps (16 in each dump) are different pictures; the binder dump's two
      -- 96x96 app bitmaps are the same one
      assert.are.equal(16, sizes["44x64"])
      assert.are.same(rel == DIALER and {} or { "0xb0f93f80 0xb0f9e288" }, got)
    end
  end)

  it("says which pixels are not drawn, and why: ahat's dumpData that is no PNG; a JVM dump has no bitmaps", function()
    local path, map = helper.fixture(AHAT), helper.fixture(AHAT_MAP)
    local jvm = helper.fixture(JVM)
    if not (path and map and jvm) then return end
    local heap = assert(sift.open(path, { mapping = map }))
    local stuff = heap:class("Main"):static("stuff")
    local one, two = ("0x%x"):format(stuff.bitmapOne:id()), ("0x%x"):format(stuff.bitmapTwo:id())
    local buffer = heap:class("android.graphics.Bitmap"):static("dumpData").buffers[1]
    assert.are.same({ 0, 1, 4, 9, 16, 25 }, { buffer:bytes():byte(1, 6) })  -- byte i = (i*i) & 0xFF: no PNG
    local list = heap:bitmaps()
    local b = list[1].id == one and list[1] or list[2]
    assert.are.equal(one, b.id)
    local png, why = b:png()
    assert.is_nil(png)
    assert.are.equal("pixels in the dump as image/png, but not a valid PNG", why)
    heap:close()
    local report = cli_json { "bitmaps", "--json", "-q", "--mapping", map, path }
    assert.are.equal(2, report.count)
    local by_id = {}
    for _, v in ipairs(report.bitmaps) do by_id[v.id] = v end
    local v = by_id[one]
    assert.are.same({ 100, 200, 1000000, "dump data", "image/png", false },
      { v.width, v.height, v.bytes, v.pixels, v.format, v.picture })
    assert.is_nil(v.config)
    assert.are.same({ { count = 2, buffers = 1, ids = { one, two } } },
      { { count = report.duplicates[1].count, buffers = report.duplicates[1].buffers, ids = report.duplicates[1].bitmaps } })
    -- sift serve --mapping: the page lists them by their real class, as the CLI
    helper.with_server({ files = { path }, data = helper.tmpdir(), mapping = map }, function(get)
      local _, index = get("/index.json")
      local _, served = get(index.files[1].url .. "bitmaps.json")
      assert.are.same(report, served)
    end)
    local text = helper.sift { "bitmaps", "-q", "--mapping", map, path }
    assert.truthy(text:find(one .. "%s+100x200 %?%s+1,000,000 .-pixels in the dump as image/png, but not a valid PNG"), text)
    local none = helper.sift { "bitmaps", "-q", jvm }
    assert.are.equal("no bitmaps: the dump holds no android.graphics.Bitmap\n", none)
    assert.are.equal(0, cli_json({ "bitmaps", "--json", "-q", jvm }).count)
  end)

  it("puts duplicate bitmaps beside duplicate strings and arrays in sift waste", function()
    local path = helper.fixture(BINDER)
    if not path then return end
    local w = cli_json { "waste", "--json", "-q", path }
    assert.are.same({ groups = 1, wasted = 36864 }, w.totals.duplicate_bitmaps)
    assert.are.same({ "0xb0f93f80", "0xb0f9e288" }, w.duplicate_bitmaps[1].bitmaps)
    assert.truthy(w.rules.duplicate_bitmaps:find("pixel buffer of every copy but one", 1, true))
    local text = helper.sift { "waste", "-q", path }
    assert.truthy(text:find("duplicate bitmaps: 1 picture held more than once, 36,864 bytes wasted in all", 1, true), text)
    assert.truthy(text:find("       2       36,864  96x96 ARGB_8888  0xb0f93f80 0xb0f9e288", 1, true), text)
  end)

  it("draws with a clear answer for buffers of the wrong size, empty and absurd sizes", function()
    local path = helper.fixture(DIALER)
    if not path then return end
    local core = require "sift.core"
    local heap = assert(sift.open(path))
    local obj = heap:object(0xb0df29e0)
    local _, num = core.object_parts(obj.mBuffer)
    local png = assert(heap.index:bitmap_png(num, 44, 64, "ARGB_8888", true))
    assert.are.equal("\137PNG\r\n\26\n", png:sub(1, 8))
    assert.are.same({ nil, "44x64 pixels of RGB_565 take 5632 bytes, the buffer holds 11264", "bad_header" },
      { heap.index:bitmap_png(num, 44, 64, "RGB_565", true) })
    assert.are.same({ nil, "a 0x64 bitmap has no pixels to draw", "empty" },
      { heap.index:bitmap_png(num, 0, 64, "ARGB_8888", true) })
    assert.are.same({ nil, "a 100000x2 bitmap is larger than sift draws (32768 pixels a side at most)", "too_big" },
      { heap.index:bitmap_png(num, 100000, 2, "ARGB_8888", true) })
    assert.are.same({ nil, "a 30000x30000 bitmap is larger than sift draws (1073741824 bytes of pixels at most)",
      "too_big" }, { heap.index:bitmap_png(num, 30000, 30000, "ARGB_8888", true) })
    local _, not_bytes = core.object_parts(obj)
    assert.has_error(function() heap.index:bitmap_png(not_bytes, 44, 64, "ARGB_8888", true) end,
      "bad argument #1 to 'bitmap_png' (not a byte[] with its data)")
    assert.has_error(function() heap.index:bitmap_png(num, 44, 64, "ARGB_4444", true) end,
      "bad argument #4 to 'bitmap_png' (invalid option 'ARGB_4444')")
    heap:close()
  end)

  it("serves each picture as image/png, the bytes `sift bitmaps --png` writes", function()
    local path = helper.fixture(BINDER)
    if not path then return end
    local dir = helper.tmpdir()
    cli_json { "bitmaps", "--json", "-q", "--png", dir .. "/png", path }
    helper.with_server({ files = { path }, data = dir .. "/data" }, function(get)
      local _, index = get("/index.json")
      local url = index.files[1].url
      local status, view = get(url .. "bitmaps.json")
      assert.are.equal(200, status)
      assert.are.equal(26, view.count)
      local s, body, h = get(url .. "bitmap/0xb0f9e288.png")
      assert.are.same({ 200, "image/png", "nosniff" }, { s, h:get("content-type"), h:get("x-content-type-options") })
      assert.are.equal(helper.read(dir .. "/png/0xb0f9e288.png"), body)
      local html_status, page = get(url .. "bitmaps", { accept = "text/html" })
      assert.are.equal(200, html_status)
      local _, imgs = page:gsub('<img src="[^"]*/bitmap/0x%x+%.png"', "")
      assert.are.equal(26, imgs)
      assert.truthy(page:find('<table id="duplicates">', 1, true))
      -- the Bitmap's object page shows its picture at its size
      local _, object = get(url .. "object/0xb0f9e288", { accept = "text/html" })
      assert.truthy(object:find(('<p id="picture"><img src="%sbitmap/0xb0f9e288.png" alt="0xb0f9e288" width="96" '
        .. 'height="96"></p>'):format(url), 1, true), object)
      local s404 = get(url .. "bitmap/0x" .. ("%x"):format(0xb0f9e288 + 0x123456) .. ".png")
      assert.are.equal(404, s404)
      local not_bitmap = get(url .. "bitmap/" .. view.bitmaps[1].id:gsub("%x$", "0") .. "0.png")
      assert.are.equal(404, not_bitmap)
    end)
  end)

  it("shows the pictures in a browser at the Bitmaps' width and height #heavy", function()
    local path = helper.fixture(DIALER)
    if not path or not helper.have_chromium() then return end
    local cdp = require "spec.cdp"
    local report = cli_json { "bitmaps", "--json", "-q", path }
    local url, pid = helper.serve { path }
    assert(url, "sift serve did not start")
    local browser = cdp.open { width = 1000, height = 700 }
    local ok, err = pcall(function()
      local req = require("http.request").new_from_uri(url .. "index.json")
      req.headers:upsert("accept", "application/json")
      local _, stream = assert(req:go(60))
      local index = cjson.decode(stream:get_body_as_string())
      local page = url .. index.files[1].url:sub(2) .. "bitmaps"
      helper.wait_for("the bitmaps page past its progress page", function()
        browser:navigate(page)
        return browser:eval("document.getElementById('bitmaps') !== null")
      end)
      local sizes = helper.wait_for("every picture to load", function()
        local got = browser:eval([[(() => {
          const imgs = [...document.querySelectorAll('#bitmaps img')];
          if (!imgs.every(i => i.complete)) return null;
          return JSON.stringify(imgs.map(i => [i.closest('tr').querySelector('td:nth-child(2) a').textContent,
            i.naturalWidth, i.naturalHeight]));
        })()]])
        return got and cjson.decode(got)
      end)
      assert.are.equal(24, #sizes)
      local want = {}
      for _, b in ipairs(report.bitmaps) do want[b.id] = { b.width, b.height } end
      for _, s in ipairs(sizes) do
        assert.are.same(want[s[1]], { s[2], s[3] }, s[1])
      end
    end)
    browser:close()
    os.execute("kill " .. pid)
    assert(ok, err)
  end)
end)
