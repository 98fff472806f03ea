/*
** ofx.c
** OFX values: exact amounts, date-times, character sets (see ofx.h).
*/

#include <stdio.h>
#include <string.h>

#include "ofx.h"

static int is_digit (int c) { return c >= '0' && c <= '9'; }

const char *ofx_amount (const char *s, size_t n, int64_t *units, int *scale) {
  size_t i = 0, end = n, k, ndig = 0, radix = SIZE_MAX, lastdot = SIZE_MAX, lastcomma = SIZE_MAX;
  int neg = 0, dots = 0, commas = 0;
  uint64_t v = 0;
  while (i < end && (s[i] == ' ' || s[i] == '\t')) i++;
  while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r' || s[end - 1] == '\n')) end--;
  if (i == end) return "empty";
  if (end - i > 32) return "longer than 32 characters";
  if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
  if (i == end) return "a sign alone";
  for (k = i; k < end; k++) {
    char c = s[k];
    if (is_digit(c)) ndig++;
    else if (c == '.') { dots++; lastdot = k; }
    else if (c == ',') { commas++; lastcomma = k; }
    else if (c != ' ') return "not a number";
  }
  if (ndig == 0) return "no digits";
  /* the radix: the last separator when both kinds appear; a lone one */
  if (dots && commas) radix = lastdot > lastcomma ? lastdot : lastcomma;
  else if (dots == 1) radix = lastdot;
  else if (commas == 1) radix = lastcomma;
  /* every other separator groups thousands: three digits after it */
  for (k = i; k < end; k++) {
    char c = s[k];
    if ((c == '.' || c == ',' || c == ' ') && k != radix) {
      size_t j = k + 1, d = 0;
      if (k == i || !is_digit(s[k - 1])) return "misplaced separator";
      while (j < end && is_digit(s[j])) j++, d++;
      if (d != 3) return "ambiguous digit grouping";
    }
  }
  *scale = 0;
  for (k = i; k < end; k++) {
    if (is_digit(s[k])) {
      if (v > ((uint64_t)INT64_MAX - (uint64_t)(s[k] - '0')) / 10) return "too large";
      v = v * 10 + (uint64_t)(s[k] - '0');
      if (radix != SIZE_MAX && k > radix) (*scale)++;
    }
  }
  *units = neg ? -(int64_t)v : (int64_t)v;
  return 0;
}

static int days_in (int y, int m) {
  static const int d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  return m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : d[m - 1];
}

