/*
** common.h
** Shared definitions of the sift.core C module: version, the export
** macro, error codes and messages, and the progress mechanism.
** Nothing here depends on a particular decoder.
*/

#if !defined(sift_common_h)
#define sift_common_h

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define SIFT_VERSION "0.1.0"

/* visibility of the one exported symbol, even under -fvisibility=hidden */
#if defined(__GNUC__)
#define SIFT_EXPORT __attribute__((visibility("default")))
#else
#define SIFT_EXPORT
#endif

/*
** Stable error codes: the third value of a `nil, message, code` return.
** The strings are part of the API (docs/errors.md); never rename one.
*/
typedef enum sift_Status {
  SIFT_OK = 0,
  SIFT_ETRUNC,      /* "truncated": input ends before a field does */
  SIFT_EVARINT,     /* "bad_varint": varint longer than its type allows */
  SIFT_EHEADER,     /* "bad_header": a header that is malformed */
  SIFT_ECANCEL,     /* "cancelled": a progress callback asked to stop */
  SIFT_EIO,         /* "io": the file could not be opened, mapped or read */
  SIFT_ECORRUPT,    /* "corrupt": compressed data that does not inflate */
  SIFT_EUNSUPPORTED,/* "unsupported": a known format sift cannot read */
  SIFT_EUNKNOWN,    /* "unknown_format": not a format sift knows */
  SIFT_EEMPTY,      /* "empty": a file with no bytes */
  SIFT_EBADTAG,     /* "bad_tag": a record tag the format does not have */
  SIFT_ENOMEM,      /* "no_memory": an allocation failed */
  SIFT_ETOOBIG      /* "too_big": an output or an answer past its budget */
} sift_Status;

const char *sift_status_code (sift_Status s);

/* printf-style arguments the compiler checks (gcc, clang) */
#if defined(__GNUC__)
#define SIFT_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define SIFT_PRINTF(fmt, first)
#endif

/* ask for the cache line of p ahead of a read (gcc, clang) */
#if defined(__GNUC__)
#define SIFT_PREFETCH(p) __builtin_prefetch(p)
#else
#define SIFT_PREFETCH(p) ((void)(p))
#endif

/*
** Why a decoder stopped: the message of the `nil, message, code` the Lua
** binding returns (the code is the sift_Status returned beside it). Every
** decoder (hprof, bmd, crunch, trace, sniff, the reader) writes its
** failure into the caller's sift_Error through sift_fail.
*/
typedef struct sift_Error {
  char msg[256];
} sift_Error;

/* format e's message and return s */
sift_Status sift_fail (sift_Error *e, sift_Status s, const char *fmt, ...)
  SIFT_PRINTF(3, 4);
sift_Status sift_vfail (sift_Error *e, sift_Status s, const char *fmt,
                        va_list ap) SIFT_PRINTF(3, 0);


/*
** {======================================================
** Progress of long passes
** A pass calls sift_progress() with the bytes (or items) done so far;
** the callback runs about once per percent and can cancel the pass by
** returning 0. With no callback the check is a single comparison.
** =======================================================
*/

typedef int (*sift_ProgressFn) (void *ud, uint64_t done, uint64_t total);

typedef struct sift_Progress {
  sift_ProgressFn fn;   /* NULL: no reporting */
  void *ud;             /* passed back to fn */
  uint64_t total;       /* size of the whole pass */
  uint64_t next;        /* report when done reaches this */
} sift_Progress;

void sift_progress_init (sift_Progress *p, sift_ProgressFn fn, void *ud,
                         uint64_t total);
int sift_progress_report (sift_Progress *p, uint64_t done);

/* returns 0 when the pass must stop */
static inline int sift_progress (sift_Progress *p, uint64_t done) {
  return (p == NULL || done < p->next) ? 1 : sift_progress_report(p, done);
}

/* }====================================================== */


/*
** A pass over a read-only file mapping can give back the pages it has
** left behind (they are read from the file again when touched), so its
** peak memory is what it builds, not the file. p is where the mapping
** starts; the pages wholly inside [from, to) go. Returns the offset up to
** which pages are gone, to pass as the next from.
*/
size_t sift_drop_pages (const unsigned char *p, size_t from, size_t to);

#endif
