/*
** lvalues.c
** What one object or class of a sift.Heap holds, as raw methods of the
** heap: class facts (fields, statics), field values, array elements,
** strings from the dump's string table, and an array's text (Java's
** char[] and byte[] string layouts) as UTF-8.
*/

#include <string.h>

#include "hprof.h"
#include "lheap.h"

/* the UTF-16 code units at p (n of them) as UTF-8; lone surrogates become
   U+FFFD */
static void push_utf16 (lua_State *L, const unsigned char *p, uint64_t n,
                        int little) {
  luaL_Buffer b;
  uint64_t i;
  luaL_buffinit(L, &b);
  for (i = 0; i < n; i++) {
    unsigned c = little ? (unsigned)p[2 * i] | (unsigned)p[2 * i + 1] << 8
                        : (unsigned)p[2 * i] << 8 | p[2 * i + 1];
    unsigned long cp = c;
    char out[4];
    int k = 0;
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) {  /* a surrogate pair */
      unsigned d = little ? (unsigned)p[2 * i + 2] | (unsigned)p[2 * i + 3] << 8
                          : (unsigned)p[2 * i + 2] << 8 | p[2 * i + 3];
      if (d >= 0xDC00 && d < 0xE000) {
        cp = 0x10000 + ((unsigned long)(c - 0xD800) << 10) + (d - 0xDC00);
        i++;
      }
      else cp = 0xFFFD;
    }
    else if (c >= 0xD800 && c < 0xE000) cp = 0xFFFD;
    if (cp < 0x80) out[k++] = (char)cp;
    else if (cp < 0x800) {
      out[k++] = (char)(0xC0 | cp >> 6);
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000) {
      out[k++] = (char)(0xE0 | cp >> 12);
      out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    else {
      out[k++] = (char)(0xF0 | cp >> 18);
      out[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
      out[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
      out[k++] = (char)(0x80 | (cp & 0x3F));
    }
    luaL_addlstring(&b, out, (size_t)k);
  }
  luaL_pushresult(&b);
}

/* push the value of basic type t stored (big-endian) at p */
static void push_value (lua_State *L, const hp_Heap *h, int t,
                        const unsigned char *p) {
  uint64_t v = 0;
  int i, size = hp_type_size(h, t);
  for (i = 0; i < size; i++) v = v << 8 | p[i];
  switch (t) {
    case HP_OBJECT: lua_pushinteger(L, (lua_Integer)v); break;
    case HP_BOOLEAN: lua_pushboolean(L, v != 0); break;
    case HP_CHAR: push_utf16(L, p, 1, 0); break;
    case HP_FLOAT: {
      uint32_t u = (uint32_t)v;
      float f;
      memcpy(&f, &u, sizeof f);
      lua_pushnumber(L, (lua_Number)f);
      break;
    }
    case HP_DOUBLE: {
      double d;
      memcpy(&d, &v, sizeof d);
      lua_pushnumber(L, (lua_Number)d);
      break;
    }
    case HP_BYTE: lua_pushinteger(L, (int8_t)v); break;
    case HP_SHORT: lua_pushinteger(L, (int16_t)v); break;
    case HP_INT: lua_pushinteger(L, (int32_t)v); break;
    case HP_LONG: lua_pushinteger(L, (lua_Integer)v); break;
    default: lua_pushnil(L); break;
  }
}


/*
** {======================================================
** Classes
** =======================================================
*/

/* push the name of string id sid, or nil *//*
** heap:class(c) -> { id, name (raw, as the dump spells it), name_id,
** super (class number), super_id, loader_id, instance_size, object (number
** of the class object), serial, declared (fields declared by this class),
** fields = { {name, type, offset, owner}... } (flattened: this class's
** first), statics = { {name, type, value}... } }
*/
static int heap_class (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t c = sift_checkclass(L, h, 2);
  const hp_Class *k = &h->classes[c];
  const unsigned char *s;
  int64_t obj = hp_find(h, k->id);
  uint32_t i;
  lua_createtable(L, 0, 12);
  SIFT_SETINT("id", k->id);
  sift_push_string_id(L, h, k->name);
  lua_setfield(L, -2, "name");
  SIFT_SETINT("name_id", k->name);
  if (k->super >= 0) SIFT_SETINT("super", k->super + 1);
  SIFT_SETINT("super_id", k->super_id);
  SIFT_SETINT("loader_id", k->loader_id);
  SIFT_SETINT("instance_size", k->instance_size);
  SIFT_SETINT("data_size", k->data_size);
  if (obj >= 0) SIFT_SETINT("object", obj + 1);
  SIFT_SETINT("serial", k->serial);
  SIFT_SETINT("declared", k->nfields);
  lua_createtable(L, (int)k->nflat, 0);
  for (i = 0; i < k->nflat; i++) {
    const hp_Field *f = &h->fields[k->flat + i];
    lua_createtable(L, 0, 4);
    sift_push_string_id(L, h, f->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, sift_type_names[f->type]);
    lua_setfield(L, -2, "type");
    SIFT_SETINT("offset", f->offset);
    SIFT_SETINT("owner", f->owner + 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "fields");
  lua_createtable(L, (int)k->nstatics, 0);
  s = h->p + k->statics_off + 2;
  for (i = 0; i < k->nstatics; i++) {
    int t = s[h->idsize];
    lua_createtable(L, 0, 3);
    sift_push_string_id(L, h, hp_id_at(h, s));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, sift_type_names[t]);
    lua_setfield(L, -2, "type");
    push_value(L, h, t, s + h->idsize + 1);
    lua_setfield(L, -2, "value");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
    s += h->idsize + 1 + hp_type_size(h, t);
  }
  lua_setfield(L, -2, "statics");
  return 1;
}

/* heap:string(id) -> the bytes of a STRING record, or nil */
static int heap_string (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  sift_push_string_id(L, h, (uint64_t)luaL_checkinteger(L, 2));
  return 1;
}

/* }====================================================== */


/*
** {======================================================
** Object data
** =======================================================
*/

/* heap:field(num, offset, type) -> value of an instance field */
static int heap_field (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2);
  lua_Integer off = luaL_checkinteger(L, 3);
  static const char *const types[] = {"object", "boolean", "char", "float",
    "double", "byte", "short", "int", "long", NULL};
  static const int codes[] = {HP_OBJECT, HP_BOOLEAN, HP_CHAR, HP_FLOAT,
    HP_DOUBLE, HP_BYTE, HP_SHORT, HP_INT, HP_LONG};
  int t = codes[luaL_checkoption(L, 4, NULL, types)];
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.kind != HP_INSTANCE_DUMP || off < 0
      || (uint64_t)off + (uint64_t)hp_type_size(h, t) > o.length)
    return sift_pushfail(L, SIFT_ETRUNC, "object 0x%I has no %s field at "
                         "offset %I", (lua_Integer)hp_obj_id(h, num),
                         types[luaL_checkoption(L, 4, NULL, types)], off);
  push_value(L, h, t, o.data + off);
  return 1;
}

