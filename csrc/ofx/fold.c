/*
** fold.c
** NFC(casefold(NFD(text))): decompose (canonical mappings, applied
** again until none applies; Hangul syllables by arithmetic), fold each
** code point (full case folding) and decompose what that gives, put each
** run of combining marks in canonical order (by combining class, stable),
** then compose again (a mark joins the last starter when nothing between
** them has its class or zero). The Unicode algorithms of UAX #15 and
** section 3.13 of the standard; the data is generated (unicode_tables.h).
*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/search.h"
#include "fold.h"
#include "unicode_tables.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define RAW 0x80000000u  /* a byte that is not UTF-8, kept as it was */

/* Hangul syllables (section 3.12): S = SBASE + (L * VCOUNT + V) * TCOUNT + T */
#define SBASE 0xAC00u
#define LBASE 0x1100u
#define VBASE 0x1161u
#define TBASE 0x11A7u
#define VCOUNT 21u
#define TCOUNT 28u
#define NCOUNT (VCOUNT * TCOUNT)
#define SCOUNT (19u * NCOUNT)

typedef struct Buf { uint32_t *cp; size_t n, cap; int failed; } Buf;

static void push (Buf *b, uint32_t c) {
  if (b->failed) return;
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    uint32_t *p = cap > SIZE_MAX / sizeof(uint32_t) ? NULL : (uint32_t *)realloc(b->cp, cap * sizeof(uint32_t));
    if (!p) { b->failed = 1; return; }
    b->cp = p;
    b->cap = cap;
  }
  b->cp[b->n++] = c;
}

/* the row of a sorted table whose first column is c, or NULL */
#define FIND(table, c, row) \
  do { \
    uint64_t lo_ = 0, hi_ = COUNT(table); \
    SIFT_LOWER_BOUND(lo_, hi_, mid, (table)[mid][0] < (c)); \
    (row) = lo_ < COUNT(table) && (table)[lo_][0] == (c) ? (table)[lo_] : NULL; \
  } while (0)

static int ccc (uint32_t c) {
  uint64_t lo = 0, hi = COUNT(CCC);
  if (c < 0x300 || (c & RAW)) return 0;
  SIFT_LOWER_BOUND(lo, hi, mid, CCC[mid][1] < c);
  return lo < COUNT(CCC) && CCC[lo][0] <= c ? (int)CCC[lo][2] : 0;
}

/* c's full canonical decomposition, pushed */
static void decompose (Buf *b, uint32_t c) {
  const uint32_t *row;
  if (c - SBASE < SCOUNT) {
    uint32_t s = c - SBASE;
    push(b, LBASE + s / NCOUNT);
    push(b, VBASE + (s % NCOUNT) / TCOUNT);
    if (s % TCOUNT) push(b, TBASE + s % TCOUNT);
    return;
  }
  FIND(DECOMP, c, row);
  if (!row) { push(b, c); return; }
  decompose(b, row[1]);  /* (a mapping is at most four deep) */
  if (row[2]) decompose(b, row[2]);
}

/* the composite of a starter and a mark, or 0 */
static uint32_t compose (uint32_t a, uint32_t m) {
  uint64_t lo = 0, hi = COUNT(COMPOSE);
  if (a - LBASE < 19u && m - VBASE < VCOUNT)
    return SBASE + ((a - LBASE) * VCOUNT + (m - VBASE)) * TCOUNT;
  if (a - SBASE < SCOUNT && (a - SBASE) % TCOUNT == 0 && m - TBASE - 1 < TCOUNT - 1)
    return a + (m - TBASE);
  SIFT_LOWER_BOUND(lo, hi, mid, COMPOSE[mid][0] < a || (COMPOSE[mid][0] == a && COMPOSE[mid][1] < m));
  return lo < COUNT(COMPOSE) && COMPOSE[lo][0] == a && COMPOSE[lo][1] == m ? COMPOSE[lo][2] : 0;
}

