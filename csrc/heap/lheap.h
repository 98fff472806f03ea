/*
** lheap.h
** The sift.Heap userdata and what every file that binds it shares: the
** argument checks, names of root kinds, types and Android heaps, and the
** graph made on first use. lheap.c makes the class; lvalues.c, lpasses.c,
** lgraph.c, lpaths.c and ldominators.c each add their methods to it
** (sift_open_heap first, then the others: see sift_core.c).
*/

#if !defined(sift_lheap_h)
#define sift_lheap_h

#include "core/lsift.h"
#include "graph.h"
#include "hprof.h"

typedef struct LHeap {
  hp_Heap h;
  int built;
  /* objects grouped by class, built on first use (lpasses.c): the objects
     of slot c are by_class[start[c] .. start[c+1]); slots are class
     numbers, then one per primitive element type, then "class not in the
     dump" */
  uint64_t *start;
  uint32_t *by_class;
  hg_Graph *graph;   /* made on first use (sift_checkgraph) */
} LHeap;

/* set a table field (the table on top of the stack) to an integer */
#define SIFT_SETINT(key, v) \
  (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, key))

/* lheap.c: the userdata and its arguments */
LHeap *sift_checkheap (lua_State *L);
uint64_t sift_checknum (lua_State *L, const hp_Heap *h, int i);  /* 0-based */
uint64_t sift_checkclass (lua_State *L, const hp_Heap *h, int i);  /* 0-based */
void sift_heap_free_groups (LHeap *lh);
extern const char *const sift_type_names[12];  /* by HPROF basic type */
const char *sift_root_name (int kind);
const char *sift_heap_name (uint32_t heap);
void sift_push_string_id (lua_State *L, const hp_Heap *h, uint64_t sid);

/* lpasses.c: an Android heap named by argument i ("app", "zygote", ...;
   -1 when none is given), and whether object num is in it (always, -1) */
int sift_optheap (lua_State *L, int i);
int sift_in_heap (const hp_Heap *h, uint64_t num, int heap);

/* lgraph.c: the graph, made on first use, and its arguments */
hg_Graph *sift_checkgraph (lua_State *L);
uint32_t sift_checkobj (lua_State *L, hg_Graph *g, int i);  /* 0-based */
int sift_checkmodel (lua_State *L, int i);  /* HG_SHARK, HG_JVM, HG_VISUALVM */
extern const char *const sift_ref_kinds[];  /* by HG_* reference kind */
uint64_t sift_class_slot (const hp_Heap *h, uint32_t num);
/* raise the error of a graph pass that failed with s, for `what` */
void sift_graph_error (lua_State *L, sift_Status s, const char *what);

void sift_open_heap_values (lua_State *L);
void sift_open_heap_passes (lua_State *L);
void sift_open_heap_graph (lua_State *L);
void sift_open_heap_paths (lua_State *L);
void sift_open_heap_dominators (lua_State *L);
void sift_open_heap_waste (lua_State *L);
void sift_open_heap_bitmaps (lua_State *L);

#endif
