/*
** lofx.c
** The OFX helpers in Lua: core.ofx_amount, core.ofx_date, core.ofx_utf8.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsift.h"
#include "ofx.h"

/* an amount's exact decimal text ("-1006.60") into out (48 bytes); its length */
static size_t format_decimal (int64_t units, int scale, char *out) {
  char digits[32];
  uint64_t v = units < 0 ? (uint64_t)0 - (uint64_t)units : (uint64_t)units;
  size_t n = 0;
  int k = 0, i;
  do {  /* the digits, least significant first, at least scale + 1 */
    digits[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0 || k <= scale);
  if (units < 0) out[n++] = '-';
  for (i = k - 1; i >= 0; i--) {
    out[n++] = digits[i];
    if (i == scale && scale > 0) out[n++] = '.';
  }
  return n;
}

/* a date's ISO 8601 text into out (40 bytes): "YYYY-MM-DD" for a date
   alone, else the UTC time "YYYY-MM-DDTHH:MM:SSZ" */
static void format_iso (const ofx_Date *d, char *out) {
  int64_t t = d->utc, days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
  int64_t secs = t - days * 86400, z = days + 719468, era, doe, yoe, y, doy, mp;
  int dd, mm;
  if (!d->has_time) {
    snprintf(out, 40, "%04d-%02d-%02d", d->year, d->month, d->day);
    return;
  }
  era = (z >= 0 ? z : z - 146096) / 146097;  /* the civil date of a day number */
  doe = z - era * 146097;
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = yoe + era * 400;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  dd = (int)(doy - (153 * mp + 2) / 5 + 1);
  mm = (int)(mp < 10 ? mp + 3 : mp - 9);
  y += mm <= 2;
  snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, mm, dd,
           (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
}

/* core.ofx_amount(text) -> units, scale, decimal | nil, reason
   decimal: the exact value as text, "-1006.60" for "-1.006,60" */
static int l_amount (lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  int64_t units;
  int scale;
  char text[48];
  const char *err = ofx_amount(s, n, &units, &scale);
  if (err) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)units);
  lua_pushinteger(L, scale);
  lua_pushlstring(L, text, format_decimal(units, scale, text));
  return 3;
}

/*
** core.ofx_date(text) -> iso, utc, offset, zone, msec | nil, reason
** iso: see format_iso; utc: seconds since 1970; offset: minutes east of
** UTC as the file gave it (nil when it gave none); zone: its name or nil.
*/
static int l_date (lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  ofx_Date d;
  char iso[40];
  const char *err = ofx_date(s, n, &d);
  if (err) {
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
  }
  format_iso(&d, iso);
  lua_pushstring(L, iso);
  lua_pushinteger(L, (lua_Integer)d.utc);
  if (d.has_offset) lua_pushinteger(L, d.offset);
  else lua_pushnil(L);
  if (d.tz[0]) lua_pushstring(L, d.tz);
  else lua_pushnil(L);
  lua_pushinteger(L, d.msec);
  return 5;
}

/*
** Reading a record's elements (value at index v) by its spec: the key it
** goes to, and how it is read. Each pushes the typed value and returns 1,
** or returns 0 when the text is not what it should be.
*/
static int read_date (lua_State *L, int v, int cache) {
  size_t n;
  const char *s;
  ofx_Date d;
  char iso[40];
  lua_pushvalue(L, v);
  if (lua_rawget(L, cache) == LUA_TSTRING) return 1;  /* read before */
  lua_pop(L, 1);
  s = lua_tolstring(L, v, &n);
  if (ofx_date(s, n, &d)) return 0;
  format_iso(&d, iso);
  lua_pushstring(L, iso);
  lua_pushvalue(L, v);
  lua_pushvalue(L, -2);
  lua_rawset(L, cache);
  return 1;
}

static int read_amount (lua_State *L, int v) {
  size_t n, len;
  const char *s = lua_tolstring(L, v, &n);
  int64_t units;
  int scale;
  char text[48];
  if (ofx_amount(s, n, &units, &scale)) return 0;
  len = format_decimal(units, scale, text);
  if (len == n && memcmp(text, s, n) == 0) lua_pushvalue(L, v);  /* as written */
  else lua_pushlstring(L, text, len);
  return 1;
}

