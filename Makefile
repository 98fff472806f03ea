# sift — developer entry points. `make help` lists them.
#
# LuaRocks users do not need this file (the rockspec builds with
# `builtin`); it adds strict warnings, sanitizers, fuzzing and the demo.

LUA        ?= lua5.4
LUA_PC     ?= lua5.4
BUSTED     ?= $(LUA) /usr/bin/busted
CC         ?= cc
FUZZ_CC    ?= clang
LUA_INCDIR ?= $(shell pkg-config --variable=includedir $(LUA_PC))/lua5.4

# install layout; Lua paths follow pkg-config for the chosen PREFIX
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
INST_LIBDIR ?= $(shell pkg-config --define-variable=prefix=$(PREFIX) --variable=INSTALL_CMOD $(LUA_PC))
INST_LUADIR ?= $(shell pkg-config --define-variable=prefix=$(PREFIX) --variable=INSTALL_LMOD $(LUA_PC))

# warnings are policy: the build must stay free of them (make test adds -Werror)
CWARNS  = -std=c99 -Wall -Wextra -pedantic -Wshadow -Wmissing-prototypes \
          -Wstrict-prototypes -Wcast-qual -Wwrite-strings \
          -Wdeclaration-after-statement
CFLAGS  ?= -O2 -g
ALL_CFLAGS = $(CWARNS) $(CFLAGS) -fPIC -fvisibility=hidden -Icsrc -I$(LUA_INCDIR)
LIBFLAG ?= -shared
LIBS    = -lz -lbz2 -lsqlite3 -lpthread
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all \
           -fno-omit-frame-pointer

# Debian packages the project needs (make deps installs the missing ones)
DEB_PACKAGES = lua5.4 liblua5.4-dev lua-busted lua-argparse lua-cjson \
               luarocks zlib1g-dev libbz2-dev pkg-config gcc make clang \
               libclang-rt-14-dev lua-readline openjdk-17-jdk-headless visualvm \
               lua-lpeg libsqlite3-dev ledger hledger beancount lua-http lua-socket lua-sec openssl \
               python3 python3-jsonschema chromium curl procps lua-check \
               redis-server lua-redis postgresql-15 lua-dbi-postgresql dexdump findbugs proguard-cli

