/*
** sift_core.c
** luaopen_sift_core: the one C module of sift. It builds the module table
** and the metatables of every userdata type; the types live in their own
** files, one folder per domain (core/, heap/, trace/, ofx/, finance/).
*/

#define _DEFAULT_SOURCE  /* isatty, ioctl TIOCGWINSZ, fchmod */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "core/lsift.h"
#include "heap/lheap.h"

/*
** core.isatty(fd) -> boolean, columns
** Whether descriptor fd (0, 1, 2) is a terminal, and its width if known;
** the CLI draws progress bars only on a terminal.
*/
static int core_isatty (lua_State *L) {
  int fd = (int)luaL_checkinteger(L, 1);
  struct winsize ws;
  int tty = isatty(fd);
  lua_pushboolean(L, tty);
  if (tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    lua_pushinteger(L, ws.ws_col);
  else
    lua_pushnil(L);
  return 2;
}

/*
** core.echo(file, on) -> whether it echoed before: the terminal `file` (an
** io file, /dev/tty) echoes what is typed or not, as `stty -echo` does,
** for a password; or nil, message, "io" when it is no terminal.
*/
static int core_echo (lua_State *L) {
  luaL_Stream *p = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  int on, fd;
  struct termios t;
  luaL_checktype(L, 2, LUA_TBOOLEAN);
  on = lua_toboolean(L, 2);
  luaL_argcheck(L, p->closef != NULL, 1, "attempt to use a closed file");
  fd = fileno(p->f);
  if (tcgetattr(fd, &t) != 0) return sift_pushfail(L, SIFT_EIO, "not a terminal: %s", strerror(errno));
  lua_pushboolean(L, (t.c_lflag & ECHO) != 0);
  if (on) t.c_lflag |= ECHO;
  else t.c_lflag &= ~(tcflag_t)ECHO;
  if (tcsetattr(fd, TCSANOW, &t) != 0) return sift_pushfail(L, SIFT_EIO, "terminal: %s", strerror(errno));
  return 1;
}

/*
** core.hash(s) -> 16 hex digits: FNV-1a, 64 bits. It names a file's
** content (the finance store knows a statement it has imported), it is
** not a defence against someone who crafts collisions.
*/
static int core_hash (lua_State *L) {
  size_t n, i;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  unsigned long long h = 14695981039346656037ULL;  /* the offset basis */
  char hex[17];
  for (i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ULL;
  }
  snprintf(hex, sizeof hex, "%016llx", h);
  lua_pushstring(L, hex);
  return 1;
}

/*
** core.private(path [, "dir"]) -> true, or nil and why: make sure a file
** (or, with "dir", a directory and its parents) exists that only its owner
** can read and write (0600; directories 0700). A file created here is
** empty; one that was there keeps its bytes and is made 0600. Files that
** hold financial data are created this way before they are opened; SQLite
** gives a database's -wal and -shm files the database's own mode.
*/
static int core_private (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int dir = lua_isstring(L, 2) && strcmp(lua_tostring(L, 2), "dir") == 0;
  if (dir) {
    char buf[4096];
    size_t i, n = strlen(path);
    if (n == 0 || n >= sizeof buf) return luaL_error(L, "bad directory name");
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++)  /* each parent, then the directory */
      if (buf[i] == '/' || buf[i] == '\0') {
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
          return sift_pushfail(L, SIFT_EIO, "%s: %s", buf, strerror(errno));
        buf[i] = c;
      }
  }
  else {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
    if (fchmod(fd, 0600) != 0) {
      close(fd);
      return sift_pushfail(L, SIFT_EIO, "%s: %s", path, strerror(errno));
    }
    close(fd);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg core_functions[] = {
  {"isatty", core_isatty},
  {"echo", core_echo},
  {"hash", core_hash},
  {"private", core_private},
  {NULL, NULL}
};

SIFT_EXPORT int luaopen_sift_core (lua_State *L);

SIFT_EXPORT int luaopen_sift_core (lua_State *L) {
  luaL_newlib(L, core_functions);
  sift_open_map(L);
  sift_open_reader(L);
  sift_open_sniff(L);
  sift_open_heap(L);  /* sift.Heap, then its methods from each file */
  sift_open_heap_values(L);
  sift_open_heap_passes(L);
  sift_open_heap_graph(L);
  sift_open_heap_paths(L);
  sift_open_heap_dominators(L);
  sift_open_heap_waste(L);
  sift_open_heap_bitmaps(L);
  sift_open_trace(L);
  sift_open_bmd(L);
  sift_open_ofx(L);
  sift_open_sqlite(L);
  sift_open_budget(L);
  sift_open_files(L);
  sift_open_proc(L);
  sift_open_json(L);
  sift_open_bytecode(L);
  lua_pushliteral(L, SIFT_VERSION);
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
