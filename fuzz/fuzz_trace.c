/*
** fuzz_trace.c
** libFuzzer harness for the Android method-trace decoder: build the call
** trees, then check what a caller relies on: methods in range, children
** lists that end, every node but the threads' roots the child of exactly
** one node (a tree, no cycles), method lines that split cleanly.
** Odd-sized inputs get a valid regular header prepended, so the fuzzer
** spends its time on records.
*/

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/calls.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char header[] =
  "*version\n3\nclock=dual\n*threads\n1\tmain\n2\tworker\n*methods\n"
  "0x0\tA\trun\t()V\tA.java\n0x4\tB\twork\t()V\tB.java\t12\n*end\n"
  "SLOW\x03\x00\x20\x00\0\0\0\0\0\0\0\0\x0e\x00"
  "\0\0\0\0\0\0\0\0\0\0\0\0\0\0";  /* 32-byte binary header */

static uint64_t sink;

/* counts the records mt_each_record gives one thread */
static int count_record (void *ud, uint32_t method, int action,
                         const uint64_t now[2]) {
  (*(uint64_t *)ud)++;
  sink += method + (uint64_t)action + now[0];
  return 1;
}

/* each thread's records, through the index by thread (made by the first
   call), are within the index, which holds every record once; each
   thread's call instances form a tree whose shapes are all numbered */
static void check_records (mt_Trace *t) {
  uint32_t i;
  for (i = 0; i < t->nthreads; i++) {
    uint64_t mine = 0;
    mt_Calls c;
    mt_each_record(t, t->threads[i].tid, count_record, &mine);
    assert(t->thread_first == NULL || mine <= t->thread_first[65536]);
    if (mt_calls_build(&c, t, t->threads[i].tid, NULL) == SIFT_OK) {
      uint32_t k;
      assert(c.n >= 1 && c.calls >= (uint64_t)c.n - 1);
      if (mt_calls_shapes(&c, i % 2 ? 3 : UINT32_MAX) == SIFT_OK && i % 2 == 0)
        for (k = 0; k < c.n; k++) assert(c.shape[k] >= 1 && c.shape[k] <= c.n);
      mt_calls_free(&c);
    }
  }
  assert(t->thread_first == NULL || t->thread_first[65536] == t->records);
}

static void check (const mt_Trace *t) {
  uint32_t i, unowned = 0;
  unsigned char *owned = (unsigned char *)calloc(t->nnodes ? t->nnodes : 1, 1);
  assert(owned != NULL);
  for (i = 0; i < t->nnodes; i++) {
    const mt_Node *nd = &t->nodes[i];
    uint32_t k, n = 0;
    assert(nd->method == MT_NONE || nd->method < t->nmethods);
    for (k = nd->child; k != MT_NONE; k = t->nodes[k].next) {
      assert(k < t->nnodes && !owned[k]);
      owned[k] = 1;
      assert(++n <= t->nnodes);
    }
    sink += nd->incl[0] + nd->excl[1] + nd->calls;
  }
  for (i = 0; i < t->nthreads; i++) assert(!owned[t->threads[i].root]);
  for (i = 0; i < t->nnodes; i++) unowned += !owned[i];
  assert(unowned == t->nthreads);  /* only the roots are nobody's child */
  free(owned);
  for (i = 0; i < t->nmethods; i++) {
    const char *s;
    int f;
    for (f = 0; f < 5; f++) {
      size_t len = mt_method_field(&t->methods[i], f, &s);
      if (len > 0) sink += (unsigned char)s[len - 1];
    }
  }
  for (i = 0; i < t->nthreads; i++) assert(t->threads[i].root < t->nnodes);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  mt_Trace t;
  sift_Error err;
  unsigned char *buf = NULL;
  const unsigned char *p = data;
  size_t n = size;
  sift_Status s;
  if (size % 2 == 1) {  /* a valid header, then the fuzzer's records */
    n = sizeof header - 1 + size;
    buf = (unsigned char *)malloc(n ? n : 1);
    if (buf == NULL) return 0;
    memcpy(buf, header, sizeof header - 1);
    memcpy(buf + sizeof header - 1, data, size);
    p = buf;
  }
  s = mt_build(&t, p, n, 0, NULL, &err);
  if (s == SIFT_OK) {
    check(&t);
    check_records(&t);
  }
  else assert(memchr(err.msg, '\0', sizeof err.msg) != NULL && err.msg[0] != '\0');
  mt_free(&t);
  free(buf);
  return 0;
}
