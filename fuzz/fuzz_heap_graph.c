/*
** fuzz_heap_graph.c
** libFuzzer harness for the heap graph as users reach it: the input is
** indexed by sift.heap (as a string source) on an embedded Lua, then
** every class's instances go through heap:path_to_root, heap:path_search
** and heap:path_segments (runs folded and not), heap:paths, the dominator
** tree in the shark, jvm (with its layout inferred from the input's ids)
** and visualvm models, heap:top, the JVM histogram, the waste reports
** (the C pass, csrc/heap/waste.c, in each model) and sift.heap.leaks. A bad
** input may be refused with nil and a message; nothing may raise an error.
** A valid header is put before most inputs. Run from the project root
** (the Lua modules come from lua/).
*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lua_check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char check[] = LUA_CHECK_PRELUDE
  "local hprof, leaks, waste = require 'sift.heap', require 'sift.heap.leaks', require 'sift.heap.waste'\n"
  "return function(bytes)\n"
  "  local heap, msg = hprof.open_source(bytes, 'fuzz')\n"
  "  if not heap then assert(type(msg) == 'string', 'a refusal without a message') return end\n"
  "  local objs = {}\n"
  "  for cls in heap:classes() do\n"
  "    for obj in cls:instances() do\n"
  "      objs[#objs + 1] = obj\n"
  "      if #objs >= 64 then break end\n"
  "    end\n"
  "  end\n"
  "  heap:path_to_root(objs)\n"
  "  heap:path_search(objs)\n"
  "  for _, obj in ipairs(objs) do\n"
  "    for _, collapse in ipairs { true, false } do\n"
  "      local path = heap:path_segments(obj, collapse)\n"
  "      for _, st in ipairs(path or {}) do assert(st.count >= 1 and st.last) end\n"
  "    end\n"
  "    for name in obj:fields() do assert(obj:has_field(name)) end\n"
  "  end\n"
  "  heap:paths(objs)\n"
  "  for _, model in ipairs { 'shark', 'jvm', 'visualvm' } do\n"
  "    heap:dominators { model = model }\n"
  "    for _, r in ipairs(heap:top(5)) do assert(r.retained >= r.shallow) end\n"
  "    heap:histogram(model)\n"
  "    local w = waste.report(heap, { model = model, top = 5 })\n"
  "    for _, d in ipairs(w.duplicate_strings) do\n"
  "      assert(d.count >= 2 and d.arrays <= d.count and d.wasted <= w.totals.duplicate_strings.wasted)\n"
  "    end\n"
  "    for _, d in ipairs(w.duplicate_arrays) do assert(d.wasted == (d.count - 1) * d.bytes) end\n"
  "  end\n"
  "  leaks.analyze(heap, { suspects = true })\n"
  "  heap:close()\n"
  "end\n";

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  static const char header[] = "JAVA PROFILE 1.0.3\0\0\0\0\4\0\0\0\0\0\0\0\0";
  size_t skip = 0, n;
  char *buf;
  if (size == 0) return 0;
  if (!(data[0] & 0x80)) skip = sizeof header - 1;  /* a header, then the records */
  n = skip + size - 1;
  buf = (char *)malloc(n ? n : 1);
  memcpy(buf, header, skip);
  if (skip && (data[0] & 0x40)) buf[22] = 8;  /* 8-byte ids */
  memcpy(buf + skip, data + 1, size - 1);
  lua_check("fuzz_heap_graph", check, sizeof check - 1, buf, n);
  free(buf);
  return 0;
}
