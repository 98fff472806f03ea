/*
** lofx.h
** What the OFX bindings share: the tree (ltree.c) as the transactions
** (ltxns.c) read it. sift_open_ofx (lofx.c) opens the others.
*/

#if !defined(sift_lofx_h)
#define sift_lofx_h

#include "core/lsift.h"
#include "ofx.h"
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

/*
** Records (lrecord.c). A reader (sift.OfxReader; user values: its tree and
** its keys, key number + 1 -> name) maps each tag of its tree to a key and
** how the value is read; keys are numbered in byte order, JSON's.
*/
enum { OFX_R_TREE = 1, OFX_R_KEYS };
enum { REC_TEXT, REC_DATE, REC_AMOUNT, REC_UPPER, REC_KINDS };

#define OFX_MAX_KEYS 64
#define OFX_MAX_KEY_LEN 28
#define OFX_NO_FIELD 0xFFFF
#define OFX_SMALL_VALUE 64  /* room for any value as kept but upper case (its length) */

typedef struct OfxReader {
  int nkeys;
  char json_key[OFX_MAX_KEYS][OFX_MAX_KEY_LEN + 4];  /* each key as JSON writes it: "key": */
  size_t json_key_len[OFX_MAX_KEYS];
  int fallback[OFX_MAX_KEYS];  /* a key left unset takes this key's value (-1: none) */
  int required[OFX_MAX_KEYS];  /* 1: a record without this key does not read */
  uint32_t ntags;
  uint16_t field[1];           /* per tag of the tree: kind << 8 | key, or OFX_NO_FIELD */
} OfxReader;

/* a record's fields as read: where each value's bytes are, and a date's
   or amount's value */
typedef struct OfxField {
  const char *s;
  size_t n;
  int kind, set;
  ofx_Date date;
  int64_t units;
  int scale;
} OfxField;

/* read aggregate id's elements into fields (by key): 0, 1 when it also
   holds aggregates, -1 when it does not read (tree: the stack index of the
   reader's tree) */
int sift_ofx_read_fields (lua_State *L, int tree, const ofx_Tree *t, const OfxReader *r,
                          uint32_t id, OfxField *fields);

/* a field's value as it is kept, into buf (OFX_SMALL_VALUE bytes, or the
   value's length for upper case) unless it is kept as written */
const char *sift_ofx_field_value (const OfxField *f, char *buf, size_t *n);

/* the node at 2, of the tree of the reader at 1 (pushed, at 3); its
   number in *id */
ofx_Tree *sift_ofx_reader_node (lua_State *L, uint32_t *id);

/* push the table of a record read into fields (the reader at idx) */
void sift_ofx_push_record (lua_State *L, int reader, const OfxReader *r, const OfxField *fields);

void sift_open_ofxtree (lua_State *L);
void sift_open_ofxrecords (lua_State *L);
void sift_open_ofxtxns (lua_State *L);

#endif
