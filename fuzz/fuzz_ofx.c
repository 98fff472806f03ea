/*
** fuzz_ofx.c
** libFuzzer harness for the OFX C helpers: the input is read as an
** amount, as a date-time, and transcoded from each charset; the results
** must be sane (a parsed date is a calendar date, transcoded text is
** valid UTF-8 no longer than three bytes per input byte, and the text
** ofx_is_utf8 accepts comes back unchanged); and folded (fold.h): valid
** UTF-8 in, valid UTF-8 out, and folding twice changes nothing more.
*/

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ofx/fold.h"
#include "ofx/ofx.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int valid_utf8 (const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    size_t j;
    if (k == 0 || i + k > n) return 0;
    for (j = 1; j < k; j++)
      if ((s[i + j] & 0xC0) != 0x80) return 0;
    i += k;
  }
  return 1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  int64_t units;
  int scale, cs;
  ofx_Date d;
  unsigned char *out = (unsigned char *)malloc(3 * size + 1);
  if (out == NULL) return 0;
  if (ofx_amount((const char *)data, size, &units, &scale) == 0) assert(scale >= 0 && scale <= 32);
  if (ofx_date((const char *)data, size, &d) == 0) {
    assert(d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31);
    assert(d.hour <= 23 && d.min <= 59 && d.sec <= 60 && d.msec <= 999);
    assert(d.offset >= -14 * 60 - 59 && d.offset <= 14 * 60 + 59);
  }
  for (cs = OFX_CP1252; cs <= OFX_UTF8; cs++) {
    size_t fixed, n = ofx_to_utf8(data, size, cs, out, &fixed);
    assert(n <= 3 * size && fixed <= size);
    assert(valid_utf8(out, n));
    /* text said to need no transcoding comes back unchanged */
    if (ofx_is_utf8(data, size, cs)) assert(n == size && memcmp(out, data, n) == 0);
  }
  free(out);
  {
    size_t n1, n2;
    char *once = sift_fold((const char *)data, size, &n1), *twice;
    if (once == NULL) return 0;
    if (valid_utf8(data, size)) assert(valid_utf8((const unsigned char *)once, n1));
    twice = sift_fold(once, n1, &n2);
    if (twice != NULL) assert(n1 == n2 && memcmp(once, twice, n1) == 0);
    free(once);
    free(twice);
  }
  return 0;
}
