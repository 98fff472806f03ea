/*
** graph.h
** The heap's reference graph on top of the HPROF index: references read
** from the records with their labels, shortest strong paths from the GC
** roots (a two-queue BFS with Shark's rules), and the dominator tree with
** retained sizes (semi-NCA over compact CSR arrays, no recursion).
** Object numbers are the index's dense numbers (0-based here), in 32 bits.
*/

#if !defined(sift_graph_h)
#define sift_graph_h

#include <stdint.h>

#include "core/big.h"
#include "core/split.h"
#include "hprof.h"

/* flags of a reference (a field or static of a class, or a root kind) */
enum {
  HG_NEVER = 1,  /* never followed: Reference.referent */
  HG_SKIP = 2,   /* not followed by path finding (ignored references) */
  HG_LOW = 4     /* followed last by path finding (low priority) */
};

/* what a reference is */
enum {
  HG_FIELD = 1,    /* an instance field: index into the class's layout */
  HG_ELEMENT,      /* an array element: 0-based index */
  HG_STATIC,       /* a static field: index into the class's statics */
  /* what the JVM keeps alive without a field (low priority for paths) */
  HG_CLASS,        /* an instance's or object array's class */
  HG_SUPER,        /* a class's superclass */
  HG_LOADER,       /* a class's loader */
  HG_SIGNERS,      /* a class's signers */
  HG_DOMAIN,       /* a class's protection domain */
  HG_DEFINED       /* a loader's classes (index: class number) */
};

#define HG_NONE UINT32_MAX

/* size models: the dump's own sizes (Shark); the JVM's allocation, from a
   layout set by hg_set_jvm_layout; VisualVM's heap library (hg_set_visualvm
   and visualvm.c) */
enum { HG_SHARK = 0, HG_JVM = 1, HG_VISUALVM = 2 };

typedef struct hg_Ref {
  uint32_t target;   /* object number */
  uint32_t index;    /* field, static or element index */
  uint8_t kind;      /* HG_FIELD ... */
  uint8_t flags;
} hg_Ref;

/* a path search that can go on (hg_search_open) */
typedef struct hg_Search hg_Search;

typedef struct hg_Graph {
  const hp_Heap *h;
  uint32_t n;              /* objects; n stands for the virtual root */
  int threads;             /* for the CSR arrays: 1 one thread, 2 two, 0 two
                              from SIFT_SPLIT_FROM objects (h->threads_opt) */
  /* per class: the object fields of its layout, with flags */
  uint32_t *ref_first;     /* nclasses + 1 */
  uint32_t *ref_field;     /* index into the layout */
  uint8_t *ref_flags;
  uint8_t *static_flags;   /* per static of every class, like ref_first */
  uint32_t *static_first;
  uint8_t root_flags[256]; /* per root kind */
  /* id -> number: start of each bucket of keys (keys >> bucket_shift) */
  uint32_t *bucket;
  int bucket_shift;
  uint64_t nbuckets;
  /* the GC roots as object numbers, in file order, and their records */
  uint32_t *root_obj;
  uint64_t *root_rec;      /* index into h->roots */
  uint8_t *root_obj_flags; /* flags of each of these roots (by its object) */
  uint64_t nroots;
  /* class loaders: a bit per object, and (loader, class) pairs by loader */
  uint8_t *is_loader;
  uint32_t *defined_by;    /* loader object numbers, sorted */
  uint32_t *defined;       /* the class number beside each */
  uint64_t ndefined;
  /* the strong graph for dominators (CSR), and its predecessors; 32-bit
     offsets: a graph has at most 4 G references (hg_build says so) */
  uint32_t *first;
  uint32_t *succ;
  uint32_t *pfirst;
  uint32_t *pred;
  /* the last path search: each object's parent on its shortest path (n
     for a root, HG_NONE unreached), and the search itself while it can
     go on (hg_search_run; NULL when the flags changed since, or the
     parents came from elsewhere) */
  uint32_t *path_parent;
  hg_Search *search;
  /* runs on those paths (found on demand): the first object of the run an
     object ends, and how many objects the run has up to it */
  uint32_t *run_start, *run_len;
  /* the JVM's layout: per class its instance and mirror sizes; the offset
     of element 0 of arrays (of longs and doubles apart); reference size */
  uint32_t *jvm_instance, *jvm_mirror;
  uint32_t jvm_array_base, jvm_array_base_wide, jvm_oop;
  /* VisualVM's sizes: per class its Instance.getSize(), the minimum
     instance size (its header), its reference size, and the size of a
     class object (java.lang.Class's instance size) */
  uint32_t *vvm_instance;
  uint32_t vvm_min, vvm_oop, vvm_class;
  int64_t vvm_class_num;   /* java.lang.Class's class number, -1 absent */
  /* the dominator tree */
  uint32_t *idom;          /* HG_NONE: unreachable; n: the virtual root */
  uint32_t *retained32;     /* retained sizes by object: 32-bit while each */
  uint64_t *retained64;     /* fits, else 64-bit; one is set (hg_retained) */
  int model;               /* the size model of the tree */
  uint64_t reachable;      /* objects reachable from the roots */
  uint64_t edges;          /* references in the dominator model */
  uint32_t *children;      /* dominated objects grouped by idom (hg_children) */
  uint64_t nchildren;
} hg_Graph;

