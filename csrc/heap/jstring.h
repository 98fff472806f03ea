/*
** jstring.h
** Java's view of a string's bytes, as BMD needs it: what
** `new String(bytes, UTF_8)` makes of them on JDK 17 (malformed sequences
** become U+FFFD the way its decoder replaces them), that string's
** hashCode(), and the bytes of its getBytes(UTF_8).
*/

#if !defined(sift_jstring_h)
#define sift_jstring_h

#include <stddef.h>
#include <stdint.h>

/* Returns the length of the re-encoded bytes and sets *hash; writes the
   bytes to out unless it is NULL (out needs room for 3 * n bytes). */
size_t sift_java_string (const unsigned char *s, size_t n, int32_t *hash,
                         unsigned char *out);

#endif
