/*
** lbmd.c
** BMD in Lua: core.bmd_crunch, core.bmd_decrunch, core.bmd_info and the
** string dictionary sift.Dictionary (see bmd.h).
*/

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "bmd.h"
#include "dict.h"
#include "core/lsift.h"

#define SETINT(key, v) \
  (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, key))

static void push_counts (lua_State *L, const bmd_Counts *c) {
  int t;
  lua_createtable(L, 0, 12);
  SETINT("strings", c->records[BMD_STRING]);
  SETINT("hashed_strings", c->records[BMD_HASHED_STRING]);
  SETINT("classes", c->records[BMD_CLASS]);
  SETINT("instances", c->records[BMD_INSTANCE]);
  SETINT("object_arrays", c->records[BMD_OBJECT_ARRAY]);
  SETINT("primitive_arrays", c->records[BMD_PRIMITIVE_ARRAY]);
  SETINT("legacy", c->records[BMD_LEGACY]);
  SETINT("root_records", c->records[BMD_ROOTS]);
  SETINT("roots", c->roots);
  SETINT("kinds", c->kinds);
  SETINT("dropped", c->dropped);
  SETINT("bytes_in", c->bytes_in);
  SETINT("bytes_out", c->bytes_out);
  lua_newtable(L);
  for (t = 0; t < 256; t++)
    if (c->legacy_tags[t]) {
      lua_pushinteger(L, (lua_Integer)c->legacy_tags[t]);
      lua_rawseti(L, -2, t);
    }
  lua_setfield(L, -2, "legacy_tags");
}

/* a writer's output goes to path.part, renamed to path when complete */
static FILE *open_part (lua_State *L, const char *path) {
  FILE *f;
  lua_pushfstring(L, "%s.part", path);
  f = fopen(lua_tostring(L, -1), "wb");
  lua_pop(L, 1);
  return f;
}

static int close_part (lua_State *L, const char *path, FILE *f, int ok) {
  const char *part;
  int closed = fclose(f) == 0;
  lua_pushfstring(L, "%s.part", path);
  part = lua_tostring(L, -1);
  if (ok && closed && rename(part, path) == 0) {
    lua_pop(L, 1);
    return 1;
  }
  remove(part);
  lua_pop(L, 1);
  return 0;
}

