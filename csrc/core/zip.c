/*
** zip.c
** Reading a zip's entries in place (see zip.h). The central directory's
** end record is searched backwards over at most its comment's 64 kB.
*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/zip.h"

static uint32_t le2 (const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t le4 (const unsigned char *p) { return le2(p) | le2(p + 2) << 16; }

sift_Status sift_zip_open (sift_Zip *z, const unsigned char *p, size_t n, char *err, size_t errsize) {
  size_t eocd;
  if (n < 22) {
    snprintf(err, errsize, "no zip directory (not a jar or apk, or cut short)");
    return SIFT_ECORRUPT;
  }
  for (eocd = n - 22; le4(p + eocd) != 0x06054b50u; eocd--) {
    if (eocd == 0 || n - eocd > 65557) {
      snprintf(err, errsize, "no zip directory (not a jar or apk, or cut short)");
      return SIFT_ECORRUPT;
    }
  }
  z->p = p;
  z->n = n;
  z->eocd = eocd;
  z->entries = le2(p + eocd + 10);
  z->pos = le4(p + eocd + 16);
  z->k = 0;
  if (z->pos > eocd) {
    snprintf(err, errsize, "zip directory offset %zu is past its end (zip64 is not read)", z->pos);
    return SIFT_ECORRUPT;
  }
  return SIFT_OK;
}

int sift_zip_next (sift_Zip *z, sift_ZipEntry *e) {
  const unsigned char *p = z->p;
  size_t pos = z->pos, namelen;
  if (z->k >= z->entries || z->eocd - pos < 46 || le4(p + pos) != 0x02014b50u) return 0;
  namelen = le2(p + pos + 28);
  if (z->eocd - pos - 46 < namelen) return 0;
  e->method = le2(p + pos + 10);
  e->csize = le4(p + pos + 20);
  e->usize = le4(p + pos + 24);
  e->local = le4(p + pos + 42);
  e->name = p + pos + 46;
  e->namelen = namelen;
  z->pos = pos + 46 + namelen + le2(p + pos + 30) + le2(p + pos + 32);
  if (z->pos > z->eocd) z->pos = z->eocd;
  z->k++;
  return 1;
}

int sift_zip_ends (const sift_ZipEntry *e, const char *suffix) {
  size_t k = strlen(suffix);
  return e->namelen >= k && memcmp(e->name + e->namelen - k, suffix, k) == 0;
}

sift_Status sift_zip_read (const sift_Zip *z, const sift_ZipEntry *e, size_t max,
                           const unsigned char **body, size_t *size, unsigned char **owned) {
  const unsigned char *p = z->p;
  size_t n = z->n, data;
  z_stream s;
  unsigned char *buf;
  *owned = NULL;
  if (e->local > n || n - e->local < 30) return SIFT_ECORRUPT;
  data = e->local + 30 + le2(p + e->local + 26) + le2(p + e->local + 28);
  if (data > n || n - data < e->csize) return SIFT_ECORRUPT;
  if (e->method == 0) {
    *body = p + data;
    *size = e->csize;
    return SIFT_OK;
  }
  if (e->method != 8) return SIFT_ECORRUPT;
  if (e->usize > max) return SIFT_ETOOBIG;
  if (e->usize / 1032 > e->csize) return SIFT_ECORRUPT;  /* deflate cannot expand that much */
  if ((buf = (unsigned char *)malloc(e->usize ? e->usize : 1)) == NULL) return SIFT_ENOMEM;
  memset(&s, 0, sizeof s);
  if (inflateInit2(&s, -15) != Z_OK) { free(buf); return SIFT_ENOMEM; }
  s.next_in = (Bytef *)(uintptr_t)(p + data);
  s.avail_in = (uInt)e->csize;
  s.next_out = buf;
  s.avail_out = (uInt)e->usize;
  if (inflate(&s, Z_FINISH) != Z_STREAM_END || s.total_out != e->usize) {
    inflateEnd(&s);
    free(buf);
    return SIFT_ECORRUPT;
  }
  inflateEnd(&s);
  *body = *owned = buf;
  *size = e->usize;
  return SIFT_OK;
}
