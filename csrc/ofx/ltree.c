/*
** ltree.c
** The OFX tree in Lua (tree.h): sift.OfxTree, which the grammar's builder
** fills, and sift.OfxNode, a handle on one of its nodes with the methods
** docs/ofx.md lists (tag, value, pos, child, children, find, text, each,
** items, count). A value becomes a Lua string only when it is read.
*/

#include <string.h>

#include "core/lsift.h"
#include "lofx.h"

/* the tree's user values */
enum { UV_TEXT = 1, UV_TAGS, UV_VALUES, UV_EXTRA, UV_COUNT = UV_EXTRA };

typedef struct Handle {
  uint32_t id;
} Handle;

static int tree_gc (lua_State *L) {
  ofx_Tree *t = (ofx_Tree *)luaL_checkudata(L, 1, SIFT_OFX_TREE_T);
  ofx_tree_free(t);
  return 0;
}

ofx_Tree *sift_checkofxtree (lua_State *L, int arg) {
  ofx_Tree *t = (ofx_Tree *)luaL_checkudata(L, arg, SIFT_OFX_TREE_T);
  luaL_argcheck(L, t->nodes != NULL, arg, "a freed OFX tree");
  return t;
}

static uint32_t checkid (lua_State *L, const ofx_Tree *t, int arg) {
  lua_Integer id = luaL_checkinteger(L, arg);
  luaL_argcheck(L, id >= 0 && id < (lua_Integer)t->count, arg, "no such node");
  return (uint32_t)id;
}

static uint32_t checkaggregate (lua_State *L, const ofx_Tree *t, int arg) {
  uint32_t id = checkid(L, t, arg);
  luaL_argcheck(L, OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE, arg, "not an aggregate");
  return id;
}

static uint32_t intern (lua_State *L, ofx_Tree *t, const char *s, size_t n) {
  int64_t tag = ofx_tree_intern(t, s, n);
  if (tag < 0) luaL_error(L, "not enough memory for the OFX tree");
  return (uint32_t)tag;
}

static uint32_t add (lua_State *L, ofx_Tree *t, uint32_t parent, uint32_t tag, int kind,
                     uint32_t a, uint32_t b, uint32_t pos) {
  int64_t id = ofx_tree_add(t, parent, tag, kind, a, b, pos);
  if (id < 0) luaL_error(L, "not enough memory for the OFX tree");
  return (uint32_t)id;
}

/* push the name of tag (the tree at idx), made once and kept */
void sift_pushofxtag (lua_State *L, int idx, const ofx_Tree *t, uint32_t tag) {
  size_t n;
  const char *s;
  lua_getiuservalue(L, idx, UV_TAGS);
  if (lua_rawgeti(L, -1, (lua_Integer)tag + 1) == LUA_TNIL) {
    lua_pop(L, 1);
    s = ofx_tree_name(t, tag, &n);
    lua_pushlstring(L, s, n);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, (lua_Integer)tag + 1);
  }
  lua_remove(L, -2);
}

/* push the value of element id (the tree at idx) */
void sift_pushofxvalue (lua_State *L, int idx, const ofx_Tree *t, uint32_t id) {
  const ofx_Node *n = &t->nodes[id];
  if (OFX_KIND(n) == OFX_OWN) {
    lua_getiuservalue(L, idx, UV_VALUES);
    lua_rawgeti(L, -1, (lua_Integer)n->a);
    lua_remove(L, -2);
  }
  else lua_pushlstring(L, t->text + n->a, n->b);
}

/* the value of element id as bytes: in the text, or its own string (kept
   alive by the tree's values table) */
const char *sift_ofxbytes (lua_State *L, int idx, const ofx_Tree *t, uint32_t id, size_t *len) {
  const ofx_Node *n = &t->nodes[id];
  const char *s;
  if (OFX_KIND(n) != OFX_OWN) {
    *len = n->b;
    return t->text + n->a;
  }
  lua_getiuservalue(L, idx, UV_VALUES);
  lua_rawgeti(L, -1, (lua_Integer)n->a);
  s = lua_tolstring(L, -1, len);
  lua_pop(L, 2);
  return s;
}

/* {======================================================
** The tree, for the builder
** =======================================================
*/