CORE_SRC = $(wildcard csrc/*.c csrc/*/*.c)
CORE_HDR = $(wildcard csrc/*/*.h)
# the pure-C decoders the fuzzers link (not the Lua bindings, l*.c)
FUZZ_SRC = $(foreach f,$(filter-out csrc/sift_core.c,$(CORE_SRC)),$(if $(filter l%,$(notdir $(f))),,$(f)))
FUZZERS  = reader sniff hprof trace bmd ofx ofx_grammar heap_graph bytecode bitmap
FUZZ_TIME ?= 60

# specs, demo and bench run against the checkout: Lua sources from lua/,
# core.so from build/ (the CLI reads SIFT_CPATH, scripts LUA_CPATH)
SPEC_ENV = LUA_PATH="lua/?.lua;lua/?/init.lua;;"
RUN_ENV  = $(SPEC_ENV) LUA_CPATH="build/?.so;;" SIFT_CPATH="build/?.so"

.PHONY: all build deps test spec-then-fuzz check-warnings lint-lua check-browser spec spec-light spec-heavy spec-asan \
        fuzz fuzz-smoke \
        demo bench install uninstall rock clean help

all: build/sift/core.so

build: all

build/sift/core.so: $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIBFLAG) -o $@ $(CORE_SRC) $(LIBS)

build/asan/sift/core.so: $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -O1 $(SANITIZE) $(LIBFLAG) -o $@ $(CORE_SRC) $(LIBS)

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# the full suite: zero warnings, luacheck, specs, specs again under ASan/UBSan, fuzz
# smoke. The three builds run side by side, then three lanes (much of a
# spec's time is spent waiting on a JVM, a server or a browser): the specs
# then the fuzzers, the #heavy specs (peers and engines), and the specs
# under ASan but the #heavy and #peer ones (a peer's comparison runs once;
# the peers' cached outputs in build/ are made once, under a lock:
# helper.once). Two tags keep each check to one run in this suite:
# #sanitized (C over cut, damaged and every fixture file: the run under
# ASan asserts the same and more) runs only under ASan, and #once (JSON
# shapes checked by a validator, over C paths the other specs run under
# ASan) only without it; `make spec` runs both plainly
LIGHT_EXCLUDE ?= heavy
test: deps
	@$(MAKE) --no-print-directory -j2 check-warnings build/sift/core.so build/asan/sift/core.so
	@$(MAKE) --no-print-directory lint-lua
	@$(MAKE) --no-print-directory -j3 spec-then-fuzz spec-heavy spec-asan LIGHT_EXCLUDE=heavy,sanitized

# make test's first lane (the three take about as long: the ASan specs,
# the #heavy specs, and the specs with the fuzzers after them)
spec-then-fuzz:
	@$(MAKE) --no-print-directory spec-light
	@$(MAKE) --no-print-directory fuzz-smoke

# luacheck over the Lua sources, the CLI, the specs, the benches and the examples (.luacheckrc): no warnings
lint-lua:
	luacheck --quiet --no-color lua bin/sift spec bench examples

check-warnings:
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -Werror $(LIBFLAG) -o build/warnings-check.so $(CORE_SRC) $(LIBS)
	@rm -f build/warnings-check.so

# busted's closing line, restated as "<pass>: N passed, M failed"
SUMMARY = awk '{ print } /successes \/ .* failures \/ .* errors/ { print "$(1): " $$1 " passed, " $$4 + $$7 " failed" }'

# every spec: those tagged #heavy (a JVM, VisualVM, FindBugs, Redis and
# PostgreSQL) beside the others
spec:
	@$(MAKE) --no-print-directory -j2 spec-light spec-heavy

spec-light: build/sift/core.so
	@mkdir -p build
	@$(SPEC_ENV) SIFT_CPATH="build/?.so" $(BUSTED) --ignore-lua --cpath="build/?.so" --exclude-tags=$(LIGHT_EXCLUDE) spec \
	  > build/spec.log 2>&1; s=$$?; $(call SUMMARY,spec) build/spec.log; exit $$s

spec-heavy: build/sift/core.so
	@mkdir -p build
	@$(SPEC_ENV) SIFT_CPATH="build/?.so" $(BUSTED) --ignore-lua --cpath="build/?.so" --tags=heavy spec \
	  > build/spec-heavy.log 2>&1; s=$$?; $(call SUMMARY,heavy) build/spec-heavy.log; exit $$s

# the sanitizer runtime must be loaded before the interpreter starts
spec-asan: build/asan/sift/core.so
	@$(SPEC_ENV) SIFT_CPATH="build/asan/?.so" \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(BUSTED) --ignore-lua --cpath="build/asan/?.so" --exclude-tags=rock,heavy,peer,once spec \
	  > build/spec-asan.log 2>&1; s=$$?; $(call SUMMARY,asan) build/spec-asan.log; exit $$s

# every C source is compiled once for the fuzzers (with Lua's headers: the
# fuzzers of sift's Lua modules link the bindings too), then each fuzzer is
# its harness linked with the objects it needs
FUZZ_FLAGS = -g -O1 -Icsrc -fno-sanitize-recover=all
FUZZ_OBJ   = $(patsubst csrc/%.c,build/fuzz/obj/%.o,$(FUZZ_SRC))
build/fuzz/obj/%.o: csrc/%.c $(CORE_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -I$(LUA_INCDIR) -c -o $@ $<

build/fuzz/%: fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_OBJ) $(LIBS)

# the fuzzers that run sift's Lua modules (the OFX grammar; the heap graph
# through sift.hprof and sift.leaks) on an embedded Lua, fuzz/lua_check.h:
# they take every C source and link Lua itself (LPeg is loaded as installed)
LUA_FUZZERS = ofx_grammar heap_graph
LUA_FUZZ_OBJ = $(patsubst csrc/%.c,build/fuzz/obj/%.o,$(CORE_SRC))
$(addprefix build/fuzz/,$(LUA_FUZZERS)): build/fuzz/%: fuzz/fuzz_%.c fuzz/lua_check.h $(LUA_FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -I$(LUA_INCDIR) -fsanitize=fuzzer,address,undefined \
	  -Wl,-E -o $@ $< $(LUA_FUZZ_OBJ) -llua5.4 $(LIBS) -lm -ldl

# seeds: the first bytes of every fixture (generated, never committed)
build/fuzz/seeds: fuzz/seeds.sh
	sh fuzz/seeds.sh $@

fuzz: $(addprefix build/fuzz/,$(FUZZERS)) build/fuzz/seeds
	@for f in $(FUZZERS); do \
	  mkdir -p build/fuzz/corpus-$$f; \
	  echo "fuzzing $$f for $(FUZZ_TIME)s"; \
	  if ! build/fuzz/$$f -max_total_time=$(FUZZ_TIME) -max_len=65536 \
	      -print_final_stats=1 -artifact_prefix=build/fuzz/ \
	      build/fuzz/corpus-$$f build/fuzz/seeds > build/fuzz/$$f.log 2>&1; then \
	    tail -n 40 build/fuzz/$$f.log; echo "fuzz: $$f found a problem"; exit 1; \
	  fi; \
	  grep -E 'Done|stat::(number_of_executed_units|new_units_added)' build/fuzz/$$f.log; \
	done

# the flame graph's search and zoom in headless Chromium (apt-get install chromium)
check-browser: build/sift/core.so
	@$(SPEC_ENV) SIFT_CPATH="build/?.so" LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" \
	  lua5.4 spec/browser_check.lua

# the fuzzers are built two at a time (each links every decoder), then run in turn
fuzz-smoke:
	@$(MAKE) --no-print-directory -j2 $(addprefix build/fuzz/,$(FUZZERS)) build/fuzz/seeds
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=7

demo: deps build/sift/core.so
	@$(RUN_ENV) $(LUA) examples/demo.lua

# the peers: VisualVM's heap library (Debian visualvm) for heap indexing
bench: deps build/sift/core.so build/bench/hprof_walk
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="visualvm file python3-ofxparse ofx time"
	@$(RUN_ENV) $(LUA) bench/run.lua

# the floor under the heap index and graph (bench/hprof.lua): a bare C walk of a dump's records
build/bench/hprof_walk: bench/hprof_walk.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -o $@ $<

# the Lua modules, as paths under lua/ (sift/*.lua, sift/ofx/*.lua...)
LUA_MODULES = $(patsubst lua/%,%,$(wildcard lua/sift/*.lua lua/sift/*/*.lua))

