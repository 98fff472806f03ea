#!/bin/sh
# Seed inputs for the fuzzers: the first 64 KiB of every shared fixture
# (when ../shared/fixtures is there) and a few hand-made starts. Written
# under build/, never committed.
set -e
out=${1:-build/fuzz/seeds}
fixtures=${SIFT_FIXTURES:-../shared/fixtures}
mkdir -p "$out"
if [ -d "$fixtures" ]; then
  find "$fixtures" -type f -size -20M | while read -r f; do
    name=$(printf '%s' "${f#"$fixtures"/}" | tr '/ ' '__')
    head -c 65536 "$f" > "$out/$name"
  done
fi
printf 'JAVA PROFILE 1.0.3\000\000\000\000\004\000\000\001\000\000\000\000\000' > "$out/hprof-header"
printf '\001\022JAVA PROFILE 1.0.2\010' > "$out/bmd-header"
printf 'SLOW\363\000\040\000\000\000\000\000\000\000\000\000\016\000' > "$out/streaming-header"
printf 'OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX>' > "$out/ofx-v1"
# class files and a jar for the bytecode fuzzer, compiled from the lint spec's sources
if command -v javac >/dev/null 2>&1 && command -v jar >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  env -u LD_PRELOAD javac -d "$tmp/classes" $(find spec/java/lint -name '*.java') 2>/dev/null &&
    (cd "$tmp/classes" && env -u LD_PRELOAD jar cf "$tmp/lint.jar" .) &&
    cp "$tmp/classes/sample/Shapes.class" "$out/class-shapes" && cp "$tmp/lint.jar" "$out/jar-lint"
  # annotations (@SuppressLint: RuntimeInvisibleAnnotations; @Target, @Retention: RuntimeVisibleAnnotations)
  env -u LD_PRELOAD javac -d "$tmp/suppress" $(find spec/java/lintsuppress spec/java/lintandroid/android \
      spec/java/lint/android -name '*.java') 2>/dev/null &&
    cp "$tmp/suppress/sample/Suppressed.class" "$out/class-suppressed" &&
    cp "$tmp/suppress/android/annotation/SuppressLint.class" "$out/class-annotation"
  rm -rf "$tmp"
fi
# a dex for the bytecode fuzzer, written by the lint spec's dex writer
if command -v lua5.4 >/dev/null 2>&1; then
  LUA_PATH="lua/?.lua;lua/?/init.lua;;" lua5.4 -e "
    package.path = './?.lua;' .. package.path
    local w = dofile('spec/dex_writer.lua').new()
    w:class { name = 'La/B;', source = 'B.java', methods = { { name = 'f', params = { 'I' }, ret = 'I', registers = 2,
      code = { { 'move-exception', 0 }, { 'throw', 0 }, { 'return', 1 } }, lines = { { 0, 3 }, { 2, 4 } },
      tries = { { start = 0, count = 1, handlers = { { 'Ljava/lang/Exception;', 2 } }, catch_all = 2 } } } } }
    io.open('$out/dex-small', 'wb'):write(w:bytes())" 2>/dev/null
fi
# a BMD with sift's record of root kinds, for the BMD fuzzer
if [ -f "$fixtures/hprof/hprof-slurp/hprof-32.bin" ] && [ -f build/sift/core.so ]; then
  LUA_PATH="lua/?.lua;lua/?/init.lua;;" SIFT_CPATH="build/?.so" lua5.4 bin/sift crunch -q \
    "$fixtures/hprof/hprof-slurp/hprof-32.bin" "$out/bmd-kinds" >/dev/null 2>&1 || true
fi