/* set up g over h (no big work yet); SIFT_ENOMEM or SIFT_EUNSUPPORTED */
sift_Status hg_init (hg_Graph *g, const hp_Heap *h);
void hg_free (hg_Graph *g);
/* the dominator tree's arrays freed (heap:dominators() makes them again) */
void hg_free_tree (hg_Graph *g);

/* sift_split's `min` for a pass over g's objects, as g->threads says: one
   thread, two, or two from SIFT_SPLIT_FROM objects */
static inline uint64_t hg_split_from (const hg_Graph *g) {
  return g->threads == 1 ? UINT64_MAX : g->threads == 2 ? 2 : SIFT_SPLIT_FROM;
}

/* the retained size of object v (the tree is built) */
static inline uint64_t hg_retained (const hg_Graph *g, uint32_t v) {
  return g->retained32 != NULL ? g->retained32[v] : g->retained64[v];
}

/* the object number of an id, HG_NONE when absent (bucketed search) */
uint32_t hg_find (const hg_Graph *g, uint64_t id);

/* flags on a class's field (layout index) or static, or a root kind */
void hg_flag_field (hg_Graph *g, uint32_t cls, uint32_t field, int flags);
void hg_flag_static (hg_Graph *g, uint32_t cls, uint32_t index, int flags);

/*
** The references of object num, through an iterator: hg_refs_begin, then
** hg_refs_next until it returns 0. `synthetic` adds, after the fields,
** elements and statics, the references the JVM keeps without a field
** (HG_CLASS ... HG_DEFINED), flagged HG_LOW. References to absent ids and
** null references are skipped.
*/
typedef struct hg_Iter {
  const hg_Graph *g;
  uint32_t num;
  int kind, synthetic, step;
  int elem;                      /* a primitive array's element type */
  uint32_t missed;               /* ids passed over: not in the dump */
  const uint32_t *along, *along_end;  /* hg_refs_along */
  int along_checked;
  uint64_t want_id;              /* hg_refs_to: its id (0: every reference) */
  uint32_t want;
  const unsigned char *data;
  int64_t cls;
  uint64_t i, count;
  uint64_t next_defined;         /* into defined_by, for a loader */
  const unsigned char *statics;  /* next static entry */
} hg_Iter;

void hg_refs_begin (hg_Iter *it, const hg_Graph *g, uint32_t num,
                    int synthetic);
int hg_refs_next (hg_Iter *it, hg_Ref *ref);

