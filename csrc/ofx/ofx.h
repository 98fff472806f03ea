/*
** ofx.h
** What the OFX grammar (lua/sift/ofx.lua, LPeg) leaves to C: exact
** amounts, date-times with their offsets, and character sets. Pure C,
** shared by the Lua binding (lofx.c) and the fuzzer. Facts:
** ../shared/formats/OFX.md (sections 3-5).
*/

#if !defined(sift_ofx_h)
#define sift_ofx_h

#include <stddef.h>
#include <stdint.h>

/*
** An amount (OFX 1.6 3.2.9): an optional sign, digits, a radix point that
** is a period or a comma, at most 32 characters, spaces around ignored.
** Grouping is read when it is unambiguous (1,006.60; 1.006,60; 1 006,60).
** The value is units / 10^scale, exactly. Returns 0 on success, else a
** static message (the text is not an amount; nothing is invented).
*/
const char *ofx_amount (const char *s, size_t n, int64_t *units, int *scale);

typedef struct ofx_Date {
  int year, month, day, hour, min, sec, msec;
  int has_time;          /* 0: a date alone (YYYYMMDD) */
  int has_offset;        /* 0: none given (GMT by the spec) */
  int offset;            /* minutes east of UTC */
  char tz[16];           /* the zone name, "" when none */
  int64_t utc;           /* seconds since 1970-01-01 UTC */
} ofx_Date;

/*
** A date-time (OFX 1.6 3.2.8): YYYYMMDD[HHMM[SS[.XXX]]][ [offset[:name]]],
** with the forms real files use: 12 and 16 digits, ':' for '.', a space
** before '[', an offset given only by its zone name ([-:EST]), fractional
** offsets ([+5.30:IST], [-5.5]). Returns 0, or a static message.
*/
const char *ofx_date (const char *s, size_t n, ofx_Date *d);

enum { OFX_CP1252, OFX_LATIN1, OFX_UTF8 };

/* Whether ofx_to_utf8 would give s back unchanged (ASCII, or valid
** UTF-8 read as UTF-8). */
int ofx_is_utf8 (const unsigned char *s, size_t n, int charset);

/*
** Text of a declared charset as UTF-8 into out (room: 3 * n bytes):
** OFX_CP1252 and OFX_LATIN1 map every byte; OFX_UTF8 keeps valid UTF-8
** and reads any other byte as CP1252 (files that say USASCII or UTF-8 and
** carry CP1252 bytes). Returns the length; *fixed counts the bytes read
** as CP1252 in OFX_UTF8 mode.
*/
size_t ofx_to_utf8 (const unsigned char *s, size_t n, int charset,
                    unsigned char *out, size_t *fixed);

/* an amount's exact decimal text ("-1006.60") into out (48 bytes); its length */
size_t ofx_format_decimal (int64_t units, int scale, char *out);

/* a date's ISO 8601 text into out (40 bytes): "YYYY-MM-DD" for a date
   alone, else the UTC time "YYYY-MM-DDTHH:MM:SSZ" */
void ofx_format_iso (const ofx_Date *d, char *out);

#endif
