/*
** lfiles.c
** What a server needs of the file system to keep its files private,
** without a shell: the process's umask, a path's owner and mode, a
** group's id, changing a path's group and mode, and a directory's names.
**
**   core.umask(mask) -> the mask before
**   core.stat(path) -> { uid=, gid=, mode= (permission bits), dir= }, or nil, message, "io"
**   core.euid() -> the effective user id
**   core.group(name) -> gid, or nil, message
**   core.chown_group(path, gid) -> true, or nil, message, "io"
**   core.chmod(path, mode) -> true, or nil, message, "io"
**   core.listdir(path) -> { names... } (not . and ..), or nil, message, "io"
**   core.mkdir(path [, mode]) -> true, or nil, message, "io": one
**     directory (mode 0700 unless told, less the umask); its parent must exist
**   core.dir(path) -> { paths... } of the regular files under path, at any
**     depth, sorted bytewise (as `find path -type f | LC_ALL=C sort`; links
**     are not followed), and { messages... } of the subdirectories that
**     could not be read; or nil, message, "io" when path cannot be read
**   core.setenv(name, value) -> nothing: for the processes this one starts
**     (a secret in their environment, not on a command line ps shows)
*/

#define _DEFAULT_SOURCE  /* dirent, getgrnam_r */

#include <dirent.h>
#include <stdlib.h>
#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lsift.h"

static int files_umask (lua_State *L) {
  lua_Integer mask = luaL_checkinteger(L, 1);
  luaL_argcheck(L, mask >= 0 && mask <= 0777, 1, "a mask between 0 and 0777");
  lua_pushinteger(L, (lua_Integer)umask((mode_t)mask));
  return 1;
}

static int files_stat (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct stat st;
  if (stat(path, &st) != 0) return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)st.st_uid);
  lua_setfield(L, -2, "uid");
  lua_pushinteger(L, (lua_Integer)st.st_gid);
  lua_setfield(L, -2, "gid");
  lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
  lua_setfield(L, -2, "mode");
  lua_pushboolean(L, S_ISDIR(st.st_mode));
  lua_setfield(L, -2, "dir");
  return 1;
}

static int files_euid (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)geteuid());
  return 1;
}

static int files_group (lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  struct group gr, *found = NULL;
  char buf[16384];
  int e = getgrnam_r(name, &gr, buf, sizeof buf, &found);
  if (found == NULL) {
    lua_pushnil(L);
    lua_pushfstring(L, "no group %s%s%s", name, e ? ": " : "", e ? strerror(e) : "");
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)found->gr_gid);
  return 1;
}

