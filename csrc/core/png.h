/*
** png.h
** A PNG encoder for the pictures sift draws (a Bitmap's pixels): 8-bit
** RGBA (colour type 6), not interlaced, every row with filter 0, the
** image data in one zlib-compressed IDAT chunk. Pure C over zlib.
*/

#if !defined(sift_png_h)
#define sift_png_h

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* the largest picture drawn: a side, and the bytes of its rows (a
   16384 x 16384 ARGB_8888 Bitmap is 1 GiB; Android's own limit is lower) */
#define SIFT_PNG_MAXSIDE 32768u
#define SIFT_PNG_MAXRAW ((uint64_t)1 << 30)

/* fills row y (0 = the top) of the picture: 4 bytes a pixel, R G B A */
typedef void (*sift_PngRow) (void *ud, uint32_t y, unsigned char *rgba);

/*
** The PNG of a w x h picture whose rows `row` gives. *out is malloc'd (the
** caller frees it), *n its length. SIFT_OK; SIFT_EEMPTY for a side of 0;
** SIFT_ETOOBIG past the limits above; SIFT_ENOMEM.
*/
sift_Status sift_png_rgba (uint32_t w, uint32_t h, sift_PngRow row, void *ud,
                           unsigned char **out, size_t *n);

#endif
