/*
** fuzz_sniff.c
** libFuzzer harness for the format sniffer, with decompression of gzip and
** bzip2 heads and a progress callback that sometimes cancels. Every answer
** must be one of the documented ones, with a NUL-terminated message.
*/

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "core/sniff.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static unsigned char scratch[SIFT_SNIFF_HEAD];

/* cancel halfway when the input's last byte is odd */
static int progress (void *ud, uint64_t done, uint64_t total) {
  int cancel_half = *(const int *)ud;
  assert(done <= total);
  return !(cancel_half && done > total / 2);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  sift_Sniff out;
  sift_Progress pr;
  sift_Status s;
  int i, cancel_half = size > 0 && (data[size - 1] & 1);
  sift_progress_init(&pr, progress, &cancel_half, size);
  s = sift_sniff(data, size, &out, &pr, scratch);
  assert(memchr(out.error.msg, '\0', sizeof out.error.msg) != NULL);
  switch (s) {
    case SIFT_OK:
      assert(out.format != NULL);
      assert(out.nfacts >= 0 && out.nfacts <= SIFT_SNIFF_MAXFACTS);
      for (i = 0; i < out.nfacts; i++)
        assert(memchr(out.facts[i].s, '\0', sizeof out.facts[i].s) != NULL);
      if (out.status != SIFT_OK) assert(out.error.msg[0] != '\0');
      break;
    case SIFT_EUNKNOWN: case SIFT_EEMPTY: case SIFT_ECORRUPT:
    case SIFT_ETRUNC:
      assert(out.format == NULL && out.error.msg[0] != '\0');
      break;
    case SIFT_ECANCEL:
      assert(cancel_half);
      break;
    default:
      assert(!"unexpected status");
  }
  /* without scratch space, compressed input is only named */
  s = sift_sniff(data, size, &out, NULL, NULL);
  assert(s != SIFT_ECANCEL);
  return 0;
}
