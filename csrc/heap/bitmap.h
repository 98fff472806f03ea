/*
** bitmap.h
** The pixels of an android.graphics.Bitmap as the dump holds them (Android
** up to 7 keeps them in the Java heap, the byte[] mBuffer) drawn as a PNG,
** and a hash of a buffer's bytes for finding duplicates. Pure C; which
** Bitmap, its size and its config are lua/sift/heap/bitmaps.lua's.
*/

#if !defined(sift_bitmap_h)
#define sift_bitmap_h

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"

/*
** How Skia lays a pixel out in mBuffer (little-endian devices):
** ARGB_8888 4 bytes R, G, B, A, colours premultiplied by alpha (unless the
** Bitmap says otherwise); RGB_565 a 16-bit little-endian word, red in the
** top 5 bits, green in the middle 6, blue in the low 5; ALPHA_8 one byte
** of alpha (a mask: drawn here as black of that opacity).
*/
typedef enum hb_Config { HB_ARGB_8888, HB_RGB_565, HB_ALPHA_8 } hb_Config;

/* bytes per pixel of a config */
int hb_bpp (hb_Config c);

/*
** The PNG (8-bit RGBA) of w x h pixels px of config c: n must be exactly
** w * h * hb_bpp(c). premultiplied: ARGB_8888 colours are divided by
** their alpha (rounded; alpha 0 gives 0, 0, 0, 0). *out is malloc'd.
** SIFT_OK; SIFT_EEMPTY, SIFT_ETOOBIG (checked first) and SIFT_ENOMEM as
** sift_png_rgba; SIFT_EHEADER when n is not that size.
*/
sift_Status hb_png (const unsigned char *px, uint64_t n, uint32_t w, uint32_t h,
                    hb_Config c, int premultiplied, unsigned char **out,
                    size_t *outlen);

/* a 64-bit hash of n bytes: brings candidate duplicates together; only
   equal bytes make a duplicate */
uint64_t hb_hash (const unsigned char *p, uint64_t n);

#endif
