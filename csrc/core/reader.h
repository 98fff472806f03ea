/*
** reader.h
** A bounds-checked cursor over bytes in memory (a mapped file or a Lua
** string). Every read checks what is left first and never moves past the
** end; a failed read leaves the position where it was and records what was
** expected at which offset, so the caller can report it.
** Pure C: no Lua here, so decoders and fuzz harnesses share it.
*/

#if !defined(sift_reader_h)
#define sift_reader_h

#include <stddef.h>
#include <stdint.h>

#include "common.h"

typedef struct sift_Reader {
  const unsigned char *base;  /* first byte */
  size_t size;                /* bytes in all */
  size_t pos;                 /* offset of the next read */
  /* the last failure (status SIFT_OK while none) */
  sift_Status status;
  const char *what;           /* what was being read: "u4", "varint", ... */
  size_t at;                  /* offset where that read started */
  uint64_t need;              /* bytes it needed; 0 when unknown */
} sift_Reader;

void sift_reader_init (sift_Reader *r, const void *base, size_t size);

/* record a failure at the current position; always returns 0 (inline,
   so that compilers see the outputs of a failed read are never used) */
static inline int sift_rd_fail (sift_Reader *r, sift_Status s,
                                const char *what, uint64_t need) {
  r->status = s;
  r->what = what;
  r->at = r->pos;
  r->need = need;
  return 0;
}

/* the last failure into e, after prefix (e.g. "bmd: "): "truncated u4 at
   byte 17: needs 4 bytes, 2 left"; returns its status */
sift_Status sift_rd_error (const sift_Reader *r, sift_Error *e,
                           const char *prefix);

static inline size_t sift_rd_left (const sift_Reader *r) {
  return r->size - r->pos;
}

/* are n more bytes there? */
static inline int sift_rd_has (const sift_Reader *r, uint64_t n) {
  return n <= (uint64_t)(r->size - r->pos);
}

/* check that `count` elements of `elsize` bytes fit in what is left, before
   anything is allocated from an untrusted count (no overflow possible) */
static inline int sift_rd_fits (sift_Reader *r, uint64_t count,
                                uint64_t elsize, const char *what) {
  uint64_t left = sift_rd_left(r);
  if (elsize != 0 && count > left / elsize)
    return sift_rd_fail(r, SIFT_ETRUNC, what,
                        count > UINT64_MAX / elsize ? UINT64_MAX
                                                    : count * elsize);
  return 1;
}


/*
** {======================================================
** Fixed-width integers: u1, and u2/u4/u8 in both byte orders
** =======================================================
*/

static inline int sift_rd_u1 (sift_Reader *r, uint8_t *v) {
  if (r->pos >= r->size) return sift_rd_fail(r, SIFT_ETRUNC, "u1", 1);
  *v = r->base[r->pos++];
  return 1;
}

/* 4 bytes at p, big-endian (a form compilers make one load and a byte
   swap of) */
static inline uint32_t sift_be32 (const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* read n (<= 8) bytes as an unsigned integer, big- or little-endian; with
   n and big constants (the wrappers below), big-endian 4 and 8 are a load
   and a byte swap, the rest a loop the compiler unrolls */
static inline int sift_rd_uint (sift_Reader *r, int n, int big,
                                const char *what, uint64_t *v) {
  const unsigned char *p;
  uint64_t x = 0;
  int i;
  if (!sift_rd_has(r, (uint64_t)n))
    return sift_rd_fail(r, SIFT_ETRUNC, what, (uint64_t)n);
  p = r->base + r->pos;
  if (big && n == 4) x = sift_be32(p);
  else if (big && n == 8) x = (uint64_t)sift_be32(p) << 32 | sift_be32(p + 4);
  else
    for (i = 0; i < n; i++)
      x |= (uint64_t)p[big ? i : n - 1 - i] << (8 * (n - 1 - i));
  r->pos += (size_t)n;
  *v = x;
  return 1;
}

/* sift_rd_u2be, sift_rd_u2le, ... : typed wrappers of sift_rd_uint */
#define SIFT_RD_FIXED(name, T, n, big, what) \
  static inline int name (sift_Reader *r, T *v) { \
    uint64_t x; \
    if (!sift_rd_uint(r, n, big, what, &x)) return 0; \
    *v = (T)x; \
    return 1; \
  }

SIFT_RD_FIXED(sift_rd_u2be, uint16_t, 2, 1, "u2")
SIFT_RD_FIXED(sift_rd_u2le, uint16_t, 2, 0, "u2")
SIFT_RD_FIXED(sift_rd_u4be, uint32_t, 4, 1, "u4")
SIFT_RD_FIXED(sift_rd_u4le, uint32_t, 4, 0, "u4")
SIFT_RD_FIXED(sift_rd_u8be, uint64_t, 8, 1, "u8")
SIFT_RD_FIXED(sift_rd_u8le, uint64_t, 8, 0, "u8")

/* }====================================================== */


/*
** {======================================================
** Variable-length integers and byte runs (reader.c)
** =======================================================
*/

/* protobuf base-128 varint: 7 bits a byte, low group first, at most 10
   bytes; bits past 64 in a 10th byte are dropped, as protobuf does */
int sift_rd_varint (sift_Reader *r, uint64_t *v);

/* unsigned LEB128 (DWARF, dex, ART traces): at most 10 bytes, and a value
   that does not fit in 64 bits is an error */
int sift_rd_uleb128 (sift_Reader *r, uint64_t *v);

/* signed LEB128: sign taken from bit 6 of the last byte */
int sift_rd_sleb128 (sift_Reader *r, int64_t *v);

/* n raw bytes; *p points into the input (no copy) */
int sift_rd_bytes (sift_Reader *r, uint64_t n, const unsigned char **p);

/* bytes up to a NUL, which is consumed but not counted in *len */
int sift_rd_cstring (sift_Reader *r, const char **s, size_t *len);

static inline int sift_rd_skip (sift_Reader *r, uint64_t n) {
  if (!sift_rd_has(r, n)) return sift_rd_fail(r, SIFT_ETRUNC, "bytes", n);
  r->pos += (size_t)n;
  return 1;
}

/* }====================================================== */

#endif