/* days from 1970-01-01 to y-m-d (proleptic Gregorian) */
static int64_t days_from_civil (int64_t y, int m, int d) {
  int64_t era, yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = y - era * 400;
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int num (const char *s, int k) {
  int v = 0, i;
  for (i = 0; i < k; i++) v = v * 10 + (s[i] - '0');
  return v;
}

/* zone names files give without an offset ([-:EST]) */
static int zone_offset (const char *name, int *minutes) {
  static const struct { const char *name; int hours; } zones[] = {
    { "GMT", 0 }, { "UTC", 0 }, { "Z", 0 }, { "EST", -5 }, { "EDT", -4 }, { "CST", -6 },
    { "CDT", -5 }, { "MST", -7 }, { "MDT", -6 }, { "PST", -8 }, { "PDT", -7 },
    { "AKST", -9 }, { "AKDT", -8 }, { "HST", -10 }, { "AST", -4 }, { "ADT", -3 },
    { "CET", 1 }, { "CEST", 2 }, { "BST", 1 }, { "JST", 9 }, { "AEST", 10 }, { "AEDT", 11 },
  };
  size_t i;
  for (i = 0; i < sizeof zones / sizeof *zones; i++)
    if (strcmp(zones[i].name, name) == 0) {
      *minutes = zones[i].hours * 60;
      return 1;
    }
  return 0;
}

const char *ofx_date (const char *s, size_t n, ofx_Date *d) {
  size_t i = 0, digits = 0, end = n;
  memset(d, 0, sizeof *d);
  while (i < end && (s[i] == ' ' || s[i] == '\t')) i++;
  while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r' || s[end - 1] == '\n')) end--;
  if (i == end) return "empty";
  s += i;
  n = end - i;
  while (digits < n && is_digit(s[digits])) digits++;
  if (digits != 8 && digits != 12 && digits != 14 && digits != 16)
    return digits < 8 ? "fewer than 8 digits" : "an odd number of digits";
  d->year = num(s, 4);
  d->month = num(s + 4, 2);
  d->day = num(s + 6, 2);
  if (d->year == 0 || d->month < 1 || d->month > 12 || d->day < 1 || d->day > days_in(d->year, d->month))
    return "not a calendar date";
  if (digits >= 12) {
    d->has_time = 1;
    d->hour = num(s + 8, 2);
    d->min = num(s + 10, 2);
    if (digits >= 14) d->sec = num(s + 12, 2);
    if (digits == 16) d->msec = num(s + 14, 2) * 10;  /* two more digits: hundredths */
    if (d->hour > 23 || d->min > 59 || d->sec > 60) return "not a time of day";
  }
  i = digits;
  if (i < n && (s[i] == '.' || s[i] == ':') && d->has_time && digits == 14) {  /* milliseconds */
    size_t f = 0;
    int ms = 0;
    i++;
    while (i < n && is_digit(s[i])) {
      if (f < 3) ms = ms * 10 + (s[i] - '0');
      f++;
      i++;
    }
    if (f == 0) return "a fraction of a second with no digits";
    while (f < 3) ms *= 10, f++;
    d->msec = ms;
  }
  while (i < n && s[i] == ' ') i++;
  if (i < n && s[i] == '[') {  /* [offset[:name]] */
    size_t j = ++i, close;
    int sign = 1, hours = 0, frac = 0, fdig = 0, hdig = 0;
    for (close = i; close < n && s[close] != ']'; close++) {}
    if (close == n) return "an offset with no ']'";
    if (j < close && (s[j] == '+' || s[j] == '-')) sign = s[j++] == '-' ? -1 : 1;
    while (j < close && is_digit(s[j]) && hdig < 3) hours = hours * 10 + (s[j++] - '0'), hdig++;
    if (j < close && s[j] == '.') {
      j++;
      while (j < close && is_digit(s[j]) && fdig < 2) frac = frac * 10 + (s[j++] - '0'), fdig++;
    }
    if (j < close && s[j] == ':') {
      size_t k = 0;
      j++;
      while (j < close && k < sizeof d->tz - 1) d->tz[k++] = s[j++];
      d->tz[k] = 0;
    }
    if (j != close) return "an offset that is not [+-hours[:name]]";
    if (hdig > 0) {
      /* [+5.30] is 5 h 30 min (two digits: minutes); [-5.5] is 5.5 h */
      int minutes = fdig == 2 ? frac : fdig == 1 ? frac * 6 : 0;
      if (hours > 14 || minutes > 59) return "an offset beyond 14 hours";
      d->offset = sign * (hours * 60 + minutes);
      d->has_offset = 1;
    }
    else if (d->tz[0] && zone_offset(d->tz, &d->offset)) d->has_offset = 1;
    else return "an offset with no hours and no known zone name";
    i = close + 1;
  }
  if (i != n) return "text after the date";
  d->utc = days_from_civil(d->year, d->month, d->day) * 86400
           + (int64_t)d->hour * 3600 + d->min * 60 + d->sec - (int64_t)d->offset * 60;
  return 0;
}

/* CP1252's 0x80-0x9F (the rest of 0x80-0xFF is Latin-1); 0 where undefined */
static const uint16_t cp1252[32] = {
  0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
  0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
};

static size_t put (unsigned char *o, uint32_t cp) {
  if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
  if (cp < 0x800) { o[0] = (unsigned char)(0xC0 | cp >> 6); o[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
  o[0] = (unsigned char)(0xE0 | cp >> 12);
  o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
  o[2] = (unsigned char)(0x80 | (cp & 0x3F));
  return 3;
}

/* a byte as CP1252 (undefined ones as Latin-1's C1 controls) or Latin-1 */
static uint32_t byte_cp (unsigned char c, int charset) {
  if (c >= 0x80 && c < 0xA0 && charset != OFX_LATIN1 && cp1252[c - 0x80]) return cp1252[c - 0x80];
  return c;
}

/* the length of a valid UTF-8 sequence at s (shortest form, no
   surrogates), or 0 */
static size_t utf8_len (const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
    if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)) return 0;
    return 4;
  }
  return 0;
}