static int files_chown_group (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer gid = luaL_checkinteger(L, 2);
  if (chown(path, (uid_t)-1, (gid_t)gid) != 0)
    return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

static int files_chmod (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer mode = luaL_checkinteger(L, 2);
  luaL_argcheck(L, mode >= 0 && mode <= 07777, 2, "a mode between 0 and 07777");
  if (chmod(path, (mode_t)mode) != 0) return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

static int files_listdir (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct dirent *e;
  lua_Integer n = 0;
  DIR *d = opendir(path);
  if (d == NULL) return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  lua_newtable(L);
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(d);
  return 1;
}

static int files_mkdir (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer mode = luaL_optinteger(L, 2, 0700);
  luaL_argcheck(L, mode >= 0 && mode <= 07777, 2, "a mode between 0 and 07777");
  if (mkdir(path, (mode_t)mode) != 0) return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

/*
** The walk of core.dir. An open DIR lives in a box with __gc, so a memory
** error while names are pushed (a longjmp) cannot leak it. The directories
** still to read are a Lua table used as a queue; the files found, a table
** sorted at the end through an array of sift_Key (sift_keycmp, bytewise).
*/
typedef struct DirBox {
  DIR *d;  /* NULL once closed */
} DirBox;

static int dirbox_gc (lua_State *L) {
  DirBox *b = (DirBox *)luaL_checkudata(L, 1, SIFT_DIRBOX_T);
  if (b->d != NULL) closedir(b->d);
  b->d = NULL;
  return 0;
}

/* reads directory `path` (DirBox at index box): its subdirectories are
   appended to the queue at index queue, its regular files to the table at
   index files. Returns 0, or errno when it cannot be opened. */
static int walk_one (lua_State *L, const char *path, int box, int queue, int files) {
  DirBox *b = (DirBox *)lua_touserdata(L, box);
  struct dirent *e;
  struct stat st;
  b->d = opendir(path);
  if (b->d == NULL) return errno;
  while ((e = readdir(b->d)) != NULL) {
    const char *full;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    full = lua_pushfstring(L, "%s/%s", path, e->d_name);
    if (lstat(full, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      int t = S_ISDIR(st.st_mode) ? queue : files;
      lua_rawseti(L, t, (lua_Integer)lua_rawlen(L, t) + 1);
    }
    else
      lua_pop(L, 1);  /* a link, a device, or gone meanwhile */
  }
  closedir(b->d);
  b->d = NULL;
  return 0;
}

static int files_dir (lua_State *L) {
  size_t n, i, nfiles;
  const char *path = luaL_checklstring(L, 1, &n);
  lua_Integer next = 1;
  sift_Key *keys;
  int e;
  luaL_argcheck(L, n > 0, 1, "a directory name");
  while (n > 1 && path[n - 1] == '/') n--;  /* "dir/" walks as "dir" */
  lua_settop(L, 0);
  lua_pushlstring(L, path, n);                          /* 1: the top directory */
  *(DirBox *)lua_newuserdatauv(L, sizeof(DirBox), 0) = (DirBox){ NULL };  /* 2 */
  luaL_setmetatable(L, SIFT_DIRBOX_T);
  lua_newtable(L);                                      /* 3: the queue */
  lua_newtable(L);                                      /* 4: the files */
  lua_newtable(L);                                      /* 5: the unreadable */
  e = walk_one(L, lua_tostring(L, 1), 2, 3, 4);
  if (e != 0) return sift_pushfail(L, SIFT_EIO, "%s: %s", lua_tostring(L, 1), strerror(e));
  while ((size_t)next <= lua_rawlen(L, 3)) {
    lua_rawgeti(L, 3, next++);
    e = walk_one(L, lua_tostring(L, -1), 2, 3, 4);
    if (e != 0) {
      lua_pushfstring(L, "%s: %s", lua_tostring(L, -1), strerror(e));
      lua_rawseti(L, 5, (lua_Integer)lua_rawlen(L, 5) + 1);
    }
    lua_pop(L, 1);
  }
  nfiles = lua_rawlen(L, 4);
  keys = (sift_Key *)lua_newuserdatauv(L, (nfiles > 0 ? nfiles : 1) * sizeof *keys, 0);  /* 6 */
  for (i = 0; i < nfiles; i++) {
    lua_rawgeti(L, 4, (lua_Integer)i + 1);
    keys[i].s = lua_tolstring(L, -1, &keys[i].n);  /* (kept alive by table 4) */
    lua_pop(L, 1);
  }
  qsort(keys, nfiles, sizeof *keys, sift_keycmp);
  lua_createtable(L, (int)nfiles, 0);
  for (i = 0; i < nfiles; i++) {
    lua_pushlstring(L, keys[i].s, keys[i].n);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushvalue(L, 5);
  return 2;
}

static int files_setenv (lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const char *value = luaL_checkstring(L, 2);
  luaL_argcheck(L, name[0] != '\0' && strchr(name, '=') == NULL, 1, "not a variable name");
  if (setenv(name, value, 1) != 0) return luaL_error(L, "setenv: %s", strerror(errno));
  return 0;
}

static const luaL_Reg files_functions[] = {
  {"umask", files_umask},
  {"stat", files_stat},
  {"euid", files_euid},
  {"group", files_group},
  {"chown_group", files_chown_group},
  {"chmod", files_chmod},
  {"listdir", files_listdir},
  {"mkdir", files_mkdir},
  {"dir", files_dir},
  {"setenv", files_setenv},
  {NULL, NULL}
};

void sift_open_files (lua_State *L) {
  luaL_newmetatable(L, SIFT_DIRBOX_T);
  lua_pushcfunction(L, dirbox_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_setfuncs(L, files_functions, 0);
}
