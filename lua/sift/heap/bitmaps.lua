--- Android Bitmaps: every `android.graphics.Bitmap` of a heap with its
-- size, config, pixel buffer and retained size; its picture where the dump
-- holds the pixels; and bitmaps held twice, found by content (ahat's
-- bitmap view and `findDuplicateBitmaps`, Android Studio's bitmap preview).
--
-- Where the pixels are depends on the Android version:
--
-- * up to 7 (Dalvik 4.4 and ART alike): in the Java heap, the `byte[]`
--   `mBuffer`, as Skia lays them out. The Bitmap keeps no config field, so
--   it is inferred from the buffer's size, as Android Studio does:
--   `bytes / (width × height)` 4 is ARGB_8888, 2 RGB_565, 1 ALPHA_8. Two
--   bytes could also be ARGB_4444; it is taken as RGB_565, as Studio takes
--   it, because ARGB_4444 is deprecated since API 13 and no decoder makes
--   it unless asked.
-- * 8 and later: in native memory (`mNativePtr`), not in the dump. A dump
--   taken with `am dumpheap -b png|jpg|webp` holds a compressed copy of
--   each: the static `Bitmap.dumpData` (a `Bitmap$DumpData`: `format`, as
--   `Bitmap.CompressFormat` numbers it, and `natives[i]`, the `mNativePtr`
--   of the Bitmap whose image is `buffers[i]`, for i below `count`). That
--   image is served as it is when its first bytes are what its format
--   starts with.
--
--     local bitmaps = require "sift.heap.bitmaps"
--     for _, b in ipairs(heap:bitmaps()) do print(b.id, b.width, b.height, b.config, b:png()) end
-- @module sift.heap.bitmaps

local core = require "sift.core"
local json = require "sift.json"
local shared = require "sift.heap.index"

local object_parts = core.object_parts
local Heap = shared.Heap

local M = {}

--- The class whose instances (and its subclasses') are bitmaps.
M.CLASS = "android.graphics.Bitmap"

-- bytes per pixel -> the config Skia stored them in (see above)
local CONFIGS = { [4] = "ARGB_8888", [2] = "RGB_565", [1] = "ALPHA_8" }

-- Bitmap.CompressFormat: JPEG, PNG, WEBP, WEBP_LOSSY, WEBP_LOSSLESS
local FORMATS = { [0] = "image/jpeg", [1] = "image/png", [2] = "image/webp", [3] = "image/webp", [4] = "image/webp" }

-- whether an image's first bytes are those of its format
local MAGIC = {
  ["image/png"] = function(s) return s:sub(1, 8) == "\137PNG\r\n\26\n" end,
  ["image/jpeg"] = function(s) return s:sub(1, 3) == "\255\216\255" end,
  ["image/webp"] = function(s) return s:sub(1, 4) == "RIFF" and s:sub(9, 12) == "WEBP" end,
}

local NAMES = { ["image/png"] = "PNG", ["image/jpeg"] = "JPEG", ["image/webp"] = "WebP" }

--- What a file name of each picture ends with.
M.EXTENSIONS = { ["image/png"] = "png", ["image/jpeg"] = "jpg", ["image/webp"] = "webp" }

--- What `duplicates` counts as wasted, as its output states it.
M.RULE = "freed if deduplicated: the pixel buffer of every copy but one (same width, height, config and pixel "
  .. "bytes); copies that share one buffer free nothing, and pixels in native memory (Android 8+) are not in the "
  .. "dump, so they count 0. The same byte[] buffers are also among the duplicate arrays"

local Bitmap = {}
Bitmap.__index = Bitmap

local function field(obj, name)
  if obj:has_field(name) then return obj:field(name) end
  return nil
end

local function number_of(obj)
  local _, num = object_parts(obj)
  return num
end

-- Bitmap$DumpData of the heap: mNativePtr -> its buffer (an Object), and
-- the format's MIME type; nil when the dump has none
local function dump_data(cls)
  local data = cls:statics().dumpData
  if type(data) ~= "userdata" or not data:is_instance_of(M.CLASS .. "$DumpData") then return nil end
  local count, format = field(data, "count"), FORMATS[field(data, "format")]
  local natives, buffers = field(data, "natives"), field(data, "buffers")
  if not (count and format and natives and buffers) then return nil end
  local by_native = {}
  for i = 1, math.min(count, #natives, #buffers) do
    local buffer = buffers[i]
    if buffer then by_native[natives[i]] = buffer end
  end
  return { format = format, buffers = by_native }
end

-- the facts of one Bitmap: where its pixels are, their config or format,
-- and whether sift can show them (`note` says why not)
local function describe(heap, obj, data, model)
  local w, h = field(obj, "mWidth"), field(obj, "mHeight")
  local b = setmetatable({
    object = obj, id = ("0x%x"):format(obj:id()), class = obj:class_name(), width = w, height = h,
    density = field(obj, "mDensity"), recycled = field(obj, "mRecycled"), mutable = field(obj, "mIsMutable"),
    premultiplied = field(obj, "mIsPremultiplied"), heap = obj:heap(), shallow = heap:shallow(obj, model),
    retained = heap:retained(obj), _heap = heap,
  }, Bitmap)
  local buffer = field(obj, "mBuffer")
  local native = field(obj, "mNativePtr")
  if type(buffer) == "userdata" and buffer:class_name() == "byte[]" then
    b.buffer, b.bytes, b.pixels = buffer, buffer:length(), "java heap"
    local area = (w or 0) * (h or 0)
    if area > 0 and b.bytes % area == 0 then b.config = CONFIGS[b.bytes // area] end
    if not w or not h or area <= 0 then
      b.note = ("a %sx%s bitmap has no pixels to draw"):format(tostring(w), tostring(h))
    elseif not b.config then
      b.note = ("its buffer of %d bytes does not hold %dx%d pixels of any config (4, 2 or 1 bytes each)")
        :format(b.bytes, w, h)
    else
      b.format = "image/png"
    end
  elseif native and data and data.buffers[native] then
    local image = data.buffers[native]
    b.buffer, b.bytes, b.pixels, b.format = image, image:length(), "dump data", data.format
    if not MAGIC[data.format](image:bytes():sub(1, 12)) then
      b.note = ("pixels in the dump as %s, but not a valid %s"):format(data.format, NAMES[data.format])
      b.format = nil
      b.dump_format = data.format
    end
  elseif b.recycled then
    b.note = "recycled: its pixels were freed"
  else
    b.note = native and "pixels not in the dump: native memory (Android 8+ keeps them outside the Java heap; a "
      .. "dump taken with `am dumpheap -b png` holds a copy)" or "pixels not in the dump"
  end
  return b
end

--- Every Bitmap (instances of android.graphics.Bitmap and its
-- subclasses), largest pixel buffer first: Bitmap records with `object`,
-- `id` ("0x…"), `class`, `width`, `height`, `config` ("ARGB_8888",
-- "RGB_565", "ALPHA_8", nil when not known), `bytes` (the pixel buffer in
-- the dump, nil when none), `pixels` ("java heap", "dump data" or nil),
-- `format` (the MIME type of `b:image()`, nil when there is no picture),
-- `note` (why there is none), `shallow`, `retained`, `density`,
-- `recycled`, `mutable`, `premultiplied` (nil where the dump has no such
-- field), `heap` (app, zygote, image, default). opts: `model` (sizes: the
-- heap's by default).
function Heap:bitmaps(opts)
  opts = opts or {}
  shared.check_model(opts.model, "bitmaps", 1)
  local cls = self:class(M.CLASS)
  local out = json.array {}
  if not cls then return out end
  local model = opts.model or self._model or "shark"
  self:dominators { model = model }
  local data = dump_data(cls)
  for obj in cls:instances { subclasses = true } do out[#out + 1] = describe(self, obj, data, model) end
  table.sort(out, function(a, b)
    if (a.bytes or 0) ~= (b.bytes or 0) then return (a.bytes or 0) > (b.bytes or 0) end
    return a.object:id() < b.object:id()
  end)
  return out
end

--- The Bitmap record (as `heap:bitmaps()` makes them) of one object, or
-- nil when it is no Bitmap.
function M.of(heap, obj, opts)
  opts = opts or {}
  local cls = heap:class(M.CLASS)
  if not (cls and obj:kind() == "instance" and obj:is_instance_of(cls)) then return nil end
  local model = opts.model or heap._model or "shark"
  heap:dominators { model = model }
  return describe(heap, obj, dump_data(cls), model)
end

--- The picture as a PNG: drawn from the raw pixels, or the dump's own PNG.
-- nil and why when there is none (not in the dump, not a valid PNG, a
-- buffer of the wrong size...) or the dump's image is a JPEG or WebP (see
-- `image`).
function Bitmap:png()
  if self.format ~= "image/png" then return nil, self.note or ("its picture is a %s"):format(self.format) end
  if self.pixels == "dump data" then return self.buffer:bytes() end
  return self._heap.index:bitmap_png(number_of(self.buffer), self.width, self.height, self.config,
    self.premultiplied ~= false)
end

--- The picture as bytes and their MIME type: the PNG drawn, or the dump's
-- own image as it is; nil and why when there is none.
function Bitmap:image()
  if self.format and self.format ~= "image/png" then return self.buffer:bytes(), self.format end
  local png, why, code = self:png()
  if not png then return nil, why, code end
  return png, "image/png"
end

--- A Bitmap's facts as JSON (what `sift bitmaps --json` prints per bitmap).
function M.view(b)
  return { id = b.id, class = b.class, width = b.width, height = b.height, config = b.config, bytes = b.bytes,
    pixels = b.pixels, format = b.format or b.dump_format, picture = b.format ~= nil, note = b.note,
    shallow = b.shallow, retained = b.retained, density = b.density, recycled = b.recycled, mutable = b.mutable,
    premultiplied = b.premultiplied, heap = b.heap }
end

--- Bitmaps held more than once: the same width, height, config (or
-- dump format) and pixel bytes (a hash in C brings candidates together;
-- only equal bytes make a group, and bitmaps sharing one buffer are one
-- too, as ahat groups them). Groups `{count, width, height, config,
-- format, bytes (one copy's buffer), buffers (distinct buffers among
-- them), wasted (M.RULE), bitmaps (ids)}`, most wasted first, then
-- largest. `list` is `heap:bitmaps()`'s (made when not given).
function M.duplicates(heap, list, opts)
  opts = opts or {}
  list = list or heap:bitmaps(opts)
  local model = opts.model or heap._model or "shark"
  local index, buckets, order = heap.index, {}, {}
  for _, b in ipairs(list) do
    if b.buffer and b.width and b.height then
      local num = number_of(b.buffer)
      local key = ("%d %d %s %d %d"):format(b.width, b.height, b.config or b.format or b.dump_format, b.bytes,
        index:array_hash(num) or 0)
      if not buckets[key] then buckets[key], order[#order + 1] = {}, key end
      local classes = buckets[key]
      local home
      for _, c in ipairs(classes) do
        if index:same_bytes(number_of(c[1].buffer), num) then home = c break end
      end
      if not home then home = {} classes[#classes + 1] = home end
      home[#home + 1] = b
    end
  end
  local groups = json.array {}
  for _, key in ipairs(order) do
    for _, c in ipairs(buckets[key]) do
      if #c > 1 then
        local first, seen, buffers, ids = c[1], {}, 0, json.array {}
        for i, b in ipairs(c) do
          ids[i] = b.id
          local num = number_of(b.buffer)
          if not seen[num] then seen[num], buffers = true, buffers + 1 end
        end
        local wasted = first.pixels == "java heap" and (buffers - 1) * heap:shallow(first.buffer, model) or 0
        groups[#groups + 1] = { count = #c, width = first.width, height = first.height, config = first.config,
          format = first.format or first.dump_format, pixels = first.pixels, bytes = first.bytes, buffers = buffers,
          wasted = wasted, bitmaps = ids }
      end
    end
  end
  table.sort(groups, function(a, b)
    if a.wasted ~= b.wasted then return a.wasted > b.wasted end
    if a.width * a.height ~= b.width * b.height then return a.width * a.height > b.width * b.height end
    return a.bitmaps[1] < b.bitmaps[1]
  end)
  return groups
end

--- Everything `sift bitmaps --json` prints: `{model, count, bitmaps
-- (M.view each), duplicates, rule}`.
function M.report(heap, opts)
  opts = opts or {}
  local list = heap:bitmaps(opts)
  local views = json.array {}
  for i, b in ipairs(list) do views[i] = M.view(b) end
  return { model = opts.model or heap._model or "shark", count = #list, bitmaps = views,
    duplicates = M.duplicates(heap, list, opts), rule = M.RULE }, list
end

return M
