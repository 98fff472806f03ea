#!/usr/bin/env python3
"""Check PNGs sift drew from Bitmaps' pixels: bitmap_png.py LIST

Each line of LIST is `PNG RAW WIDTH HEIGHT CONFIG PREMULTIPLIED(0|1)`:
a PNG file sift wrote and the Bitmap's pixel buffer as the dump holds it.
This reader is sift's test oracle, written apart from csrc/core/png.c:
it checks the signature, every chunk's CRC, IHDR and IEND, inflates the
IDAT data and undoes all five row filters; then it computes the pixels
the buffer stands for by the rules docs/heap.md states (ARGB_8888: R, G,
B, A bytes, premultiplied colours divided by alpha, rounded; RGB_565: a
little-endian word, 5/6/5 bits widened by repeating their top bits;
ALPHA_8: black of that alpha) and compares them, pixel by pixel.
Prints one line per PNG: `ok W H` or what differs.
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None, "no PNG signature"
    pos, idat, ihdr, ended = 8, [], None, False
    while pos < len(data):
        if pos + 12 > len(data):
            return None, "a chunk cut short at byte %d" % pos
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            return None, "bad CRC in %s" % kind.decode("latin1")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            ended = True
        pos += 12 + length
    if not ihdr or not ended:
        return None, "no IHDR or no IEND"
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour != 6 or interlace:
        return None, "not 8-bit RGBA (depth %d, colour type %d, interlace %d)" % (depth, colour, interlace)
    raw = zlib.decompress(b"".join(idat))
    stride = width * 4
    if len(raw) != height * (stride + 1):
        return None, "IDAT holds %d bytes, not %d" % (len(raw), height * (stride + 1))
    rows, prev = [], bytearray(stride)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(stride):
            a = cur[i - 4] if i >= 4 else 0
            b = prev[i]
            c = prev[i - 4] if i >= 4 else 0
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
        rows.append(bytes(cur))
        prev = cur
    return (width, height, b"".join(rows)), None


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
