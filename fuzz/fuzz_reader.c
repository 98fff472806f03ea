/*
** fuzz_reader.c
** libFuzzer harness for the bounds-checked reader. The first byte says how
** many of the following bytes are a program of reads; the rest is the
** input, placed at the very end of the fuzzer's buffer so that ASan sees
** any read past it. Checks the reader's promises: a failed read does not
** move, the position never passes the end, every failure has a message.
*/

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "core/reader.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  sift_Reader r;
  size_t nops, i;
  sift_Error e;
  if (size == 0) return 0;
  nops = data[0] % 64;
  if (nops > size - 1) nops = size - 1;
  sift_reader_init(&r, data + 1 + nops, size - 1 - nops);
  for (i = 0; i < nops; i++) {
    unsigned op = data[1 + i];
    size_t before = r.pos;
    uint8_t u1; uint16_t u2; uint32_t u4; uint64_t u8; int64_t s8;
    const unsigned char *p;
    const char *s;
    size_t len;
    int ok = 0;
    switch (op % 14) {
      case 0: ok = sift_rd_u1(&r, &u1); break;
      case 1: ok = sift_rd_u2be(&r, &u2); break;
      case 2: ok = sift_rd_u2le(&r, &u2); break;
      case 3: ok = sift_rd_u4be(&r, &u4); break;
      case 4: ok = sift_rd_u4le(&r, &u4); break;
      case 5: ok = sift_rd_u8be(&r, &u8); break;
      case 6: ok = sift_rd_u8le(&r, &u8); break;
      case 7: ok = sift_rd_varint(&r, &u8); break;
      case 8: ok = sift_rd_uleb128(&r, &u8); break;
      case 9: ok = sift_rd_sleb128(&r, &s8); break;
      case 10: ok = sift_rd_cstring(&r, &s, &len);
        if (ok) assert(s[len] == '\0');
        break;
      case 11: ok = sift_rd_bytes(&r, op >> 4, &p);
        if (ok && (op >> 4) > 0) assert(p[(op >> 4) - 1] == p[(op >> 4) - 1]);
        break;
      case 12: ok = sift_rd_skip(&r, (uint64_t)op << 56 >> (op % 64)); break;
      case 13: ok = sift_rd_fits(&r, (uint64_t)op << 40, op, "count"); break;
    }
    assert(r.pos <= r.size);
    if (!ok) {
      assert(r.pos == before);
      assert(r.status != SIFT_OK);
      sift_rd_error(&r, &e, "");
      assert(strlen(e.msg) > 0 && strlen(e.msg) < sizeof e.msg);
    }
  }
  return 0;
}
