/*
** fuzz_bitmap.c
** libFuzzer harness for drawing a Bitmap's pixels as a PNG (bitmap.c,
** png.c). The input is width (u16, big-endian), height (u16), config
** (a byte, mod 3) and the pixel bytes, as untrusted as a dump's. A PNG
** comes back exactly when the bytes are width x height pixels; it starts
** with the signature, ends with IEND, and its IDAT inflates to the rows.
*/

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "heap/bitmap.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static uint32_t u32 (const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  unsigned char *png = NULL;
  size_t n = 0;
  uint32_t w, h;
  hb_Config c;
  uint64_t pixels;
  sift_Status s;
  if (size < 5) return 0;
  w = (uint32_t)data[0] << 8 | data[1];
  h = (uint32_t)data[2] << 8 | data[3];
  c = (hb_Config)(data[4] % 3);
  pixels = size - 5;
  s = hb_png(data + 5, pixels, w, h, c, data[4] & 0x80, &png, &n);
  if (w == 0 || h == 0) assert(s == SIFT_EEMPTY);
  else if ((uint64_t)w * h * (uint64_t)hb_bpp(c) != pixels) assert(s != SIFT_OK);
  else assert(s == SIFT_OK || s == SIFT_ETOOBIG || s == SIFT_ENOMEM);
  if (s == SIFT_OK) {
    uLongf rawlen = (uLongf)((1 + 4 * (uint64_t)w) * h);
    unsigned char *raw = (unsigned char *)malloc(rawlen + 1);
    uint32_t idat = u32(png + 33);
    assert(n > 57 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
    assert(u32(png + 16) == w && u32(png + 20) == h);
    assert(memcmp(png + 37, "IDAT", 4) == 0 && 33 + 12 + (size_t)idat + 12 == n);
    assert(memcmp(png + n - 8, "IEND", 4) == 0);
    if (raw != NULL) {
      uLongf got = rawlen + 1;
      assert(uncompress(raw, &got, png + 41, idat) == Z_OK && got == rawlen);
      free(raw);
    }
  }
  else assert(png == NULL);
  free(png);
  return 0;
}
