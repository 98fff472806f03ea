/*
** sift.Database: a thin binding of SQLite for the finance store.
** Values are always bound as parameters (?1, ?2...), never pasted into
** SQL. Prepared statements are kept per database, keyed by their SQL.
**
**   local db = assert(core.sqlite("finance.db"))
**   db:exec("CREATE TABLE t (a, b)")          -- SQL with no parameters
**   db:run("INSERT INTO t VALUES (?, ?)", 1, "x")   --> changes
**   for row in db:rows("SELECT a, b FROM t WHERE a > ?", 0) do ... end
**   db:first("SELECT count(*) AS n FROM t").n
*/

#include <string.h>

#include <sqlite3.h>

#include "lua.h"
#include "lauxlib.h"

#include "core/lsift.h"

typedef struct LDb { sqlite3 *db; } LDb;
typedef struct LStmt { sqlite3_stmt *stmt; } LStmt;

static sqlite3 *checkdb (lua_State *L) {
  LDb *d = (LDb *)luaL_checkudata(L, 1, SIFT_DB_T);
  luaL_argcheck(L, d->db != NULL, 1, "database is closed");
  return d->db;
}

static int dberror (lua_State *L, sqlite3 *db, const char *sql) {
  return luaL_error(L, "sqlite: %s (in: %s)", sqlite3_errmsg(db), sql);
}

/* core.sqlite(path) -> database | nil, message, "io" */
static int db_open (lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  LDb *d = (LDb *)lua_newuserdatauv(L, sizeof(LDb), 1);
  d->db = NULL;
  luaL_setmetatable(L, SIFT_DB_T);
  lua_newtable(L);  /* the statement cache: SQL -> sift.Statement */
  lua_setiuservalue(L, -2, 1);
  if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    lua_pushfstring(L, "%s: %s", path, d->db ? sqlite3_errmsg(d->db) : "cannot open");
    sqlite3_close_v2(d->db);
    d->db = NULL;
    luaL_pushfail(L);
    lua_insert(L, -2);
    lua_pushliteral(L, "io");
    return 3;
  }
  sqlite3_busy_timeout(d->db, 5000);
  return 1;
}

static int db_close (lua_State *L) {
  LDb *d = (LDb *)luaL_checkudata(L, 1, SIFT_DB_T);
  if (d->db != NULL) {
    /* the cached statements go first; close_v2 waits for any left */
    lua_getiuservalue(L, 1, 1);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      LStmt *s = (LStmt *)lua_touserdata(L, -1);
      sqlite3_finalize(s->stmt);
      s->stmt = NULL;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    sqlite3_close_v2(d->db);
    d->db = NULL;
  }
  return 0;
}

/* db:exec(sql): statements with no parameters (schema, BEGIN, COMMIT) */
static int db_exec (lua_State *L) {
  sqlite3 *db = checkdb(L);
  const char *sql = luaL_checkstring(L, 2);
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    lua_pushfstring(L, "sqlite: %s (in: %s)", err ? err : sqlite3_errmsg(db), sql);
    sqlite3_free(err);
    return lua_error(L);
  }
  return 0;
}

/* the prepared statement of sql, left on the stack: the cached one, or a
   new one when that is in use (by an unfinished rows() loop) */
static sqlite3_stmt *statement (lua_State *L, sqlite3 *db, const char *sql) {
  LStmt *s;
  int cached;
  lua_getiuservalue(L, 1, 1);
  cached = lua_getfield(L, -1, sql) == LUA_TUSERDATA;
  if (cached && !sqlite3_stmt_busy(((LStmt *)lua_touserdata(L, -1))->stmt)) {
    lua_remove(L, -2);
    s = (LStmt *)lua_touserdata(L, -1);
    sqlite3_reset(s->stmt);
    sqlite3_clear_bindings(s->stmt);
    return s->stmt;
  }
  lua_pop(L, 1);
  s = (LStmt *)lua_newuserdatauv(L, sizeof(LStmt), 0);
  s->stmt = NULL;
  luaL_setmetatable(L, SIFT_STMT_T);
  if (sqlite3_prepare_v2(db, sql, -1, &s->stmt, NULL) != SQLITE_OK) dberror(L, db, sql);
  if (!cached) {
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, sql);
  }
  lua_remove(L, -2);
  return s->stmt;
}

/* binds the values at stack positions first..last to ?1, ?2... */
static void bind (lua_State *L, sqlite3 *db, sqlite3_stmt *stmt, const char *sql, int first, int last) {
  int i, n = last - first + 1;
  if (n != sqlite3_bind_parameter_count(stmt))
    luaL_error(L, "sqlite: %d values for %d parameters (in: %s)", n, sqlite3_bind_parameter_count(stmt), sql);
  for (i = 1; i <= n; i++) {
    int idx = first + i - 1, rc;
    switch (lua_type(L, idx)) {
      case LUA_TNIL: rc = sqlite3_bind_null(stmt, i); break;
      case LUA_TBOOLEAN: rc = sqlite3_bind_int(stmt, i, lua_toboolean(L, idx)); break;
      case LUA_TNUMBER:
        rc = lua_isinteger(L, idx) ? sqlite3_bind_int64(stmt, i, lua_tointeger(L, idx))
                                   : sqlite3_bind_double(stmt, i, lua_tonumber(L, idx));
        break;
      case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        rc = sqlite3_bind_text(stmt, i, s, (int)len, SQLITE_TRANSIENT);
        break;
      }
      default:
        luaL_error(L, "sqlite: value %d is a %s (in: %s)", i, luaL_typename(L, idx), sql);
        return;
    }
    if (rc != SQLITE_OK) dberror(L, db, sql);
  }
}

