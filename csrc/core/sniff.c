/*
** sniff.c
** Recognise a dump from its first bytes and read the facts of its header.
** Formats and their markers:
**   HPROF   "JAVA PROFILE 1.0.x" NUL, u4 id size, u8 ms timestamp (BE)
**   BMD     varint version, varint length, "JAVA PROFILE 1.0.x" (no NUL)
**   trace   regular: "*version" text block, "*end", then "SLOW" + LE header
**           streaming: "SLOW" with version | 0xF0, records, text summary
**   OFX     v1 "OFXHEADER:100" lines, v2 "<?xml?><?OFX ...?>", or <OFX>
** The only pass over a whole file is the streaming-trace walk, which needs
** its summary record at the end; it reports progress. Traces are read in
** sniff_trace.c; the facts and line helpers both files use are here.
*/

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "inflate.h"
#include "reader.h"
#include "sniff_facts.h"


/*
** {======================================================
** Facts and messages
** =======================================================
*/

static sift_Fact *newfact (sift_Sniff *o, const char *key) {
  int i;
  for (i = 0; i < o->nfacts; i++)  /* a repeated key keeps its last value */
    if (strcmp(o->facts[i].key, key) == 0) return &o->facts[i];
  if (o->nfacts == SIFT_SNIFF_MAXFACTS) return NULL;
  o->facts[o->nfacts].key = key;
  return &o->facts[o->nfacts++];
}

void sn_intfact (sift_Sniff *o, const char *key, int64_t v) {
  sift_Fact *f = newfact(o, key);
  if (f == NULL) return;
  f->isint = 1;
  f->i = v;
  f->s[0] = '\0';
}

void sn_strfact (sift_Sniff *o, const char *key, const char *s,
                 size_t len) {
  sift_Fact *f = newfact(o, key);
  if (f == NULL) return;
  if (len >= sizeof f->s) len = sizeof f->s - 1;
  f->isint = 0;
  f->i = 0;
  memcpy(f->s, s, len);
  f->s[len] = '\0';
}

/* a decimal text becomes an integer fact, anything else a string fact */
void sn_valuefact (sift_Sniff *o, const char *key, const char *s,
                   size_t len) {
  int64_t v = 0;
  size_t i = (len > 0 && s[0] == '-') ? 1 : 0;
  if (len > i && len - i <= 18) {
    for (; i < len && isdigit((unsigned char)s[i]); i++)
      v = v * 10 + (s[i] - '0');
    if (i == len) {
      sn_intfact(o, key, s[0] == '-' ? -v : v);
      return;
    }
  }
  sn_strfact(o, key, s, len);
}

/* set the problem of a recognised file (the first one found wins) */
void sn_problem (sift_Sniff *o, sift_Status s, const char *fmt, ...) {
  va_list ap;
  if (o->status != SIFT_OK) return;
  va_start(ap, fmt);
  o->status = sift_vfail(&o->error, s, fmt, ap);
  va_end(ap);
}

/* not recognised: say why */
static sift_Status unknown (sift_Sniff *o, sift_Status s, const char *fmt,
                            ...) SIFT_PRINTF(3, 4);
static sift_Status unknown (sift_Sniff *o, sift_Status s, const char *fmt,
                            ...) {
  va_list ap;
  o->format = NULL;
  va_start(ap, fmt);
  o->status = sift_vfail(&o->error, s, fmt, ap);
  va_end(ap);
  return s;
}

int sn_hasprefix (const unsigned char *p, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(p, prefix, k) == 0;
}

/* }====================================================== */


/*
** {======================================================
** Text lines (trace headers, OFX v1 headers)
** =======================================================
*/


/* the next line without its "\n" or "\r\n"; 0 at the end */
int sn_nextline (Lines *l, const char **s, size_t *len) {
  const char *nl;
  if (l->p >= l->end) return 0;
  nl = (const char *)memchr(l->p, '\n', (size_t)(l->end - l->p));
  *s = l->p;
  *len = (size_t)((nl ? nl : l->end) - l->p);
  if (*len > 0 && (*s)[*len - 1] == '\r') (*len)--;
  l->p = nl ? nl + 1 : l->end;
  return 1;
}

