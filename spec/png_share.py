#!/usr/bin/env python3
"""What a screenshot holds inside a graph: png_share.py SHOT.png R,G,B

The graph's area is the box its background colour (R,G,B, which nothing
else on the page uses) spans; printed: that box (x0 y0 x1 y1, inclusive)
and the share of its pixels that are not the background (frames, labels),
or "none" when no pixel has that colour. Decodes the PNG itself (8-bit
RGB or RGBA, not interlaced, as Chromium writes its screenshots).
"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG: " + path)
    pos, idat, width = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                sys.exit("unsupported PNG (depth %d, colour type %d, interlace %d)" % (depth, colour, interlace))
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(stride):  # the five PNG filters, undone
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                cur[i] = (cur[i] + a) & 255
            elif kind == 2:
                cur[i] = (cur[i] + b) & 255
            elif kind == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(cur[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = cur
    return rows


def main():
    rows = pixels(sys.argv[1])
    bg = tuple(int(v) for v in sys.argv[2].split(","))
    # (a row or column with a few such pixels is text's anti-aliasing, not
    # the graph: the box is the rows and columns holding 8 or more)
    width = len(rows[0])
    per_row, per_col = [0] * len(rows), [0] * width
    for y, row in enumerate(rows):
        for x, px in enumerate(row):
            if px == bg:
                per_row[y] += 1
                per_col[x] += 1
    ys = [y for y, n in enumerate(per_row) if n >= 8]
    xs = [x for x, n in enumerate(per_col) if n >= 8]
    if not xs or not ys:
        print("none")
        return
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    inside = sum(1 for y in range(y0, y1 + 1) for x in range(x0, x1 + 1) if rows[y][x] == bg)
    total = (x1 - x0 + 1) * (y1 - y0 + 1)
    print(x0, y0, x1, y1, "%.4f" % (1 - inside / total))


main()
