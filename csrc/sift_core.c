/*
** sift_core.c
** luaopen_sift_core: the one C module of sift. It builds the module table
** and the metatables of every userdata type; the types live in their own
** files (lmap.c, lreader.c, lsniff.c).
*/

#define _DEFAULT_SOURCE  /* isatty, ioctl TIOCGWINSZ */

#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lsift.h"

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
** core.hash(s) -> 16 hex digits: FNV-1a, 64 bits. It names a file's
** content (the finance store knows a statement it has imported), it is
** not a defence against someone who crafts collisions.
*/
static int core_hash (lua_State *L) {
  size_t n, i;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  unsigned long long h = 14695981039346656037ULL;  /* the offset basis */
  for (i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ULL;
  }
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", h);
  lua_pushstring(L, hex);
  return 1;
}

static const luaL_Reg core_functions[] = {
  {"isatty", core_isatty},
  {"hash", core_hash},
  {NULL, NULL}
};

SIFT_EXPORT int luaopen_sift_core (lua_State *L);

SIFT_EXPORT int luaopen_sift_core (lua_State *L) {
  luaL_newlib(L, core_functions);
  sift_open_map(L);
  sift_open_reader(L);
  sift_open_sniff(L);
  sift_open_heap(L);
  sift_open_trace(L);
  sift_open_bmd(L);
  sift_open_ofx(L);
  sift_open_sqlite(L);
  sift_open_budget(L);
  lua_pushliteral(L, SIFT_VERSION);
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