int sn_lineis (const char *s, size_t len, const char *word) {
  return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* }====================================================== */


/*
** {======================================================
** HPROF
** =======================================================
*/

static void sniff_hprof (const unsigned char *p, size_t n, sift_Sniff *o) {
  sift_Reader r;
  const char *text, *version;
  size_t len;
  uint32_t idsize;
  uint64_t stamp;
  sift_Error e;
  o->format = "hprof";
  sift_reader_init(&r, p, n < 64 ? n : 64);  /* the NUL comes by byte 19 */
  if (!sift_rd_cstring(&r, &text, &len)) {
    sn_problem(o, SIFT_ETRUNC, "truncated HPROF header at byte 0: no NUL "
            "after 'JAVA PROFILE' in the first %zu bytes", r.size);
    return;
  }
  sn_strfact(o, "version", text + 13, len - 13);
  version = o->facts[o->nfacts - 1].s;
  if (strcmp(version, "1.0.1") != 0 && strcmp(version, "1.0.2") != 0
      && strcmp(version, "1.0.3") != 0)
    sn_problem(o, SIFT_EUNSUPPORTED, "unknown HPROF version '%s' at byte 13 "
            "(sift reads 1.0.1, 1.0.2 and 1.0.3)", version);
  r.size = n;
  if (!sift_rd_u4be(&r, &idsize) || !sift_rd_u8be(&r, &stamp)) {
    sift_rd_error(&r, &e, "HPROF header: ");
    sn_problem(o, SIFT_ETRUNC, "%s", e.msg);
    return;
  }
  sn_intfact(o, "id_size", idsize);
  sn_intfact(o, "timestamp_ms", (int64_t)stamp);
  sn_intfact(o, "header_size", (int64_t)r.pos);
  if (idsize != 4 && idsize != 8)
    sn_problem(o, SIFT_EHEADER, "bad HPROF identifier size %u at byte %zu "
            "(must be 4 or 8)", idsize, r.pos - 12);
}

/* }====================================================== */


/*
** {======================================================
** BMD (Badoo Memory Dump): no magic; the header copies the HPROF text
** =======================================================
*/

static int looks_bmd (const unsigned char *p, size_t n) {
  sift_Reader r;
  uint64_t version, len;
  const unsigned char *meta;
  sift_reader_init(&r, p, n);
  return sift_rd_varint(&r, &version) && sift_rd_varint(&r, &len)
      && len >= 13 && len <= 64 && sift_rd_bytes(&r, 13, &meta)
      && memcmp(meta, "JAVA PROFILE ", 13) == 0;
}

static void sniff_bmd (const unsigned char *p, size_t n, sift_Sniff *o) {
  sift_Reader r;
  uint64_t version, len;
  const unsigned char *meta;
  sift_Error e;
  sift_reader_init(&r, p, n);
  o->format = "bmd";
  sift_rd_varint(&r, &version);  /* both checked by looks_bmd */
  sift_rd_varint(&r, &len);
  sn_intfact(o, "version", (int64_t)version);
  if (!sift_rd_bytes(&r, len, &meta)) {
    sift_rd_error(&r, &e, "BMD header: ");
    sn_problem(o, SIFT_ETRUNC, "%s", e.msg);
    return;
  }
  sn_strfact(o, "hprof_header", (const char *)meta, (size_t)len);
  sn_strfact(o, "hprof_version", (const char *)meta + 13, (size_t)len - 13);
  sn_intfact(o, "header_size", (int64_t)r.pos);
  if (version != 1)
    sn_problem(o, SIFT_EUNSUPPORTED, "BMD version %llu (sift reads version 1)",
            (unsigned long long)version);
}

/* }====================================================== */


/*
** {======================================================
** OFX
** =======================================================
*/

