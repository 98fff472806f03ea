/*
** Android method traces (.trace): decoder and call trees.
** Regular files (text header, "SLOW" binary header, fixed-size records,
** versions 1-3) and streaming files (0xF2/0xF3: records with inline method,
** thread and summary records). Records are processed in one pass in file
** order, each thread keeping its own stack, into a calling-context tree per
** thread and a per-method table, for the thread-CPU and the wall clock at
** once. The rules (docs/traces.md):
** - a gap between two events of a thread is charged to the method on top
**   of that thread's stack (its root, "(toplevel)", when empty);
** - inclusive time goes to a node when its frame closes; a method's
**   inclusive time counts only its outermost activation;
** - an exit with no entry (tracing began mid-call) makes its method the
**   caller of everything the thread ran so far, entered at time 0;
** - an exit that does not match the top unwinds to its match (an anomaly);
** - frames still open close at the thread's last event; no depth cap;
** - times are 32-bit microsecond counters: a time below the one before it
**   is the counter wrapping (after 71.6 minutes).
*/

#if !defined(sift_trace_h)
#define sift_trace_h

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/idmap.h"

#define MT_NONE 0xFFFFFFFFu

enum { MT_CPU = 0, MT_WALL = 1 };

typedef struct mt_Method {
  uint64_t id;          /* method id, action bits cleared */
  const char *line;     /* "class\tname\tsig\tsource[\tline]" in the file */
  uint32_t len;         /* 0 for ids the file does not name */
  uint64_t calls, recursive;
  uint64_t incl[2], excl[2];
} mt_Method;

typedef struct mt_Thread {
  uint32_t tid;
  const char *name;     /* in the file; NULL when the file names none */
  uint32_t namelen;
  uint32_t root;        /* its "(toplevel)" node */
  uint64_t records;
  uint64_t first[2], last[2];  /* times of its first and last events */
} mt_Thread;

typedef struct mt_Node {  /* 48 bytes */
  uint64_t incl[2], excl[2];
  uint32_t method;      /* MT_NONE for a thread's root */
  uint32_t child, next; /* first child, next sibling */
  uint32_t calls;       /* entries: fewer than the file's records */
} mt_Node;

typedef struct mt_Trace {
  const unsigned char *p;
  size_t n;
  int mapped;           /* p is a file mapping: passes give back its pages */
  int version;          /* binary version (1-3), streaming or not */
  int streaming;
  int dual;             /* records carry two times (cpu, wall) */
  int clock;            /* MT_CPU or MT_WALL: the clock of single-time records */
  const char *header;   /* the text block (regular: at the start; */
  size_t headerlen;     /*   streaming: the summary) */
  size_t data;          /* offset of the first record */
  unsigned recsize;
  uint64_t start_us;
  uint64_t records;     /* method records */
  uint64_t unknown;     /* method ids the file does not name */
  uint64_t orphans;     /* exits with no entry */
  uint64_t anomalies;   /* exits that did not match the top */
  mt_Method *methods;   /* sorted by id */
  uint32_t nmethods, methodcap;
  mt_Thread *threads;
  uint32_t nthreads, threadcap;
  mt_Node *nodes;
  uint32_t nnodes, nodecap;
  uint32_t *dense;      /* method id / 4 -> method number, when ids are small */
  uint32_t ndense;
  sift_IdMap children;  /* (parent, method) -> node, for the children of
                           nodes with many */
  /* the records' offsets grouped by thread id, made by mt_each_record on
     first use: thread tid's are by_thread[thread_first[tid] ..
     thread_first[tid + 1]), in file order */
  uint32_t *by_thread, *thread_first;
} mt_Trace;

/* mapped: p is a read-only file mapping (see sift_drop_pages) */
sift_Status mt_build (mt_Trace *t, const unsigned char *p, size_t n, int mapped,
                      sift_Progress *progress, sift_Error *err);
void mt_free (mt_Trace *t);

/* the method whose id is id, or NULL */
const mt_Method *mt_find_method (const mt_Trace *t, uint64_t id);

typedef int (*mt_RecordFn) (void *ud, uint32_t method, int action,
                            const uint64_t now[2]);

/* each method record of thread tid, in file order, until fn returns 0
   (the first call groups the records by thread: one pass for all) */
void mt_each_record (mt_Trace *t, uint32_t tid, mt_RecordFn fn, void *ud);

/* field k (0 class, 1 name, 2 signature, 3 source, 4 line) of a method
   line; returns its length and sets *s, or returns 0 */
size_t mt_method_field (const mt_Method *m, int k, const char **s);

#endif
