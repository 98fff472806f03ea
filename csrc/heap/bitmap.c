/*
** bitmap.c
** A Bitmap's pixels as a PNG, one row at a time (bitmap.h), and the
** hash of its buffer.
*/

#include <string.h>

#include "core/png.h"
#include "bitmap.h"

int hb_bpp (hb_Config c) {
  return c == HB_ARGB_8888 ? 4 : c == HB_RGB_565 ? 2 : 1;
}

typedef struct Pixels {
  const unsigned char *px;
  uint32_t w;
  hb_Config c;
  int premultiplied;
} Pixels;

/* a colour premultiplied by alpha a, back to its straight value */
static unsigned char unpremultiply (unsigned c, unsigned a) {
  unsigned v = (c * 255 + a / 2) / a;
  return (unsigned char)(v > 255 ? 255 : v);
}

/* 5 or 6 bits widened to 8 as Skia does: the top bits repeated below */
static unsigned char widen5 (unsigned v) { return (unsigned char)(v << 3 | v >> 2); }
static unsigned char widen6 (unsigned v) { return (unsigned char)(v << 2 | v >> 4); }

static void row_of (void *ud, uint32_t y, unsigned char *rgba) {
  const Pixels *p = (const Pixels *)ud;
  const unsigned char *s = p->px + (uint64_t)y * p->w * (uint64_t)hb_bpp(p->c);
  uint32_t x;
  for (x = 0; x < p->w; x++, rgba += 4) {
    switch (p->c) {
      case HB_ARGB_8888: {
        unsigned a = s[3];
        if (p->premultiplied && a != 255) {
          if (a == 0) rgba[0] = rgba[1] = rgba[2] = 0;
          else {
            rgba[0] = unpremultiply(s[0], a);
            rgba[1] = unpremultiply(s[1], a);
            rgba[2] = unpremultiply(s[2], a);
          }
        }
        else memcpy(rgba, s, 3);
        rgba[3] = (unsigned char)a;
        s += 4;
        break;
      }
      case HB_RGB_565: {
        unsigned v = (unsigned)s[0] | (unsigned)s[1] << 8;
        rgba[0] = widen5(v >> 11);
        rgba[1] = widen6(v >> 5 & 0x3F);
        rgba[2] = widen5(v & 0x1F);
        rgba[3] = 255;
        s += 2;
        break;
      }
      case HB_ALPHA_8:
        rgba[0] = rgba[1] = rgba[2] = 0;
        rgba[3] = *s++;
        break;
    }
  }
}

sift_Status hb_png (const unsigned char *px, uint64_t n, uint32_t w, uint32_t h,
                    hb_Config c, int premultiplied, unsigned char **out,
                    size_t *outlen) {
  Pixels p;
  *out = NULL;
  *outlen = 0;
  /* an absurd size is said as such before the buffer's (w, h < 2^32 and
     bpp <= 4: the product cannot overflow 64 bits) */
  if (w == 0 || h == 0) return SIFT_EEMPTY;
  if (w > SIFT_PNG_MAXSIDE || h > SIFT_PNG_MAXSIDE
      || (1 + 4 * (uint64_t)w) * h > SIFT_PNG_MAXRAW) return SIFT_ETOOBIG;
  if ((uint64_t)w * h * (uint64_t)hb_bpp(c) != n) return SIFT_EHEADER;
  p.px = px;
  p.w = w;
  p.c = c;
  p.premultiplied = premultiplied;
  return sift_png_rgba(w, h, row_of, &p, out, outlen);
}

uint64_t hb_hash (const unsigned char *p, uint64_t n) {
  const uint64_t k = 0x9FB21C651E98DF25u;
  uint64_t h = n * 0xC2B2AE3D27D4EB4Fu, w, i;
  for (i = 0; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    h = (h ^ w) * k;
    h ^= h >> 31;
  }
  if (i < n) {
    w = 0;
    memcpy(&w, p + i, (size_t)(n - i));
    h = (h ^ w) * k;
    h ^= h >> 31;
  }
  return h ^ h >> 33;
}
