/*
** fill.h
** Collections filled below their capacity, counted in the waste pass
** (waste.c) as it walks the objects: for each rule (a collection class and
** its subclasses, the field holding its array and the field holding its
** size) the instances, their capacities and sizes, the unused share of
** their arrays' bytes, and the worst instances. The rules are data from
** lua/sift/heap/waste.lua (M.COLLECTIONS): which classes, which fields.
*/

#if !defined(sift_fill_h)
#define sift_fill_h

#include <stdint.h>

#include "graph.h"

#define HF_MAXRULES 32  /* rules per call (bits of a class's rule mask) */
#define HF_MAXNAMES 64  /* distinct field names over the rules */
#define HF_ALT 4        /* fields tried in turn for an array or a size */

/* one wasteful instance: its id, capacity, size and bytes wasted */
typedef struct hf_Worst {
  uint64_t id, capacity, wasted;
  int64_t size;
} hf_Worst;

/*
** A rule and what it found. Names are indices into hf_Fill.names (-1:
** none). The array is the first of array[] whose reference is not null
** (read from the object `via` holds, when via >= 0), its capacity the
** array's length; the size the first of size[] present (an integral
** field), times `times`, or, when head >= 0, (tail - head) modulo the
** capacity (a ring buffer).
*/
typedef struct hf_Rule {
  int64_t cls;                   /* class index; its subclasses too */
  int via, head, tail, times;
  int array[HF_ALT], narray, size[HF_ALT], nsize;
  uint64_t count, capacity, wasted;
  int64_t size_sum;
  hf_Worst *worst;               /* a bounded heap, then sorted: most first */
  uint64_t nworst, wcap;
} hf_Rule;

/* a field of a class as a name resolves it: offset (-1: none) and type */
typedef struct hf_Field {
  int32_t offset;
  int32_t type;
} hf_Field;

typedef struct hf_Fill {
  hf_Rule rules[HF_MAXRULES];
  int nrules;
  const char *names[HF_MAXNAMES];  /* borrowed: the caller keeps them */
  size_t lens[HF_MAXNAMES];
  int nnames;
  uint64_t keep;                   /* worst instances kept per rule */
  uint32_t *mask;                  /* per class: the rules it falls under */
  int32_t *slot;                   /* per class: its row of fields, -1 none yet */
  hf_Field *fields;                /* nnames per row */
  uint64_t nslots, scap;
} hf_Fill;

/* the rule masks of every class (f's rules and names set, the rest
   zeroed); SIFT_OK or SIFT_ENOMEM */
sift_Status hf_prepare (const hp_Heap *h, hf_Fill *f);

/* count object num (o: its hp_object) under the rules its class falls
   under, sizes under `model`; SIFT_OK or SIFT_ENOMEM */
sift_Status hf_visit (const hg_Graph *g, hf_Fill *f, uint32_t num,
                      const hp_ObjInfo *o, int model);

/* a copy of f (prepared) for one part of a walk split over threads
   (sift_split): f's rules and masks, read only, and its own counts,
   worst instances and rows of fields, zeroed; SIFT_OK or SIFT_ENOMEM */
sift_Status hf_fork (const hp_Heap *h, const hf_Fill *f, hf_Fill *part);

/* part's counts and worst instances added to f's; part freed in every
   case (a zeroed part, never forked, too); SIFT_OK or SIFT_ENOMEM */
sift_Status hf_join (hf_Fill *f, hf_Fill *part);

/* each rule's worst instances sorted: most wasted first, then by id */
void hf_finish (hf_Fill *f);

void hf_free (hf_Fill *f);

#endif
