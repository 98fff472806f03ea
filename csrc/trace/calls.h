/*
** calls.h
** One thread's call instances as a tree in compact arrays (sift calls):
** every call, in order, under its caller (hidden methods give their calls
** to their caller), and a shape for each: equal numbers for subtrees that
** are the same calls all the way down (to a depth limit), so that loops
** can be found by comparing numbers.
*/

#if !defined(sift_calls_h)
#define sift_calls_h

#include <stdint.h>

#include "trace.h"

typedef struct mt_Calls {
  uint32_t n;              /* nodes; node 0 is the thread's root */
  uint32_t cap;
  uint32_t *method;        /* method number (MT_NONE at the root) */
  uint32_t *first, *next;  /* first child, next sibling (MT_NONE: none) */
  uint32_t *last;          /* last child, while building */
  uint32_t *shape;         /* 1, 2, ...: equal for equal subtrees */
  uint64_t calls;          /* entries seen, hidden ones too */
} mt_Calls;

/* the calls of thread tid; visible[m] says whether method m is shown
   (NULL: all are); SIFT_ENOMEM when memory runs out */
sift_Status mt_calls_build (mt_Calls *c, mt_Trace *t, uint32_t tid,
                            const uint8_t *visible);

/* number every subtree by its shape, looking depth_limit levels down
   from the root (children of a node at the limit do not count) */
sift_Status mt_calls_shapes (mt_Calls *c, uint32_t depth_limit);

void mt_calls_free (mt_Calls *c);

#endif
