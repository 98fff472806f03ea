/*
** fold.h
** Text as rules compare it: NFC-normalised and case-folded (Unicode full
** case folding), so that "café" finds "CAFÉ CRÈME" whichever way the é
** was written and "strasse" finds "STRAßE". Pure C over generated tables
** (unicode_tables.h); shared by the Lua binding (lofx.c) and a fuzzer.
*/

#if !defined(sift_fold_h)
#define sift_fold_h

#include <stddef.h>

/*
** s (n bytes) as NFC(casefold(NFD(s))) in UTF-8, in a malloc'd buffer
** of *len bytes (NUL-terminated); NULL when out of memory. Bytes that are
** not UTF-8 pass through unchanged, each one a character of its own.
*/
char *sift_fold (const char *s, size_t n, size_t *len);

#endif
