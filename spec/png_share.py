#!/usr/bin/env python3
"""What a screenshot holds inside a graph: png_share.py SHOT.png R,G,B

The graph's area is the box its background colour (R,G,B, which nothing
else on the page uses) spans; printed: that box (x0 y0 x1 y1, inclusive)
and the share of its pixels that are not the background (frames, labels),
or "none" when no pixel has that colour. Decodes the PNG with
spec/png_read.py (8-bit RGB or RGBA, not interlaced, as Chromium writes
its screenshots).
"""
import sys

import png_read


def pixels(path):
    try:
        width, height, bpp, data = png_read.read(path)
    except ValueError as e:
        sys.exit("%s: %s" % (path, e))
    stride = width * bpp
    return [[tuple(data[y * stride + x * bpp:y * stride + x * bpp + 3]) for x in range(width)] for y in range(height)]


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
