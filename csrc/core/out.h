/*
** out.h
** A buffered byte writer for the converters: big-endian integers (HPROF),
** protobuf varints (BMD), raw bytes. It writes to a FILE, or only grows
** its buffer when there is none (a record built before its length is
** known). A failed write or allocation is remembered and reported once by
** sift_out_flush, so writers need not check every call.
*/

#if !defined(sift_out_h)
#define sift_out_h

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sift_Out {
  FILE *f;              /* NULL: everything stays in buf */
  unsigned char *buf;
  size_t n, cap;
  uint64_t flushed;     /* bytes already written to f */
  int failed;           /* a write or an allocation failed */
} sift_Out;

void sift_out_init (sift_Out *o, FILE *f);
void sift_out_free (sift_Out *o);

void sift_out_bytes (sift_Out *o, const void *p, size_t n);
void sift_out_fill (sift_Out *o, int c, uint64_t n);  /* n bytes c */
void sift_out_u1 (sift_Out *o, unsigned v);
void sift_out_u2be (sift_Out *o, uint32_t v);
void sift_out_u4be (sift_Out *o, uint32_t v);
void sift_out_u8be (sift_Out *o, uint64_t v);
void sift_out_varint (sift_Out *o, uint64_t v);

static inline void sift_out_zeros (sift_Out *o, uint64_t n) {
  sift_out_fill(o, 0, n);
}

/* protobuf int32: a negative value is sign-extended to 64 bits (10 bytes) */
static inline void sift_out_int32 (sift_Out *o, int32_t v) {
  sift_out_varint(o, (uint64_t)(int64_t)v);
}

/* bytes written so far, flushed or not */
static inline uint64_t sift_out_size (const sift_Out *o) {
  return o->flushed + o->n;
}

/* write what is buffered; 0 when anything failed since init */
int sift_out_flush (sift_Out *o);

#endif
