/*
** png.c
** The PNG encoder (png.h). A PNG is the 8-byte signature and chunks, each
** `length (u4, big-endian), type (4 letters), data, CRC-32 of type and
** data`: IHDR (width, height, bit depth 8, colour type 6 = RGBA,
** compression 0, filter 0, interlace 0), IDAT (the zlib stream of the
** rows, each row a filter-type byte and its pixels) and an empty IEND.
*/

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "png.h"

static void put_u32 (unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* the chunk at p: its length and type are written, its `len` data bytes
   are in place after them; adds the CRC and returns the chunk's size */
static size_t close_chunk (unsigned char *p, const char *type, uint32_t len) {
  uLong crc;
  put_u32(p, len);
  memcpy(p + 4, type, 4);
  crc = crc32(0L, p + 4, (uInt)(4 + len));  /* type and data: contiguous */
  put_u32(p + 8 + len, (uint32_t)crc);
  return (size_t)len + 12;
}

sift_Status sift_png_rgba (uint32_t w, uint32_t h, sift_PngRow row, void *ud,
                           unsigned char **out, size_t *n) {
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  uint64_t stride = 1 + 4 * (uint64_t)w, rawlen = stride * h;
  unsigned char *raw, *png;
  uLongf zlen;
  size_t at;
  uint32_t y;
  *out = NULL;
  *n = 0;
  if (w == 0 || h == 0) return SIFT_EEMPTY;
  if (w > SIFT_PNG_MAXSIDE || h > SIFT_PNG_MAXSIDE || rawlen > SIFT_PNG_MAXRAW)
    return SIFT_ETOOBIG;
  raw = (unsigned char *)malloc((size_t)rawlen);
  if (raw == NULL) return SIFT_ENOMEM;
  for (y = 0; y < h; y++) {
    raw[y * stride] = 0;  /* filter type 0: the bytes as they are */
    row(ud, y, raw + y * stride + 1);
  }
  zlen = compressBound((uLong)rawlen);
  png = (unsigned char *)malloc(sizeof signature + 25 + 12 + (size_t)zlen + 12);
  if (png == NULL) {
    free(raw);
    return SIFT_ENOMEM;
  }
  memcpy(png, signature, sizeof signature);
  at = sizeof signature;
  put_u32(png + at + 8, w);
  put_u32(png + at + 12, h);
  png[at + 16] = 8;   /* bits per sample */
  png[at + 17] = 6;   /* colour type: RGB with alpha */
  png[at + 18] = 0;   /* compression: zlib deflate */
  png[at + 19] = 0;   /* filter method 0 */
  png[at + 20] = 0;   /* not interlaced */
  at += close_chunk(png + at, "IHDR", 13);
  if (compress2(png + at + 8, &zlen, raw, (uLong)rawlen, Z_DEFAULT_COMPRESSION) != Z_OK) {
    free(raw);
    free(png);
    return SIFT_ENOMEM;  /* the only failure left with a big enough buffer */
  }
  free(raw);
  at += close_chunk(png + at, "IDAT", (uint32_t)zlen);
  at += close_chunk(png + at, "IEND", 0);
  *out = png;
  *n = at;
  return SIFT_OK;
}
