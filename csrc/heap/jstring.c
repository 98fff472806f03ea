/*
** jstring.c
** Java's decoding of UTF-8 (JDK 17 String(byte[], UTF_8)), hashCode()
** and re-encoding, for BMD's hashed strings (BMD.md 8.1-8.2).
*/

#include "jstring.h"

#define REPL 0xFFFDu

typedef struct JStr {
  uint32_t hash;
  size_t len;
  unsigned char *out;
} JStr;

/* one code point of the decoded string: its UTF-16 units go into the
   hash, its UTF-8 bytes into the output */
static void emit (JStr *j, uint32_t cp) {
  unsigned char b[4];
  size_t n, i;
  if (cp < 0x10000) j->hash = 31 * j->hash + cp;
  else {
    j->hash = 31 * j->hash + (0xD800 + ((cp - 0x10000) >> 10));
    j->hash = 31 * j->hash + (0xDC00 + ((cp - 0x10000) & 0x3FF));
  }
  if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
  else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | cp >> 6); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
  else if (cp < 0x10000) {
    b[0] = (unsigned char)(0xE0 | cp >> 12);
    b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (unsigned char)(0x80 | (cp & 0x3F));
    n = 3;
  }
  else {
    b[0] = (unsigned char)(0xF0 | cp >> 18);
    b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  if (j->out) for (i = 0; i < n; i++) j->out[j->len + i] = b[i];
  j->len += n;
}

static int cont (unsigned b) { return (b & 0xC0) == 0x80; }

/* a bad second byte after E0..EF: the decoder replaces only the lead */
static int bad3_2 (unsigned b1, unsigned b2) {
  return (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !cont(b2);
}

static int bad4_2 (unsigned b1, unsigned b2) {
  return (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || !cont(b2);
}

size_t sift_java_string (const unsigned char *s, size_t n, int32_t *hash,
                         unsigned char *out) {
  JStr j;
  size_t i = 0;
  j.hash = 0;
  j.len = 0;
  j.out = out;
  while (i < n) {
    unsigned b1 = s[i++];
    if (b1 < 0x80) emit(&j, b1);
    else if (b1 >= 0xC2 && b1 <= 0xDF) {  /* two bytes */
      if (i >= n) { emit(&j, REPL); break; }
      if (!cont(s[i])) emit(&j, REPL);
      else { emit(&j, (b1 & 0x1Fu) << 6 | (s[i] & 0x3Fu)); i++; }
    }
    else if ((b1 & 0xF0) == 0xE0) {  /* three bytes */
      if (i + 1 < n) {
        unsigned b2 = s[i], b3 = s[i + 1];
        if (bad3_2(b1, b2)) emit(&j, REPL);
        else if (!cont(b3)) { emit(&j, REPL); i++; }
        else {
          uint32_t cp = (b1 & 0x0Fu) << 12 | (b2 & 0x3Fu) << 6 | (b3 & 0x3Fu);
          emit(&j, cp >= 0xD800 && cp <= 0xDFFF ? REPL : cp);  /* no lone surrogates */
          i += 2;
        }
        continue;
      }
      emit(&j, REPL);
      if (i < n && bad3_2(b1, s[i])) continue;
      break;
    }
    else if ((b1 & 0xF8) == 0xF0) {  /* four bytes */
      if (i + 2 < n) {
        unsigned b2 = s[i], b3 = s[i + 1], b4 = s[i + 2];
        uint32_t cp = (b1 & 0x07u) << 18 | (b2 & 0x3Fu) << 12 | (b3 & 0x3Fu) << 6 | (b4 & 0x3Fu);
        if (!cont(b2) || !cont(b3) || !cont(b4) || cp < 0x10000 || cp > 0x10FFFF) {
          emit(&j, REPL);
          if (!(b1 > 0xF4 || bad4_2(b1, b2))) i += cont(b3) ? 2 : 1;
        }
        else {
          emit(&j, cp);
          i += 3;
        }
        continue;
      }
      emit(&j, REPL);
      if (b1 > 0xF4 || (i < n && bad4_2(b1, s[i]))) continue;
      i++;
      if (i < n && !cont(s[i])) continue;
      break;
    }
    else emit(&j, REPL);
  }
  *hash = (int32_t)j.hash;
  return j.len;
}
