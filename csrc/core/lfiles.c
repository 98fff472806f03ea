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
  {"setenv", files_setenv},
  {NULL, NULL}
};

void sift_open_files (lua_State *L) {
  luaL_setfuncs(L, files_functions, 0);
}
