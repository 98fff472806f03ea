/*
** lbitmap.c
** The raw methods of a sift.Heap that lua/sift/heap/bitmaps.lua builds
** on: a byte[] of pixels drawn as a PNG (bitmap.c), and the hash and
** equality of primitive arrays' bytes (for duplicate bitmaps).
*/

#include <stdlib.h>
#include <string.h>

#include "core/png.h"
#include "bitmap.h"
#include "lheap.h"

/* the encoder's malloc'd PNG, freed by the GC if pushing it fails */
typedef struct PngBox {
  unsigned char *p;
} PngBox;

static int box_gc (lua_State *L) {
  PngBox *b = (PngBox *)luaL_checkudata(L, 1, SIFT_PNG_SCRATCH_T);
  free(b->p);
  b->p = NULL;
  return 0;
}

/* the bytes of primitive array number `arg` (a Lua argument), or NULL
   when the object is no primitive array or the dump left its data out */
static const unsigned char *array_bytes (lua_State *L, const hp_Heap *h, int arg,
                                         uint64_t *n, int *elem) {
  hp_ObjInfo o;
  hp_object(h, sift_checknum(L, h, arg), &o);
  if (o.kind != HP_PRIM_ARRAY_DUMP || o.data == NULL) return NULL;
  *n = o.length * (uint64_t)hp_type_size(h, o.elem);
  *elem = o.elem;
  return o.data;
}

/*
** heap:bitmap_png(num, width, height, config, premultiplied) -> the PNG
** of byte[] number num holding width x height pixels of config
** ("ARGB_8888", "RGB_565", "ALPHA_8"), or nil, message, code when the
** buffer is not that size ("bad_header") or the picture is larger than
** sift draws ("too_big") or has no pixels ("empty").
*/
static int heap_bitmap_png (lua_State *L) {
  static const char *const configs[] = {"ARGB_8888", "RGB_565", "ALPHA_8", NULL};
  const hp_Heap *h = &sift_checkheap(L)->h;
  lua_Integer w = luaL_checkinteger(L, 3), ht = luaL_checkinteger(L, 4);
  hb_Config c = (hb_Config)luaL_checkoption(L, 5, NULL, configs);
  int premultiplied = lua_toboolean(L, 6), elem = 0;
  uint64_t n = 0;
  const unsigned char *px = array_bytes(L, h, 2, &n, &elem);
  PngBox *box;
  size_t len;
  sift_Status s;
  luaL_argcheck(L, px != NULL && elem == HP_BYTE, 2, "not a byte[] with its data");
  if (w <= 0 || ht <= 0)
    return sift_pushfail(L, SIFT_EEMPTY, "a %Ix%I bitmap has no pixels to draw", w, ht);
  if (w > (lua_Integer)SIFT_PNG_MAXSIDE || ht > (lua_Integer)SIFT_PNG_MAXSIDE)
    return sift_pushfail(L, SIFT_ETOOBIG, "a %Ix%I bitmap is larger than sift draws "
                         "(%d pixels a side at most)", w, ht, (int)SIFT_PNG_MAXSIDE);
  box = (PngBox *)lua_newuserdatauv(L, sizeof *box, 0);
  box->p = NULL;
  luaL_setmetatable(L, SIFT_PNG_SCRATCH_T);
  s = hb_png(px, n, (uint32_t)w, (uint32_t)ht, c, premultiplied, &box->p, &len);
  switch (s) {
    case SIFT_OK:
      lua_pushlstring(L, (const char *)box->p, len);
      free(box->p);
      box->p = NULL;
      return 1;
    case SIFT_EHEADER:
      return sift_pushfail(L, s, "%Ix%I pixels of %s take %I bytes, the buffer holds %I",
                           w, ht, configs[c], w * ht * (lua_Integer)hb_bpp(c), (lua_Integer)n);
    case SIFT_ETOOBIG:
      return sift_pushfail(L, s, "a %Ix%I bitmap is larger than sift draws (%I bytes of "
                           "pixels at most)", w, ht, (lua_Integer)SIFT_PNG_MAXRAW);
    default:
      return luaL_error(L, "not enough memory to draw a %Ix%I bitmap", w, ht);
  }
}

/* heap:array_hash(num) -> a hash of a primitive array's bytes (an
   integer), or nil when it is no primitive array with its data */
static int heap_array_hash (lua_State *L) {
  const hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t n = 0;
  int elem = 0;
  const unsigned char *p = array_bytes(L, h, 2, &n, &elem);
  if (p == NULL) lua_pushnil(L);
  else lua_pushinteger(L, (lua_Integer)(hb_hash(p, n) ^ (uint64_t)elem));
  return 1;
}

/* heap:same_bytes(a, b) -> whether primitive arrays a and b (numbers)
   have the same element type and bytes */
static int heap_same_bytes (lua_State *L) {
  const hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t na = 0, nb = 0;
  int ea = 0, eb = 0;
  const unsigned char *a = array_bytes(L, h, 2, &na, &ea);
  const unsigned char *b = array_bytes(L, h, 3, &nb, &eb);
  lua_pushboolean(L, a != NULL && b != NULL && ea == eb && na == nb
                     && (a == b || memcmp(a, b, (size_t)na) == 0));
  return 1;
}

static const luaL_Reg bitmap_methods[] = {
  {"bitmap_png", heap_bitmap_png},
  {"array_hash", heap_array_hash},
  {"same_bytes", heap_same_bytes},
  {NULL, NULL}
};

void sift_open_heap_bitmaps (lua_State *L) {
  static const luaL_Reg box_meta[] = {
    {"__gc", box_gc},
    {NULL, NULL}
  };
  luaL_newmetatable(L, SIFT_PNG_SCRATCH_T);
  luaL_setfuncs(L, box_meta, 0);
  lua_pop(L, 1);
  sift_addmethods(L, SIFT_HEAP_T, bitmap_methods);
}