int ofx_is_utf8 (const unsigned char *s, size_t n, int charset) {
  size_t i = 0, k;
  while (i < n) {
    uint64_t w;
    if (n - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080u) == 0)) {
      i += 8;  /* eight ASCII bytes at once: most files are all ASCII */
      continue;
    }
    if (s[i] < 0x80) { i++; continue; }
    if (charset != OFX_UTF8 || (k = utf8_len(s + i, n - i)) == 0) return 0;
    i += k;
  }
  return 1;
}

size_t ofx_to_utf8 (const unsigned char *s, size_t n, int charset,
                    unsigned char *out, size_t *fixed) {
  size_t i = 0, o = 0;
  *fixed = 0;
  while (i < n) {
    size_t k;
    if (s[i] < 0x80) { out[o++] = s[i++]; continue; }
    if (charset == OFX_UTF8 && (k = utf8_len(s + i, n - i)) > 0) {
      memcpy(out + o, s + i, k);
      o += k;
      i += k;
      continue;
    }
    if (charset == OFX_UTF8) (*fixed)++;
    o += put(out + o, byte_cp(s[i++], charset));
  }
  return o;
}

/* an amount's exact decimal text ("-1006.60") into out (48 bytes); its length */
size_t ofx_format_decimal (int64_t units, int scale, char *out) {
  char digits[32];
  uint64_t v = units < 0 ? (uint64_t)0 - (uint64_t)units : (uint64_t)units;
  size_t n = 0;
  int k = 0, i;
  do {  /* the digits, least significant first, at least scale + 1 */
    digits[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0 || k <= scale);
  if (units < 0) out[n++] = '-';
  for (i = k - 1; i >= 0; i--) {
    out[n++] = digits[i];
    if (i == scale && scale > 0) out[n++] = '.';
  }
  return n;
}

/* a date's ISO 8601 text into out (40 bytes): "YYYY-MM-DD" for a date
   alone, else the UTC time "YYYY-MM-DDTHH:MM:SSZ" */
/* "YYYY-MM-DD" into out; the length. (By hand: snprintf cost a tenth of
   writing a million transactions' JSON.) */
static size_t iso_date (char *out, int64_t y, int m, int d) {
  if (y < 0 || y > 9999) return (size_t)snprintf(out, 40, "%04d-%02d-%02d", (int)y, m, d);
  out[0] = (char)('0' + y / 1000);
  out[1] = (char)('0' + y / 100 % 10);
  out[2] = (char)('0' + y / 10 % 10);
  out[3] = (char)('0' + y % 10);
  out[4] = '-';
  out[5] = (char)('0' + m / 10);
  out[6] = (char)('0' + m % 10);
  out[7] = '-';
  out[8] = (char)('0' + d / 10);
  out[9] = (char)('0' + d % 10);
  out[10] = '\0';
  return 10;
}

void ofx_format_iso (const ofx_Date *d, char *out) {
  int64_t t = d->utc, days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
  int64_t secs = t - days * 86400, z = days + 719468, era, doe, yoe, y, doy, mp;
  int dd, mm;
  size_t n;
  if (!d->has_time) {
    iso_date(out, d->year, d->month, d->day);
    return;
  }
  era = (z >= 0 ? z : z - 146096) / 146097;  /* the civil date of a day number */
  doe = z - era * 146097;
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = yoe + era * 400;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  dd = (int)(doy - (153 * mp + 2) / 5 + 1);
  mm = (int)(mp < 10 ? mp + 3 : mp - 9);
  y += mm <= 2;
  n = iso_date(out, y, mm, dd);
  memcpy(out + n, "T00:00:00Z", 11);
  out[n + 1] = (char)('0' + secs / 3600 / 10);
  out[n + 2] = (char)('0' + secs / 3600 % 10);
  out[n + 4] = (char)('0' + secs / 60 % 60 / 10);
  out[n + 5] = (char)('0' + secs / 60 % 60 % 10);
  out[n + 7] = (char)('0' + secs % 60 / 10);
  out[n + 8] = (char)('0' + secs % 60 % 10);
}
