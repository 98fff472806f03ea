/*
** lsift.h
** What the Lua-facing files of sift.core share: the userdata type names,
** the sift.Map layout, the source accessor and the `nil, message, code`
** helper.
*/

#if !defined(sift_lsift_h)
#define sift_lsift_h

#include <stdio.h>

#include "lua.h"
#include "lauxlib.h"

#include "common.h"

/*
** Every userdata type name (each is also its metatable's __name, shown in
** error messages): luaL_checkudata, luaL_testudata, luaL_setmetatable,
** luaL_newmetatable and sift_newclass take these, never a literal.
*/
#define SIFT_MAP_T          "sift.Map"
#define SIFT_READER_T       "sift.Reader"
#define SIFT_HEAP_T         "sift.Heap"
#define SIFT_OBJECT_T       "sift.Object"
#define SIFT_DICT_T         "sift.Dictionary"      /* BMD names (lbmd.c) */
#define SIFT_PATH_TREE_T    "sift.PathTree"        /* a tree while it is pushed */
#define SIFT_PNG_SCRATCH_T  "sift.PngScratch"      /* lbitmap.c's buffers */
#define SIFT_WASTE_T        "sift.WasteScratch"    /* lwaste.c's sets */
#define SIFT_TRACE_T        "sift.Trace"
#define SIFT_CALLS_T        "sift.CallTree"
#define SIFT_DB_T           "sift.Database"
#define SIFT_STMT_T         "sift.Statement"
#define SIFT_OFX_READER_T   "sift.OfxReader"
#define SIFT_OFX_TXNS_T     "sift.OfxTransactions"
#define SIFT_OFX_TREE_T     "sift.OfxTree"
#define SIFT_OFX_NODE_T     "sift.OfxNode"
#define SIFT_DIRBOX_T       "sift.DirBox"          /* core.dir's open directory (lfiles.c) */

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

/* add `methods` to the class `tname` made by sift_newclass (a class whose
   methods live in several files) */
void sift_addmethods (lua_State *L, const char *tname, const luaL_Reg *methods);

/*
** A Lua progress function fn(done, total) for a C pass. It runs protected:
** an error in it stops the pass like a `false` return does, and
** sift_progress_rethrow raises it once the pass has cleaned up.
*/
typedef struct sift_LuaProgress {
  lua_State *L;
  int fn;        /* stack index of the function, 0 for none */
  int failed;    /* 1: the error object is in the registry slot */
} sift_LuaProgress;

void sift_progress_lua (lua_State *L, int fn, sift_LuaProgress *lp,
                        sift_Progress *pr, uint64_t total);
void sift_progress_rethrow (sift_LuaProgress *lp);

/* push a sift.Map of a temporary file written by a converter (it must be
   unlinked, as tmpfile()'s are); closes tmp. Returns 1, or 3 (nil,
   message, code) when it cannot be mapped. */
int sift_push_tmpmap (lua_State *L, FILE *tmp);

/*
** JSON output (core.json_encode, ljson.c). A userdata writes itself when
** its metatable's __json is a light userdata pointing at a sift_JsonHook:
** write is called with the userdata on top of the stack (leaving the
** stack as it found it) and writes one JSON value with the functions
** below; sift_json_value encodes the Lua value on top of the stack.
*/
typedef struct sift_Json sift_Json;

/* bytes and their length, ordered bytewise as JSON's object keys are
   (sift_keycmp, for qsort and bsearch) */
typedef struct sift_Key {
  const char *s;
  size_t n;
} sift_Key;
int sift_keycmp (const void *a, const void *b);
typedef struct sift_JsonHook {
  void (*write) (lua_State *L, sift_Json *j, int depth);
} sift_JsonHook;

void sift_json_raw (lua_State *L, sift_Json *j, const char *s, size_t n);
void sift_json_string (lua_State *L, sift_Json *j, const char *s, size_t n);
void sift_json_value (lua_State *L, sift_Json *j, int depth);

void sift_open_map (lua_State *L);
void sift_open_reader (lua_State *L);
void sift_open_sniff (lua_State *L);
void sift_open_heap (lua_State *L);
void sift_open_trace (lua_State *L);
void sift_open_bmd (lua_State *L);
void sift_open_ofx (lua_State *L);
void sift_open_sqlite (lua_State *L);
void sift_open_budget (lua_State *L);
void sift_open_files (lua_State *L);
void sift_open_proc (lua_State *L);
void sift_open_json (lua_State *L);
void sift_open_bytecode (lua_State *L);

#endif
