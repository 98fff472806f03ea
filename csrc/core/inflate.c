/*
** inflate.c
** Head-of-stream decompression with zlib and libbz2.
*/

#define _DEFAULT_SOURCE  /* write */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ZLIB_CONST  /* next_in is const: the input is never written */
#include <bzlib.h>
#include <zlib.h>

#include <stdlib.h>
#include <unistd.h>

#include "inflate.h"


sift_Compression sift_compression (const unsigned char *p, size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
    return SIFT_GZIP;
  if (n >= 4 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9')
    return SIFT_BZIP2;
  return SIFT_PLAIN;
}


const char *sift_compression_name (sift_Compression c) {
  switch (c) {
    case SIFT_GZIP: return "gzip";
    case SIFT_BZIP2: return "bzip2";
    default: return NULL;
  }
}


/* the codecs count in unsigned int; feed them at most this much a time */
#define CHUNK ((size_t)1 << 30)

static sift_Status gunzip_head (const unsigned char *in, size_t n,
                                unsigned char *out, size_t cap,
                                size_t *produced, char *err, size_t errsize) {
  z_stream z;
  size_t fed = 0;
  int rc = Z_OK;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  /* +32: gzip or zlib header */
    snprintf(err, errsize, "cannot start zlib");
    return SIFT_ECORRUPT;
  }
  z.next_out = out;
  z.avail_out = (uInt)(cap < CHUNK ? cap : CHUNK);
  while (z.avail_out > 0) {
    if (z.avail_in == 0 && fed < n) {  /* feed the next piece */
      size_t k = n - fed < CHUNK ? n - fed : CHUNK;
      z.next_in = in + fed;
      z.avail_in = (uInt)k;
      fed += k;
    }
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK) break;
  }
  *produced = (size_t)z.total_out;
  if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
    snprintf(err, errsize, "gzip data is corrupt after %lu compressed bytes"
             " (%s)", (unsigned long)z.total_in, z.msg ? z.msg : "zlib");
    inflateEnd(&z);
    return SIFT_ECORRUPT;
  }
  inflateEnd(&z);
  if (*produced == 0) {
    snprintf(err, errsize, "gzip stream ends before any data");
    return SIFT_ETRUNC;
  }
  return SIFT_OK;
}


static sift_Status bunzip2_head (const unsigned char *in, size_t n,
                                 unsigned char *out, size_t cap,
                                 size_t *produced, char *err,
                                 size_t errsize) {
  bz_stream b;
  int rc = BZ_OK;
  memset(&b, 0, sizeof b);
  if (BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK) {
    snprintf(err, errsize, "cannot start libbz2");
    return SIFT_ECORRUPT;
  }
  b.next_in = (char *)(uintptr_t)in;  /* libbz2 does not write through it */
  b.avail_in = (unsigned)(n < CHUNK ? n : CHUNK);
  b.next_out = (char *)out;
  b.avail_out = (unsigned)(cap < CHUNK ? cap : CHUNK);
  while (b.avail_out > 0 && b.avail_in > 0 && rc == BZ_OK)
    rc = BZ2_bzDecompress(&b);
  *produced = (size_t)b.total_out_lo32 | ((size_t)b.total_out_hi32 << 31 << 1);
  BZ2_bzDecompressEnd(&b);
  if (rc != BZ_OK && rc != BZ_STREAM_END) {
    snprintf(err, errsize, "bzip2 data is corrupt (libbz2 error %d)", rc);
    return SIFT_ECORRUPT;
  }
  if (*produced == 0) {
    snprintf(err, errsize, "bzip2 stream ends before any data");
    return SIFT_ETRUNC;
  }
  return SIFT_OK;
}


sift_Status sift_inflate_head (sift_Compression c, const unsigned char *in,
                               size_t n, unsigned char *out, size_t cap,
                               size_t *produced, char *err, size_t errsize) {
  *produced = 0;
  switch (c) {
    case SIFT_GZIP: return gunzip_head(in, n, out, cap, produced, err,
                                       errsize);
    case SIFT_BZIP2: return bunzip2_head(in, n, out, cap, produced, err,
                                         errsize);
    default:
      snprintf(err, errsize, "not compressed");
      return SIFT_ECORRUPT;
  }
}


/* write all of buf to fd */
static int write_all (int fd, const unsigned char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    buf += w;
    n -= (size_t)w;
  }
  return 1;
}

#define OUTBUF ((size_t)1 << 18)

/* count k more output bytes against max (0: none); 0 when over */
static int within (uint64_t *written, size_t k, uint64_t max, char *err, size_t errsize) {
  *written += k;
  if (max == 0 || *written <= max) return 1;
  snprintf(err, errsize, "decompresses to more than %llu bytes (the limit)", (unsigned long long)max);
  return 0;
}

