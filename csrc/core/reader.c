/*
** reader.c
** The out-of-line parts of the bounds-checked reader: variable-length
** integers, byte runs, strings, and the wording of failures.
*/

#include <string.h>

#include "reader.h"


void sift_reader_init (sift_Reader *r, const void *base, size_t size) {
  static const unsigned char nothing[1] = {0};  /* no NULL + 0 arithmetic */
  r->base = base != NULL ? (const unsigned char *)base : nothing;
  r->size = base != NULL ? size : 0;
  r->pos = 0;
  r->status = SIFT_OK;
  r->what = NULL;
  r->at = 0;
  r->need = 0;
}


sift_Status sift_rd_error (const sift_Reader *r, sift_Error *e,
                           const char *prefix) {
  unsigned long long at = (unsigned long long)r->at;
  unsigned long long left = (unsigned long long)(r->size - r->at);
  const char *what = r->what ? r->what : "data";
  switch (r->status) {
    case SIFT_OK:
      return sift_fail(e, r->status, "%sno error", prefix);
    case SIFT_ETRUNC:
      if (r->need == UINT64_MAX)  /* a count whose byte size overflows */
        return sift_fail(e, r->status, "%struncated %s at byte %llu: needs "
                         "more than 2^64 bytes, %llu left", prefix, what, at, left);
      if (r->need > 0)
        return sift_fail(e, r->status, "%struncated %s at byte %llu: needs "
                         "%llu byte%s, %llu left", prefix, what, at,
                         (unsigned long long)r->need, r->need == 1 ? "" : "s", left);
      if (strcmp(what, "string") == 0)
        return sift_fail(e, r->status, "%sunterminated string at byte %llu: "
                         "no NUL in the %llu byte%s left", prefix, at, left,
                         left == 1 ? "" : "s");
      return sift_fail(e, r->status, "%struncated %s at byte %llu: input ends "
                       "after %llu byte%s", prefix, what, at, left, left == 1 ? "" : "s");
    case SIFT_EVARINT:
      return sift_fail(e, r->status, "%sbad %s at byte %llu: does not fit in "
                       "64 bits", prefix, what, at);
    default:
      return sift_fail(e, r->status, "%sbad %s at byte %llu", prefix, what, at);
  }
}


/*
** Base-128 integers share one loop of at most 10 bytes. It returns the last
** byte and the bits consumed so the callers can apply their own rule for a
** 10th byte: protobuf drops what does not fit, LEB128 rejects it.
*/
static int read_base128 (sift_Reader *r, const char *what,
                         uint64_t *v, int *lastbyte, int *shift_out) {
  const unsigned char *p = r->base + r->pos;
  size_t left = sift_rd_left(r);
  uint64_t x = 0;
  int shift = 0;
  size_t i;
  for (i = 0; i < left && i < 10; i++) {
    unsigned b = p[i];
    x |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
    if ((b & 0x80) == 0) {
      r->pos += i + 1;
      *v = x;
      *lastbyte = (int)b;
      *shift_out = shift;
      return 1;
    }
  }
  if (i == 10)  /* a continuation bit on the 10th byte */
    return sift_rd_fail(r, SIFT_EVARINT, what, 0);
  return sift_rd_fail(r, SIFT_ETRUNC, what, 0);
}


int sift_rd_varint (sift_Reader *r, uint64_t *v) {
  int last, shift;
  return read_base128(r, "varint", v, &last, &shift);
}


int sift_rd_uleb128 (sift_Reader *r, uint64_t *v) {
  int last, shift;
  size_t start = r->pos;
  if (!read_base128(r, "uleb128", v, &last, &shift)) return 0;
  if (shift == 70 && last > 1) {  /* only bit 63 may come from byte 10 */
    r->pos = start;
    return sift_rd_fail(r, SIFT_EVARINT, "uleb128", 0);
  }
  return 1;
}


int sift_rd_sleb128 (sift_Reader *r, int64_t *v) {
  int last, shift;
  uint64_t x;
  size_t start = r->pos;
  if (!read_base128(r, "sleb128", &x, &last, &shift)) return 0;
  if (shift == 70 && last != 0 && last != 0x7f) {  /* 0 or all sign bits */
    r->pos = start;
    return sift_rd_fail(r, SIFT_EVARINT, "sleb128", 0);
  }
  if (shift < 64 && (last & 0x40))  /* sign-extend */
    x |= ~(uint64_t)0 << shift;
  *v = (int64_t)x;
  return 1;
}


int sift_rd_bytes (sift_Reader *r, uint64_t n, const unsigned char **p) {
  if (!sift_rd_has(r, n)) return sift_rd_fail(r, SIFT_ETRUNC, "bytes", n);
  *p = r->base + r->pos;
  r->pos += (size_t)n;
  return 1;
}


int sift_rd_cstring (sift_Reader *r, const char **s, size_t *len) {
  const unsigned char *start = r->base + r->pos;
  const unsigned char *nul = (const unsigned char *)memchr(start, 0,
                                                           sift_rd_left(r));
  if (nul == NULL) return sift_rd_fail(r, SIFT_ETRUNC, "string", 0);
  *s = (const char *)start;
  *len = (size_t)(nul - start);
  r->pos += *len + 1;
  return 1;
}
