/*
** lbudget.c
** The memory budget of a sift process: core.memory_budget(bytes) makes the
** kernel refuse, beyond it, the private memory a process asks for
** (RLIMIT_DATA: the heap and anonymous mappings, not the read-only mapping
** of the dump), so that an analysis too big for the budget fails with
** "not enough memory" where it allocates, instead of being killed by the
** kernel's out-of-memory killer. core.memory_default() proposes a budget
** from the machine: three quarters of its RAM or of the cgroup's limit.
** core.spill(dir, bytes) sends the big arrays (core/big.h) past `bytes`
** to files in dir, mapped back, so that a dump whose index does not fit
** in the budget still opens.
**
** RLIMIT_DATA is the kernel's, one for the process: it is the ceiling of
** all threads together. The spill threshold and the counts of big arrays
** are each thread's own (core.spill and core.big_usage in one thread do not
** see another's arrays), so sift serve gives each analysis thread its share
** of the budget as that thread's threshold.
*/

#define _DEFAULT_SOURCE

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "big.h"
#include "lsift.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/*
** core.memory_budget(bytes | 0) -> true, or false and why. 0 lifts the
** budget. AddressSanitizer reserves terabytes of shadow memory up front,
** so its builds cannot have one.
*/
#if defined(UNDER_ASAN)
static int core_memory_budget (lua_State *L) {
  luaL_argcheck(L, luaL_checkinteger(L, 1) >= 0, 1, "must not be negative");
  lua_pushboolean(L, 0);
  lua_pushliteral(L, "not under AddressSanitizer");
  return 2;
}
#else
static int core_memory_budget (lua_State *L) {
  lua_Integer bytes = luaL_checkinteger(L, 1);
  struct rlimit rl;
  luaL_argcheck(L, bytes >= 0, 1, "must not be negative");
  if (getrlimit(RLIMIT_DATA, &rl) != 0) return sift_pushfail(L, SIFT_EIO, "getrlimit failed");
  rl.rlim_cur = bytes == 0 ? rl.rlim_max
    : (rl.rlim_max != RLIM_INFINITY && (rlim_t)bytes > rl.rlim_max) ? rl.rlim_max
    : (rlim_t)bytes;
  if (setrlimit(RLIMIT_DATA, &rl) != 0) return sift_pushfail(L, SIFT_EIO, "setrlimit failed");
  lua_pushboolean(L, 1);
  return 1;
}
#endif

/* the first number in a small file, or 0 */
static unsigned long long number_in (const char *path, const char *format) {
  unsigned long long v = 0;
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  if (fscanf(f, format, &v) != 1) v = 0;
  fclose(f);
  return v;
}

/* the smallest memory limit of the cgroup at dir/path and its ancestors
   (file: memory.max in v2, memory.limit_in_bytes in v1), or 0 */
static unsigned long long cgroup_limit (const char *dir, char *path,
                                        const char *file) {
  unsigned long long least = 0;
  char at[4096 + 64];
  for (;;) {
    unsigned long long v;
    char *slash;
    snprintf(at, sizeof at, "%s%s/%s", dir, path, file);
    v = number_in(at, "%llu");  /* ("max" in v2: none) */
    if (v > 0 && (least == 0 || v < least)) least = v;
    if ((slash = strrchr(path, '/')) == NULL) break;
    *slash = '\0';  /* its parent; "" is the root */
  }
  return least;
}

/* the memory limit of the cgroup this process is in (/proc/self/cgroup
   names it: "N:memory:/path" in v1, "0::/path" in v2), or 0 */
static unsigned long long own_cgroup_limit (void) {
  char line[4096];
  unsigned long long least = 0;
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (f == NULL) return 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char *path = strchr(line, ':'), *end;
    unsigned long long v = 0;
    if (path == NULL || (path = strchr(path + 1, ':')) == NULL) continue;
    if ((end = strchr(path, '\n')) != NULL) *end = '\0';
    if (strncmp(line, "0::", 3) == 0)
      v = cgroup_limit("/sys/fs/cgroup", path + 1, "memory.max");
    else if (strstr(line, ":memory:") != NULL)
      v = cgroup_limit("/sys/fs/cgroup/memory", path + 1, "memory.limit_in_bytes");
    if (v > 0 && (least == 0 || v < least)) least = v;
  }
  fclose(f);
  return least;
}

/* core.memory_default() -> bytes: 3/4 of the RAM, or of a smaller limit of
   the cgroup the process is in */
static int core_memory_default (lua_State *L) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  unsigned long long ram = pages > 0 && size > 0
                         ? (unsigned long long)pages * (unsigned long long)size : 0;
  unsigned long long cg = own_cgroup_limit();
  if (cg > 0 && (ram == 0 || cg < ram)) ram = cg;
  lua_pushinteger(L, (lua_Integer)(ram / 4 * 3));
  return 1;
}

/*
** core.spill(dir | nil [, bytes]): once the big arrays in memory would pass
** bytes, new ones are files in dir (unlinked at once, mapped back); also
** when memory runs out before. nil: never spill. For the calling thread.
*/
static int core_spill (lua_State *L) {
  const char *dir = luaL_optstring(L, 1, NULL);
  lua_Integer bytes = luaL_optinteger(L, 2, 0);
  luaL_argcheck(L, bytes >= 0, 2, "must not be negative");
  luaL_argcheck(L, dir == NULL || strlen(dir) < 4000, 1, "directory name too long");
  sift_big_spill(dir, (uint64_t)bytes);
  return 0;
}

/* core.spilling() -> dir, bytes (or nil, bytes): the calling thread's
   core.spill setting, for a thread it starts */
static int core_spilling (lua_State *L) {
  uint64_t bytes;
  const char *dir = sift_big_spilling(&bytes);
  if (dir != NULL) lua_pushstring(L, dir);
  else lua_pushnil(L);
  lua_pushinteger(L, (lua_Integer)bytes);
  return 2;
}

/* core.big_usage() -> { memory, memory_peak, spilled, spilled_peak }:
   bytes of the big arrays the calling thread holds in memory and in spill
   files, and the most ever of each */
static int core_big_usage (lua_State *L) {
  uint64_t memory, memory_peak, spilled, peak;
  sift_big_usage(&memory, &memory_peak, &spilled, &peak);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)memory);
  lua_setfield(L, -2, "memory");
  lua_pushinteger(L, (lua_Integer)memory_peak);
  lua_setfield(L, -2, "memory_peak");
  lua_pushinteger(L, (lua_Integer)spilled);
  lua_setfield(L, -2, "spilled");
  lua_pushinteger(L, (lua_Integer)peak);
  lua_setfield(L, -2, "spilled_peak");
  return 1;
}

static const luaL_Reg budget_functions[] = {
  {"spill", core_spill},
  {"spilling", core_spilling},
  {"big_usage", core_big_usage},
  {"memory_budget", core_memory_budget},
  {"memory_default", core_memory_default},
  {NULL, NULL}
};

void sift_open_budget (lua_State *L) {
  luaL_setfuncs(L, budget_functions, 0);
}
