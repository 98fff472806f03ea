/*
** lproc.c
** Processes without a shell: the server starts its `sift worker`s, a
** worker asks whether its parent is still there, and a profile's
** password command runs, each as an argv array handed to posix_spawnp
** (no command line is ever built from a path or a name).
**
**   core.spawn(argv [, opts]) -> pid [, file]: argv = { program, args... }
**     (program searched on PATH when it has no '/'); opts.stdout = a path
**     (appended to, created 0600) or true (a pipe: the file to read it
**     from is the second result); opts.stderr = a path. Otherwise the
**     child shares this process's. Or nil, message, "io".
**   core.wait(pid) -> "exit", status | "signal", number: waits for a child
**     to end; or nil, message, "io"
**   core.kill(pid, signal) -> true, or nil, message, "io": signal is a
**     number (0 asks only whether the process is there) or a name
**     ("TERM", "KILL", "INT", "HUP")
*/

#define _DEFAULT_SOURCE  /* kill, fdopen */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lsift.h"

extern char **environ;

/* the close function of a pipe's file, as liolib's own io_fclose */
static int pipe_fclose (lua_State *L) {
  luaL_Stream *p = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  int ok = fclose(p->f) == 0;
  return luaL_fileresult(L, ok, NULL);
}

/* a pid argument: above 0 (kill and waitpid give 0 and negative numbers
   to process groups, which sift never means) */
static pid_t check_pid (lua_State *L, int arg) {
  lua_Integer pid = luaL_checkinteger(L, arg);
  luaL_argcheck(L, pid > 0 && pid == (lua_Integer)(pid_t)pid, arg, "a process id above 0");
  return (pid_t)pid;
}

/* the strings of the argv table at index 1, as a NULL-ended array kept in
   a userdata on the stack (so an error cannot leak it) */
static char **check_argv (lua_State *L) {
  lua_Integer n, i;
  char **argv;
  luaL_checktype(L, 1, LUA_TTABLE);
  n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n < 4096, 1, "argv: a program and its arguments, as a list of strings");
  argv = (char **)lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *argv, 0);
  for (i = 1; i <= n; i++) {
    size_t len;
    const char *s;
    if (lua_rawgeti(L, 1, i) != LUA_TSTRING)
      luaL_argerror(L, 1, lua_pushfstring(L, "argv[%d] is not a string", (int)i));
    s = lua_tolstring(L, -1, &len);
    if (strlen(s) != len || (i == 1 && len == 0))
      luaL_argerror(L, 1, lua_pushfstring(L, "argv[%d] is empty or holds a zero byte", (int)i));
    argv[i - 1] = (char *)(uintptr_t)s;  /* (anchored by the table; posix_spawnp does not write them) */
    lua_pop(L, 1);
  }
  argv[n] = NULL;
  return argv;
}

/* opts[field] as a path (or NULL); `pipe` says whether true is allowed */
static const char *opt_path (lua_State *L, const char *field, int pipe, int *wants_pipe) {
  const char *path = NULL;
  int t = lua_getfield(L, 2, field);
  if (t == LUA_TSTRING) path = lua_tostring(L, -1);
  else if (pipe && t == LUA_TBOOLEAN && lua_toboolean(L, -1)) *wants_pipe = 1;
  else if (t != LUA_TNIL)
    luaL_argerror(L, 2, lua_pushfstring(L, "opts.%s: a path%s", field, pipe ? " or true (a pipe)" : ""));
  lua_pop(L, 1);  /* (a path stays anchored in opts) */
  return path;
}

static int proc_spawn (lua_State *L) {
  char **argv;
  const char *out = NULL, *err = NULL;
  int wants_pipe = 0, fds[2] = { -1, -1 }, e;
  luaL_Stream *stream = NULL;
  posix_spawn_file_actions_t fa;
  pid_t pid;
  lua_settop(L, 2);  /* argv, opts: the array of argv comes next */
  argv = check_argv(L);
  if (!lua_isnil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    out = opt_path(L, "stdout", 1, &wants_pipe);
    err = opt_path(L, "stderr", 0, NULL);
  }
  if (wants_pipe) {  /* the file first: nothing can fail once the pipe is open */
    stream = (luaL_Stream *)lua_newuserdatauv(L, sizeof(luaL_Stream), 0);
    stream->closef = NULL;  /* closed until it has a FILE */
    luaL_setmetatable(L, LUA_FILEHANDLE);
    if (pipe(fds) != 0) return sift_pushfail(L, SIFT_EIO, "pipe: %s", strerror(errno));
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);  /* the children keep only their dup2'd end */
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  }
  if ((e = posix_spawn_file_actions_init(&fa)) != 0) goto failed;
  if (wants_pipe) e = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  else if (out) e = posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (e == 0 && err) e = posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (e == 0) e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
failed:
  if (wants_pipe) close(fds[1]);
  if (e != 0) {
    if (wants_pipe) close(fds[0]);
    return sift_pushfail(L, SIFT_EIO, "%s: %s", argv[0], strerror(e));
  }
  lua_pushinteger(L, (lua_Integer)pid);
  if (!wants_pipe) return 1;
  stream->f = fdopen(fds[0], "r");
  if (stream->f == NULL) {  /* (the child runs; its output is lost) */
    close(fds[0]);
    return sift_pushfail(L, SIFT_EIO, "fdopen: %s", strerror(errno));
  }
  stream->closef = pipe_fclose;
  lua_pushvalue(L, -2);  /* pid, file */
  return 2;
}

static int proc_wait (lua_State *L) {
  pid_t pid = check_pid(L, 1);
  int status;
  pid_t r;
  do r = waitpid(pid, &status, 0); while (r < 0 && errno == EINTR);
  if (r < 0) return sift_pushfail(L, SIFT_EIO, "process %d: %s", (int)pid, strerror(errno));
  if (WIFEXITED(status)) {
    lua_pushliteral(L, "exit");
    lua_pushinteger(L, WEXITSTATUS(status));
  }
  else {
    lua_pushliteral(L, "signal");
    lua_pushinteger(L, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return 2;
}

static int proc_kill (lua_State *L) {
  static const char *const names[] = { "TERM", "KILL", "INT", "HUP", NULL };
  static const int numbers[] = { SIGTERM, SIGKILL, SIGINT, SIGHUP };
  pid_t pid = check_pid(L, 1);
  int sig;
  if (lua_type(L, 2) == LUA_TSTRING) sig = numbers[luaL_checkoption(L, 2, NULL, names)];
  else {
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, n >= 0 && n < NSIG, 2, "a signal number or name");
    sig = (int)n;
  }
  if (kill(pid, sig) != 0) return sift_pushfail(L, SIFT_EIO, "process %d: %s", (int)pid, strerror(errno));
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg proc_functions[] = {
  {"spawn", proc_spawn},
  {"wait", proc_wait},
  {"kill", proc_kill},
  {NULL, NULL}
};

void sift_open_proc (lua_State *L) {
  luaL_setfuncs(L, proc_functions, 0);
}
