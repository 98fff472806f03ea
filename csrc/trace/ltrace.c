/*
** sift.Trace: an Android method trace with its call trees, for Lua.
** Node and method numbers are 1-based on the Lua side.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#include "core/lsift.h"
#include "calls.h"
#include "trace.h"

typedef struct LTrace {
  mt_Trace t;
  int built;
} LTrace;

static mt_Trace *checktrace (lua_State *L) {
  LTrace *lt = (LTrace *)luaL_checkudata(L, 1, SIFT_TRACE_T);
  luaL_argcheck(L, lt->built, 1, "trace is closed");
  return &lt->t;
}

#define SETINT(key, v) \
  (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, key))

/* core.trace(source [, progress]) -> trace | nil, message, code */
static int trace_open (lua_State *L) {
  size_t n;
  const sift_Map *map;
  const unsigned char *p = sift_checksource(L, 1, &n, &map);
  sift_Progress progress;
  sift_LuaProgress lp;
  LTrace *lt;
  sift_Error err;
  sift_Status s;
  sift_progress_lua(L, 2, &lp, &progress, 0);
  lt = (LTrace *)lua_newuserdatauv(L, sizeof(LTrace), 1);
  memset(lt, 0, sizeof *lt);
  luaL_setmetatable(L, SIFT_TRACE_T);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  lt->built = 1;
  s = mt_build(&lt->t, p, n, map != NULL, &progress, &err);
  if (s != SIFT_OK) {
    mt_free(&lt->t);
    lt->built = 0;
    sift_progress_rethrow(&lp);
    return sift_pushfail(L, s, "%s", err.msg);
  }
  return 1;
}

static int trace_close (lua_State *L) {
  LTrace *lt = (LTrace *)luaL_checkudata(L, 1, SIFT_TRACE_T);
  if (lt->built) mt_free(&lt->t);
  lt->built = 0;
  lua_pushnil(L);
  lua_setiuservalue(L, 1, 1);
  return 0;
}

/* trace:info() -> the binary layout and the counts */
static int trace_info (lua_State *L) {
  mt_Trace *t = checktrace(L);
  lua_createtable(L, 0, 12);
  SETINT("version", t->version);
  lua_pushboolean(L, t->streaming);
  lua_setfield(L, -2, "streaming");
  lua_pushstring(L, t->dual ? "dual" : t->clock == MT_WALL ? "wall" : "thread-cpu");
  lua_setfield(L, -2, "clock");
  SETINT("record_size", t->recsize);
  SETINT("data_offset", t->data);
  SETINT("start_us", t->start_us);
  SETINT("records", t->records);
  SETINT("threads", t->nthreads);
  SETINT("methods", t->nmethods - t->unknown);
  SETINT("unknown_methods", t->unknown);
  SETINT("orphan_exits", t->orphans);
  SETINT("mismatched_exits", t->anomalies);
  SETINT("nodes", t->nnodes);
  return 1;
}

/* trace:header() -> the text block (a streaming file's summary) */
static int trace_header (lua_State *L) {
  mt_Trace *t = checktrace(L);
  lua_pushlstring(L, t->header ? t->header : "", t->headerlen);
  return 1;
}

static void push_field (lua_State *L, const mt_Method *m, int k, const char *key) {
  const char *s;
  size_t len = mt_method_field(m, k, &s);
  if (len == 0) return;
  lua_pushlstring(L, s, len);
  lua_setfield(L, -2, key);
}

static void push_times (lua_State *L, const uint64_t incl[2], const uint64_t excl[2]) {
  SETINT("cpu_incl", incl[MT_CPU]);
  SETINT("cpu_excl", excl[MT_CPU]);
  SETINT("wall_incl", incl[MT_WALL]);
  SETINT("wall_excl", excl[MT_WALL]);
}

/* trace:methods() -> { {id, class, name, signature, source, line, calls,
   recursive_calls, cpu_incl, cpu_excl, wall_incl, wall_excl}... } */