static const char *const ofxkeys[][2] = {
  {"OFXHEADER", "ofxheader"}, {"DATA", "data"}, {"VERSION", "version"},
  {"SECURITY", "security"}, {"ENCODING", "encoding"},
  {"CHARSET", "charset"}, {"COMPRESSION", "compression"},
  {"OLDFILEUID", "oldfileuid"}, {"NEWFILEUID", "newfileuid"},
  {NULL, NULL}
};

/* which v1 header key starts at s (followed by optional blanks and ':') */
static int ofxkey_at (const char *s, const char *end) {
  int k;
  for (k = 0; ofxkeys[k][0]; k++) {
    size_t klen = strlen(ofxkeys[k][0]);
    const char *q = s + klen;
    if ((size_t)(end - s) < klen || memcmp(s, ofxkeys[k][0], klen) != 0)
      continue;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q < end && *q == ':') return k;
  }
  return -1;
}

/*
** v1 headers are KEY:VALUE pairs, normally one a line, though real files
** put blanks around the colon or no line breaks at all; a value ends at
** white space, at '<', or where the next known key begins.
*/
static void ofx_v1 (const char *s, const char *end, sift_Sniff *o) {
  o->variant = "sgml";
  sn_strfact(o, "header", "v1", 2);
  while (s < end) {
    const char *v;
    int k;
    while (s < end && isspace((unsigned char)*s)) s++;
    if (s == end || *s == '<' || (k = ofxkey_at(s, end)) < 0) break;
    s = (const char *)memchr(s, ':', (size_t)(end - s)) + 1;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    v = s;
    while (s < end && !isspace((unsigned char)*s) && *s != '<'
           && (s == v || ofxkey_at(s, end) < 0))
      s++;
    sn_valuefact(o, ofxkeys[k][1], v, (size_t)(s - v));
  }
}

/* the value of attribute `name` inside a <?...?> at s..end */
static void xml_attr (const char *s, const char *end, const char *name,
                      sift_Sniff *o, const char *key) {
  size_t nlen = strlen(name);
  for (; s + nlen + 2 < end; s++) {
    const char *v;
    char quote;
    if (memcmp(s, name, nlen) != 0 || (s[-1] != ' ' && s[-1] != '\t'
        && s[-1] != '\n' && s[-1] != '\r'))
      continue;
    v = s + nlen;
    while (v < end && isspace((unsigned char)*v)) v++;
    if (v == end || *v++ != '=') continue;
    while (v < end && isspace((unsigned char)*v)) v++;
    if (v == end || (*v != '"' && *v != '\'')) continue;
    quote = *v++;
    for (s = v; s < end && *s != quote; s++) {}
    sn_valuefact(o, key, v, (size_t)(s - v));
    return;
  }
}

static const char *skipspace (const char *s, const char *end) {
  while (s < end && isspace((unsigned char)*s)) s++;
  return s;
}

/* end of the processing instruction or comment starting at s */
static const char *skip_to (const char *s, const char *end,
                            const char *close) {
  size_t clen = strlen(close);
  for (; s + clen <= end; s++)
    if (memcmp(s, close, clen) == 0) return s + clen;
  return NULL;
}

static int tagis (const char *s, const char *end, const char *tag) {
  size_t k = strlen(tag);
  size_t i;
  if ((size_t)(end - s) < k + 2 || s[0] != '<' || s[k + 1] != '>')
    return 0;
  for (i = 0; i < k; i++)
    if (toupper((unsigned char)s[i + 1]) != tag[i]) return 0;
  return 1;
}

/* returns 1 when the text at s..end is OFX and fills o; offsets count
   from base */