/* core.ofx_tree(text) -> tree: the document node alone (number 0) */
static int l_tree (lua_State *L) {
  size_t n;
  ofx_Tree *t;
  const char *text = luaL_checklstring(L, 1, &n);
  luaL_argcheck(L, n < UINT32_MAX, 1, "text over 4 GB");
  t = (ofx_Tree *)lua_newuserdatauv(L, sizeof *t, UV_COUNT);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, SIFT_OFX_TREE_T);
  if (ofx_tree_init(t, text, n) != 0) return luaL_error(L, "not enough memory for the OFX tree");
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, UV_TEXT);  /* (keeps the text alive) */
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_TAGS);
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_VALUES);
  lua_newtable(L);
  lua_setiuservalue(L, -2, UV_EXTRA);
  return 1;
}

/* tree:aggregate(parent, tag, pos) -> id */
static int t_aggregate (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t parent = checkaggregate(L, t, 2);
  size_t n;
  const char *tag = luaL_checklstring(L, 3, &n);
  lua_Integer pos = luaL_checkinteger(L, 4);
  luaL_argcheck(L, pos >= 1 && pos <= UINT32_MAX, 4, "out of range");
  lua_pushinteger(L, add(L, t, parent, intern(L, t, tag, n), OFX_AGGREGATE, 0, 0, (uint32_t)pos));
  return 1;
}

/* the string at arg kept in the tree's values table; its number there */
static uint32_t own (lua_State *L, int arg) {
  lua_Unsigned k;
  lua_getiuservalue(L, 1, UV_VALUES);
  k = lua_rawlen(L, -1) + 1;
  if (k > UINT32_MAX) luaL_error(L, "too many values for the OFX tree");
  lua_pushvalue(L, arg);
  lua_rawseti(L, -2, (lua_Integer)k);
  lua_pop(L, 1);
  return (uint32_t)k;
}

/* tree:element(parent, tag, value) -> id: an element with a value of its own */
static int t_element (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t parent = checkaggregate(L, t, 2);
  size_t n;
  const char *tag = luaL_checklstring(L, 3, &n);
  luaL_checkstring(L, 4);
  lua_pushinteger(L, add(L, t, parent, intern(L, t, tag, n), OFX_OWN, own(L, 4), 0, 0));
  return 1;
}

/* tree:set_value(id, value): element id's value replaced */
static int t_set_value (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t id = checkid(L, t, 2);
  ofx_Node *n = &t->nodes[id];
  luaL_argcheck(L, OFX_KIND(n) != OFX_AGGREGATE, 2, "not an element");
  luaL_checkstring(L, 3);
  n->a = own(L, 3);
  n->b = 0;
  n->tag = (n->tag & ~3u) | OFX_OWN;
  return 0;
}

/* tree:tag(id) -> its tag */
static int t_tag (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  sift_pushofxtag(L, 1, t, OFX_TAG(&t->nodes[checkid(L, t, 2)]));
  return 1;
}

/* tree:value(id) -> element id's value (nil for an aggregate) */
static int t_value (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t id = checkid(L, t, 2);
  if (OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE) lua_pushnil(L);
  else sift_pushofxvalue(L, 1, t, id);
  return 1;
}

/* tree:has_element(parent, tag) -> whether parent's first child with
   this tag is an element */
static int t_has_element (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t parent = checkaggregate(L, t, 2);
  size_t n;
  const char *tag = luaL_checklstring(L, 3, &n);
  int64_t k = ofx_tree_lookup(t, tag, n);
  uint32_t c = k < 0 ? 0 : ofx_tree_find(t, parent, (uint32_t)k);
  lua_pushboolean(L, c != 0 && OFX_KIND(&t->nodes[c]) != OFX_AGGREGATE);
  return 1;
}

static int is_name_char (unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-' || c == ':';
}