static int read_upper (lua_State *L, int v) {
  size_t n, i;
  const char *s = lua_tolstring(L, v, &n);
  for (i = 0; i < n && !(s[i] >= 'a' && s[i] <= 'z'); i++) {}
  if (i == n) lua_pushvalue(L, v);
  else {
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, n);
    for (i = 0; i < n; i++) out[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
    luaL_pushresultsize(&b, n);
  }
  return 1;
}

/*
** core.ofx_record(node, spec, dates) -> record, aggregates | nil
** A record (a transaction) from an aggregate's elements, in one pass:
** spec.text, spec.date, spec.amount and spec.upper map an element's tag
** to the record's key. Text is kept as written (the first non-empty one),
** a date becomes ISO 8601 (dates caches them by their text), an amount
** its exact decimal, upper its upper case. Elements spec does not name
** and empty text are passed over. aggregates: whether the node has any
** (left to the caller). nil when a date or amount is empty or does not
** read: the caller takes the slow way, to say why.
*/
enum { TEXT, DATE, AMOUNT, UPPER, KINDS };
static const char *const record_kinds[KINDS] = { "text", "date", "amount", "upper" };

/* where ofx_record keeps things on the stack: its arguments, spec's four
   maps, the empty string, the record, and the element at hand with its key */
enum { NODE = 1, SPEC, DATES, MAPS, EMPTY = MAPS + KINDS, RECORD, TAG, VALUE, KEY };

/* the kind of the tag at TAG, its key pushed; -1 (nothing pushed) when
   spec does not name it */
static int spec_key (lua_State *L) {
  int kind;
  for (kind = 0; kind < KINDS; kind++) {
    lua_pushvalue(L, TAG);
    if (lua_rawget(L, MAPS + kind) == LUA_TSTRING) return kind;
    lua_pop(L, 1);
  }
  return -1;
}

/* record[key] = the value read as kind; 0 when it does not read. (A short
   string is compared by reference: so text is kept without touching it,
   which in a large file means a cache miss less per field.) */
static int set_field (lua_State *L, int kind) {
  if (lua_rawequal(L, VALUE, EMPTY)) return kind != DATE && kind != AMOUNT;
  if (kind == TEXT) {
    lua_pushvalue(L, KEY);
    if (lua_rawget(L, RECORD) != LUA_TNIL) return 1;  /* the first one stays */
    lua_pop(L, 1);
  }
  lua_pushvalue(L, KEY);
  switch (kind) {
    case TEXT: lua_pushvalue(L, VALUE); break;
    case DATE: if (!read_date(L, VALUE, DATES)) return 0; break;
    case AMOUNT: if (!read_amount(L, VALUE)) return 0; break;
    default: read_upper(L, VALUE); break;
  }
  lua_rawset(L, RECORD);
  return 1;
}

static int l_record (lua_State *L) {
  int kind, aggregates = 0;
  lua_Integer i = 1;
  luaL_checktype(L, NODE, LUA_TTABLE);
  luaL_checktype(L, SPEC, LUA_TTABLE);
  luaL_checktype(L, DATES, LUA_TTABLE);
  lua_settop(L, DATES);
  for (kind = 0; kind < KINDS; kind++)
    if (lua_getfield(L, SPEC, record_kinds[kind]) != LUA_TTABLE)
      return luaL_error(L, "spec.%s is not a table", record_kinds[kind]);
  lua_pushliteral(L, "");
  lua_createtable(L, 0, 8);
  while (lua_rawgeti(L, NODE, i) != LUA_TNIL) {
    if (lua_type(L, TAG) != LUA_TSTRING) {  /* an aggregate: one slot */
      aggregates = 1;
      i++;
    }
    else {  /* an element: tag and value */
      lua_rawgeti(L, NODE, i + 1);
      i += 2;
      kind = lua_type(L, VALUE) == LUA_TSTRING ? spec_key(L) : -1;
      if (kind >= 0 && !set_field(L, kind)) {
        lua_pushnil(L);
        return 1;
      }
    }
    lua_settop(L, RECORD);
  }
  lua_settop(L, RECORD);
  lua_pushboolean(L, aggregates);
  return 2;
}

