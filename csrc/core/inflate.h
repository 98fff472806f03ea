/*
** inflate.h
** Decompress the start of a gzip/zlib or bzip2 stream, so that a sniffer
** can look at what a compressed dump holds without inflating all of it.
*/

#if !defined(sift_inflate_h)
#define sift_inflate_h

#include <stddef.h>

#include "common.h"

typedef enum sift_Compression {
  SIFT_PLAIN = 0,
  SIFT_GZIP,      /* RFC 1952 (1f 8b) */
  SIFT_BZIP2      /* "BZh1".."BZh9" */
} sift_Compression;

sift_Compression sift_compression (const unsigned char *p, size_t n);
const char *sift_compression_name (sift_Compression c);

/*
** Inflate at most `cap` bytes from the start of the stream into `out`;
** *produced is how many came out (less than cap when the stream is
** shorter). Returns SIFT_OK or SIFT_ECORRUPT / SIFT_ETRUNC with a message
** in err. Allocates only inside the call (the codec's state), never calls
** back into Lua, so nothing can leak.
*/
sift_Status sift_inflate_head (sift_Compression c, const unsigned char *in,
                               size_t n, unsigned char *out, size_t cap,
                               size_t *produced, char *err, size_t errsize);

/*
** Decompress the whole stream into the file `out` (a temporary file the
** caller maps afterwards), reporting progress over the compressed bytes.
** More than max bytes out (0: no limit) is SIFT_ETOOBIG (a gzip bomb).
*/
sift_Status sift_inflate_all (sift_Compression c, const unsigned char *in,
                              size_t n, int out, sift_Progress *pr, uint64_t max,
                              char *err, size_t errsize);

#endif
