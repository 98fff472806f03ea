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

#include "core/common.h"
#include "core/idmap.h"

/*
** GC root kinds, which Badoo's format loses (BMD.md 5.5), kept by sift in
** an ordinary STRING record every BMD reader accepts (Badoo's decruncher
** writes it back as one more HPROF string): id BMD_KINDS_ID, text
** BMD_KINDS_PREFIX then runs "KK*N," (an HPROF root tag in hex, how many
** roots in a row have it), in the order of the ROOT_OBJECTS list.
*/
#define BMD_KINDS_ID 0x7FFFFFFEu
#define BMD_KINDS_PREFIX "sift:root-kinds:1:"

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
  uint64_t zeros;               /* the primitive arrays' bytes, which BMD
                                   does not hold and decrunching writes */
  uint64_t kinds;               /* roots whose kind the file keeps (sift's record) */
} bmd_Counts;

typedef struct bmd_CrunchOptions {
  const char *const *keep;      /* strings starting with these stay text */
  size_t nkeep;
  int keep_primitives;          /* every class keeps its primitive fields */
  int badoo;                    /* exactly Badoo's bytes: no root kinds record */
} bmd_CrunchOptions;

/*
** HPROF (1.0.1-1.0.3, 4- or 8-byte ids) -> BMD, in two passes over p..n,
** written to out as it goes. Badoo's cruncher order and encoding. A file
** with no HEAP_DUMP or HEAP_DUMP_SEGMENT record (a header and strings: a
** dump cut before its heap) fails with SIFT_EEMPTY after the first pass.
*/
sift_Status bmd_crunch (const unsigned char *p, size_t n, FILE *out,
                        const bmd_CrunchOptions *opt, bmd_Counts *counts,
                        sift_Progress *pr, sift_Error *err);


/*
** {======================================================
** Reading and decrunching
** =======================================================
*/

typedef struct bmd_Class {
  uint32_t id, super, name;
  uint32_t fields, nfields;   /* kept fields: b->ftype/fname[fields ..) */
  uint32_t discarded;         /* bytes of primitive fields left out */
} bmd_Class;

/* a BMD file, checked record by record when opened */
typedef struct bmd_File {
  const unsigned char *p;
  size_t n;
  const unsigned char *meta;  /* the HPROF header text */
  size_t metalen;
  size_t data;                /* offset of the first record */
  bmd_Class *classes;
  size_t nclasses, classcap;
  sift_IdMap byid;            /* class id -> index + 1 */
  uint8_t *ftype;             /* BMD types of kept instance fields */
  uint32_t *fname;
  size_t nfields, fieldcap;
  uint32_t max_string;        /* the largest string id */
  uint32_t removed;           /* id of a "field_removed" string, 0: none */
  const unsigned char *kinds; /* the runs of sift's root kinds record; NULL: none */
  size_t kindslen;
  bmd_Counts counts;
} bmd_File;

sift_Status bmd_open (bmd_File *b, const unsigned char *p, size_t n,
                      sift_Progress *pr, sift_Error *err);
void bmd_close (bmd_File *b);

/* recovered names: hash and byte length -> text (dict.c) */
typedef struct bmd_Dict bmd_Dict;
const unsigned char *bmd_dict_find (const bmd_Dict *d, int32_t hash,
                                    uint32_t len, size_t *textlen);

typedef struct bmd_DecrunchOptions {
  const bmd_Dict *dict;       /* NULL: no names to recover */
  uint64_t max_out;           /* refuse, before writing, an HPROF that would
                                 be bigger (0: no limit) */
  int nodata;                 /* primitive arrays as Android's no-data
                                 records (0xC3) instead of zeros */
  int plain_names;            /* Hash$<hash> alone, without the original
                                 length (for reading, not crunching) */
} bmd_DecrunchOptions;

typedef struct bmd_DecrunchStats {
  uint64_t recovered;         /* hashed strings given back their text */
  uint64_t placeholders;      /* ... written as Hash$<hash> */
  uint64_t legacy_dropped;    /* legacy records whose ids are not 4 bytes */
  uint64_t kinds;             /* roots written with their kind (sift's record); the others are unknown */
  uint64_t bytes_out;
} bmd_DecrunchStats;

/*
** BMD -> HPROF 1.0.x with 4-byte ids, from a file bmd_open has checked
** (its two walks report progress from b->n to 3 * b->n) (BMD.md 10, and docs/bmd.md for
** where sift differs): strings (recovered, or Hash$<hash>), a LOAD_CLASS
** per class, legacy records, heap dump segments, HEAP_DUMP_END.
*/
sift_Status bmd_decrunch (const bmd_File *b, FILE *out,
                          const bmd_DecrunchOptions *opt,
                          bmd_DecrunchStats *st, sift_Progress *pr,
                          sift_Error *err);

/* }====================================================== */

#endif
