/*
** visualvm.c
** What VisualVM's heap library (2.1.5, org.graalvm.visualvm.lib.jfluid.heap)
** decides before its dominator tree, redone over dense object numbers so
** that the "visualvm" model's retained sizes equal Instance.getRetainedSize():
**
** - NearestGCRoot: a breadth-first walk from the GC roots it knows, in the
**   order HprofGCRoots lists them, over fields (Reference.referent of
**   Weak/Soft/Final/PhantomReference left out), elements, statics and a
**   class's loader. The
**   first object of each class it expands (class objects count as
**   instances of java.lang.Class) also reaches its class, and when that
**   class was not reached yet, becomes one of its referrers.
** - Leaves: an object that refers to no object of the dump (and reached no
**   new class) is a "tree object" sized by itself; TreeObject then marks an
**   object whose every referent is a tree object with no other referrer,
**   sized by itself plus those (each once).
** - The dominator tree counts every reference, referents and references
**   from objects the walk never reached included: such a referrer makes the
**   object a child of the roots. dominators.c gets this as a virtual root
**   whose successors are the GC roots and every unreached object.
*/

#include <string.h>

#include "graph.h"

/* the root kinds HprofGCRoots reads, in its order (others are no roots) */
static const uint8_t ROOT_ORDER[] = {
  HP_ROOT_UNKNOWN, HP_ROOT_JNI_GLOBAL, HP_ROOT_JNI_LOCAL, HP_ROOT_JAVA_FRAME,
  HP_ROOT_NATIVE_STACK, HP_ROOT_STICKY_CLASS, HP_ROOT_THREAD_BLOCK,
  HP_ROOT_MONITOR_USED, HP_ROOT_THREAD_OBJECT,                  /* HPROF 1.0.2 */
  HP_ROOT_INTERNED_STRING, HP_ROOT_FINALIZING, HP_ROOT_DEBUGGER,
  HP_ROOT_REFERENCE_CLEANUP, HP_ROOT_VM_INTERNAL, HP_ROOT_JNI_MONITOR  /* 1.0.3 */
};

void hg_vv_free (hg_VisualVM *vv) {
  sift_big_free(vv->parent); sift_big_free(vv->multi); sift_big_free(vv->tree);
  sift_big_free(vv->class_edge); sift_big_free(vv->tree_size); sift_big_free(vv->roots);
  memset(vv, 0, sizeof *vv);
}

/*
** The references VisualVM reads from an object: fields, elements, statics
** and, after a class's statics, its loader (ClassDump.getStaticFieldValues
** ends with a "<classLoader>" value). Begin with hg_refs_begin(.., 1).
*/
int hg_vv_next (hg_Iter *it, hg_Ref *ref) {
  while (hg_refs_next(it, ref))
    if (ref->kind <= HG_STATIC || ref->kind == HG_LOADER) return 1;
  return 0;
}

/* the class (number) whose object an object's class reference reaches */
static int64_t class_of (const hg_Graph *g, const hp_ObjInfo *o) {
  if (o->kind == HP_INSTANCE_DUMP) return o->cls;
  if (o->kind == HP_CLASS_DUMP) return g->vvm_class_num;
  return -1;  /* arrays do not reach their class */
}

uint32_t hg_vv_class_target (const hg_Graph *g, uint32_t num) {
  hp_ObjInfo o;
  int64_t c;
  hp_object(g->h, num, &o);
  c = class_of(g, &o);
  return c < 0 ? HG_NONE : hg_find(g, g->h->classes[c].id);
}

/* one more referrer `from` of object t: first in ref1, a second sets multi */
#define REFERRER(ref1, multi, t, from) \
  do { if ((ref1)[t] == HG_NONE) (ref1)[t] = (from); \
       else if ((ref1)[t] != (from)) HG_SETBIT(multi, t); } while (0)

#define BITS(n) ((n) / 8 + 1)

