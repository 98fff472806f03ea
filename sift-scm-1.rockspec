rockspec_format = "3.0"
package = "sift"
version = "scm-1"
source = {
  url = "git+file:///dev/null",  -- built from a checkout with `luarocks make`
}
description = {
  summary = "Decode and analyse heap dumps, Android method traces and OFX statements",
  detailed = [[
sift reads Java/Android heap dumps (HPROF), Badoo Memory Dumps (BMD),
Android method traces and OFX/QFX bank statements, with a C core for the
decoding and Lua for the analyses, and a `sift` command line.
]],
  license = "MIT",
  labels = { "hprof", "heap-dump", "android", "trace", "ofx", "finance", "ledger" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
  "argparse >= 0.7",
  "lpeg >= 1.0.2",
  "http >= 0.4",
  -- fleet mode on engines (sift worker --redis --postgres) also needs
  -- redis-lua and luadbi-postgresql (Debian: lua-redis, lua-dbi-postgresql)
}
test_dependencies = {
  "busted >= 2.1",
  "lua-cjson >= 2.1",
  "luasocket >= 3.0",
  "luasec >= 1.0",
}
external_dependencies = {
  ZLIB = { header = "zlib.h", library = "z" },
  BZ2 = { header = "bzlib.h", library = "bz2" },
  SQLITE = { header = "sqlite3.h", library = "sqlite3" },
}
build = {
  type = "builtin",
  modules = {
    ["sift.core"] = {
      sources = {
        "csrc/sift_core.c",
        "csrc/core/big.c", "csrc/core/common.c", "csrc/core/idmap.c", "csrc/core/inflate.c",
        "csrc/core/lbudget.c", "csrc/core/lfiles.c", "csrc/core/ljson.c", "csrc/core/lmap.c", "csrc/core/lreader.c", "csrc/core/lsift.c",
        "csrc/core/lsniff.c", "csrc/core/out.c", "csrc/core/reader.c", "csrc/core/sniff.c",
        "csrc/core/sniff_trace.c", "csrc/core/zip.c",
        "csrc/heap/bmd.c", "csrc/heap/crunch.c", "csrc/heap/dict.c", "csrc/heap/dominators.c",
        "csrc/heap/graph.c", "csrc/heap/hprof.c", "csrc/heap/hprof_index.c", "csrc/heap/jstring.c",
        "csrc/heap/lbmd.c", "csrc/heap/ldominators.c", "csrc/heap/lgraph.c", "csrc/heap/lheap.c",
        "csrc/heap/lpasses.c", "csrc/heap/lpaths.c", "csrc/heap/lvalues.c", "csrc/heap/lwaste.c",
        "csrc/heap/paths_tree.c", "csrc/heap/visualvm.c", "csrc/heap/waste.c",
        "csrc/trace/calls.c", "csrc/trace/calltree.c", "csrc/trace/ltrace.c", "csrc/trace/trace.c",
        "csrc/ofx/lofx.c", "csrc/ofx/lrecord.c", "csrc/ofx/ltree.c", "csrc/ofx/ltxns.c", "csrc/ofx/ofx.c", "csrc/ofx/tree.c",
        "csrc/finance/lsqlite.c",
        "csrc/lint/classfile.c", "csrc/lint/dex.c", "csrc/lint/lbytecode.c",
      },
      libraries = { "z", "bz2", "sqlite3" },
      incdirs = { "csrc", "$(ZLIB_INCDIR)", "$(BZ2_INCDIR)", "$(SQLITE_INCDIR)" },
      libdirs = { "$(ZLIB_LIBDIR)", "$(BZ2_LIBDIR)", "$(SQLITE_LIBDIR)" },
    },
    ["sift"] = "lua/sift/init.lua",
    ["sift.cli"] = "lua/sift/cli/init.lua",
    ["sift.cli.common"] = "lua/sift/cli/common.lua",
    ["sift.cli.finance"] = "lua/sift/cli/finance.lua",
    ["sift.cli.fleet"] = "lua/sift/cli/fleet.lua",
    ["sift.cli.lint"] = "lua/sift/cli/lint.lua",
    ["sift.cli.heap"] = "lua/sift/cli/heap.lua",
    ["sift.cli.info"] = "lua/sift/cli/info.lua",
    ["sift.cli.ofx"] = "lua/sift/cli/ofx.lua",
    ["sift.cli.run"] = "lua/sift/cli/run.lua",
    ["sift.cli.serve"] = "lua/sift/cli/serve.lua",
    ["sift.cli.trace"] = "lua/sift/cli/trace.lua",
    ["sift.csv"] = "lua/sift/csv.lua",
    ["sift.detect"] = "lua/sift/detect.lua",
    ["sift.finance"] = "lua/sift/finance/init.lua",
    ["sift.finance.export"] = "lua/sift/finance/export.lua",
    ["sift.finance.learn"] = "lua/sift/finance/learn.lua",
    ["sift.finance.report"] = "lua/sift/finance/report.lua",
    ["sift.finance.rules"] = "lua/sift/finance/rules.lua",
    ["sift.finance.sample"] = "lua/sift/finance/sample.lua",
    ["sift.finance.store"] = "lua/sift/finance/store.lua",
    ["sift.heap.waste"] = "lua/sift/heap/waste.lua",
    ["sift.heap.census"] = "lua/sift/heap/census.lua",
    ["sift.heap.growth"] = "lua/sift/heap/growth.lua",
    ["sift.fleet"] = "lua/sift/fleet/init.lua",
    ["sift.fleet.sqlite"] = "lua/sift/fleet/sqlite.lua",
    ["sift.fleet.engines"] = "lua/sift/fleet/engines.lua",
    ["sift.lint"] = "lua/sift/lint/init.lua",
    ["sift.lint.rules"] = "lua/sift/lint/rules.lua",
    ["sift.lint.sarif"] = "lua/sift/lint/sarif.lua",
    ["sift.heap"] = "lua/sift/heap/init.lua",
    ["sift.heap.bmd"] = "lua/sift/heap/bmd.lua",
    ["sift.heap.fields"] = "lua/sift/heap/fields.lua",
    ["sift.heap.graph"] = "lua/sift/heap/graph.lua",
    ["sift.heap.index"] = "lua/sift/heap/index.lua",
    ["sift.heap.inspectors"] = "lua/sift/heap/inspectors.lua",
    ["sift.heap.jvm_layout"] = "lua/sift/heap/jvm_layout.lua",
    ["sift.heap.contended"] = "lua/sift/heap/contended.lua",
    ["sift.heap.known_leaks"] = "lua/sift/heap/known_leaks.lua",
    ["sift.heap.leak_report"] = "lua/sift/heap/leak_report.lua",
    ["sift.heap.leaks"] = "lua/sift/heap/leaks.lua",
    ["sift.heap.object"] = "lua/sift/heap/object.lua",
    ["sift.heap.retained"] = "lua/sift/heap/retained.lua",
    ["sift.heap.suspects"] = "lua/sift/heap/suspects.lua",
    ["sift.heap.views"] = "lua/sift/heap/views.lua",
    ["sift.json"] = "lua/sift/json.lua",
    ["sift.ofx"] = "lua/sift/ofx/init.lua",
    ["sift.ofx.direct"] = "lua/sift/ofx/direct.lua",
    ["sift.ofx.grammar"] = "lua/sift/ofx/grammar.lua",
    ["sift.ofx.http"] = "lua/sift/ofx/http.lua",
    ["sift.ofx.request"] = "lua/sift/ofx/request.lua",
    ["sift.ofx.writer"] = "lua/sift/ofx/writer.lua",
    ["sift.serve"] = "lua/sift/serve/init.lua",
    ["sift.serve.heap"] = "lua/sift/serve/heap.lua",
    ["sift.serve.html"] = "lua/sift/serve/html.lua",
    ["sift.serve.multipart"] = "lua/sift/serve/multipart.lua",
    ["sift.serve.ofx"] = "lua/sift/serve/ofx.lua",
    ["sift.serve.store"] = "lua/sift/serve/store.lua",
    ["sift.serve.listen"] = "lua/sift/serve/listen.lua",
    ["sift.serve.access"] = "lua/sift/serve/access.lua",
    ["sift.private"] = "lua/sift/private.lua",
    ["sift.serve.trace"] = "lua/sift/serve/trace.lua",
    ["sift.serve.play"] = "lua/sift/serve/play.lua",
    ["sift.serve.worker"] = "lua/sift/serve/worker.lua",
    ["sift.paths"] = "lua/sift/paths.lua",
    ["sift.progress"] = "lua/sift/progress.lua",
    ["sift.repl"] = "lua/sift/repl.lua",
    ["sift.sha1"] = "lua/sift/sha1.lua",
    ["sift.size"] = "lua/sift/size.lua",
    ["sift.trace"] = "lua/sift/trace/init.lua",
    ["sift.trace.flame"] = "lua/sift/trace/flame.lua",
  },
  install = {
    bin = { sift = "bin/sift" },
  },
}
test = {
  type = "command",
  command = "make test",
}