/* heap:element(num, i) -> element i (1-based) of an array */
static int heap_element (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2);
  lua_Integer i = luaL_checkinteger(L, 3);
  hp_ObjInfo o;
  hp_object(h, num, &o);
  if (o.data == NULL || i < 1 || (lua_Unsigned)i > o.length) {
    lua_pushnil(L);
    return 1;
  }
  push_value(L, h, o.elem,
             o.data + ((uint64_t)i - 1) * (uint64_t)hp_type_size(h, o.elem));
  return 1;
}

/* heap:elements(num) -> a table of every element of an array */
static int heap_elements (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  uint64_t num = sift_checknum(L, h, 2), i;
  hp_ObjInfo o;
  int size;
  hp_object(h, num, &o);
  size = hp_type_size(h, o.elem);
  lua_createtable(L, o.length < 1 << 24 ? (int)o.length : 0, 0);
  if (o.data == NULL) return 1;
  for (i = 0; i < o.length; i++) {
    push_value(L, h, o.elem, o.data + i * (uint64_t)size);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* heap:bytes(num) -> the raw data of a primitive array (big-endian, as in
   the file), or nil */
static int heap_bytes (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  hp_ObjInfo o;
  hp_object(h, sift_checknum(L, h, 2), &o);
  if (o.kind != HP_PRIM_ARRAY_DUMP) lua_pushnil(L);
  else lua_pushlstring(L, (const char *)o.data,
                       (size_t)(o.length * (uint64_t)hp_type_size(h, o.elem)));
  return 1;
}

/*
** heap:text(num, encoding [, first, count]) -> UTF-8 text of a char[] or
** byte[]: encoding "utf16be" (char[] as HPROF stores it), "utf16le"
** (JDK 9+ UTF16-coded byte[] on little-endian machines) or "latin1";
** first (0-based) and count select code units (Dalvik's offset/count)
*/
static int heap_text (lua_State *L) {
  hp_Heap *h = &sift_checkheap(L)->h;
  static const char *const encodings[] = {"utf16be", "utf16le", "latin1",
                                          NULL};
  uint64_t num = sift_checknum(L, h, 2);
  int enc = luaL_checkoption(L, 3, NULL, encodings);
  lua_Integer first = luaL_optinteger(L, 4, 0);
  hp_ObjInfo o;
  uint64_t units, count;
  hp_object(h, num, &o);
  if (o.kind != HP_PRIM_ARRAY_DUMP || o.data == NULL) {
    lua_pushnil(L);
    return 1;
  }
  units = enc == 2 ? o.length * (uint64_t)hp_type_size(h, o.elem)
        : o.length * (uint64_t)hp_type_size(h, o.elem) / 2;
  count = (uint64_t)luaL_optinteger(L, 5, (lua_Integer)units);
  if (first < 0 || (uint64_t)first > units) first = (lua_Integer)units;
  if (count > units - (uint64_t)first) count = units - (uint64_t)first;
  if (enc == 2) {  /* Latin-1 to UTF-8 */
    luaL_Buffer b;
    uint64_t i;
    luaL_buffinit(L, &b);
    for (i = 0; i < count; i++) {
      unsigned char c = o.data[(uint64_t)first + i];
      if (c < 0x80) luaL_addchar(&b, (char)c);
      else {
        luaL_addchar(&b, (char)(0xC0 | c >> 6));
        luaL_addchar(&b, (char)(0x80 | (c & 0x3F)));
      }
    }
    luaL_pushresult(&b);
  }
  else push_utf16(L, o.data + 2 * (uint64_t)first, count, enc == 1);
  return 1;
}

/* }====================================================== */


static const luaL_Reg value_methods[] = {
  {"class", heap_class},
  {"string", heap_string},
  {"field", heap_field},
  {"element", heap_element},
  {"elements", heap_elements},
  {"bytes", heap_bytes},
  {"text", heap_text},
  {NULL, NULL}
};

void sift_open_heap_values (lua_State *L) {
  sift_addmethods(L, SIFT_HEAP_T, value_methods);
}