static int sniff_ofx (const char *base, const char *s, const char *end,
                      sift_Sniff *o) {
  if (ofxkey_at(s, end) == 0) {  /* OFXHEADER first */
    o->format = "ofx";
    ofx_v1(s, end, o);
    return 1;
  }
  if (end - s >= 5 && memcmp(s, "<?xml", 5) == 0) {
    const char *decl = s;
    const char *q = skip_to(s, end, "?>");
    while (q != NULL) {  /* PIs and comments before the first element */
      q = skipspace(q, end);
      if (end - q >= 5 && memcmp(q, "<?OFX", 5) == 0) {
        const char *close = skip_to(q, end, "?>");
        const char *pend = close ? close : end;
        o->format = "ofx";
        o->variant = "xml";
        sn_strfact(o, "header", "v2", 2);
        xml_attr(q, pend, "OFXHEADER", o, "ofxheader");
        xml_attr(q, pend, "VERSION", o, "version");
        xml_attr(q, pend, "SECURITY", o, "security");
        xml_attr(decl, skip_to(decl, end, "?>"), "encoding", o, "encoding");
        return 1;
      }
      if (tagis(q, end, "OFX")) break;
      q = end - q >= 4 && memcmp(q, "<!--", 4) == 0 ? skip_to(q, end, "-->")
        : end - q >= 2 && memcmp(q, "<?", 2) == 0 ? skip_to(q, end, "?>")
        : NULL;
    }
    if (q == NULL) return 0;
    s = q;
  }
  if (s < end && *s == '<') {  /* markup: <OFX> first, or a little later */
    const char *q;
    const char *limit = end - s > 65536 ? s + 65536 : end;
    for (q = s; q < limit; q++)
      if (*q == '<' && tagis(q, end, "OFX")) {
        o->format = "ofx";
        o->variant = "headerless";
        sn_strfact(o, "header", "none", 4);
        if (q != s) sn_intfact(o, "body_offset", (int64_t)(q - base));
        return 1;
      }
  }
  return 0;
}

/* }====================================================== */


/*
** {======================================================
** Unrecognised input: name other common formats, else show the start
** =======================================================
*/

static const struct { const char *magic; size_t len; const char *what; }
others[] = {
  {"PK\3\4", 4, "a zip archive (jar, apk or zip): extract the dump first"},
  {"PK\5\6", 4, "an empty zip archive"},
  {"\xFD" "7zXZ\0", 6, "xz-compressed data: decompress it first (unxz)"},
  {"\x28\xB5\x2F\xFD", 4, "zstd-compressed data: decompress it first "
                          "(unzstd)"},
  {"7z\xBC\xAF\x27\x1C", 6, "a 7-Zip archive: extract the dump first"},
  {"\x7F" "ELF", 4, "an ELF executable or library"},
  {"%PDF", 4, "a PDF document"},
  {NULL, 0, NULL}
};

/* the magic strings of what sift reads: a file shorter than one, that is
   its start, is that format cut inside its header */
static const struct { const char *magic; const char *what; } ours[] = {
  {"JAVA PROFILE 1.0.", "an HPROF heap dump"},
  {"*version\n", "an Android method trace"},
  {"SLOW", "a streaming Android method trace"},
  {"OFXHEADER:", "an OFX statement"},
  {"\x01\x12JAVA PROFILE 1.0.", "a BMD heap dump"},  /* version 1, the HPROF header's length */
  {NULL, NULL}
};

static sift_Status unrecognised (const unsigned char *p, size_t n,
                                 sift_Sniff *o) {
  char shown[80];
  size_t i, k = 0;
  int printable = 1;
  for (i = 0; ours[i].magic; i++)
    if (n >= 4 && n < strlen(ours[i].magic) && memcmp(p, ours[i].magic, n) == 0)
      return unknown(o, SIFT_ETRUNC, "truncated header at byte %zu: the %zu "
                     "bytes there begin %s", n, n, ours[i].what);
  for (i = 0; others[i].magic; i++)
    if (n >= others[i].len && memcmp(p, others[i].magic, others[i].len) == 0)
      return unknown(o, SIFT_EUNKNOWN, "not a dump sift reads: %s",
                     others[i].what);
  if (n < 8)
    return unknown(o, SIFT_EUNKNOWN, "too short to recognise: %zu byte%s",
                   n, n == 1 ? "" : "s");
  for (i = 0; i < n && i < 32 && p[i] != '\n' && p[i] != '\r'; i++)
    if (p[i] < 0x20 && p[i] != '\t') printable = 0;
  if (printable && i > 0) {
    for (k = 0; k < i; k++) shown[k] = (char)p[k];
    shown[k] = '\0';
    return unknown(o, SIFT_EUNKNOWN, "not a recognised dump (HPROF, BMD, "
                   "Android trace or OFX): starts with \"%s\"", shown);
  }
  for (i = 0; i < 8; i++)
    k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%02x",
                          i ? " " : "", p[i]);
  return unknown(o, SIFT_EUNKNOWN, "not a recognised dump (HPROF, BMD, "
                 "Android trace or OFX): starts with bytes %s", shown);
}