/*
** core.bmd_crunch(source, outpath [, opts [, progress]]) -> counts
** opts: keep (list of string prefixes kept as text), keep_primitives,
** badoo (exactly Badoo's bytes: without sift's record of the roots' kinds).
*/
static int bmd_crunch_lua (lua_State *L) {
  size_t n, nkeep = 0, i;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  const char *path = luaL_checkstring(L, 2);
  const char **keep = NULL;
  bmd_CrunchOptions opt;
  bmd_Counts counts;
  sift_Progress pr;
  sift_LuaProgress lp;
  sift_Status s;
  sift_Error err;
  FILE *f;
  memset(&opt, 0, sizeof opt);
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    if (lua_getfield(L, 3, "keep") == LUA_TTABLE) {
      nkeep = (size_t)luaL_len(L, -1);
      keep = (const char **)lua_newuserdatauv(L, (nkeep ? nkeep : 1) * sizeof *keep, 0);
      for (i = 0; i < nkeep; i++) {
        lua_geti(L, -2, (lua_Integer)i + 1);
        keep[i] = luaL_checkstring(L, -1);  /* alive in opts.keep */
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
    lua_getfield(L, 3, "keep_primitives");
    opt.keep_primitives = lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 3, "badoo");
    opt.badoo = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  opt.keep = keep;
  opt.nkeep = nkeep;
  sift_progress_lua(L, 4, &lp, &pr, 2 * (uint64_t)n);
  if ((f = open_part(L, path)) == NULL)
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  s = bmd_crunch(p, n, f, &opt, &counts, &pr, &err);
  if (!close_part(L, path, f, s == SIFT_OK) && s == SIFT_OK) {
    s = sift_fail(&err, SIFT_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  sift_progress_rethrow(&lp);
  if (s != SIFT_OK) return sift_pushfail(L, s, "%s", err.msg);
  push_counts(L, &counts);
  return 1;
}

/*
** core.bmd_info(source [, progress]) -> {header, counts...}
** Every record is read and checked.
*/
static int bmd_info_lua (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  bmd_File b;
  sift_Progress pr;
  sift_LuaProgress lp;
  sift_Status s;
  sift_Error err;
  sift_progress_lua(L, 2, &lp, &pr, n);
  s = bmd_open(&b, p, n, &pr, &err);
  if (s != SIFT_OK) {
    bmd_close(&b);
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err.msg);
  }
  push_counts(L, &b.counts);
  lua_pushlstring(L, (const char *)b.meta, b.metalen);
  lua_setfield(L, -2, "header");
  bmd_close(&b);
  return 1;
}


/* {======================================================
** sift.Dictionary: names to recover hashed strings
** ======================================================= */

static bmd_Dict **checkdict (lua_State *L, int arg) {
  bmd_Dict **d = (bmd_Dict **)luaL_checkudata(L, arg, SIFT_DICT_T);
  if (*d == NULL) luaL_error(L, "attempt to use a closed " SIFT_DICT_T);
  return d;
}

/* core.dictionary() -> an empty dictionary */
static int dict_new (lua_State *L) {
  bmd_Dict **d = (bmd_Dict **)lua_newuserdatauv(L, sizeof *d, 0);
  *d = NULL;
  luaL_setmetatable(L, SIFT_DICT_T);
  if ((*d = bmd_dict_new()) == NULL) return luaL_error(L, "out of memory");
  return 1;
}

/* dict:add(source) -> strings found in a jar, apk, dex or class file */
static int dict_add (lua_State *L) {
  bmd_Dict **d = checkdict(L, 1);
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 2, &n, &map);
  uint64_t added;
  sift_Error err;
  sift_Status s = bmd_dict_add_file(*d, p, n, &added, &err);
  if (s != SIFT_OK) return sift_pushfail(L, s, "%s", err.msg);
  lua_pushinteger(L, (lua_Integer)added);
  return 1;
}

/* dict:add_names(list) -> the dictionary; each name with its spellings */
static int dict_add_names (lua_State *L) {
  bmd_Dict **d = checkdict(L, 1);
  lua_Integer i, n;
  luaL_checktype(L, 2, LUA_TTABLE);
  n = luaL_len(L, 2);
  for (i = 1; i <= n; i++) {
    size_t len;
    const char *s;
    lua_geti(L, 2, i);
    s = luaL_checklstring(L, -1, &len);
    if (!bmd_dict_add_string(*d, (const unsigned char *)s, len)) return luaL_error(L, "out of memory");
    lua_pop(L, 1);
  }
  bmd_dict_sort(*d);
  lua_settop(L, 1);
  return 1;
}

/* dict:size() -> spellings held */
static int dict_size (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bmd_dict_size(*checkdict(L, 1)));
  return 1;
}

static int dict_close (lua_State *L) {
  bmd_Dict **d = (bmd_Dict **)luaL_checkudata(L, 1, SIFT_DICT_T);
  bmd_dict_free(*d);
  *d = NULL;
  return 0;
}

/* }====================================================== */


/* the bytes free for us on the file system of path's directory, or
   UINT64_MAX when that cannot be told */
static uint64_t free_bytes (const char *path) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  struct statvfs sv;
  size_t n = slash ? (size_t)(slash - path) : 1;
  if (n >= sizeof dir) return UINT64_MAX;
  if (slash) memcpy(dir, path, n ? n : 1);
  else dir[0] = '.';
  dir[n ? n : 1] = '\0';
  if (statvfs(dir, &sv) != 0) return UINT64_MAX;
  return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

