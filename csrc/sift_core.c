/*
** sift_core.c
** luaopen_sift_core: the one C module of sift. It builds the module table
** and the metatables of every userdata type; the types live in their own
** files (lmap.c, lreader.c, lsniff.c).
*/

#define _DEFAULT_SOURCE  /* isatty, ioctl TIOCGWINSZ */

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

static const luaL_Reg core_functions[] = {
  {"isatty", core_isatty},
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
  lua_pushliteral(L, SIFT_VERSION);
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
