/*
** fuzz_bmd.c
** libFuzzer harness for BMD: an input that starts like an HPROF is
** crunched; any other is read as a BMD (every record checked) and, when
** it opens, decrunched with a dictionary made from the input itself read
** as a jar, dex or class file. Output goes to /dev/null; primitive arrays
** are written without their zeros so that a claimed 2 GiB array costs
** nothing.
*/

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "heap/bmd.h"
#include "heap/dict.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  static FILE *sink;
  sift_Error err;
  if (sink == NULL && (sink = fopen("/dev/null", "wb")) == NULL) return 0;
  if (size >= 13 && memcmp(data, "JAVA PROFILE ", 13) == 0) {
    static const char *const keep[] = { "com." };
    bmd_CrunchOptions opt;
    bmd_Counts counts;
    opt.keep = keep;
    opt.nkeep = 1;
    opt.keep_primitives = size % 2;
    bmd_crunch(data, size, sink, &opt, &counts, NULL, &err);
  }
  else {
    bmd_File b;
    bmd_Dict *d = bmd_dict_new();
    uint64_t added;
    if (d) bmd_dict_add_file(d, data, size, &added, &err);
    if (bmd_open(&b, data, size, NULL, &err) == SIFT_OK) {
      bmd_DecrunchOptions opt;
      bmd_DecrunchStats st;
      opt.dict = d;
      opt.nodata = 1;
      opt.plain_names = size % 2;
      bmd_decrunch(&b, sink, &opt, &st, NULL, &err);
    }
    bmd_close(&b);
    bmd_dict_free(d);
  }
  return 0;
}
