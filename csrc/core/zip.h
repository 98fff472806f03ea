/*
** zip.h
** The entries of a zip (jar, apk) read in place from its central
** directory: names, and their bytes stored or inflated. Every offset and
** size is checked against the input; zip64 is not read.
*/

#if !defined(sift_zip_h)
#define sift_zip_h

#include <stddef.h>

#include "core/common.h"

typedef struct sift_Zip {
  const unsigned char *p;
  size_t n, eocd, pos, k, entries;
} sift_Zip;

typedef struct sift_ZipEntry {
  const unsigned char *name;
  size_t namelen;
  size_t method, csize, usize, local;
} sift_ZipEntry;

/* find the central directory; SIFT_ECORRUPT with a message if none */
sift_Status sift_zip_open (sift_Zip *z, const unsigned char *p, size_t n, char *err, size_t errsize);

/* the next entry: 1 and *e filled, 0 after the last (or a damaged record) */
int sift_zip_next (sift_Zip *z, sift_ZipEntry *e);

/* 1 when the entry's name ends with suffix */
int sift_zip_ends (const sift_ZipEntry *e, const char *suffix);

/*
** An entry's bytes: *body points into the zip (stored) or to a buffer
** *owned the caller frees (deflated, at most max bytes). SIFT_OK, or
** SIFT_ECORRUPT (damaged, or a method other than store and deflate: the
** caller skips it), SIFT_ETOOBIG, SIFT_ENOMEM.
*/
sift_Status sift_zip_read (const sift_Zip *z, const sift_ZipEntry *e, size_t max,
                           const unsigned char **body, size_t *size, unsigned char **owned);

#endif