/*
** core.bmd_decrunch(source, outpath [, opts [, progress]]) -> stats
** core.bmd_decrunch(source, nil [, opts [, progress]]) -> map, stats
** opts: dictionary (a sift.Dictionary), nodata (primitive arrays as
** no-data records), plain_names (Hash$<hash> without the length),
** max_output (bytes: refuse, before writing, a bigger HPROF). With no path
** the HPROF goes to an unlinked temporary file, returned mapped (how
** sift.open reads a BMD). A file system without room for it is refused
** before writing too.
*/
static int bmd_decrunch_lua (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  const char *path = luaL_optstring(L, 2, NULL);
  bmd_DecrunchOptions opt;
  bmd_DecrunchStats st;
  bmd_File b;
  sift_Progress pr;
  sift_LuaProgress lp;
  sift_Status s;
  sift_Error err;
  FILE *f;
  memset(&opt, 0, sizeof opt);
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    if (lua_getfield(L, 3, "dictionary") != LUA_TNIL) opt.dict = *checkdict(L, -1);
    lua_getfield(L, 3, "nodata");
    opt.nodata = lua_toboolean(L, -1);
    lua_getfield(L, 3, "plain_names");
    opt.plain_names = lua_toboolean(L, -1);
    lua_getfield(L, 3, "max_output");
    opt.max_out = (uint64_t)luaL_optinteger(L, -1, 0);
    lua_pop(L, 4);
  }
  sift_progress_lua(L, 4, &lp, &pr, 3 * (uint64_t)n);  /* a checking walk, two writing walks */
  if ((s = bmd_open(&b, p, n, &pr, &err)) != SIFT_OK) {
    bmd_close(&b);
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err.msg);
  }
  if (!opt.nodata) {  /* room for what is to come, told before writing */
    uint64_t need = b.counts.zeros + 8 * (uint64_t)n, room = free_bytes(path ? path : "/tmp/x");
    if (need > room) {
      bmd_close(&b);
      return sift_pushfail(L, SIFT_ETOOBIG, "%s: decrunching needs up to %llu bytes, the file system has %llu "
                           "free: nothing written", path ? path : "temporary file", (unsigned long long)need,
                           (unsigned long long)room);
    }
  }
  f = path ? open_part(L, path) : tmpfile();
  if (f == NULL) {
    bmd_close(&b);
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path ? path : "temporary file", strerror(errno));
  }
  s = bmd_decrunch(&b, f, &opt, &st, &pr, &err);
  bmd_close(&b);
  if (path == NULL) {
    if (s != SIFT_OK) {
      fclose(f);
      sift_progress_rethrow(&lp);
      return sift_pushfail(L, s, "%s", err.msg);
    }
    if (sift_push_tmpmap(L, f) != 1) return 3;
  }
  else if (!close_part(L, path, f, s == SIFT_OK) && s == SIFT_OK) {
    s = sift_fail(&err, SIFT_EIO, "%s: cannot write: %s", path, strerror(errno));
  }
  sift_progress_rethrow(&lp);
  if (s != SIFT_OK) return sift_pushfail(L, s, "%s", err.msg);
  lua_createtable(L, 0, 4);
  SETINT("recovered", st.recovered);
  SETINT("placeholders", st.placeholders);
  SETINT("legacy_dropped", st.legacy_dropped);
  SETINT("kinds", st.kinds);
  SETINT("bytes_out", st.bytes_out);
  return path ? 1 : 2;
}

static const luaL_Reg dict_methods[] = {
  {"add", dict_add},
  {"add_names", dict_add_names},
  {"size", dict_size},
  {"close", dict_close},
  {NULL, NULL}
};

static const luaL_Reg dict_metamethods[] = {
  {"__index", NULL},
  {"__gc", dict_close},
  {"__close", dict_close},
  {NULL, NULL}
};

static const luaL_Reg bmd_functions[] = {
  {"bmd_crunch", bmd_crunch_lua},
  {"bmd_decrunch", bmd_decrunch_lua},
  {"bmd_info", bmd_info_lua},
  {"dictionary", dict_new},
  {NULL, NULL}
};

void sift_open_bmd (lua_State *L) {
  sift_newclass(L, SIFT_DICT_T, dict_metamethods, dict_methods);
  luaL_setfuncs(L, bmd_functions, 0);
}
