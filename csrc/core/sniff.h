/*
** sniff.h
** Format sniffing: which kind of dump a buffer holds (HPROF, BMD, Android
** method trace, OFX), possibly inside gzip or bzip2, and the facts its
** header gives. Pure C, shared by the Lua binding and the fuzz harness.
*/

#if !defined(sift_sniff_h)
#define sift_sniff_h

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#define SIFT_SNIFF_MAXFACTS 24
#define SIFT_SNIFF_FACTLEN  72

/* decompressed bytes looked at inside a gzip or bzip2 file */
#define SIFT_SNIFF_HEAD ((size_t)1 << 20)

/* one header fact: an integer or a (possibly cut) string */
typedef struct sift_Fact {
  const char *key;                /* static: "version", "id_size", ... */
  int isint;
  int64_t i;
  char s[SIFT_SNIFF_FACTLEN];     /* NUL-terminated */
} sift_Fact;

typedef struct sift_Sniff {
  const char *format;       /* "hprof" "bmd" "trace" "ofx"; NULL: unknown */
  const char *variant;      /* "regular" "streaming" "sgml" "xml" ... */
  const char *compression;  /* "gzip" "bzip2"; NULL when plain */
  int nfacts;
  sift_Fact facts[SIFT_SNIFF_MAXFACTS];
  /* a recognised file with something wrong (SIFT_OK: nothing), or why
     the input was not recognised */
  sift_Status status;
  sift_Error error;         /* its message */
} sift_Sniff;

/*
** Look at n bytes. Returns SIFT_OK when the format is recognised (then
** out->status tells whether its header has a problem), SIFT_EUNKNOWN or
** SIFT_EEMPTY when it is not, SIFT_ECORRUPT when a compressed stream does
** not inflate, SIFT_ECANCEL when the progress callback stopped the pass.
** `scratch` (SIFT_SNIFF_HEAD bytes, or NULL) receives the start of a
** compressed stream; without it compressed input is only named.
*/
sift_Status sift_sniff (const unsigned char *p, size_t n, sift_Sniff *out,
                        sift_Progress *pr, unsigned char *scratch);

#endif
