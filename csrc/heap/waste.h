/*
** waste.h
** Memory a heap wastes, counted as the fix would free it, in one walk
** over the index: equal strings (grouped by the bytes of their value
** and its encoding), equal primitive arrays, primitive arrays of zeros,
** boxed primitives and collections below capacity (fill.h). Pure C
** over hp_Heap and hg_Graph (for object numbers of ids and shallow sizes
** under a model); the policy (which reports, what to show) is
** lua/sift/heap/waste.lua's.
*/

#if !defined(sift_waste_h)
#define sift_waste_h

#include <stdint.h>

#include "fill.h"
#include "graph.h"

#define HW_TOP 10     /* lengths and values kept per zero-array type or box */
#define HW_MAXBOX 16  /* box classes per call */
#define HW_NTYPES 12  /* HPROF basic types (2: object .. 11: long) */

/* one object considered: the high 32 bits of its content's hash << 32
   | its object number (sorting entries brings equal hashes together and
   keeps each run in object order) */
typedef uint64_t hw_Entry;
#define HW_NUM(e) ((uint32_t)((e) & UINT32_MAX))

/*
** A set of equal strings or arrays (two or more): the copies are
** entries[start .. start + count), lowest object number first (the one a
** deduplication keeps). For strings, `arrays` is how many distinct value
** arrays the copies use; `bytes` is one copy (the kept String and its
** array), `wasted` what deduplication frees: the other String objects and
** the distinct arrays other than the kept one.
*/
typedef struct hw_Group {
  uint64_t start, count, arrays, bytes, wasted;
} hw_Group;

typedef struct hw_Set {
  hw_Entry *entries;
  uint64_t nentries;
  hw_Group *groups;    /* most wasted first */
  uint64_t ngroups, gcap;
  uint64_t wasted;     /* over every group */
} hw_Set;

/* arrays of zeros of one element type */
typedef struct hw_Zeros {
  uint64_t count, wasted;
  int nlengths;                    /* commonest lengths, most first */
  uint64_t length[HW_TOP], lcount[HW_TOP];
} hw_Zeros;

/* the instances of one box class (exactly that class) */
typedef struct hw_Box {
  int64_t cls;         /* class index */
  int type;            /* basic type of its `value` field, 0: none (BMD) */
  uint32_t offset;     /* of that field in the instance data */
  uint64_t count, bytes, distinct, wasted;
  uint64_t *values, nvalues;       /* of each instance (while type is) */
  int ntop;                        /* most repeated values (twice or more) */
  uint64_t value[HW_TOP], vcount[HW_TOP];  /* raw bits */
} hw_Box;

typedef struct hw_Waste {
  hw_Set strings, arrays;
  hw_Zeros zeros[HW_NTYPES];       /* by HPROF basic type */
  hw_Box boxes[HW_MAXBOX];
  int nboxes;
  uint64_t *zkeys;                 /* type << 32 | length of each zero array */
  uint64_t nzkeys;
  uint8_t *is_value, *charged;     /* bit sets over object numbers */
  hf_Fill fill;                    /* collections: rules set by the caller */
  uint32_t *targets;               /* for hw_referrers, and its answer */
  uint64_t ntargets, *pairs, npairs;
} hw_Waste;

/*
** Fill w (zeroed by the caller, but for w->fill's rules, names and keep):
** strings of class index string_cls (-1: none), boxes of the classes
** box_cls[0 .. nboxes), the collections of w->fill's rules, sizes under
** `model`. A String's value array is the strings report's: it is in no
** other. content 0: the collections alone (no strings, arrays, zeros or
** boxes: one pass). SIFT_OK or SIFT_ENOMEM; hw_free(w) in every case.
*/
sift_Status hw_waste (const hg_Graph *g, int model, int64_t string_cls,
                      const int64_t *box_cls, int nboxes, int content,
                      hw_Waste *w);

/*
** The objects that refer to each of targets[0 .. ntargets) (object
** numbers), found in one walk over every object's references (fields,
** elements, statics: what heap:referrers lists), matched by id: *pairs
** (sift_big_free it) of target << 32 | referrer, by target, then by
** referrer, each pair once. SIFT_OK or SIFT_ENOMEM.
*/
sift_Status hw_referrers (const hg_Graph *g, const uint32_t *targets,
                          uint64_t ntargets, uint64_t **pairs,
                          uint64_t *npairs);

void hw_free (hw_Waste *w);

#endif