static sift_Status gunzip_all (const unsigned char *in, size_t n, int out,
                               sift_Progress *pr, uint64_t max, unsigned char *buf,
                               char *err, size_t errsize) {
  z_stream z;
  size_t fed = 0;
  uint64_t written = 0;
  int rc = Z_OK;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) {
    snprintf(err, errsize, "cannot start zlib");
    return SIFT_ECORRUPT;
  }
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && fed < n) {
      size_t k = n - fed < CHUNK ? n - fed : CHUNK;
      z.next_in = in + fed;
      z.avail_in = (uInt)k;
      fed += k;
    }
    z.next_out = buf;
    z.avail_out = (uInt)OUTBUF;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {  /* another member may follow (jcmd -gz) */
      size_t next = fed - z.avail_in;
      if (n - next >= 2 && in[next] == 0x1f && in[next + 1] == 0x8b)
        rc = inflateReset(&z) == Z_OK ? Z_OK : Z_DATA_ERROR;
    }
    if (rc != Z_OK && rc != Z_STREAM_END) {
      snprintf(err, errsize, rc == Z_BUF_ERROR
               ? "gzip data ends early, after %lu compressed bytes"
               : "gzip data is corrupt after %lu compressed bytes",
               (unsigned long)(fed - z.avail_in));
      inflateEnd(&z);
      return rc == Z_BUF_ERROR ? SIFT_ETRUNC : SIFT_ECORRUPT;
    }
    if (!within(&written, OUTBUF - z.avail_out, max, err, errsize)) {
      inflateEnd(&z);
      return SIFT_ETOOBIG;
    }
    if (!write_all(out, buf, OUTBUF - z.avail_out)) {
      snprintf(err, errsize, "cannot write the decompressed dump: %s",
               strerror(errno));
      inflateEnd(&z);
      return SIFT_EIO;
    }
    if (!sift_progress(pr, fed - z.avail_in)) {
      inflateEnd(&z);
      snprintf(err, errsize, "cancelled");
      return SIFT_ECANCEL;
    }
  }
  inflateEnd(&z);
  return SIFT_OK;
}

static sift_Status bunzip2_all (const unsigned char *in, size_t n, int out,
                                sift_Progress *pr, uint64_t max, unsigned char *buf,
                                char *err, size_t errsize) {
  bz_stream b;
  size_t fed = 0;
  uint64_t written = 0;
  int rc = BZ_OK;
  memset(&b, 0, sizeof b);
  if (BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK) {
    snprintf(err, errsize, "cannot start libbz2");
    return SIFT_ECORRUPT;
  }
  while (rc != BZ_STREAM_END) {
    size_t before;
    if (b.avail_in == 0 && fed < n) {
      size_t k = n - fed < CHUNK ? n - fed : CHUNK;
      b.next_in = (char *)(uintptr_t)(in + fed);
      b.avail_in = (unsigned)k;
      fed += k;
    }
    before = b.avail_in;
    b.next_out = (char *)buf;
    b.avail_out = (unsigned)OUTBUF;
    rc = BZ2_bzDecompress(&b);
    if (rc != BZ_OK && rc != BZ_STREAM_END) {
      snprintf(err, errsize, "bzip2 data is corrupt (libbz2 error %d)", rc);
      BZ2_bzDecompressEnd(&b);
      return SIFT_ECORRUPT;
    }
    if (rc == BZ_OK && b.avail_in == 0 && fed == n
        && b.avail_out == OUTBUF && before == 0) {
      snprintf(err, errsize, "bzip2 data ends early");
      BZ2_bzDecompressEnd(&b);
      return SIFT_ETRUNC;
    }
    if (!within(&written, OUTBUF - b.avail_out, max, err, errsize)) {
      BZ2_bzDecompressEnd(&b);
      return SIFT_ETOOBIG;
    }
    if (!write_all(out, buf, OUTBUF - b.avail_out)) {
      snprintf(err, errsize, "cannot write the decompressed dump: %s",
               strerror(errno));
      BZ2_bzDecompressEnd(&b);
      return SIFT_EIO;
    }
    if (!sift_progress(pr, fed - b.avail_in)) {
      BZ2_bzDecompressEnd(&b);
      snprintf(err, errsize, "cancelled");
      return SIFT_ECANCEL;
    }
  }
  BZ2_bzDecompressEnd(&b);
  return SIFT_OK;
}


/* the progress callback must not longjmp (the codec's state is malloc'd):
   Lua callers protect it (lsift.c) */
sift_Status sift_inflate_all (sift_Compression c, const unsigned char *in,
                              size_t n, int out, sift_Progress *pr, uint64_t max,
                              char *err, size_t errsize) {
  unsigned char *buf = (unsigned char *)malloc(OUTBUF);
  sift_Status s;
  if (buf == NULL) {
    snprintf(err, errsize, "not enough memory to decompress");
    return SIFT_ENOMEM;
  }
  if (c == SIFT_GZIP) s = gunzip_all(in, n, out, pr, max, buf, err, errsize);
  else if (c == SIFT_BZIP2) s = bunzip2_all(in, n, out, pr, max, buf, err, errsize);
  else {
    snprintf(err, errsize, "not compressed");
    s = SIFT_ECORRUPT;
  }
  free(buf);
  return s;
}