/* core.ofx_utf8(bytes, charset) -> text, bytes read as CP1252
   charset: "cp1252", "latin1" or "utf8" (valid UTF-8 kept, other bytes CP1252) */
static int l_utf8 (lua_State *L) {
  static const char *const names[] = { "cp1252", "latin1", "utf8", NULL };
  static const int codes[] = { OFX_CP1252, OFX_LATIN1, OFX_UTF8 };
  size_t n, fixed, len;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  int cs = codes[luaL_checkoption(L, 2, "utf8", names)];
  luaL_Buffer b;
  unsigned char *out;
  if (ofx_is_utf8(s, n, cs)) {  /* the common case: no copy */
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 2;
  }
  if (n > (~(size_t)0) / 3) return luaL_error(L, "text too long");
  out = (unsigned char *)luaL_buffinitsize(L, &b, 3 * n + 1);
  len = ofx_to_utf8(s, n, cs, out, &fixed);
  luaL_pushresultsize(&b, len);
  lua_pushinteger(L, (lua_Integer)fixed);
  return 2;
}

/*
** core.ofx_aggregate(parent, tag, pos, size, meta) -> node
** A new aggregate node (metatable meta, fields tag and pos) with room for
** size children slots, appended to parent's children: so that filling it
** never rehashes, and the builder makes it in one call.
*/
static int l_aggregate (lua_State *L) {
  lua_Integer size = luaL_checkinteger(L, 4);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 3);
  luaL_checktype(L, 5, LUA_TTABLE);
  luaL_argcheck(L, size >= 0 && size <= (1 << 24), 4, "out of range");
  lua_createtable(L, (int)size, 2);
  lua_pushvalue(L, 5);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "tag");
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, "pos");
  lua_pushvalue(L, -1);
  lua_rawseti(L, 1, (lua_Integer)lua_rawlen(L, 1) + 1);
  return 1;
}

/*
** The grammar's runs of elements come to C as positions, not strings: a
** string captured is looked up in Lua's string table, and in a file of
** millions of elements those lookups (cache misses, mostly) cost more than
** all the rest. A run's tags, and many of its values (dates, types,
** payees), repeat, so they come from a small cache of strings kept in the
** function's upvalue instead; the rest go to Lua's table as usual.
*/
#define CACHE_SLOTS 4096
#define CACHED_MAX 40  /* Lua's LUAI_MAXSHORTLEN */

static int is_name_char (unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-' || c == ':';
}

/*
** pushes the string s[0..n) from the cache, adding it on a miss. The
** cache is the strings (upvalue 1, a table) and the hash of each slot's
** string (upvalue 2, a userdata), which is checked first so that a miss
** does not touch the string it replaces. Long strings (which Lua does not
** look up) are not kept.
*/
static void push_cached (lua_State *L, const char *s, size_t n) {
  uint32_t h = 2166136261u, *hashes;
  size_t i, len;
  const char *t;
  int slot;
  if (n > CACHED_MAX) {
    lua_pushlstring(L, s, n);
    return;
  }
  for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  h |= 1;  /* (0 marks an empty slot) */
  slot = (int)(h % CACHE_SLOTS);
  hashes = (uint32_t *)lua_touserdata(L, lua_upvalueindex(2));
  if (hashes[slot] == h && lua_rawgeti(L, lua_upvalueindex(1), slot + 1) == LUA_TSTRING) {
    t = lua_tolstring(L, -1, &len);
    if (len == n && memcmp(t, s, n) == 0) return;
    lua_pop(L, 1);
  }
  lua_pushlstring(L, s, n);
  lua_pushvalue(L, -1);
  lua_rawseti(L, lua_upvalueindex(1), slot + 1);
  hashes[slot] = h;
}

/* the 1-based position at arg as an offset into text, checked */
static size_t text_offset (lua_State *L, int arg, size_t len) {
  lua_Integer p = luaL_checkinteger(L, arg);
  luaL_argcheck(L, p >= 1 && (size_t)p <= len + 1, arg, "position out of the text");
  return (size_t)p - 1;
}

