/*
** paths_tree.h
** The tree of holder paths of a heap (Shark's shortest-path object tree,
** built for its growth detector): every object reached by a strong path
** from the GC roots belongs to one path node, the node of its parent on
** its shortest path plus the reference that holds it and its class.
** Objects of the same path are one node, so a node says how many objects
** a path holds; ids change between two dumps of one process, paths do
** not, so trees of two dumps are compared node by node (in Lua, by label).
*/

#if !defined(sift_paths_tree_h)
#define sift_paths_tree_h

#include <stdint.h>

#include "graph.h"

typedef struct hg_PathTree {
  uint32_t n;         /* nodes; a node's parent always comes before it */
  uint32_t cap;       /* room in the arrays below */
  uint32_t *parent;   /* parent node; HG_NONE for a root's node */
  uint8_t *ref;       /* the HG_* reference kind; 0 for a root's node */
  uint32_t *index;    /* field layout or static index (0 for elements);
                         the root kind for a root's node */
  uint8_t *kind;      /* the objects' record kind (HP_INSTANCE_DUMP...) */
  uint32_t *cls;      /* their class number (HG_NONE: not in the dump), or
                         the element type of primitive arrays */
  uint32_t *first;    /* one object of the node (the first one met) */
  uint64_t *count;    /* objects of the node */
  uint64_t *bytes;    /* and their shallow bytes under the model */
  uint32_t *slots;    /* hash of (parent, ref, index, kind, cls) -> node + 1 */
  uint64_t nslots;
  uint64_t unreached; /* objects without a strong path (no node) */
} hg_PathTree;

/* an object's kind and class (primitive arrays: element type) in 32 bits:
   the record kind's rank in the top two, the class number or HG_KEY_NONE
   (not in the dump) below; nclasses < HG_KEY_NONE */
#define HG_KEY_NONE UINT32_C(0x3FFFFFFF)
#define HG_KEY(kind, cls) \
  ((uint32_t)((kind) == HP_INSTANCE_DUMP ? 0 : (kind) == HP_CLASS_DUMP ? 1 \
              : (kind) == HP_OBJ_ARRAY_DUMP ? 2 : 3) << 30 \
   | ((cls) < 0 ? HG_KEY_NONE : (uint32_t)(cls)))
#define HG_KEY_KIND(key) \
  ((key) >> 30 == 0 ? HP_INSTANCE_DUMP : (key) >> 30 == 1 ? HP_CLASS_DUMP \
   : (key) >> 30 == 2 ? HP_OBJ_ARRAY_DUMP : HP_PRIM_ARRAY_DUMP)
#define HG_KEY_CLASS(key) ((key) & HG_KEY_NONE)

/* how an object is held, in 32 bits: the HG_* reference kind in the top
   four, the field layout or static index below (h->nfields <= HG_LABEL_INDEX) */
#define HG_LABEL_INDEX UINT32_C(0x0FFFFFFF)
#define HG_LABEL(kind, index) ((uint32_t)(kind) << 28 | (uint32_t)(index))

/*
** Build t (zeroed by the caller) over g, with the reference flags in
** force (never and skipped references are not followed; low-priority ones
** last, as hg_paths does). Runs of one class held by the same reference
** (a linked list's `next`) are one node, as Shark folds them. On success
** *parent is the search's (hg_paths; n + 1 entries, the caller's to free).
** Progress runs to HG_TREE_STEPS * n: n for each of the CSR, the search,
** the labels and the nodes. SIFT_OK, SIFT_ENOMEM, SIFT_ECANCEL (when the
** progress says to stop), or SIFT_ETOOBIG (2 G objects, 1 G classes or
** 256 M fields and more); hg_path_tree_free releases t either way.
*/
#define HG_TREE_STEPS 4

sift_Status hg_path_tree (const hg_Graph *g, int model, hg_PathTree *t,
                          uint32_t **parent, sift_Progress *pr);
void hg_path_tree_free (hg_PathTree *t);

#endif
