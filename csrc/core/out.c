/*
** out.c
** The buffered byte writer (see out.h).
*/

#include <stdlib.h>
#include <string.h>

#include "out.h"

#define FLUSH_AT ((size_t)1 << 16)

void sift_out_init (sift_Out *o, FILE *f) {
  memset(o, 0, sizeof *o);
  o->f = f;
}

void sift_out_free (sift_Out *o) {
  free(o->buf);
  o->buf = NULL;
  o->n = o->cap = 0;
}

static int reserve (sift_Out *o, size_t n) {
  size_t cap = o->cap ? o->cap : 4096;
  unsigned char *b;
  if (o->failed) return 0;
  if (o->f && o->n + n > FLUSH_AT && o->n > 0) {
    if (fwrite(o->buf, 1, o->n, o->f) != o->n) return o->failed = 1, 0;
    o->flushed += o->n;
    o->n = 0;
  }
  if (o->n + n <= o->cap) return 1;
  while (cap < o->n + n) {
    if (cap > SIZE_MAX / 2) return o->failed = 1, 0;
    cap *= 2;
  }
  if ((b = (unsigned char *)realloc(o->buf, cap)) == NULL) return o->failed = 1, 0;
  o->buf = b;
  o->cap = cap;
  return 1;
}

void sift_out_bytes (sift_Out *o, const void *p, size_t n) {
  if (n > 0 && reserve(o, n)) {
    memcpy(o->buf + o->n, p, n);
    o->n += n;
  }
}

void sift_out_fill (sift_Out *o, int c, uint64_t n) {
  while (n > 0 && !o->failed) {
    size_t k = n < FLUSH_AT ? (size_t)n : FLUSH_AT;
    if (!reserve(o, k)) return;
    memset(o->buf + o->n, c, k);
    o->n += k;
    n -= k;
  }
}

void sift_out_u1 (sift_Out *o, unsigned v) {
  if (reserve(o, 1)) o->buf[o->n++] = (unsigned char)v;
}

void sift_out_u2be (sift_Out *o, uint32_t v) {
  unsigned char b[2];
  b[0] = (unsigned char)(v >> 8);
  b[1] = (unsigned char)v;
  sift_out_bytes(o, b, 2);
}

void sift_out_u4be (sift_Out *o, uint32_t v) {
  unsigned char b[4];
  int i;
  for (i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (24 - 8 * i));
  sift_out_bytes(o, b, 4);
}

void sift_out_u8be (sift_Out *o, uint64_t v) {
  sift_out_u4be(o, (uint32_t)(v >> 32));
  sift_out_u4be(o, (uint32_t)v);
}

void sift_out_varint (sift_Out *o, uint64_t v) {
  unsigned char b[10];
  size_t n = 0;
  do {
    b[n] = (unsigned char)(v & 0x7F);
    v >>= 7;
    if (v) b[n] |= 0x80;
    n++;
  } while (v);
  sift_out_bytes(o, b, n);
}

int sift_out_flush (sift_Out *o) {
  if (o->failed) return 0;
  if (o->f && o->n > 0) {
    if (fwrite(o->buf, 1, o->n, o->f) != o->n) return o->failed = 1, 0;
    o->flushed += o->n;
    o->n = 0;
  }
  if (o->f && fflush(o->f) != 0) return o->failed = 1, 0;
  return 1;
}
