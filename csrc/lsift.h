/*
** lsift.h
** What the Lua-facing files of sift.core share: the sift.Map layout, the
** source accessor and the `nil, message, code` helper.
*/

#if !defined(sift_lsift_h)
#define sift_lsift_h

#include "lua.h"
#include "lauxlib.h"

#include "common.h"

/* a read-only mapping of a whole file (sift.Map) */
typedef struct sift_Map {
  const unsigned char *data;  /* NULL for an empty file */
  size_t size;
  int open;                   /* 0 once closed: data is gone */
} sift_Map;

/*
** The bytes of argument `arg`: a Lua string or an open sift.Map.
** *map is set to the Map (NULL for a string) so that long-lived users can
** check it is still open before each use.
*/
const unsigned char *sift_checksource (lua_State *L, int arg, size_t *n,
                                       const sift_Map **map);

/* push nil, message, code and return 3 */
int sift_pushfail (lua_State *L, sift_Status s, const char *fmt, ...);

/* create the metatable `tname` from `metamethods` (whose "__index" entry
   is a placeholder) and point its __index at a table of `methods` */
void sift_newclass (lua_State *L, const char *tname,
                    const luaL_Reg *metamethods, const luaL_Reg *methods);

void sift_open_map (lua_State *L);
void sift_open_reader (lua_State *L);
void sift_open_sniff (lua_State *L);
void sift_open_heap (lua_State *L);

#endif
