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
** its summary record at the end; it reports progress.
*/

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "inflate.h"
#include "reader.h"
#include "sniff.h"


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

static void intfact (sift_Sniff *o, const char *key, int64_t v) {
  sift_Fact *f = newfact(o, key);
  if (f == NULL) return;
  f->isint = 1;
  f->i = v;
  f->s[0] = '\0';
}

static void strfact (sift_Sniff *o, const char *key, const char *s,
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
static void valuefact (sift_Sniff *o, const char *key, const char *s,
                       size_t len) {
  int64_t v = 0;
  size_t i = (len > 0 && s[0] == '-') ? 1 : 0;
  if (len > i && len - i <= 18) {
    for (; i < len && isdigit((unsigned char)s[i]); i++)
      v = v * 10 + (s[i] - '0');
    if (i == len) {
      intfact(o, key, s[0] == '-' ? -v : v);
      return;
    }
  }
  strfact(o, key, s, len);
}

/* set the problem of a recognised file (the first one found wins) */
static void problem (sift_Sniff *o, sift_Status s, const char *fmt, ...) {
  va_list ap;
  if (o->status != SIFT_OK) return;
  o->status = s;
  va_start(ap, fmt);
  vsnprintf(o->message, sizeof o->message, fmt, ap);
  va_end(ap);
}

/* not recognised: say why */
static sift_Status unknown (sift_Sniff *o, sift_Status s, const char *fmt,
                            ...) {
  va_list ap;
  o->format = NULL;
  o->status = s;
  va_start(ap, fmt);
  vsnprintf(o->message, sizeof o->message, fmt, ap);
  va_end(ap);
  return s;
}

static int hasprefix (const unsigned char *p, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  return n >= k && memcmp(p, prefix, k) == 0;
}

/* }====================================================== */


/*
** {======================================================
** Text lines (trace headers, OFX v1 headers)
** =======================================================
*/

typedef struct Lines {
  const char *p, *end;
} Lines;

/* the next line without its "\n" or "\r\n"; 0 at the end */
static int nextline (Lines *l, const char **s, size_t *len) {
  const char *nl;
  if (l->p >= l->end) return 0;
  nl = (const char *)memchr(l->p, '\n', (size_t)(l->end - l->p));
  *s = l->p;
  *len = (size_t)((nl ? nl : l->end) - l->p);
  if (*len > 0 && (*s)[*len - 1] == '\r') (*len)--;
  l->p = nl ? nl + 1 : l->end;
  return 1;
}

static int lineis (const char *s, size_t len, const char *word) {
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
  char msg[160];
  o->format = "hprof";
  sift_reader_init(&r, p, n < 64 ? n : 64);  /* the NUL comes by byte 19 */
  if (!sift_rd_cstring(&r, &text, &len)) {
    problem(o, SIFT_ETRUNC, "truncated HPROF header at byte 0: no NUL "
            "after 'JAVA PROFILE' in the first %zu bytes", r.size);
    return;
  }
  strfact(o, "version", text + 13, len - 13);
  version = o->facts[o->nfacts - 1].s;
  if (strcmp(version, "1.0.1") != 0 && strcmp(version, "1.0.2") != 0
      && strcmp(version, "1.0.3") != 0)
    problem(o, SIFT_EUNSUPPORTED, "unknown HPROF version '%s' at byte 13 "
            "(sift reads 1.0.1, 1.0.2 and 1.0.3)", version);
  r.size = n;
  if (!sift_rd_u4be(&r, &idsize) || !sift_rd_u8be(&r, &stamp)) {
    sift_rd_message(&r, msg, sizeof msg);
    problem(o, SIFT_ETRUNC, "HPROF header: %s", msg);
    return;
  }
  intfact(o, "id_size", idsize);
  intfact(o, "timestamp_ms", (int64_t)stamp);
  intfact(o, "header_size", (int64_t)r.pos);
  if (idsize != 4 && idsize != 8)
    problem(o, SIFT_EHEADER, "bad HPROF identifier size %u at byte %zu "
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
  char msg[160];
  sift_reader_init(&r, p, n);
  o->format = "bmd";
  sift_rd_varint(&r, &version);  /* both checked by looks_bmd */
  sift_rd_varint(&r, &len);
  intfact(o, "version", (int64_t)version);
  if (!sift_rd_bytes(&r, len, &meta)) {
    sift_rd_message(&r, msg, sizeof msg);
    problem(o, SIFT_ETRUNC, "BMD header: %s", msg);
    return;
  }
  strfact(o, "hprof_header", (const char *)meta, (size_t)len);
  strfact(o, "hprof_version", (const char *)meta + 13, (size_t)len - 13);
  intfact(o, "header_size", (int64_t)r.pos);
  if (version != 1)
    problem(o, SIFT_EUNSUPPORTED, "BMD version %llu (sift reads version 1)",
            (unsigned long long)version);
}

/* }====================================================== */


/*
** {======================================================
** Android method traces
** =======================================================
*/

/* text-header keys and the fact names they become */
static const char *const tracekeys[][2] = {
  {"clock", "clock"}, {"vm", "vm"}, {"pid", "pid"},
  {"elapsed-time-usec", "elapsed_time_us"},
  {"num-method-calls", "num_method_calls"},
  {"data-file-overflow", "data_file_overflow"},
  {"clock-call-overhead-nsec", "clock_call_overhead_ns"},
  {NULL, NULL}
};

/*
** Read a "*version" ... "*end" block: the version, key=value lines, and
** the thread and method lines, which are counted. Returns the bytes up to
** and including the "*end" line, or 0 when that line never comes.
*/
static size_t text_header (const char *p, size_t n, sift_Sniff *o,
                           int64_t *version) {
  Lines l;
  const char *s;
  size_t len;
  int section = 0;  /* 0 version/keys, 1 threads, 2 methods */
  int want_version = 0;
  int64_t threads = 0, methods = 0;
  l.p = p;
  l.end = p + n;
  *version = -1;
  while (nextline(&l, &s, &len)) {
    if (lineis(s, len, "*end")) {
      intfact(o, "threads", threads);
      intfact(o, "methods", methods);
      return (size_t)(l.p - p);
    }
    else if (lineis(s, len, "*threads")) section = 1;
    else if (lineis(s, len, "*methods")) section = 2;
    else if (lineis(s, len, "*version")) section = 0, want_version = 1;
    else if (len == 0) continue;
    else if (section == 1) threads++;
    else if (section == 2) methods++;
    else if (want_version) {  /* the line after *version */
      size_t i;
      int64_t v = 0;
      for (i = 0; i < len && i < 9 && isdigit((unsigned char)s[i]); i++)
        v = v * 10 + (s[i] - '0');
      *version = i == len ? v : -1;
      want_version = 0;
    }
    else {
      const char *eq = (const char *)memchr(s, '=', len);
      int k;
      if (eq == NULL) continue;
      for (k = 0; tracekeys[k][0]; k++)
        if (lineis(s, (size_t)(eq - s), tracekeys[k][0]))
          valuefact(o, tracekeys[k][1], eq + 1, len - (size_t)(eq - s) - 1);
    }
  }
  return 0;
}

/* record sizes of the regular formats; v3 states its own */
static int record_size (unsigned version) {
  return version == 1 ? 9 : version == 2 ? 10 : 0;
}

/*
** The "SLOW" binary header (little-endian): u4 magic, u2 version, u2 offset
** of the data from the header's start, u8 start time (us), and from
** version 3 on a u2 record size.
*/
typedef struct TraceHeader {
  size_t at;  /* where the header starts */
  unsigned version, offset, recsize;
  uint64_t start_us;
} TraceHeader;

static int binary_header (sift_Reader *r, TraceHeader *h, sift_Sniff *o) {
  uint16_t version, offset, recsize = 0;
  uint32_t magic;
  uint64_t start;
  size_t at = r->pos;
  char msg[160];
  if (!sift_rd_u4le(r, &magic) || magic != 0x574f4c53u) {  /* "SLOW" */
    problem(o, SIFT_EHEADER, "no 'SLOW' binary trace header at byte %zu",
            at);
    return 0;
  }
  if (!sift_rd_u2le(r, &version) || !sift_rd_u2le(r, &offset)
      || !sift_rd_u8le(r, &start)
      || ((version & 0x0f) >= 3 && !sift_rd_u2le(r, &recsize))) {
    sift_rd_message(r, msg, sizeof msg);
    problem(o, SIFT_ETRUNC, "trace binary header: %s", msg);
    return 0;
  }
  h->version = version;
  h->offset = offset;
  h->recsize = (version & 0x0f) >= 3 ? recsize : (unsigned)record_size(version & 0x0f);
  h->start_us = start;
  h->at = at;
  return 1;
}

/* the facts of a binary header whose version is known */
static void header_facts (sift_Sniff *o, const TraceHeader *h) {
  intfact(o, "start_time_us", (int64_t)h->start_us);
  intfact(o, "data_offset", (int64_t)(h->at + h->offset));
  intfact(o, "record_size", h->recsize);
}

/* `whole`: p..n is the whole file, not the head of a compressed one */
static void regular_trace (const unsigned char *p, size_t n, sift_Sniff *o,
                           int whole) {
  int64_t textversion;
  size_t textlen = text_header((const char *)p, n, o, &textversion);
  size_t at, start;
  sift_Reader r;
  TraceHeader h;
  o->format = "trace";
  o->variant = "regular";
  if (textversion >= 0) intfact(o, "version", textversion);
  if (textlen == 0) {
    problem(o, SIFT_ETRUNC, "truncated trace text header at byte %zu: no "
            "'*end' line before the file ends", n);
    return;
  }
  sift_reader_init(&r, p, n);
  r.pos = at = textlen;
  if (!binary_header(&r, &h, o)) return;
  if (h.version < 1 || h.version > 3) {
    problem(o, SIFT_EUNSUPPORTED, "unsupported binary trace version %u at "
            "byte %zu (sift reads 1, 2 and 3)", h.version, at + 4);
    return;
  }
  if (textversion != (int64_t)h.version)
    problem(o, SIFT_EHEADER, "trace text header says version %lld but the "
            "binary header at byte %zu says %u", (long long)textversion,
            at, h.version);
  intfact(o, "version", h.version);  /* the binary header's word wins */
  start = at + h.offset;
  if (h.recsize < 9 || h.offset < r.pos - at || start > n) {
    problem(o, SIFT_EHEADER, "bad trace binary header at byte %zu: data "
            "offset %u, record size %u", at, h.offset, h.recsize);
    return;
  }
  header_facts(o, &h);
  if (!whole) return;
  intfact(o, "records", (int64_t)((n - start) / h.recsize));
  if ((n - start) % h.recsize != 0)
    problem(o, SIFT_ETRUNC, "truncated trace record at byte %zu: needs %u "
            "bytes, %zu left", n - (n - start) % h.recsize, h.recsize,
            (n - start) % h.recsize);
}

/*
** Streaming traces interleave fixed-size records with special ones whose
** u2 thread id is 0, followed by a u1 opcode:
**   1 new method: u2 length, method line
**   2 new thread: u2 thread id, u2 length, name
**   3 summary:    u4 length, the text block of a regular trace
*/
static sift_Status streaming_trace (const unsigned char *p, size_t n,
                                    sift_Sniff *o, sift_Progress *pr,
                                    int whole) {
  sift_Reader r;
  TraceHeader h;
  int64_t methods = 0, threads = 0, records = 0, version;
  int summary = 0;
  char msg[160];
  o->format = "trace";
  o->variant = "streaming";
  sift_reader_init(&r, p, n);
  if (!binary_header(&r, &h, o)) return SIFT_OK;
  intfact(o, "version", h.version & 0x0f);
  if ((h.version & 0x0f) < 2 || (h.version & 0x0f) > 3) {
    problem(o, SIFT_EUNSUPPORTED, "unsupported streaming trace version "
            "%u (0x%X) at byte 4 (sift reads 2 and 3%s)", h.version & 0x0f,
            h.version, (h.version & 0x0f) >= 4
            ? "; versions 4 and up are the LEB128-packed format" : "");
    return SIFT_OK;
  }
  if (h.offset > n && h.recsize >= 10 && h.offset >= r.pos) {  /* a sound header the file ends in */
    problem(o, SIFT_ETRUNC, "truncated streaming trace at byte %zu: its header says the "
            "records start at byte %u", n, h.offset);
    return SIFT_OK;
  }
  if (h.recsize < 10 || h.offset < r.pos) {
    problem(o, SIFT_EHEADER, "bad streaming trace header at byte 4: data offset %u, "
            "record size %u", h.offset, h.recsize);
    return SIFT_OK;
  }
  header_facts(o, &h);
  if (!whole) return SIFT_OK;  /* counts need the summary at the end */
  r.pos = h.offset;
  while (sift_rd_left(&r) > 0) {
    uint16_t thread, len16, tid;
    uint32_t len32;
    uint8_t op;
    const unsigned char *text;
    size_t at = r.pos;
    if (!sift_progress(pr, r.pos)) return SIFT_ECANCEL;
    if (!sift_rd_u2le(&r, &thread)) break;
    if (thread != 0) {  /* an ordinary enter/exit record */
      if (!sift_rd_has(&r, h.recsize - 2)) {
        r.pos = at;  /* report the whole record */
        sift_rd_fail(&r, SIFT_ETRUNC, "trace record", h.recsize);
        break;
      }
      r.pos += h.recsize - 2;
      records++;
      continue;
    }
    if (!sift_rd_u1(&r, &op)) break;
    if (op == 1) {
      if (!sift_rd_u2le(&r, &len16) || !sift_rd_skip(&r, len16)) break;
      methods++;
    }
    else if (op == 2) {
      if (!sift_rd_u2le(&r, &tid) || !sift_rd_u2le(&r, &len16)
          || !sift_rd_skip(&r, len16)) break;
      threads++;
    }
    else if (op == 3) {
      if (!sift_rd_u4le(&r, &len32) || !sift_rd_bytes(&r, len32, &text))
        break;
      text_header((const char *)text, len32, o, &version);
      summary = 1;
    }
    else {
      problem(o, SIFT_EHEADER, "unknown streaming trace opcode %u at byte "
              "%zu", op, at + 2);
      break;
    }
  }
  if (r.status != SIFT_OK) {
    sift_rd_message(&r, msg, sizeof msg);
    problem(o, r.status, "streaming trace: %s", msg);
  }
  if (!sift_progress(pr, n)) return SIFT_ECANCEL;
  intfact(o, "records", records);
  intfact(o, "methods", methods);
  if (!summary) {  /* no summary: count what the records announced */
    intfact(o, "threads", threads);
    problem(o, SIFT_ETRUNC, "streaming trace has no summary record (it "
            "names the clock) before the file ends at byte %zu: it may be cut "
            "short", n);
  }
  return SIFT_OK;
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
  strfact(o, "header", "v1", 2);
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
    valuefact(o, ofxkeys[k][1], v, (size_t)(s - v));
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
    valuefact(o, key, v, (size_t)(s - v));
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
        strfact(o, "header", "v2", 2);
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
        strfact(o, "header", "none", 4);
        if (q != s) intfact(o, "body_offset", (int64_t)(q - base));
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
  if (hasprefix(p, n, "JAVA PROFILE ")) {
    sniff_hprof(p, n, o);
    return SIFT_OK;
  }
  if (looks_bmd(p, n)) {
    sniff_bmd(p, n, o);
    return SIFT_OK;
  }
  if (hasprefix(p, n, "*version\n") || hasprefix(p, n, "*version\r\n")) {
    regular_trace(p, n, o, whole);
    return SIFT_OK;
  }
  if (hasprefix(p, n, "SLOW") && n >= 6) {
    if (p[5] == 0 && (p[4] & 0xf0) == 0xf0)
      return streaming_trace(p, n, o, pr, whole);
    if (p[5] == 0 && p[4] >= 1 && p[4] <= 3) {  /* a bare data part */
      o->format = "trace";
      o->variant = "data-only";
      intfact(o, "version", p[4]);
      problem(o, SIFT_EHEADER, "trace data without its '*version' text "
              "header (method and thread names are missing)");
      return SIFT_OK;
    }
  }
  if (hasprefix(p, n, "\xEF\xBB\xBF")) text += 3;  /* UTF-8 BOM */
  if (sniff_ofx((const char *)p, skipspace(text, end), end, o))
    return SIFT_OK;
  return unrecognised(p, n, o);
}


sift_Status sift_sniff (const unsigned char *p, size_t n, sift_Sniff *out,
                        sift_Progress *pr, unsigned char *scratch) {
  sift_Compression c = sift_compression(p, n);
  sift_Status s;
  size_t inner;
  char err[200];
  memset(out, 0, sizeof *out);
  if (c == SIFT_PLAIN || scratch == NULL) {
    s = sniff_plain(p, n, out, pr, 1);
    if (c != SIFT_PLAIN && s == SIFT_EUNKNOWN)
      return unknown(out, s, "%s-compressed data",
                     sift_compression_name(c));
    return s;
  }
  s = sift_inflate_head(c, p, n, scratch, SIFT_SNIFF_HEAD, &inner, err,
                        sizeof err);
  if (s != SIFT_OK) return unknown(out, s, "%s", err);
  s = sniff_plain(scratch, inner, out, NULL, inner < SIFT_SNIFF_HEAD);
  out->compression = sift_compression_name(c);
  if (s == SIFT_EUNKNOWN || s == SIFT_EEMPTY) {
    memcpy(err, out->message, sizeof err);
    err[sizeof err - 1] = '\0';
    return unknown(out, SIFT_EUNKNOWN, "%s-compressed data, and inside: %s",
                   out->compression, err);
  }
  /* a header cut off by the head's end is not a problem of the file */
  if (inner == SIFT_SNIFF_HEAD && out->status == SIFT_ETRUNC) {
    out->status = SIFT_OK;
    out->message[0] = '\0';
  }
  return s;
}
