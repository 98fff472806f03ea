/*
** common.c
** Error-code names and messages, the progress throttle shared by every
** pass, and giving back pages of a mapping.
*/

#define _DEFAULT_SOURCE  /* madvise */

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"


const char *sift_status_code (sift_Status s) {
  switch (s) {
    case SIFT_OK: return "ok";
    case SIFT_ETRUNC: return "truncated";
    case SIFT_EVARINT: return "bad_varint";
    case SIFT_EHEADER: return "bad_header";
    case SIFT_ECANCEL: return "cancelled";
    case SIFT_EIO: return "io";
    case SIFT_ECORRUPT: return "corrupt";
    case SIFT_EUNSUPPORTED: return "unsupported";
    case SIFT_EUNKNOWN: return "unknown_format";
    case SIFT_EEMPTY: return "empty";
    case SIFT_EBADTAG: return "bad_tag";
    case SIFT_ENOMEM: return "no_memory";
    case SIFT_ETOOBIG: return "too_big";
  }
  return "error";
}


sift_Status sift_vfail (sift_Error *e, sift_Status s, const char *fmt,
                        va_list ap) {
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  return s;
}

sift_Status sift_fail (sift_Error *e, sift_Status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sift_vfail(e, s, fmt, ap);
  va_end(ap);
  return s;
}


void sift_progress_init (sift_Progress *p, sift_ProgressFn fn, void *ud,
                         uint64_t total) {
  p->fn = fn;
  p->ud = ud;
  p->total = total;
  p->next = fn != NULL ? 0 : UINT64_MAX;
}


/*
** Called when `done` reached p->next: report, then set the next threshold
** one hundredth of the total further on (or the very end).
*/
int sift_progress_report (sift_Progress *p, uint64_t done) {
  uint64_t step = p->total / 100 > 0 ? p->total / 100 : 1;
  if (!p->fn(p->ud, done, p->total)) {
    p->next = UINT64_MAX;
    return 0;
  }
  p->next = done >= p->total ? UINT64_MAX
          : (done + step < p->total ? done + step : p->total);
  return 1;
}


size_t sift_drop_pages (const unsigned char *p, size_t from, size_t to) {
#if defined(MADV_DONTNEED)
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t a = (from + page - 1) / page * page, b = to / page * page;
  if (b <= a) return from;
  madvise((void *)(uintptr_t)(p + a), b - a, MADV_DONTNEED);
  return b;
#else
  (void)p; (void)from;
  return to;
#endif
}
