/*
** lheap.h
** The sift.Heap userdata, shared by lheap.c (the index) and lgraph.c (the
** reference graph, paths and dominators).
*/

#if !defined(sift_lheap_h)
#define sift_lheap_h

#include "graph.h"
#include "hprof.h"
#include "lsift.h"

typedef struct LHeap {
  hp_Heap h;
  int built;
  /* objects grouped by class, built on first use: the objects of slot c
     are by_class[start[c] .. start[c+1]); slots are class numbers, then one
     per primitive element type, then "class not in the dump" */
  uint64_t *start;
  uint32_t *by_class;
  hg_Graph *graph;   /* made on first use (lgraph.c) */
} LHeap;

LHeap *sift_checkheap (lua_State *L);

/* argument i as a 0-based object number */
uint64_t sift_checknum (lua_State *L, const hp_Heap *h, int i);

const char *sift_root_name (int kind);

/* add the graph's methods to the table on top of the stack */
void sift_heap_graph_methods (lua_State *L);

#endif