/* one code point from s[*i..n), or a RAW byte when it is not UTF-8 */
static uint32_t next_cp (const unsigned char *s, size_t n, size_t *i) {
  unsigned char c = s[*i];
  uint32_t cp, min;
  size_t k, len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (len == 1 || len == 0 || *i + len > n) { (*i)++; return len == 1 ? c : RAW | c; }
  cp = c & (0x7Fu >> len);
  for (k = 1; k < len; k++) {
    if ((s[*i + k] & 0xC0) != 0x80) { (*i)++; return RAW | c; }
    cp = (cp << 6) | (s[*i + k] & 0x3F);
  }
  min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { (*i)++; return RAW | c; }
  *i += len;
  return cp;
}

static size_t put_utf8 (char *o, uint32_t c) {
  if (c & RAW) { o[0] = (char)(c & 0xFF); return 1; }
  if (c < 0x80) { o[0] = (char)c; return 1; }
  if (c < 0x800) { o[0] = (char)(0xC0 | c >> 6); o[1] = (char)(0x80 | (c & 0x3F)); return 2; }
  if (c < 0x10000) {
    o[0] = (char)(0xE0 | c >> 12); o[1] = (char)(0x80 | ((c >> 6) & 0x3F)); o[2] = (char)(0x80 | (c & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | c >> 18); o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((c >> 6) & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F));
  return 4;
}

/* each run of combining marks in canonical order: a stable insertion sort */
static void reorder (Buf *b) {
  size_t i, j;
  for (i = 1; i < b->n; i++) {
    int k = ccc(b->cp[i]);
    if (k == 0) continue;
    for (j = i; j > 0 && ccc(b->cp[j - 1]) > k; j--) {
      uint32_t t = b->cp[j];
      b->cp[j] = b->cp[j - 1];
      b->cp[j - 1] = t;
    }
  }
}

char *sift_fold (const char *text, size_t n, size_t *len) {
  const unsigned char *s = (const unsigned char *)text;
  Buf d = { NULL, 0, 0, 0 }, f = { NULL, 0, 0, 0 };
  size_t i = 0, j, starter, out_n;
  int last;
  char *out;
  while (i < n) {  /* NFD */
    uint32_t c = next_cp(s, n, &i);
    if (c & RAW) push(&d, c);
    else decompose(&d, c);
  }
  reorder(&d);
  for (j = 0; j < d.n && !d.failed; j++) {  /* fold, and NFD what that gives */
    const uint32_t *row;
    int k;
    FIND(FOLD, d.cp[j], row);
    if (!row) { push(&f, d.cp[j]); continue; }
    for (k = 1; k <= 3 && row[k]; k++) decompose(&f, row[k]);
  }
  if (d.failed) f.failed = 1;
  free(d.cp);
  if (f.failed) { free(f.cp); return NULL; }
  reorder(&f);
  /* compose: out_n is the length so far, starter the last starter's index */
  out_n = 0;
  starter = SIZE_MAX;
  last = 0;
  for (i = 0; i < f.n; i++) {
    uint32_t c = f.cp[i];
    int k = ccc(c);
    if (starter != SIZE_MAX && (last < k || (last == 0 && out_n == starter + 1))) {
      uint32_t x = compose(f.cp[starter], c);
      if (x && !(c & RAW) && !(f.cp[starter] & RAW)) { f.cp[starter] = x; continue; }
    }
    if (k == 0) starter = out_n;
    last = k;
    f.cp[out_n++] = c;
  }
  out = out_n > (SIZE_MAX - 1) / 4 ? NULL : (char *)malloc(4 * out_n + 1);
  if (!out) { free(f.cp); return NULL; }
  *len = 0;
  for (i = 0; i < out_n; i++) *len += put_utf8(out + *len, f.cp[i]);
  out[*len] = '\0';
  free(f.cp);
  return out;
}