static int is_space (char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* the 1-based position at arg as an offset into text, checked */
static size_t text_offset (lua_State *L, int arg, size_t len) {
  lua_Integer p = luaL_checkinteger(L, arg);
  luaL_argcheck(L, p >= 1 && (size_t)p <= len + 1, arg, "position out of the text");
  return (size_t)p - 1;
}

/* the length of the name that starts at offset at */
static size_t name_len (const char *text, size_t len, size_t at) {
  size_t n;
  for (n = 0; at + n < len && is_name_char((unsigned char)text[at + n]); n++) {}
  return n;
}

/*
** tree:append(parent, at, close, ...[, end_at])
**   -> used, last[, end_tag, end_at]
** A run of elements as the grammar captured them, two positions each: the
** '<' of the start tag, and where the name of the end tag after it starts
** (false when none); then perhaps where one more end tag's name starts
** (the parent's, in XML). The grammar has checked the shape, <NAME>
** spaces value [</NAME>], and a value holds no '<': here the name is read,
** the value runs to the next '<' and its spaces are trimmed, and each
** element is appended to parent, its value left in the text. It goes on
** while each element's end tag is absent or its own, and stops after one
** closed by another's (the parent's, in SGML), or at the last end tag,
** returning that tag and where its '<' is for the builder to act on.
** used: how many of the positions it took; last: the last element's
** number, nil when its own end tag closed it.
*/
static int t_append (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  uint32_t parent = checkaggregate(L, t, 2), tag = 0, id = 0, last = 0;
  size_t len = t->text_len, n_tag, n_close;
  const char *text = t->text, *close;
  int top = lua_gettop(L), i;
  for (i = 3; i + 1 <= top; i += 2) {
    size_t at = text_offset(L, i, len), value, value_end;
    const char *lt;
    luaL_argcheck(L, at < len && text[at] == '<', i, "not a start tag");
    n_tag = name_len(text, len, at + 1);
    value = at + 1 + n_tag;
    luaL_argcheck(L, value < len && text[value] == '>', i, "not a start tag and its value");
    lt = (const char *)memchr(text + value, '<', len - value);
    luaL_argcheck(L, lt != NULL, i, "a value the text does not end");
    value_end = (size_t)(lt - text);
    for (value++; value < value_end && is_space(text[value]); value++) {}
    while (value_end > value && is_space(text[value_end - 1])) value_end--;
    tag = intern(L, t, text + at + 1, n_tag);
    id = add(L, t, parent, tag, OFX_TEXT, (uint32_t)value, (uint32_t)(value_end - value), 0);
    if (!lua_toboolean(L, i + 1)) {
      last = id;
      continue;
    }
    close = text + text_offset(L, i + 1, len);
    n_close = name_len(text, len, (size_t)(close - text));
    if (n_close == n_tag && memcmp(close, text + at + 1, n_tag) == 0) {
      last = 0;
      continue;
    }
    lua_pushinteger(L, i + 1 - 2);
    lua_pushinteger(L, id);
    sift_pushofxtag(L, 1, t, intern(L, t, close, n_close));
    lua_pushinteger(L, lua_tointeger(L, i + 1) - 2);
    return 4;
  }
  lua_pushinteger(L, top - 2);
  if (last) lua_pushinteger(L, last);
  else lua_pushnil(L);
  if (i > top) return 2;
  close = text + text_offset(L, i, len);  /* the one more end tag */
  n_close = name_len(text, len, (size_t)(close - text));
  sift_pushofxtag(L, 1, t, intern(L, t, close, n_close));
  lua_pushinteger(L, lua_tointeger(L, i) - 2);
  return 4;
}

/* push a handle on node id of the tree at idx */
void sift_pushofxnode (lua_State *L, int idx, uint32_t id) {
  Handle *h;
  idx = lua_absindex(L, idx);
  h = (Handle *)lua_newuserdatauv(L, sizeof *h, 1);
  h->id = id;
  luaL_setmetatable(L, SIFT_OFX_NODE_T);
  lua_pushvalue(L, idx);
  lua_setiuservalue(L, -2, 1);
}

/* tree:node(id) -> the handle of node id */
static int t_node (lua_State *L) {
  ofx_Tree *t = sift_checkofxtree(L, 1);
  sift_pushofxnode(L, 1, checkid(L, t, 2));
  return 1;
}

/* }====================================================== */


/* {======================================================
** Nodes
** =======================================================
*/

ofx_Tree *sift_checkofxnode (lua_State *L, int arg, uint32_t *id) {
  Handle *h = (Handle *)luaL_checkudata(L, arg, SIFT_OFX_NODE_T);
  ofx_Tree *t;
  lua_getiuservalue(L, arg, 1);
  t = (ofx_Tree *)lua_touserdata(L, -1);
  luaL_argcheck(L, t->nodes != NULL && h->id < t->count, arg, "a node of a freed OFX tree");
  *id = h->id;
  return t;
}

/* a method's node (argument 1, of nargs): its number in *id, its tree
   pushed after the arguments */
static ofx_Tree *self (lua_State *L, int nargs, uint32_t *id) {
  lua_settop(L, nargs);
  return sift_checkofxnode(L, 1, id);
}

/* the node down a slash-separated path of tags from id, 0 when absent (the
   document is nobody's child) */
static uint32_t down (ofx_Tree *t, uint32_t id, const char *path, size_t n) {
  size_t i = 0;
  while (i <= n) {
    size_t j = i;
    int64_t tag;
    while (j < n && path[j] != '/') j++;
    if (j > i) {
      if (OFX_KIND(&t->nodes[id]) != OFX_AGGREGATE) return 0;
      if ((tag = ofx_tree_lookup(t, path + i, j - i)) < 0) return 0;
      if ((id = ofx_tree_find(t, id, (uint32_t)tag)) == 0) return 0;
    }
    i = j + 1;
  }
  return id;
}

/* node:child(tag) -> the first child with this tag, or nil */
static int n_child (lua_State *L) {
  uint32_t id, c = 0;
  ofx_Tree *t = self(L, 2, &id);
  int tree = lua_gettop(L);
  size_t n;
  const char *tag = luaL_checklstring(L, 2, &n);
  int64_t k = ofx_tree_lookup(t, tag, n);
  if (k >= 0 && OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE) c = ofx_tree_find(t, id, (uint32_t)k);
  if (c) sift_pushofxnode(L, tree, c);
  else lua_pushnil(L);
  return 1;
}

/* node:find(path) -> the first node down a path of tags ("BANKACCTFROM/ACCTID"), or nil */
static int n_find (lua_State *L) {
  uint32_t id, c;
  ofx_Tree *t = self(L, 2, &id);
  int tree = lua_gettop(L);
  size_t n;
  const char *path = luaL_checklstring(L, 2, &n);
  c = down(t, id, path, n);
  if (c && c != id) sift_pushofxnode(L, tree, c);
  else if (c) lua_pushvalue(L, 1);
  else lua_pushnil(L);
  return 1;
}

/* node:text(path) -> the value of the element down path; nil when absent,
   an aggregate, or empty */
static int n_text (lua_State *L) {
  uint32_t id, c;
  ofx_Tree *t = self(L, 2, &id);
  int tree = lua_gettop(L);
  size_t n;
  const char *path = luaL_checklstring(L, 2, &n);
  c = down(t, id, path, n);
  if (c == 0 || OFX_KIND(&t->nodes[c]) == OFX_AGGREGATE) lua_pushnil(L);
  else {
    sift_pushofxvalue(L, tree, t, c);
    if (lua_rawlen(L, -1) == 0) lua_pushnil(L);
  }
  return 1;
}

/* node:children([tag]) -> every child with this tag (all when nil), a list */
static int n_children (lua_State *L) {
  uint32_t id, c;
  ofx_Tree *t = self(L, 2, &id);
  int tree = lua_gettop(L);
  int64_t k = -2;  /* (-2: every tag) */
  lua_Integer i = 0;
  if (!lua_isnoneornil(L, 2)) {
    size_t n;
    const char *tag = luaL_checklstring(L, 2, &n);
    k = ofx_tree_lookup(t, tag, n);
  }
  lua_newtable(L);
  if (OFX_KIND(&t->nodes[id]) != OFX_AGGREGATE || k == -1) return 1;
  for (c = t->nodes[id].a; c; c = t->nodes[c].next) {
    if (k >= 0 && OFX_TAG(&t->nodes[c]) != (uint32_t)k) continue;
    sift_pushofxnode(L, tree, c);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

/* the iterators' state: upvalue 1 the node's handle, 2 the next child */
static int each_step (lua_State *L, int items) {
  uint32_t id, c = (uint32_t)lua_tointeger(L, lua_upvalueindex(2));
  ofx_Tree *t = sift_checkofxnode(L, lua_upvalueindex(1), &id);
  int tree = lua_gettop(L);
  if (c == 0) return 0;
  lua_pushinteger(L, t->nodes[c].next);
  lua_replace(L, lua_upvalueindex(2));
  if (!items) {
    sift_pushofxnode(L, tree, c);
    return 1;
  }
  sift_pushofxtag(L, tree, t, OFX_TAG(&t->nodes[c]));
  if (OFX_KIND(&t->nodes[c]) == OFX_AGGREGATE) sift_pushofxnode(L, tree, c);
  else sift_pushofxvalue(L, tree, t, c);
  return 2;
}

static int each_next (lua_State *L) { return each_step(L, 0); }
static int items_next (lua_State *L) { return each_step(L, 1); }

static int iterate (lua_State *L, lua_CFunction step) {
  uint32_t id;
  ofx_Tree *t = sift_checkofxnode(L, 1, &id);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE ? t->nodes[id].a : 0);
  lua_pushcclosure(L, step, 2);
  return 1;
}

/* for child in node:each(): the children as handles */
static int n_each (lua_State *L) { return iterate(L, each_next); }

/* for tag, x in node:items(): x an aggregate's handle or an element's value */
static int n_items (lua_State *L) { return iterate(L, items_next); }

static lua_Integer count (const ofx_Tree *t, uint32_t id) {
  lua_Integer k = 0;
  uint32_t c;
  if (OFX_KIND(&t->nodes[id]) == OFX_AGGREGATE)
    for (c = t->nodes[id].a; c; c = t->nodes[c].next) k++;
  return k;
}

/* node:count() -> how many children */
static int n_count (lua_State *L) {
  uint32_t id;
  ofx_Tree *t = self(L, 1, &id);
  lua_pushinteger(L, count(t, id));
  return 1;
}

/* node.tag, node.value (nil for an aggregate), node.pos (nil for an
   element), a method, or (on the document) a field the parser set */
static int n_index (lua_State *L) {
  uint32_t id;
  ofx_Tree *t = self(L, 2, &id);
  int tree = lua_gettop(L);
  const char *key = lua_tostring(L, 2);
  const ofx_Node *n = &t->nodes[id];
  if (lua_type(L, 2) == LUA_TSTRING) {
    if (strcmp(key, "tag") == 0) {
      sift_pushofxtag(L, tree, t, OFX_TAG(n));
      return 1;
    }
    if (strcmp(key, "value") == 0) {
      if (OFX_KIND(n) == OFX_AGGREGATE) lua_pushnil(L);
      else sift_pushofxvalue(L, tree, t, id);
      return 1;
    }
    if (strcmp(key, "pos") == 0) {
      if (OFX_KIND(n) == OFX_AGGREGATE) lua_pushinteger(L, n->pos);
      else lua_pushnil(L);
      return 1;
    }
  }
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || id != 0) return 1;
  lua_getiuservalue(L, tree, UV_EXTRA);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

/* the document takes fields (header, warnings...); other nodes are read-only */
static int n_newindex (lua_State *L) {
  uint32_t id;
  sift_checkofxnode(L, 1, &id);
  if (id != 0) return luaL_error(L, "an OFX node is read-only");
  lua_getiuservalue(L, -1, UV_EXTRA);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_rawset(L, -3);
  return 0;
}

static int n_eq (lua_State *L) {
  Handle *a = (Handle *)luaL_testudata(L, 1, SIFT_OFX_NODE_T), *b = (Handle *)luaL_testudata(L, 2, SIFT_OFX_NODE_T);
  int same = a && b && a->id == b->id;
  if (same) {
    lua_getiuservalue(L, 1, 1);
    lua_getiuservalue(L, 2, 1);
    same = lua_rawequal(L, -1, -2);
  }
  lua_pushboolean(L, same);
  return 1;
}

static int n_tostring (lua_State *L) {
  uint32_t id;
  ofx_Tree *t = self(L, 1, &id);
  int tree = lua_gettop(L);
  sift_pushofxtag(L, tree, t, OFX_TAG(&t->nodes[id]));
  if (OFX_KIND(&t->nodes[id]) != OFX_AGGREGATE) {
    sift_pushofxvalue(L, tree, t, id);
    lua_pushfstring(L, "<%s>%s", lua_tostring(L, -2), lua_tostring(L, -1));
  }
  else lua_pushfstring(L, "<%s> (%I children)", lua_tostring(L, -1), count(t, id));
  return 1;
}

/* }====================================================== */


static const luaL_Reg tree_methods[] = {
  {"aggregate", t_aggregate},
  {"append", t_append},
  {"element", t_element},
  {"has_element", t_has_element},
  {"node", t_node},
  {"set_value", t_set_value},
  {"tag", t_tag},
  {"value", t_value},
  {NULL, NULL}
};

static const luaL_Reg tree_meta[] = {
  {"__gc", tree_gc},
  {"__index", NULL},
  {NULL, NULL}
};

static const luaL_Reg node_methods[] = {
  {"child", n_child},
  {"children", n_children},
  {"count", n_count},
  {"each", n_each},
  {"find", n_find},
  {"items", n_items},
  {"text", n_text},
  {NULL, NULL}
};

static const luaL_Reg node_meta[] = {
  {"__eq", n_eq},
  {"__newindex", n_newindex},
  {"__tostring", n_tostring},
  {NULL, NULL}
};

void sift_open_ofxtree (lua_State *L) {
  sift_newclass(L, SIFT_OFX_TREE_T, tree_meta, tree_methods);
  luaL_newmetatable(L, SIFT_OFX_NODE_T);
  luaL_setfuncs(L, node_meta, 0);
  luaL_newlib(L, node_methods);
  lua_pushcclosure(L, n_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_tree);
  lua_setfield(L, -2, "ofx_tree");
}