/* }====================================================== */


static sift_Status sniff_plain (const unsigned char *p, size_t n,
                                sift_Sniff *o, sift_Progress *pr, int whole) {
  const char *text = (const char *)p, *end = text + n;
  if (n == 0)
    return unknown(o, SIFT_EEMPTY, "empty file: 0 bytes");
  if (sn_hasprefix(p, n, "JAVA PROFILE ")) {
    sniff_hprof(p, n, o);
    return SIFT_OK;
  }
  if (looks_bmd(p, n)) {
    sniff_bmd(p, n, o);
    return SIFT_OK;
  }
  if (sn_hasprefix(p, n, "*version\n") || sn_hasprefix(p, n, "*version\r\n")) {
    sn_regular_trace(p, n, o, whole);
    return SIFT_OK;
  }
  if (sn_hasprefix(p, n, "SLOW") && n >= 6) {
    if (p[5] == 0 && (p[4] & 0xf0) == 0xf0)
      return sn_streaming_trace(p, n, o, pr, whole);
    if (p[5] == 0 && p[4] >= 1 && p[4] <= 3) {  /* a bare data part */
      o->format = "trace";
      o->variant = "data-only";
      sn_intfact(o, "version", p[4]);
      sn_problem(o, SIFT_EHEADER, "trace data without its '*version' text "
              "header (method and thread names are missing)");
      return SIFT_OK;
    }
  }
  if (sn_hasprefix(p, n, "\xEF\xBB\xBF")) text += 3;  /* UTF-8 BOM */
  if (sniff_ofx((const char *)p, skipspace(text, end), end, o))
    return SIFT_OK;
  return unrecognised(p, n, o);
}


sift_Status sift_sniff (const unsigned char *p, size_t n, sift_Sniff *out,
                        sift_Progress *pr, unsigned char *scratch) {
  sift_Compression c = sift_compression(p, n);
  sift_Status s;
  size_t inner;
  sift_Error err;
  memset(out, 0, sizeof *out);
  if (c == SIFT_PLAIN || scratch == NULL) {
    s = sniff_plain(p, n, out, pr, 1);
    if (c != SIFT_PLAIN && s == SIFT_EUNKNOWN)
      return unknown(out, s, "%s-compressed data",
                     sift_compression_name(c));
    return s;
  }
  s = sift_inflate_head(c, p, n, scratch, SIFT_SNIFF_HEAD, &inner, err.msg,
                        sizeof err.msg);
  if (s != SIFT_OK) return unknown(out, s, "%s", err.msg);
  s = sniff_plain(scratch, inner, out, NULL, inner < SIFT_SNIFF_HEAD);
  out->compression = sift_compression_name(c);
  if (s == SIFT_EUNKNOWN || s == SIFT_EEMPTY) {
    err = out->error;
    return unknown(out, SIFT_EUNKNOWN, "%s-compressed data, and inside: %s",
                   out->compression, err.msg);
  }
  /* a header cut off by the head's end is not a problem of the file */
  if (inner == SIFT_SNIFF_HEAD && out->status == SIFT_ETRUNC) {
    out->status = SIFT_OK;
    out->error.msg[0] = '\0';
  }
  return s;
}
