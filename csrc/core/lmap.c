/*
** lmap.c
** sift.Map: a whole file mapped read-only, so decoders read it in place
** without copying. Closing it (explicitly, by <close> or by the GC) unmaps
** it; readers over a closed map refuse to read.
*/

#define _DEFAULT_SOURCE  /* mmap, fstat, open */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdio.h>

#include "inflate.h"
#include "lsift.h"


static sift_Map *checkmap (lua_State *L, int arg) {
  return (sift_Map *)luaL_checkudata(L, arg, SIFT_MAP_T);
}

static sift_Map *checkopenmap (lua_State *L, int arg) {
  sift_Map *m = checkmap(L, arg);
  if (!m->open) luaL_error(L, "attempt to use a closed " SIFT_MAP_T);
  return m;
}


const unsigned char *sift_checksource (lua_State *L, int arg, size_t *n,
                                       const sift_Map **map) {
  if (lua_type(L, arg) == LUA_TSTRING) {
    *map = NULL;
    return (const unsigned char *)lua_tolstring(L, arg, n);
  }
  else {
    sift_Map *m = (sift_Map *)luaL_testudata(L, arg, SIFT_MAP_T);
    if (m == NULL)
      luaL_typeerror(L, arg, "string or " SIFT_MAP_T);
    if (!m->open) luaL_error(L, "attempt to use a closed " SIFT_MAP_T);
    *map = m;
    *n = m->size;
    return m->data;
  }
}


/*
** core.map(path) -> map | nil, message, "io"
** The message is the path and the system's reason, as io.open words it.
*/
static int map_open (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  sift_Map *m = (sift_Map *)lua_newuserdatauv(L, sizeof(sift_Map), 0);
  struct stat st;
  void *data = NULL;
  int fd;
  m->data = NULL;  /* closed and empty until the mapping succeeds */
  m->size = 0;
  m->open = 0;
  luaL_setmetatable(L, SIFT_MAP_T);
  fd = open(path, O_RDONLY);
  if (fd < 0)
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
    close(fd);
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return sift_pushfail(L, SIFT_EIO, "%s: not a regular file", path);
  }
  if (st.st_size > 0) {
    data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int e = errno;
      close(fd);
      return sift_pushfail(L, SIFT_EIO, "%s: cannot map: %s", path,
                           strerror(e));
    }
  }
  close(fd);  /* the mapping stays valid without the descriptor */
  m->data = (const unsigned char *)data;
  m->size = (size_t)st.st_size;
  m->open = 1;
  return 1;
}


/*
** core.inflate(source [, progress [, max]]) -> map | nil, message, code
** The whole gzip or bzip2 stream of source (a map or a string) decompressed
** into an unlinked temporary file and mapped, so a compressed dump is
** indexed like any other without holding it in memory. More than max
** bytes out (a gzip bomb) fails with "too_big".
*/
static int map_inflate (lua_State *L) {
  size_t n;
  const sift_Map *src;
  const unsigned char *p = sift_checksource(L, 1, &n, &src);
  sift_Compression c = sift_compression(p, n);
  sift_Progress progress;
  sift_LuaProgress lp;
  sift_Status s;
  char err[200];
  FILE *tmp;
  lua_Integer max = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, max >= 0, 3, "a limit is not negative");
  sift_progress_lua(L, 2, &lp, &progress, n);
  if (c == SIFT_PLAIN)
    return sift_pushfail(L, SIFT_EUNSUPPORTED, "not gzip or bzip2 data");
  tmp = tmpfile();
  if (tmp == NULL)
    return sift_pushfail(L, SIFT_EIO, "cannot create a temporary file: %s",
                         strerror(errno));
  s = sift_inflate_all(c, p, n, fileno(tmp), &progress, (uint64_t)max, err, sizeof err);
  if (s != SIFT_OK) {
    fclose(tmp);
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err);
  }
  return sift_push_tmpmap(L, tmp);
}


int sift_push_tmpmap (lua_State *L, FILE *tmp) {
  off_t size = lseek(fileno(tmp), 0, SEEK_END);
  void *data = NULL;
  sift_Map *m = (sift_Map *)lua_newuserdatauv(L, sizeof(sift_Map), 0);
  m->data = NULL;
  m->size = 0;
  m->open = 0;
  luaL_setmetatable(L, SIFT_MAP_T);
  if (size > 0) {
    data = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(tmp), 0);
    if (data == MAP_FAILED) {
      int e = errno;
      fclose(tmp);
      return sift_pushfail(L, SIFT_EIO, "cannot map the temporary file: %s", strerror(e));
    }
  }
  fclose(tmp);  /* unlinked: the mapping alone keeps the data */
  m->data = (const unsigned char *)data;
  m->size = size > 0 ? (size_t)size : 0;
  m->open = 1;
  return 1;
}


/* __gc and __close: unmap once; harmless on a closed map */
static int map_close (lua_State *L) {
  sift_Map *m = checkmap(L, 1);
  if (m->open && m->data != NULL)
    munmap((void *)(uintptr_t)m->data, m->size);
  m->data = NULL;
  m->open = 0;
  return 0;
}

static int map_size (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkopenmap(L, 1)->size);
  return 1;
}

/*
** map:read(offset, n) -> string: n bytes from a 0-based offset (fewer at
** the end of the file, "" past it); a copy, for small pieces only.
*/
static int map_read (lua_State *L) {
  sift_Map *m = checkopenmap(L, 1);
  lua_Integer off = luaL_checkinteger(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, off >= 0, 2, "offset must not be negative");
  luaL_argcheck(L, n >= 0, 3, "length must not be negative");
  if ((lua_Unsigned)off >= m->size) {
    lua_pushliteral(L, "");
    return 1;
  }
  if ((lua_Unsigned)n > m->size - (size_t)off) n = (lua_Integer)(m->size - (size_t)off);
  lua_pushlstring(L, (const char *)m->data + off, (size_t)n);
  return 1;
}

static int map_tostring (lua_State *L) {
  sift_Map *m = checkmap(L, 1);
  if (m->open)
    lua_pushfstring(L, SIFT_MAP_T " (%I bytes)", (lua_Integer)m->size);
  else
    lua_pushliteral(L, SIFT_MAP_T " (closed)");
  return 1;
}

static const luaL_Reg map_methods[] = {
  {"size", map_size},
  {"read", map_read},
  {"close", map_close},
  {NULL, NULL}
};

static const luaL_Reg map_metamethods[] = {
  {"__index", NULL},  /* set to the methods below */
  {"__gc", map_close},
  {"__close", map_close},
  {"__tostring", map_tostring},
  {NULL, NULL}
};

static const luaL_Reg map_functions[] = {
  {"map", map_open},
  {"inflate", map_inflate},
  {NULL, NULL}
};


/* expects the module table on top; adds core.map */
void sift_open_map (lua_State *L) {
  sift_newclass(L, SIFT_MAP_T, map_metamethods, map_methods);
  luaL_setfuncs(L, map_functions, 0);
}
