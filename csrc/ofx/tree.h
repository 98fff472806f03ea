/*
** tree.h
** An OFX document's tree as the grammar (lua/sift/ofx/grammar.lua) builds
** it: nodes in one array, a value kept as where it is in the text rather
** than as a string, tags interned. A statement of a million transactions
** is eight million nodes: as Lua tables and strings they cost seconds to
** make; here, 20 bytes each and no string until a value is read. Pure C,
** shared by the Lua binding (ltree.c) and the fuzzer.
*/

#if !defined(sift_ofx_tree_h)
#define sift_ofx_tree_h

#include <stddef.h>
#include <stdint.h>

enum {
  OFX_AGGREGATE,  /* a: first child, b: last child (0: none) */
  OFX_TEXT,       /* an element: a, b the offset and length of its value in the text */
  OFX_OWN         /* an element whose value is a string of its own (entities
                     decoded, pieces joined): a is its number, for the binding */
};

typedef struct ofx_Node {
  uint32_t tag;   /* the tag's number << 2 | the kind */
  uint32_t next;  /* the next sibling (0: none; node 0, the document, is nobody's) */
  uint32_t a, b;
  uint32_t pos;   /* an aggregate's 1-based position (its '<'); 0 for an element */
} ofx_Node;

#define OFX_KIND(n) ((n)->tag & 3)
#define OFX_TAG(n) ((n)->tag >> 2)
#define OFX_MAX_TAGS (1u << 30)

typedef struct ofx_Tree {
  const char *text;  /* what OFX_TEXT values point into (its owner keeps it) */
  size_t text_len;
  ofx_Node *nodes;
  uint32_t count, cap;
  /* interned tag names: the bytes of each, and a hash of their numbers + 1 */
  char *names;
  size_t names_len, names_cap;
  uint32_t *name_at, *name_len;
  uint32_t tags, tags_cap;
  uint32_t *slots, slots_cap;  /* a power of two */
} ofx_Tree;

/* an empty tree over text: node 0, the document (tag 0, "#document"); 0,
   or -1 when there is not memory for it */
int ofx_tree_init (ofx_Tree *t, const char *text, size_t len);
void ofx_tree_free (ofx_Tree *t);

/* the number of the tag s[0..n) (added when new); -1: no memory or too many */
int64_t ofx_tree_intern (ofx_Tree *t, const char *s, size_t n);

/* the number of the tag s[0..n), -1 when the tree has none (so no node
   has it) */
int64_t ofx_tree_lookup (const ofx_Tree *t, const char *s, size_t n);

/* the tag's name and length */
const char *ofx_tree_name (const ofx_Tree *t, uint32_t tag, size_t *n);

/* a node appended to parent's children; its number, or -1 when there is
   no memory (or more than 2^32 nodes) */
int64_t ofx_tree_add (ofx_Tree *t, uint32_t parent, uint32_t tag, int kind,
                      uint32_t a, uint32_t b, uint32_t pos);

/* parent's first child with this tag; 0 when none (or parent is an element) */
uint32_t ofx_tree_find (const ofx_Tree *t, uint32_t parent, uint32_t tag);

#endif
