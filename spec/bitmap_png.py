#!/usr/bin/env python3
"""Check PNGs sift drew from Bitmaps' pixels: bitmap_png.py LIST

Each line of LIST is `PNG RAW WIDTH HEIGHT CONFIG PREMULTIPLIED(0|1)`:
a PNG file sift wrote and the Bitmap's pixel buffer as the dump holds it.
Its reader (spec/png_read.py) is sift's test oracle, written apart from
csrc/core/png.c: the signature, every chunk's CRC, IHDR and IEND, the
IDAT data inflated and all five row filters undone; then it computes the pixels
the buffer stands for by the rules docs/heap.md states (ARGB_8888: R, G,
B, A bytes, premultiplied colours divided by alpha, rounded; RGB_565: a
little-endian word, 5/6/5 bits widened by repeating their top bits;
ALPHA_8: black of that alpha) and compares them, pixel by pixel.
Prints one line per PNG: `ok W H` or what differs.
"""
import struct
import sys

import png_read


def read_png(path):
    try:
        width, height, bpp, pixels = png_read.read(path)
    except ValueError as e:
        return None, str(e)
    if bpp != 4:
        return None, "not RGBA"
    return (width, height, pixels), None


def expected(buf, width, height, config, premultiplied):
    out = bytearray()
    for i in range(width * height):
        if config == "ARGB_8888":
            r, g, b, a = buf[4 * i:4 * i + 4]
            if premultiplied and a == 0:
                r = g = b = 0
            elif premultiplied and a != 255:
                r, g, b = (min(255, (v * 255 + a // 2) // a) for v in (r, g, b))
            out += bytes((r, g, b, a))
        elif config == "RGB_565":
            (v,) = struct.unpack("<H", buf[2 * i:2 * i + 2])
            r5, g6, b5 = v >> 11, (v >> 5) & 63, v & 31
            out += bytes(((r5 << 3 | r5 >> 2), (g6 << 2 | g6 >> 4), (b5 << 3 | b5 >> 2), 255))
        else:
            out += bytes((0, 0, 0, buf[i]))
    return bytes(out)


def main():
    for line in open(sys.argv[1]):
        png, raw, w, h, config, premul = line.split()
        w, h = int(w), int(h)
        got, why = read_png(png)
        if not got:
            print(png, why)
            continue
        gw, gh, pixels = got
        if (gw, gh) != (w, h):
            print(png, "IHDR says %dx%d, the Bitmap %dx%d" % (gw, gh, w, h))
            continue
        want = expected(open(raw, "rb").read(), w, h, config, premul == "1")
        if pixels != want:
            at = next(i for i in range(len(want)) if pixels[i] != want[i]) // 4
            print(png, "pixel (%d, %d) is %s, the buffer says %s" % (at % w, at // w, tuple(pixels[4 * at:4 * at + 4]),
                                                                     tuple(want[4 * at:4 * at + 4])))
            continue
        print("ok", gw, gh)


main()