static int is_space (char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* the name that starts at offset at; its length in *n */
static const char *name_at (const char *text, size_t len, size_t at, size_t *n) {
  for (*n = 0; at + *n < len && is_name_char((unsigned char)text[at + *n]); (*n)++) {}
  return text + at;
}

/*
** core.ofx_append(text, node, at, value_end, close, ...[, end_name])
**   -> used, last[, end_tag, end_at]
** A run of elements as the grammar captured them, three positions each:
** the '<' of the start tag, the end of the value (the '<' after it), and
** the name of the end tag after it (false when none); then perhaps the
** name of one more end tag (the parent's, in XML). The grammar has
** checked the shape, <NAME> spaces value [</NAME>]: here the name is
** read and the value's spaces trimmed. Each element is appended to node's
** array as its tag and its value. It goes on while each element's end
** tag is absent or its own, and stops after one closed by another's (the
** parent's, in SGML), or at the last end tag, returning that tag and where
** its '<' is for the builder to act on. used: how many of the positions
** it took; last: the index of the last value, nil when its own end tag
** closed it.
*/
static int l_append (lua_State *L) {
  size_t len, n_tag, n_close;
  const char *text = luaL_checklstring(L, 1, &len), *tag, *close;
  int top = lua_gettop(L), i;
  lua_Integer n, last = 0;
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_argcheck(L, (top - 2) % 3 <= 1, top, "elements come as three positions");
  n = (lua_Integer)lua_rawlen(L, 2);
  for (i = 3; i + 2 <= top; i += 3) {
    size_t at = text_offset(L, i, len), value, value_end = text_offset(L, i + 1, len);
    luaL_argcheck(L, at < len && text[at] == '<', i, "not a start tag");
    tag = name_at(text, len, at + 1, &n_tag);
    value = at + 1 + n_tag;
    luaL_argcheck(L, value < value_end && text[value] == '>', i, "not a start tag and its value");
    for (value++; value < value_end && is_space(text[value]); value++) {}
    while (value_end > value && is_space(text[value_end - 1])) value_end--;
    push_cached(L, tag, n_tag);
    lua_rawseti(L, 2, n + 1);
    push_cached(L, text + value, value_end - value);
    lua_rawseti(L, 2, n + 2);
    n += 2;
    if (!lua_toboolean(L, i + 2)) {
      last = n;
      continue;
    }
    close = name_at(text, len, text_offset(L, i + 2, len), &n_close);
    if (n_close == n_tag && memcmp(close, tag, n_tag) == 0) {
      last = 0;
      continue;
    }
    lua_pushinteger(L, i + 2 - 2);
    lua_pushinteger(L, n);
    push_cached(L, close, n_close);
    lua_pushinteger(L, lua_tointeger(L, i + 2) - 2);
    return 4;
  }
  lua_pushinteger(L, top - 2);
  if (last) lua_pushinteger(L, last);
  else lua_pushnil(L);
  if (i > top) return 2;
  close = name_at(text, len, text_offset(L, i, len), &n_close);  /* the one more end tag */
  push_cached(L, close, n_close);
  lua_pushinteger(L, lua_tointeger(L, i) - 2);
  return 4;
}

static const luaL_Reg ofx_functions[] = {
  {"ofx_aggregate", l_aggregate},
  {"ofx_amount", l_amount},
  {"ofx_date", l_date},
  {"ofx_record", l_record},
  {"ofx_utf8", l_utf8},
  {NULL, NULL}
};

void sift_open_ofx (lua_State *L) {
  luaL_setfuncs(L, ofx_functions, 0);
  lua_createtable(L, CACHE_SLOTS, 0);  /* ofx_append's string cache */
  memset(lua_newuserdatauv(L, CACHE_SLOTS * sizeof(uint32_t), 0), 0, CACHE_SLOTS * sizeof(uint32_t));
  lua_pushcclosure(L, l_append, 2);
  lua_setfield(L, -2, "ofx_append");
}
