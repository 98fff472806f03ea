/*
** bmd.h
** BMD (Badoo Memory Dump, ../shared/formats/BMD.md): a varint heap-dump
** format. The cruncher (HPROF -> BMD), the reader and the decruncher
** (BMD -> HPROF). Pure C, shared by the Lua binding and the fuzzers.
*/

#if !defined(sift_bmd_h)
#define sift_bmd_h

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

enum {  /* record tags */
  BMD_STRING = 1, BMD_HASHED_STRING, BMD_CLASS, BMD_INSTANCE, BMD_ROOTS,
  BMD_OBJECT_ARRAY, BMD_PRIMITIVE_ARRAY, BMD_LEGACY, BMD_NTAGS
};

/* BMD type codes 0..8 (object, int, boolean, byte, char, float, double,
   long, short) as HPROF basic types, and back (-1: not a type) */
extern const uint8_t bmd_hprof_type[9];
int bmd_type_of (int hprof_type);

/* what a conversion wrote or a file holds */
typedef struct bmd_Counts {
  uint64_t records[BMD_NTAGS];  /* by tag */
  uint64_t roots;
  uint64_t legacy_tags[256];    /* legacy records by HPROF tag */
  uint64_t dropped;             /* HPROF sub-records BMD has no room for */
  uint64_t bytes_in, bytes_out;
} bmd_Counts;

typedef struct bmd_CrunchOptions {
  const char *const *keep;      /* strings starting with these stay text */
  size_t nkeep;
  int keep_primitives;          /* every class keeps its primitive fields */
} bmd_CrunchOptions;

/*
** HPROF (1.0.1-1.0.3, 4- or 8-byte ids) -> BMD, in two passes over p..n,
** written to out as it goes. Badoo's cruncher order and encoding.
*/
sift_Status bmd_crunch (const unsigned char *p, size_t n, FILE *out,
                        const bmd_CrunchOptions *opt, bmd_Counts *counts,
                        sift_Progress *pr, char *err, size_t errsize);

#endif
