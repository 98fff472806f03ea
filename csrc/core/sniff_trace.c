/*
** sniff_trace.c
** The facts of an Android method trace's headers: a regular trace's
** "*version" text block and "SLOW" binary header, and a streaming trace,
** walked once to its summary record (with progress).
*/

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "reader.h"
#include "sniff_facts.h"


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
  while (sn_nextline(&l, &s, &len)) {
    if (sn_lineis(s, len, "*end")) {
      sn_intfact(o, "threads", threads);
      sn_intfact(o, "methods", methods);
      return (size_t)(l.p - p);
    }
    else if (sn_lineis(s, len, "*threads")) section = 1;
    else if (sn_lineis(s, len, "*methods")) section = 2;
    else if (sn_lineis(s, len, "*version")) section = 0, want_version = 1;
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
        if (sn_lineis(s, (size_t)(eq - s), tracekeys[k][0]))
          sn_valuefact(o, tracekeys[k][1], eq + 1, len - (size_t)(eq - s) - 1);
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
  sift_Error e;
  if (!sift_rd_u4le(r, &magic) || magic != 0x574f4c53u) {  /* "SLOW" */
    sn_problem(o, SIFT_EHEADER, "no 'SLOW' binary trace header at byte %zu",
            at);
    return 0;
  }
  if (!sift_rd_u2le(r, &version) || !sift_rd_u2le(r, &offset)
      || !sift_rd_u8le(r, &start)
      || ((version & 0x0f) >= 3 && !sift_rd_u2le(r, &recsize))) {
    sift_rd_error(r, &e, "trace binary header: ");
    sn_problem(o, SIFT_ETRUNC, "%s", e.msg);
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
  sn_intfact(o, "start_time_us", (int64_t)h->start_us);
  sn_intfact(o, "data_offset", (int64_t)(h->at + h->offset));
  sn_intfact(o, "record_size", h->recsize);
}

/* `whole`: p..n is the whole file, not the head of a compressed one */
void sn_regular_trace (const unsigned char *p, size_t n, sift_Sniff *o,
                       int whole) {
  int64_t textversion;
  size_t textlen = text_header((const char *)p, n, o, &textversion);
  size_t at, start;
  sift_Reader r;
  TraceHeader h;
  o->format = "trace";
  o->variant = "regular";
  if (textversion >= 0) sn_intfact(o, "version", textversion);
  if (textlen == 0) {
    sn_problem(o, SIFT_ETRUNC, "truncated trace text header at byte %zu: no "
            "'*end' line before the file ends", n);
    return;
  }
  sift_reader_init(&r, p, n);
  r.pos = at = textlen;
  if (!binary_header(&r, &h, o)) return;
  if (h.version < 1 || h.version > 3) {
    sn_problem(o, SIFT_EUNSUPPORTED, "unsupported binary trace version %u at "
            "byte %zu (sift reads 1, 2 and 3)", h.version, at + 4);
    return;
  }
  if (textversion != (int64_t)h.version)
    sn_problem(o, SIFT_EHEADER, "trace text header says version %lld but the "
            "binary header at byte %zu says %u", (long long)textversion,
            at, h.version);
  sn_intfact(o, "version", h.version);  /* the binary header's word wins */
  start = at + h.offset;
  if (h.recsize < 9 || h.offset < r.pos - at || start > n) {
    sn_problem(o, SIFT_EHEADER, "bad trace binary header at byte %zu: data "
            "offset %u, record size %u", at, h.offset, h.recsize);
    return;
  }
  header_facts(o, &h);
  if (!whole) return;
  sn_intfact(o, "records", (int64_t)((n - start) / h.recsize));
  if ((n - start) % h.recsize != 0)
    sn_problem(o, SIFT_ETRUNC, "truncated trace record at byte %zu: needs %u "
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
sift_Status sn_streaming_trace (const unsigned char *p, size_t n,
                                sift_Sniff *o, sift_Progress *pr,
                                int whole) {
  sift_Reader r;
  TraceHeader h;
  int64_t methods = 0, threads = 0, records = 0, version;
  int summary = 0;
  sift_Error e;
  o->format = "trace";
  o->variant = "streaming";
  sift_reader_init(&r, p, n);
  if (!binary_header(&r, &h, o)) return SIFT_OK;
  sn_intfact(o, "version", h.version & 0x0f);
  if ((h.version & 0x0f) < 2 || (h.version & 0x0f) > 3) {
    sn_problem(o, SIFT_EUNSUPPORTED, "unsupported streaming trace version "
            "%u (0x%X) at byte 4 (sift reads 2 and 3%s)", h.version & 0x0f,
            h.version, (h.version & 0x0f) >= 4
            ? "; versions 4 and up are the LEB128-packed format" : "");
    return SIFT_OK;
  }
  if (h.offset > n && h.recsize >= 10 && h.offset >= r.pos) {  /* a sound header the file ends in */
    sn_problem(o, SIFT_ETRUNC, "truncated streaming trace at byte %zu: its header says the "
            "records start at byte %u", n, h.offset);
    return SIFT_OK;
  }
  if (h.recsize < 10 || h.offset < r.pos) {
    sn_problem(o, SIFT_EHEADER, "bad streaming trace header at byte 4: data offset %u, "
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
      sn_problem(o, SIFT_EHEADER, "unknown streaming trace opcode %u at byte "
              "%zu", op, at + 2);
      break;
    }
  }
  if (r.status != SIFT_OK) {
    sn_problem(o, sift_rd_error(&r, &e, "streaming trace: "), "%s", e.msg);
  }
  if (!sift_progress(pr, n)) return SIFT_ECANCEL;
  sn_intfact(o, "records", records);
  sn_intfact(o, "methods", methods);
  if (!summary) {  /* no summary: count what the records announced */
    sn_intfact(o, "threads", threads);
    sn_problem(o, SIFT_ETRUNC, "streaming trace has no summary record (it "
            "names the clock) before the file ends at byte %zu: it may be cut "
            "short", n);
  }
  return SIFT_OK;
}

/* }====================================================== */
