/*
** sniff_facts.h
** What the files of the sniffer share (sniff.c, sniff_trace.c): facts
** about a header, the problem of a recognised file, and text lines.
** Private to core/.
*/

#if !defined(sift_sniff_facts_h)
#define sift_sniff_facts_h

#include <stddef.h>

#include "sniff.h"

void sn_intfact (sift_Sniff *o, const char *key, int64_t v);
void sn_strfact (sift_Sniff *o, const char *key, const char *s, size_t len);
/* a decimal text becomes an integer fact, anything else a string fact */
void sn_valuefact (sift_Sniff *o, const char *key, const char *s, size_t len);
/* set the problem of a recognised file (the first one found wins) */
void sn_problem (sift_Sniff *o, sift_Status s, const char *fmt, ...)
  SIFT_PRINTF(3, 4);
int sn_hasprefix (const unsigned char *p, size_t n, const char *prefix);

typedef struct Lines {
  const char *p, *end;
} Lines;

/* the next line without its "\n" or "\r\n"; 0 at the end */
int sn_nextline (Lines *l, const char **s, size_t *len);
int sn_lineis (const char *s, size_t len, const char *word);

/* sniff_trace.c: a regular trace (text block first) and a streaming one */
void sn_regular_trace (const unsigned char *p, size_t n, sift_Sniff *o,
                       int whole);
sift_Status sn_streaming_trace (const unsigned char *p, size_t n,
                                sift_Sniff *o, sift_Progress *pr, int whole);

#endif