static int trace_methods (lua_State *L) {
  mt_Trace *t = checktrace(L);
  uint32_t i;
  lua_createtable(L, (int)t->nmethods, 0);
  for (i = 0; i < t->nmethods; i++) {
    const mt_Method *m = &t->methods[i];
    lua_createtable(L, 0, 12);
    SETINT("id", m->id);
    push_field(L, m, 0, "class");
    push_field(L, m, 1, "name");
    push_field(L, m, 2, "signature");
    push_field(L, m, 3, "source");
    push_field(L, m, 4, "line");
    SETINT("calls", m->calls);
    SETINT("recursive_calls", m->recursive);
    push_times(L, m->incl, m->excl);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* trace:threads() -> { {tid, name, records, root, cpu, wall}... } */
static int trace_threads (lua_State *L) {
  mt_Trace *t = checktrace(L);
  uint32_t i;
  lua_createtable(L, (int)t->nthreads, 0);
  for (i = 0; i < t->nthreads; i++) {
    const mt_Thread *th = &t->threads[i];
    lua_createtable(L, 0, 6);
    SETINT("tid", th->tid);
    if (th->name) {
      lua_pushlstring(L, th->name, th->namelen);
      lua_setfield(L, -2, "name");
    }
    SETINT("records", th->records);
    SETINT("root", th->root + 1);
    SETINT("cpu", th->last[MT_CPU] - th->first[MT_CPU]);
    SETINT("wall", th->last[MT_WALL] - th->first[MT_WALL]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static uint32_t checknode (lua_State *L, const mt_Trace *t, int arg) {
  lua_Integer i = luaL_checkinteger(L, arg);
  luaL_argcheck(L, i >= 1 && (lua_Unsigned)i <= t->nnodes, arg, "no such node");
  return (uint32_t)(i - 1);
}

/* trace:node(i) -> {method, calls, cpu_incl, ...} (method nil for
   a thread's root) */
static int trace_node (lua_State *L) {
  mt_Trace *t = checktrace(L);
  const mt_Node *nd = &t->nodes[checknode(L, t, 2)];
  lua_createtable(L, 0, 6);
  if (nd->method != MT_NONE) SETINT("method", nd->method + 1);
  SETINT("calls", nd->calls);
  push_times(L, nd->incl, nd->excl);
  return 1;
}

/* trace:children(i) -> node numbers, most inclusive CPU time first */
static int trace_children (lua_State *L) {
  mt_Trace *t = checktrace(L);
  uint32_t k = t->nodes[checknode(L, t, 2)].child;
  lua_Integer n = 0;
  lua_newtable(L);
  for (; k != MT_NONE; k = t->nodes[k].next) {
    lua_pushinteger(L, (lua_Integer)k + 1);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* a growable byte buffer in C memory (the walk below keeps the Lua stack
   free of buffer boxes) */
typedef struct Bytes {
  char *p;
  size_t n, cap;
} Bytes;

static int put (Bytes *b, const char *s, size_t len) {
  if (b->cap - b->n < len) {
    size_t ncap = b->cap ? b->cap : 256;
    char *np;
    while (ncap - b->n < len) {
      if (ncap > SIZE_MAX / 2) return 0;
      ncap *= 2;
    }
    if ((np = (char *)realloc(b->p, ncap)) == NULL) return 0;
    b->p = np;
    b->cap = ncap;
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  return 1;
}

/* a frame's name: the class (slashes as dots), a dot, the method */
static int put_frame (Bytes *b, const mt_Method *m) {
  const char *s;
  size_t len = mt_method_field(m, 0, &s), start = b->n, i;
  char id[32];
  if (len == 0) {
    snprintf(id, sizeof id, "unknown@%#llx", (unsigned long long)m->id);
    return put(b, id, strlen(id));
  }
  if (!put(b, s, len)) return 0;
  for (i = start; i < b->n; i++)
    if (b->p[i] == '/') b->p[i] = '.';
  len = mt_method_field(m, 1, &s);
  return put(b, ".", 1) && put(b, s, len);
}

/*
** trace:fold(root, clock [, label [, skip]]) -> folded stacks of the tree
** under a root, one line per node with self time: "a;b;c 123". label is
** the first frame; skip (a table: method number -> true) names methods
** whose frames fold into their caller. With a Lua file as sixth argument
** the lines go to it as they come, and the result is true. With collapse
** (seventh) true, a frame that calls its own method folds into it
** (recursion shown once). With max_depth (eighth, 0: none), a stack
** deeper than that many frames ends in one frame "[… N frames]" holding
** the N calls below and all their time, so that output grows with the
** number of calls, not with their square.
*/

/* a fold line: path, then " count\n"; written out when the buffer is big */
static int fold_line (Bytes *out, const Bytes *path, uint64_t count, FILE *f) {
  char num[32];
  snprintf(num, sizeof num, " %llu\n", (unsigned long long)count);
  if (!put(out, path->p, path->n) || !put(out, num, strlen(num))) return 0;
  if (f && out->n >= (1u << 20)) {
    if (fwrite(out->p, 1, out->n, f) != out->n) return 0;
    out->n = 0;
  }
  return 1;
}

static int trace_fold (lua_State *L) {
  static const char *const clocks[] = {"cpu", "wall", NULL};
  mt_Trace *t = checktrace(L);
  uint32_t root = checknode(L, t, 2), k = root;
  int clock = luaL_checkoption(L, 3, "cpu", clocks);
  size_t labellen = 0;
  const char *label = luaL_optlstring(L, 4, NULL, &labellen);
  int skip = !lua_isnoneornil(L, 5), ok = 1;
  luaL_Stream *file = (luaL_Stream *)luaL_testudata(L, 6, LUA_FILEHANDLE);
  int collapse = lua_toboolean(L, 7);
  lua_Integer max_depth = luaL_optinteger(L, 8, 0);
  FILE *f = file ? file->f : NULL;
  Bytes out = {NULL, 0, 0}, path = {NULL, 0, 0};
  uint32_t *stack = NULL;   /* stack[d]: the node at depth d */
  uint32_t *last = NULL;    /* last[d]: the method of the path's last frame there */
  size_t *ends = NULL;      /* ends[d]: the path's length there */
  size_t *frames = NULL;    /* frames[d]: how many frames the path has there */
  size_t depth = 0, cap = 0;
  size_t cut = (size_t)-1;  /* the depth of a stack cut at max_depth, while under it */
  uint64_t cut_calls = 0;
  if (skip) luaL_checktype(L, 5, LUA_TTABLE);
  if (label) ok = put(&path, label, labellen);
  while (ok) {  /* preorder walk */
    const mt_Node *nd = &t->nodes[k];
    int hidden = 0;
    if (depth == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      uint32_t *ns = (uint32_t *)realloc(stack, ncap * sizeof *ns), *nl = NULL;
      size_t *ne = ns ? (size_t *)realloc(ends, ncap * sizeof *ne) : NULL, *nf = NULL;
      if (ns) stack = ns;
      if (ne) ends = ne;
      if (ne) nf = (size_t *)realloc(frames, ncap * sizeof *nf);
      if (nf) frames = nf;
      if (nf) nl = (uint32_t *)realloc(last, ncap * sizeof *nl);
      if (nl == NULL) { ok = 0; break; }
      last = nl;
      cap = ncap;
    }
    stack[depth] = k;
    if (cut != (size_t)-1) cut_calls++;  /* under a cut: counted, not written */
    else {
      path.n = depth > 0 ? ends[depth - 1] : (label ? labellen : 0);
      frames[depth] = depth > 0 ? frames[depth - 1] : 0;
      if (nd->method != MT_NONE && skip) {
        lua_rawgeti(L, 5, (lua_Integer)nd->method + 1);
        hidden = lua_toboolean(L, -1);
        lua_pop(L, 1);
      }
      last[depth] = depth > 0 ? last[depth - 1] : MT_NONE;
      if (collapse && nd->method != MT_NONE && nd->method == last[depth]) hidden = 1;
      if (nd->method != MT_NONE && !hidden && max_depth > 0 && frames[depth] >= (size_t)max_depth) {
        cut = depth;  /* this call and everything under it: one frame */
        cut_calls = 1;
      }
      else {
        if (nd->method != MT_NONE && !hidden) {
          ok = (path.n == 0 || put(&path, ";", 1)) && put_frame(&path, &t->methods[nd->method]);
          last[depth] = nd->method;
          frames[depth]++;
        }
        ends[depth] = path.n;
        if (ok && nd->excl[clock] > 0 && path.n > 0) ok = fold_line(&out, &path, nd->excl[clock], f);
      }
    }
    if (ok && nd->child != MT_NONE) {
      k = nd->child;
      depth++;
      continue;
    }
    while (depth > 0 && t->nodes[stack[depth]].next == MT_NONE) {
      if (depth == cut) break;
      depth--;
    }
    if (ok && depth == cut) {  /* the cut call's subtree is done: its line */
      char frame[64];
      const mt_Node *c = &t->nodes[stack[cut]];
      int n = snprintf(frame, sizeof frame, "[… %llu frames]", (unsigned long long)cut_calls);
      path.n = ends[cut - 1];
      ok = (path.n == 0 || put(&path, ";", 1)) && put(&path, frame, (size_t)n);
      if (ok && c->incl[clock] > 0) ok = fold_line(&out, &path, c->incl[clock], f);
      cut = (size_t)-1;
      while (depth > 0 && t->nodes[stack[depth]].next == MT_NONE) depth--;
    }
    if (depth == 0) break;
    k = t->nodes[stack[depth]].next;
  }
  free(stack);
  free(ends);
  free(frames);
  free(last);
  free(path.p);
  if (ok && f && out.n > 0) ok = fwrite(out.p, 1, out.n, f) == out.n;
  if (!ok) {
    free(out.p);
    return luaL_error(L, file ? "fold: cannot write the file" : "fold: out of memory");
  }
  if (file) lua_pushboolean(L, 1);
  else lua_pushlstring(L, out.p ? out.p : "", out.n);
  free(out.p);
  return 1;
}

typedef struct Events {
  lua_State *L;
  lua_Integer n, limit;
  int clock;  /* -1: no times */
} Events;

/* stack: events table, [times table] */
static int add_event (void *ud, uint32_t method, int action, const uint64_t now[2]) {
  Events *e = (Events *)ud;
  lua_Integer m = (lua_Integer)method + 1;
  e->n++;
  lua_pushinteger(e->L, action == 0 ? m : -m);
  lua_rawseti(e->L, e->clock < 0 ? -2 : -3, e->n);
  if (e->clock >= 0) {
    lua_pushinteger(e->L, (lua_Integer)now[e->clock]);
    lua_rawseti(e->L, -2, e->n);
  }
  return e->limit <= 0 || e->n < e->limit;
}

/* trace:events(tid [, limit [, clock]]) -> the thread's records in order:
   a method number for an entry, its negative for an exit; with a clock
   ("cpu" | "wall"), also their times */
static int trace_events (lua_State *L) {
  static const char *const clocks[] = {"cpu", "wall", NULL};
  mt_Trace *t = checktrace(L);
  lua_Integer tid = luaL_checkinteger(L, 2);
  Events e;
  e.L = L;
  e.n = 0;
  e.limit = luaL_optinteger(L, 3, 0);
  e.clock = lua_isnoneornil(L, 4) ? -1 : luaL_checkoption(L, 4, NULL, clocks);
  luaL_argcheck(L, tid >= 0 && tid <= 0xFFFF, 2, "thread ids are 0-65535");
  lua_newtable(L);
  if (e.clock >= 0) lua_newtable(L);
  mt_each_record(t, (uint32_t)tid, add_event, &e);
  return e.clock >= 0 ? 2 : 1;
}

/*
** trace:pruned(root, clock, min [, max_depth]) -> depths, methods, values:
** the tree under a root in preorder without the nodes (and their
** subtrees) whose inclusive time is under min; depth 0 is the root, whose
** value is its own time plus its children's. Below max_depth (0: none)
** nothing is listed but, under each node there, one entry of method 0
** holding the time of all the calls below it.
*/
static int trace_pruned (lua_State *L) {
  static const char *const clocks[] = {"cpu", "wall", NULL};
  mt_Trace *t = checktrace(L);
  uint32_t root = checknode(L, t, 2), k;
  int clock = luaL_checkoption(L, 3, NULL, clocks);
  uint64_t min = (uint64_t)luaL_checkinteger(L, 4), rootv;
  lua_Integer max_depth = luaL_optinteger(L, 5, 0);
  uint32_t *stack = NULL;
  size_t depth = 0, cap = 0;
  lua_Integer n = 0;
  rootv = t->nodes[root].excl[clock];
  for (k = t->nodes[root].child; k != MT_NONE; k = t->nodes[k].next) rootv += t->nodes[k].incl[clock];
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 0);
  lua_createtable(L, 0, 0);
#define EMIT(d, m, v) \
  (n++, lua_pushinteger(L, (lua_Integer)(d)), lua_rawseti(L, -4, n), \
   lua_pushinteger(L, (lua_Integer)(m)), lua_rawseti(L, -3, n), \
   lua_pushinteger(L, (lua_Integer)(v)), lua_rawseti(L, -2, n))
  EMIT(0, 0, rootv);
  /* walk: stack[d] is the node at depth d + 1 being visited */
  k = t->nodes[root].child;
  for (;;) {
    while (k != MT_NONE && t->nodes[k].incl[clock] < min) k = t->nodes[k].next;
    if (k != MT_NONE) {
      if (depth == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        uint32_t *ns = (uint32_t *)realloc(stack, ncap * sizeof *ns);
        if (ns == NULL) {
          free(stack);
          return luaL_error(L, "pruned: out of memory");
        }
        stack = ns;
        cap = ncap;
      }
      stack[depth++] = k;
      EMIT(depth, t->nodes[k].method + 1, t->nodes[k].incl[clock]);
      if (max_depth > 0 && depth >= (size_t)max_depth) {  /* the calls below: one entry */
        uint64_t below = t->nodes[k].incl[clock] - t->nodes[k].excl[clock];
        if (below >= min && below > 0) EMIT(depth + 1, 0, below);
        k = MT_NONE;
      }
      else k = t->nodes[k].child;
      continue;
    }
    if (depth == 0) break;
    k = t->nodes[stack[--depth]].next;
  }
#undef EMIT
  free(stack);
  return 3;
}

/*
** {======================================================
** Call instances (sift calls)
** =======================================================
*/

static mt_Calls *checkcalls (lua_State *L) {
  mt_Calls *c = (mt_Calls *)luaL_checkudata(L, 1, SIFT_CALLS_T);
  luaL_argcheck(L, c->method != NULL, 1, "call tree is closed");
  return c;
}

/*
** trace:call_tree(tid [, hidden [, depth_limit]]) -> sift.CallTree: the
** thread's call instances (a method number in hidden, a table, gives its
** calls to its caller), each subtree numbered by its shape to depth_limit
** levels. 20 bytes a call, in C.
*/
static int trace_call_tree (lua_State *L) {
  mt_Trace *t = checktrace(L);
  lua_Integer tid = luaL_checkinteger(L, 2);
  lua_Integer limit = luaL_optinteger(L, 4, UINT32_MAX);
  uint8_t *visible = NULL;
  mt_Calls *c;
  sift_Status s;
  luaL_argcheck(L, tid >= 0 && tid <= 0xFFFF, 2, "thread ids are 0-65535");
  if (!lua_isnoneornil(L, 3)) {  /* the methods to hide, 1-based */
    uint32_t m;
    luaL_checktype(L, 3, LUA_TTABLE);
    visible = (uint8_t *)lua_newuserdatauv(L, t->nmethods + 1, 0);
    for (m = 0; m < t->nmethods; m++) {
      lua_rawgeti(L, 3, (lua_Integer)m + 1);
      visible[m] = !lua_toboolean(L, -1);
      lua_pop(L, 1);
    }
  }
  c = (mt_Calls *)lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  luaL_setmetatable(L, SIFT_CALLS_T);
  s = mt_calls_build(c, t, (uint32_t)tid, visible);
  if (s == SIFT_OK) s = mt_calls_shapes(c, limit < 0 ? 0 : limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit);
  if (s != SIFT_OK) return luaL_error(L, "not enough memory for the call tree");
  return 1;
}

/* tree:children(node) -> nodes, methods (1-based), shapes of node's
   children (node 0: the thread's root) */
static int calls_children (lua_State *L) {
  mt_Calls *c = checkcalls(L);
  lua_Integer node = luaL_checkinteger(L, 2), n = 0;
  uint32_t x;
  luaL_argcheck(L, node >= 0 && node < (lua_Integer)c->n, 2, "no such node");
  lua_createtable(L, 4, 0);
  lua_createtable(L, 4, 0);
  lua_createtable(L, 4, 0);
  for (x = c->first[node]; x != MT_NONE; x = c->next[x]) {
    n++;
    lua_pushinteger(L, x);
    lua_rawseti(L, -4, n);
    lua_pushinteger(L, (lua_Integer)c->method[x] + 1);
    lua_rawseti(L, -3, n);
    lua_pushinteger(L, c->shape[x]);
    lua_rawseti(L, -2, n);
  }
  return 3;
}

/* tree:calls() -> the thread's calls, hidden ones too */
static int calls_count (lua_State *L) {
  lua_pushinteger(L, (lua_Integer)checkcalls(L)->calls);
  return 1;
}

static int calls_gc (lua_State *L) {
  mt_calls_free((mt_Calls *)luaL_checkudata(L, 1, SIFT_CALLS_T));
  return 0;
}

static const luaL_Reg calls_methods[] = {
  {"children", calls_children},
  {"calls", calls_count},
  {NULL, NULL}
};

static const luaL_Reg calls_metamethods[] = {
  {"__index", NULL},
  {"__gc", calls_gc},
  {"__close", calls_gc},
  {NULL, NULL}
};

/* }====================================================== */

static const luaL_Reg trace_methods_reg[] = {
  {"call_tree", trace_call_tree},
  {"pruned", trace_pruned},
  {"events", trace_events},
  {"info", trace_info},
  {"header", trace_header},
  {"methods", trace_methods},
  {"threads", trace_threads},
  {"node", trace_node},
  {"children", trace_children},
  {"fold", trace_fold},
  {"close", trace_close},
  {NULL, NULL}
};

static const luaL_Reg trace_metamethods[] = {
  {"__index", NULL},
  {"__gc", trace_close},
  {"__close", trace_close},
  {NULL, NULL}
};

void sift_open_trace (lua_State *L) {
  sift_newclass(L, SIFT_CALLS_T, calls_metamethods, calls_methods);
  sift_newclass(L, SIFT_TRACE_T, trace_metamethods, trace_methods_reg);
  lua_pushcfunction(L, trace_open);
  lua_setfield(L, -2, "trace");
}
