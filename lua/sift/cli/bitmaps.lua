--- `sift bitmaps`: every android.graphics.Bitmap of a heap dump with its
-- size, config, pixel buffer and retained size, the bitmaps held twice,
-- and (--png DIR) each picture as a file.
-- @module sift.cli.bitmaps

local bitmaps = require "sift.heap.bitmaps"
local json = require "sift.json"
local common = require "sift.cli.common"
local heap_cli = require "sift.cli.heap"

local M = { define = {}, commands = {} }

local EXIT_OK, EXIT_BAD_INPUT, printable, group_digits = common.EXIT_OK, common.EXIT_BAD_INPUT, common.printable,
  common.group_digits

function M.define.bitmaps(parser)
  local cmd = parser:command("bitmaps", "List Android bitmaps: size, config, pixel buffer, retained size, where the "
    .. "pixels are (the Java heap up to Android 7, Bitmap.dumpData of `am dumpheap -b`, else not in the dump), and "
    .. "those held more than once (ahat's bitmap view and duplicate bitmaps).")
  heap_cli.heap_options(cmd)
  heap_cli.model_option(cmd)
  cmd:option("--png", "Write each picture into DIR as 0x….png (or .jpg, .webp: the dump's own image), files "
    .. "0600 in a directory 0700.")
  cmd:flag("--json", "Print JSON: {model, count, bitmaps: [{id, class, width, height, config, bytes, pixels, "
    .. "format, picture, note, shallow, retained, density, recycled, mutable, premultiplied, heap}], duplicates, "
    .. "rule}.")
end

-- write each picture into dir (made private); the files written, or nil
-- after saying why on err
local function write_pictures(list, dir, err)
  local core = require "sift.core"
  local ok, why = core.private(dir, "dir")
  if not ok then
    err:write("sift: --png: ", printable(why), "\n")
    return nil
  end
  local written = 0
  for _, b in ipairs(list) do
    local bytes, mime = b:image()
    if bytes then
      local path = ("%s/%s.%s"):format(dir, b.id, bitmaps.EXTENSIONS[mime])
      local made, f, msg
      made, msg = core.private(path)
      if made then f, msg = io.open(path, "wb") end
      if not f then
        err:write("sift: --png: ", printable(msg), "\n")
        return nil
      end
      f:write(bytes)
      f:close()
      written = written + 1
    elseif b.pixels == "java heap" then  -- pixels there, yet not drawn: say why
      err:write("sift: ", b.id, ": ", printable(mime), "\n")
    end
  end
  return written
end

function M.commands.bitmaps(args, out, err)
  local heap <close> = heap_cli.heap_or_report(args, err, true)
  if not heap then return EXIT_BAD_INPUT end
  heap._model = args.model
  local report, list = bitmaps.report(heap, { model = args.model })
  local status = EXIT_OK
  if args.png then
    local written = write_pictures(list, args.png, err)
    if not written then status = EXIT_BAD_INPUT
    elseif not args.json then out:write(("%d pictures written to %s\n"):format(written, printable(args.png))) end
  end
  if args.json then
    out:write(json.encode(report), "\n")
  elseif #list == 0 then
    out:write("no bitmaps: the dump holds no android.graphics.Bitmap\n")
  else
    out:write(("%d bitmaps (sizes --model %s)\n"):format(#list, report.model))
    out:write(("%-12s %11s %-9s %10s %10s %10s %-7s  %s\n"):format("bitmap", "size", "config", "bytes", "shallow",
      "retained", "heap", "pixels"))
    for _, b in ipairs(list) do
      out:write(("%-12s %11s %-9s %10s %10s %10s %-7s  %s\n"):format(b.id, ("%sx%s"):format(b.width, b.height),
        b.config or "?", b.bytes and group_digits(b.bytes) or "-", group_digits(b.shallow),
        b.retained and group_digits(b.retained) or "-", b.heap,
        b.note and printable(b.note) or (b.pixels .. ", " .. b.format)))
    end
    out:write(("\nduplicate bitmaps (%d): count, bytes wasted, size, config, bitmaps\nwasted: %s\n"):format(
      #report.duplicates, report.rule))
    for _, d in ipairs(report.duplicates) do
      out:write(("%8s %12s  %dx%d %s  %s\n"):format(group_digits(d.count), group_digits(d.wasted), d.width, d.height,
        d.config or d.format, table.concat(d.bitmaps, " ")))
    end
  end
  return status
end

return M
