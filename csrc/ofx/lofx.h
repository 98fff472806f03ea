/*
** lofx.h
** What the OFX bindings share: the tree (ltree.c) as the transactions
** (ltxns.c) read it. sift_open_ofx (lofx.c) opens the others.
*/

#if !defined(sift_lofx_h)
#define sift_lofx_h

#include "core/lsift.h"
#include "tree.h"

/* the sift.OfxTree at arg */
ofx_Tree *sift_checkofxtree (lua_State *L, int arg);

/* the sift.OfxNode at arg: its number in *id, its tree pushed */
ofx_Tree *sift_checkofxnode (lua_State *L, int arg, uint32_t *id);

/* push a tag's name, an element's value, a handle (sift.OfxNode) on a
   node, of the tree at idx */
void sift_pushofxtag (lua_State *L, int idx, const ofx_Tree *t, uint32_t tag);
void sift_pushofxvalue (lua_State *L, int idx, const ofx_Tree *t, uint32_t id);
void sift_pushofxnode (lua_State *L, int idx, uint32_t id);

/* an element's value as bytes (valid while the tree at idx lives) */
const char *sift_ofxbytes (lua_State *L, int idx, const ofx_Tree *t, uint32_t id, size_t *len);

void sift_open_ofxtree (lua_State *L);
void sift_open_ofxtxns (lua_State *L);

#endif