/*
** After hg_refs_begin (synthetic), the references of num in step with its
** path CSR entries [succ, end) (hg_csr's HG_CSR_PATHS), which say where
** each id points: no id is looked up, and it->along - 1 is the entry of
** the reference just returned. When num holds ids not in the dump (gaps),
** each id is compared with its entry's to know which; without, each
** reference is the next entry. Never and skipped references, not in the
** CSR, come with target HG_NONE (callers pass over them).
*/
/*
** After hg_refs_begin, only the references of num to object target: each
** id compared with target's, none looked up (the reference that reached
** an object on a path, in an array of millions).
*/
static inline void hg_refs_to (hg_Iter *it, uint32_t target) {
  it->want_id = hp_obj_id(it->g->h, target);
  it->want = target;
}

static inline void hg_refs_along (hg_Iter *it, const uint32_t *succ,
                                  const uint32_t *end, int gaps) {
  it->along = succ;
  it->along_end = end;
  it->along_checked = gaps;
}

/* shallow size of an object in a model */
uint64_t hg_shallow (const hg_Graph *g, uint32_t num, int model);

/* VisualVM's layout (ObjectSizeSettings): object_cls and class_cls are the
   class numbers of java.lang.Object and java.lang.Class (-1 when absent),
   oop the reference size guessed from the dump's statics and properties,
   used when java.lang.Object states no instance size; SIFT_ENOMEM */
sift_Status hg_set_visualvm (hg_Graph *g, int oop, int64_t object_cls,
                             int64_t class_cls);

/*
** Shortest strong paths: a BFS from the roots (low-priority roots and
** references visited after the rest, a node reached again at normal
** priority promoted). parent[i] is the object i was reached from (n for a
** root; HG_NONE unreached). With csr (hg_csr's HG_CSR_PATHS arrays), the
** references are read from it, on both cores as g->threads says, and
** held, a bit per entry, marks the entry that holds each object: the first
** from its parent (a low entry's mark counts only where its object is the
** target's parent: one reached at low priority, then promoted, may keep a
** mark on its old parent's entry); without, from the records. Over a
** CSR, progress runs from base by the objects expanded (n at most), and
** SIFT_ECANCEL comes back when it says to stop.
*/
typedef struct hg_PathCsr {
  const uint32_t *first, *succ;
  uint8_t *held;
} hg_PathCsr;

sift_Status hg_paths (const hg_Graph *g, const hg_PathCsr *csr,
                      uint32_t *parent, sift_Progress *pr, uint64_t base);

/*
** The same search over the records in runs: opened (the roots queued,
** parent n + 1 long and the caller's), run until its targets (a bitset;
** NULL for none) are expanded, and run again for other targets from where
** it stopped, with the parents one search from the start would give (a
** target's path is final once it is expanded). A run with no targets goes
** to the end. Valid while the flags it read (which references are
** followed, skipped, low) stay as they were. Progress (pr, NULL for none)
** runs by the objects the search has expanded since it opened (n at
** most); when it says to stop, SIFT_ECANCEL, the search still whole
** (each object is expanded wholly or not at all).
*/

sift_Status hg_search_open (const hg_Graph *g, uint32_t *parent,
                            hg_Search **out);
sift_Status hg_search_run (hg_Search *S, const hg_Graph *g,
                           const uint8_t *targets, uint64_t ntargets,
                           sift_Progress *pr);
void hg_search_close (hg_Search *S);

/* the references of the dominator model (shark and jvm) as CSR arrays
   (g->first, g->succ), set only when complete; hg_dominators takes them
   over when present. Built on both cores as g->threads says (the objects
   in two halves, each decoded once by its thread): the same arrays as one
   thread builds */
sift_Status hg_build (hg_Graph *g, sift_Progress *pr);

/* the referrers of every object (g->pfirst, g->pred: the references
   turned around, each list in object order), built once, on both cores as
   g->threads says; SIFT_ENOMEM, or SIFT_ETOOBIG past 4 G references */
sift_Status hg_referrers (hg_Graph *g);

/* the dominator tree and retained sizes under `model`. Computed apart
   and swapped in at the end: on failure (SIFT_ENOMEM, SIFT_ECANCEL,
   SIFT_ETOOBIG) the previous tree, its model and sizes stay as they were */
sift_Status hg_dominators (hg_Graph *g, int model, sift_Progress *pr);