install: build/sift/core.so
	install -d $(DESTDIR)$(INST_LIBDIR)/sift $(DESTDIR)$(BINDIR) \
	  $(addprefix $(DESTDIR)$(INST_LUADIR)/,$(sort $(dir $(LUA_MODULES))))
	install -m 755 build/sift/core.so $(DESTDIR)$(INST_LIBDIR)/sift/core.so
	for m in $(LUA_MODULES); do install -m 644 lua/$$m $(DESTDIR)$(INST_LUADIR)/$$m || exit 1; done
	sed '1s|.*|#!/usr/bin/env $(LUA)|' bin/sift > $(DESTDIR)$(BINDIR)/sift
	chmod 755 $(DESTDIR)$(BINDIR)/sift

uninstall:
	rm -f $(DESTDIR)$(INST_LIBDIR)/sift/core.so $(DESTDIR)$(BINDIR)/sift
	rm -f $(addprefix $(DESTDIR)$(INST_LUADIR)/,$(LUA_MODULES))
	-rmdir $(addprefix $(DESTDIR)$(INST_LUADIR)/,$(sort $(dir $(filter sift/%/%,$(LUA_MODULES))))) 2>/dev/null
	-rmdir $(DESTDIR)$(INST_LIBDIR)/sift $(DESTDIR)$(INST_LUADIR)/sift 2>/dev/null

# build and install the rock offline (.luarocks/config-5.4.lua) into a tree
ROCKTREE ?= lua_modules
rock:
	luarocks --lua-version=5.4 make --tree=$(ROCKTREE) sift-scm-1.rockspec

clean:
	rm -rf build sift lua_modules/*

help:
	@echo "make            build build/sift/core.so"
	@echo "make deps       install missing Debian packages (apt-get)"
	@echo "make test       zero-warning build, luacheck, specs, specs under ASan/UBSan, fuzz smoke"
	@echo "make spec       the specs: spec-light (all but #heavy) beside spec-heavy"
	@echo "make lint-lua   luacheck over lua/, bin/sift, spec/, bench/ and examples/ (.luacheckrc)"
	@echo "make demo       run sift on the shared fixtures (or generated files)"
	@echo "make bench      timings and throughput"
	@echo "make fuzz       run every fuzz harness for FUZZ_TIME seconds (default 60)"
	@echo "make check-browser  flame-graph search and zoom in headless Chromium"
	@echo "make install    install into PREFIX (default /usr/local), DESTDIR honoured"
	@echo "make rock       luarocks make, offline, into ROCKTREE"
