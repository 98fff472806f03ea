/*
** lbmd.c
** BMD in Lua: core.bmd_crunch, core.bmd_decrunch, core.bmd_info and the
** string dictionary sift.Dictionary (see bmd.h).
*/

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmd.h"
#include "lsift.h"

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
** opts: keep (list of string prefixes kept as text), keep_primitives.
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
  char err[256];
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
  }
  opt.keep = keep;
  opt.nkeep = nkeep;
  sift_progress_lua(L, 4, &lp, &pr, 2 * (uint64_t)n);
  if ((f = open_part(L, path)) == NULL)
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  s = bmd_crunch(p, n, f, &opt, &counts, &pr, err, sizeof err);
  if (!close_part(L, path, f, s == SIFT_OK) && s == SIFT_OK) {
    s = SIFT_EIO;
    snprintf(err, sizeof err, "%s: cannot write: %s", path, strerror(errno));
  }
  sift_progress_rethrow(&lp);
  if (s != SIFT_OK) return sift_pushfail(L, s, "%s", err);
  push_counts(L, &counts);
  return 1;
}

static const luaL_Reg bmd_functions[] = {
  {"bmd_crunch", bmd_crunch_lua},
  {NULL, NULL}
};

void sift_open_bmd (lua_State *L) {
  luaL_setfuncs(L, bmd_functions, 0);
}