/* the objects d immediately dominates (n: the virtual root's), in preorder:
   g->children[*lo .. *hi) (a binary search over the groups by dominator) */
void hg_children (const hg_Graph *g, uint32_t d, uint64_t *lo, uint64_t *hi);

/* where every object's children begin, for a walk over the whole tree
   (one binary search per object costs it tens of cache misses each):
   the children of d are g->children[first[d] .. first[d + 1]), first
   n + 2 long */
void hg_children_first (const hg_Graph *g, uint32_t *first);

/*
** VisualVM's retained sizes (visualvm.c), given the CSR of every reference
** (referents too) and a virtual root n: what its NearestGCRoot walk reaches
** (vv_reach), the class references it adds and the virtual root's
** successors (its GC roots, then every object it does not reach), then
** its sizes over the dominator tree (vv_retained).
*/
typedef struct hg_VisualVM {
  uint32_t *parent;   /* nearest-GC-root pointer: n for a root, HG_NONE unreached */
  uint8_t *multi;     /* bit: more than one referrer */
  uint8_t *tree;      /* bit: a "tree object" (TreeObject.java) */
  uint8_t *class_edge;/* bit: this object holds its class (first instance seen) */
  uint64_t *tree_size;
  uint32_t *roots;    /* successors of the virtual root */
  uint64_t nroots;
  uint64_t reached;
} hg_VisualVM;

sift_Status hg_vv_reach (const hg_Graph *g, hg_VisualVM *vv, sift_Progress *pr);
/* the references VisualVM reads (after hg_refs_begin with synthetic) */
int hg_vv_next (hg_Iter *it, hg_Ref *ref);
/* the class object an object's class reference points at (HG_NONE none) */
uint32_t hg_vv_class_target (const hg_Graph *g, uint32_t num);
void hg_vv_free (hg_VisualVM *vv);

/*
** The references of every object as CSR arrays (csr.c): first (n + 1
** offsets) and succ, each record decoded once, on both cores as
** g->threads says (the same arrays as one thread builds). Which:
** HG_CSR_STRONG, the dominator model's (shark and jvm: every reference but
** never-followed ones, with what the JVM keeps alive without a field);
** HG_CSR_VISUALVM, those VisualVM's walk reads (vv); HG_CSR_PATHS, those
** path finding follows (never and skipped ones left out; low-priority
** ones marked with HG_LOW_EDGE, so n < HG_LOW_EDGE), setting each
** object's bit in gaps (zeroed by the caller) when it holds ids not in the
** dump (hg_refs_along). Progress runs from base by n >> shift.
*/
enum { HG_CSR_STRONG, HG_CSR_VISUALVM, HG_CSR_PATHS };
#define HG_LOW_EDGE UINT32_C(0x80000000)

sift_Status hg_csr (const hg_Graph *g, int which, const hg_VisualVM *vv,
                    uint8_t *gaps, uint32_t **pfirst, uint32_t **psucc,
                    uint64_t *pedges, sift_Progress *pr, uint64_t base,
                    int shift);

/* how many objects (and bytes, under the last model) become unreachable
   when `removed` is taken out: the definition of the retained set, by
   brute force (for checking; shark and jvm trees only) */
sift_Status hg_unreachable_without (hg_Graph *g, uint32_t removed,
                                    uint64_t *count, uint64_t *bytes);

/* graph.c and dominators.c: bit sets over object numbers, and arrays of
   n elements (big arrays, core/big.h: given back with sift_big_free) */
#define HG_BIT(set, i) ((set)[(i) >> 3] >> ((i) & 7) & 1)
#define HG_SETBIT(set, i) ((set)[(i) >> 3] |= (uint8_t)(1 << ((i) & 7)))
#define HG_CLEARBIT(set, i) ((set)[(i) >> 3] &= (uint8_t)~(1 << ((i) & 7)))
#define HG_ALLOC(p, n) ((p) = sift_big_alloc(((n) != 0 ? (n) : 1) * sizeof *(p)))

#endif