/* the statement of the SQL at stack position 2 with the values after it bound */
static sqlite3_stmt *prepare (lua_State *L, sqlite3 *db) {
  const char *sql = luaL_checkstring(L, 2);
  int top = lua_gettop(L);
  sqlite3_stmt *stmt = statement(L, db, sql);
  bind(L, db, stmt, sql, 3, top);
  return stmt;
}

/* the current row as a table keyed by column name */
static void pushrow (lua_State *L, sqlite3_stmt *stmt) {
  int i, n = sqlite3_column_count(stmt);
  lua_createtable(L, 0, n);
  for (i = 0; i < n; i++) {
    switch (sqlite3_column_type(stmt, i)) {
      case SQLITE_INTEGER: lua_pushinteger(L, sqlite3_column_int64(stmt, i)); break;
      case SQLITE_FLOAT: lua_pushnumber(L, sqlite3_column_double(stmt, i)); break;
      case SQLITE_NULL: continue;
      default:
        lua_pushlstring(L, (const char *)sqlite3_column_text(stmt, i), (size_t)sqlite3_column_bytes(stmt, i));
    }
    lua_setfield(L, -2, sqlite3_column_name(stmt, i));
  }
}

/* db:run(sql, ...) -> rows changed */
static int db_run (lua_State *L) {
  sqlite3 *db = checkdb(L);
  sqlite3_stmt *stmt = prepare(L, db);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {}
  sqlite3_reset(stmt);
  if (rc != SQLITE_DONE) dberror(L, db, lua_tostring(L, 2));
  lua_pushinteger(L, sqlite3_changes(db));
  return 1;
}

/* db:first(sql, ...) -> the first row (a table), or nil */
static int db_first (lua_State *L) {
  sqlite3 *db = checkdb(L);
  sqlite3_stmt *stmt = prepare(L, db);
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) pushrow(L, stmt);
  else if (rc == SQLITE_DONE) lua_pushnil(L);
  sqlite3_reset(stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) dberror(L, db, lua_tostring(L, 2));
  return 1;
}

static int rows_next (lua_State *L) {
  LStmt *s = (LStmt *)lua_touserdata(L, lua_upvalueindex(1));
  int rc;
  if (s->stmt == NULL) return 0;
  rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_ROW) {
    pushrow(L, s->stmt);
    return 1;
  }
  sqlite3_reset(s->stmt);
  if (rc != SQLITE_DONE) return luaL_error(L, "sqlite: %s", sqlite3_errmsg(sqlite3_db_handle(s->stmt)));
  return 0;
}

/* db:rows(sql, ...) -> iterator over row tables */
static int db_rows (lua_State *L) {
  prepare(L, checkdb(L));
  lua_pushcclosure(L, rows_next, 1);  /* (the statement is its upvalue) */
  return 1;
}

/* db:last_id() -> the rowid of the last INSERT */
static int db_last_id (lua_State *L) {
  lua_pushinteger(L, sqlite3_last_insert_rowid(checkdb(L)));
  return 1;
}

static int db_tostring (lua_State *L) {
  LDb *d = (LDb *)luaL_checkudata(L, 1, SIFT_DB_T);
  if (d->db == NULL) lua_pushliteral(L, "sift.Database (closed)");
  else lua_pushfstring(L, "sift.Database (%s)", sqlite3_db_filename(d->db, "main"));
  return 1;
}

static int stmt_gc (lua_State *L) {
  LStmt *s = (LStmt *)luaL_checkudata(L, 1, SIFT_STMT_T);
  sqlite3_finalize(s->stmt);  /* (NULL is a no-op) */
  s->stmt = NULL;
  return 0;
}

static const luaL_Reg db_methods[] = {
  {"exec", db_exec},
  {"run", db_run},
  {"first", db_first},
  {"rows", db_rows},
  {"last_id", db_last_id},
  {"close", db_close},
  {NULL, NULL}
};

static const luaL_Reg db_meta[] = {
  {"__gc", db_close},
  {"__close", db_close},
  {"__tostring", db_tostring},
  {"__index", NULL},
  {NULL, NULL}
};

static const luaL_Reg functions[] = {
  {"sqlite", db_open},
  {NULL, NULL}
};

void sift_open_sqlite (lua_State *L) {
  luaL_newmetatable(L, SIFT_DB_T);
  luaL_setfuncs(L, db_meta, 0);
  luaL_newlib(L, db_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newmetatable(L, SIFT_STMT_T);
  lua_pushcfunction(L, stmt_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
}