sift_Status hg_vv_reach (const hg_Graph *g, hg_VisualVM *vv, sift_Progress *pr) {
  const hp_Heap *h = g->h;
  uint64_t n = g->n, i, qh = 0, qt = 0, k;
  uint32_t *ref1 = NULL, *q = NULL;
  uint8_t *seen_class = NULL, *counted = NULL;
  sift_Status s = SIFT_ENOMEM;
  hg_Iter it;
  hg_Ref ref;
  memset(vv, 0, sizeof *vv);
  if (!HG_ALLOC(vv->parent, n) || !HG_ALLOC(vv->tree_size, n) || !HG_ALLOC(vv->roots, n)
      || !HG_ALLOC(ref1, n) || !HG_ALLOC(q, n)
      || !(vv->multi = (uint8_t *)sift_big_alloc(BITS(n)))
      || !(vv->tree = (uint8_t *)sift_big_alloc(BITS(n)))
      || !(vv->class_edge = (uint8_t *)sift_big_alloc(BITS(n)))
      || !(counted = (uint8_t *)sift_big_alloc(BITS(n)))
      || !(seen_class = (uint8_t *)sift_big_alloc(BITS(h->nclasses))))
    goto out;
  memset(vv->multi, 0, BITS(n)); memset(vv->tree, 0, BITS(n));
  memset(vv->class_edge, 0, BITS(n)); memset(counted, 0, BITS(n));
  memset(seen_class, 0, BITS(h->nclasses));
  for (i = 0; i < n; i++) vv->parent[i] = ref1[i] = HG_NONE;
  /* the referrers of each object (HprofHeap.computeReferences) */
  for (i = 0; i < n; i++) {
    hg_refs_begin(&it, g, (uint32_t)i, 1);
    while (hg_vv_next(&it, &ref)) REFERRER(ref1, vv->multi, ref.target, (uint32_t)i);
    if (!sift_progress(pr, i / 4)) { s = SIFT_ECANCEL; goto out; }
  }
  /* the roots, kind by kind, each once */
  for (k = 0; k < sizeof ROOT_ORDER; k++)
    for (i = 0; i < g->nroots; i++) {
      uint32_t r = g->root_obj[i];
      if (h->roots[g->root_rec[i]].kind != ROOT_ORDER[k] || vv->parent[r] != HG_NONE) continue;
      vv->parent[r] = (uint32_t)n;
      q[qt++] = r;
    }
  memcpy(vv->roots, q, qt * sizeof *q);
  vv->nroots = qt;
  /* the walk (NearestGCRoot.computeOneLevel): levels in order are a queue */
  while (qh < qt) {
    uint32_t u = q[qh++];
    int has = 0;
    int64_t c;
    hp_ObjInfo o;
    hp_object(h, u, &o);
    if (o.kind == HP_INSTANCE_DUMP && o.cls < 0) continue;  /* no Instance for it */
    hg_refs_begin(&it, g, u, 1);
    while (hg_vv_next(&it, &ref)) {
      if (ref.kind == HG_FIELD && (ref.flags & HG_NEVER)) continue;  /* referents */
      has = 1;
      if (vv->parent[ref.target] == HG_NONE) {
        vv->parent[ref.target] = u;
        q[qt++] = ref.target;
      }
    }
    if ((c = class_of(g, &o)) >= 0 && !HG_BIT(seen_class, c)) {
      uint32_t t = hg_find(g, h->classes[c].id);
      HG_SETBIT(seen_class, c);
      if (t != HG_NONE && vv->parent[t] == HG_NONE) {
        vv->parent[t] = u;
        q[qt++] = t;
        HG_SETBIT(vv->class_edge, u);
        REFERRER(ref1, vv->multi, t, u);
        has = 1;
      }
    }
    if (!has) {  /* a leaf */
      HG_SETBIT(vv->tree, u);
      vv->tree_size[u] = hg_shallow(g, u, HG_VISUALVM);
    }
    if (!sift_progress(pr, n / 4 + qh / 4)) { s = SIFT_ECANCEL; goto out; }
  }
  vv->reached = qt;
  for (i = 0; i < n; i++)  /* the virtual root's other successors */
    if (vv->parent[i] == HG_NONE) vv->roots[vv->nroots++] = (uint32_t)i;
  /* tree objects (TreeObject.computeTrees): the parent of a tree object
     with one referrer is tried again, until nothing changes */
  for (qh = qt = 0, i = 0; i < n; i++)
    if (HG_BIT(vv->tree, i) && !HG_BIT(vv->multi, i) && vv->parent[i] != HG_NONE
        && vv->parent[i] != n)
      q[qt++] = vv->parent[i];
  while (qh < qt) {
    uint32_t x = q[qh++];
    uint64_t sum = 0;
    int ok = 1;
    hp_ObjInfo o;
    if (HG_BIT(vv->tree, x)) continue;
    hp_object(h, x, &o);
    if (o.kind == HP_INSTANCE_DUMP && o.cls < 0) continue;
    hg_refs_begin(&it, g, x, 1);
    while (ok && hg_vv_next(&it, &ref))
      ok = HG_BIT(vv->tree, ref.target) && !HG_BIT(vv->multi, ref.target);
    if (!ok) continue;
    hg_refs_begin(&it, g, x, 1);  /* x is their only referrer: counted once here */
    while (hg_vv_next(&it, &ref))
      if (!HG_BIT(counted, ref.target)) {
        HG_SETBIT(counted, ref.target);
        sum += vv->tree_size[ref.target];
      }
    HG_SETBIT(vv->tree, x);
    vv->tree_size[x] = hg_shallow(g, x, HG_VISUALVM) + sum;
    if (!HG_BIT(vv->multi, x) && vv->parent[x] != n) q[qt++] = vv->parent[x];
  }
  s = SIFT_OK;
out:
  sift_big_free(ref1); sift_big_free(q); sift_big_free(seen_class); sift_big_free(counted);
  if (s != SIFT_OK) hg_vv_free(vv);
  return s;
}
