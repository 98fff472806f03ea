-- sift lint on classes javac compiles now from spec/java/lint (a stub of
-- android.database.Cursor, and every shape of Cursor handling, each
-- method named for what must be reported), as class files and as a jar;
-- and the heap side: resources never closed in a JVM dump made with jcmd
-- and in an Android dump written by spec/hprof_writer.lua.
local cjson = require "cjson"
local helper = require "spec.helper"
local lint = require "sift.lint"

local quote = helper.quote

-- the sources compiled into a fresh directory; nil without a JDK
local function compile()
  if not os.execute("command -v javac >/dev/null && command -v jar >/dev/null") then return nil end
  local dir = helper.tmpdir()
  local p = io.popen("find spec/java/lint -name '*.java'")
  local sources = p:read("a"):gsub("\n", " ")
  p:close()
  assert(os.execute(("env -u LD_PRELOAD javac -d %s/classes %s"):format(quote(dir), sources)))
  return dir
end

-- the line of the first source line after `method`'s name holding `text`
local function line_of(method, text)
  local n, inside = 0, false
  for line in io.lines("spec/java/lint/sample/Shapes.java") do
    n = n + 1
    if line:find(" " .. method .. "(", 1, true) then inside = true end
    if inside and line:find(text, 1, true) then return n end
  end
end

-- what must be found in Shapes: method, criterion, instruction's method, source text on its line
local EXPECTED = {
  { "closeInCatchOnly", "try-without-close", "Cursor.getCount", "c.getCount()" },
  { "loopOutsideTry", "op-outside-try", "Cursor.moveToNext", "c.moveToNext()" },
  { "neverClosed", "never-closed", "SQLiteDatabase.rawQuery", "db.rawQuery" },
  { "outsideTry", "op-outside-try", "Cursor.getCount", "c.getCount()" },
  -- returned, but moveToFirst (which runs the query) may throw first: then nobody closes it
  { "returned", "not-closed-on-exception", "SQLiteDatabase.query", "db.query" },
  { "tryCatchWithoutClose", "never-closed", "SQLiteDatabase.rawQuery", "db.rawQuery" },
  { "tryCatchWithoutClose", "try-without-close", "Cursor.moveToFirst", "c.moveToFirst()" },
}

describe("sift lint (Cursor rule) on classes javac made", function()
  it("reports exactly the shapes that leak, with their lines, in class files and in a jar", function()
    local dir = compile()
    if not dir then return pending("no JDK") end
    local classes, problems = assert(lint.load { dir .. "/classes" })
    assert.are.same({ 4, {} }, { #classes, problems })
    local findings = lint.check(classes)
    local got = {}
    for i, f in ipairs(findings) do
      got[i] = { f.method, f.criterion, f.instruction:match("/([%w]+%.[%w]+)%("), f.line }
      assert.are.same({ "sample.Shapes", "cursor", "Shapes.java" }, { f.class, f.rule, f.source })
    end
    local want = {}
    for i, e in ipairs(EXPECTED) do want[i] = { e[1], e[2], e[3], line_of(e[1], e[4]) } end
    assert.are.same(want, got)
    -- the same from a jar
    assert(os.execute(("cd %s/classes && env -u LD_PRELOAD jar cf ../shapes.jar . "):format(quote(dir))))
    local from_jar = lint.check((assert(lint.load { dir .. "/shapes.jar" })))
    assert.are.equal(#findings, #from_jar)
    assert.matches("shapes%.jar!/sample/Shapes%.class$", from_jar[1].file)
    for i, f in ipairs(from_jar) do assert.are.same({ findings[i].method, findings[i].pc }, { f.method, f.pc }) end
  end)

  it("says it on the command line: text, --json, --sarif, exit 1; other rules; damaged inputs skipped aloud", function()
    local dir = compile()
    if not dir then return pending("no JDK") end
    local classes = dir .. "/classes"
    local out, err, code = helper.sift { "lint", classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.matches("Shapes.java:%d+: sample.Shapes.outsideTry %[cursor/op%-outside%-try%] Cursor: an operation "
      .. "outside any try block\n      at pc %d+: invokeinterface android/database/Cursor.getCount%(%)I\n", out)
    assert.matches("\n7 findings in 4 classes\n$", out)
    local doc = cjson.decode((helper.sift { "lint", "--json", classes }))
    assert.are.same({ 4, 7, 0 }, { doc.classes, #doc.findings, #doc.skipped })
    -- SARIF 2.1.0: one run, rules by id, results located at the source line
    local sarif = cjson.decode((helper.sift { "lint", "--sarif", classes }))
    assert.are.equal("2.1.0", sarif.version)
    local run = sarif.runs[1]
    assert.are.equal("sift", run.tool.driver.name)
    local ids = {}
    for i, r in ipairs(run.tool.driver.rules) do ids[r.id] = i - 1 end
    assert.are.equal(7, #run.results)
    for _, r in ipairs(run.results) do
      assert.are.equal(ids[r.ruleId], r.ruleIndex)
      local loc = r.locations[1].physicalLocation
      assert.are.equal("sample/Shapes.java", loc.artifactLocation.uri)
      assert.is_true(loc.region.startLine > 0)
    end
    -- the closeable rule on streams; a rule that finds nothing exits 0
    out, err, code = helper.sift { "lint", "--rules", "closeable", "--json", classes }
    assert.are.same({ 1, "" }, { code, err })
    local streams = cjson.decode(out).findings
    local seen = {}
    for i, f in ipairs(streams) do seen[i] = f.method .. " " .. f.criterion end
    -- (op-outside-try is the Cursor detector's criterion: streams are judged by the paths they take)
    assert.are.same({ "closesUnlessThrown not-closed-on-exception", "leaks never-closed" }, seen)
    out, err, code = helper.sift { "lint", "--rules", "typedarray", classes }
    assert.are.same({ 0, "0 findings in 4 classes\n", "" }, { code, out, err })
    out, err, code = helper.sift { "lint", "--rules", "nope", classes }
    assert.are.equal("", out)
    assert.are.same({ 2, "sift: --rules: unknown rule 'nope' (known: closeable, contentproviderclient, cursor, "
      .. "motionevent, parcel, parcelfiledescriptor, typedarray, velocitytracker)\n" }, { code, err })
    -- a cut class file and a file that is no class: skipped, said on stderr, the rest checked; the
    -- status is 3 (an input not read), not 1, though there are findings: the check was incomplete
    local shapes = helper.read(classes .. "/sample/Shapes.class")
    local cut = helper.tmpfile(shapes:sub(1, #shapes // 2))
    out, err, code = helper.sift { "lint", "--json", cut, classes }
    assert.are.equal(3, code)
    local doc3 = cjson.decode(out)
    assert.are.same({ 7, 1, cut }, { #doc3.findings, #doc3.skipped, doc3.skipped[1].file })
    assert.matches("^sift: skipped .-: class file: [%a' ]+ at byte %d+\n$", err)
    out, err, code = helper.sift { "lint", cut, classes }
    assert.are.equal(3, code)
    assert.matches("\n7 findings in 4 classes, 1 input not read\n$", out)
    assert.matches("^sift: skipped .-: class file: [%a' ]+ at byte %d+\n$", err)
    local sarif3 = cjson.decode((helper.sift { "lint", "--sarif", cut, classes })).runs[1]
    assert.are.same({ false, 1, "error", cut, 7 }, { sarif3.invocations[1].executionSuccessful,
      #sarif3.invocations[1].toolExecutionNotifications, sarif3.invocations[1].toolExecutionNotifications[1].level,
      sarif3.invocations[1].toolExecutionNotifications[1].locations[1].physicalLocation.artifactLocation.uri,
      #sarif3.results })
    assert.is_true(sarif.runs[1].invocations[1].executionSuccessful)
    -- nothing readable at all: 3, never 0; every input named on stderr, in the order given
    local junk = helper.tmpfile("PK\3\4 not really a zip")
    local missing = os.tmpname()
    os.remove(missing)
    local empty_dir = helper.tmpdir()
    out, err, code = helper.sift { "lint", junk, missing, empty_dir }
    assert.are.same({ 3, "0 findings in 0 classes, 3 inputs not read\n" }, { code, out })
    assert.are.equal(("sift: skipped %s: no zip directory (not a jar or apk, or cut short)\n"
      .. "sift: skipped %s: No such file or directory\n"
      .. "sift: skipped %s: a directory with no class, dex, jar or apk file in it\n"):format(junk, missing, empty_dir), err)
    out, err, code = helper.sift { "lint", "--json", missing }
    assert.are.same({ 3, { classes = 0, findings = {}, skipped = { { file = missing,
      message = "No such file or directory" } } } }, { code, cjson.decode(out) })
    assert.are.equal(("sift: skipped %s: No such file or directory\n"):format(missing), err)
    -- --help says it
    out = helper.sift { "lint", "--help" }
    assert.matches("Exit status: 0 nothing found; 1 findings; 3 an input could not be read", out, 1, true)
    os.remove(cut)
    os.remove(junk)
    os.remove(empty_dir)
  end)
end)

-- the line of the first line of `file` after `method`'s name holding `text`
local function line_in(file, method, text)
  local n, inside = 0, false
  for line in io.lines(file) do
    n = n + 1
    if line:find(" " .. method .. "(", 1, true) then inside = true end
    if inside and line:find(text, 1, true) then return n end
  end
end

describe("sift lint's resource model (closeable rule) on spec/java/lintres", function()
  it("follows each stream through wrappers, helpers, factories, branches and exceptions; --classpath", function()
    if not os.execute("command -v javac >/dev/null") then return pending("no JDK") end
    local dir = helper.tmpdir()
    local javac = "env -u LD_PRELOAD javac -nowarn "
    assert(os.execute(("%s -d %s/lib $(find spec/java/lintlib -name '*.java')"):format(javac, quote(dir))))
    assert(os.execute(("%s -cp %s/lib -d %s/classes spec/java/lintres/sample/Resources.java")
      :format(javac, quote(dir), quote(dir))))
    local source = "spec/java/lintres/sample/Resources.java"
    local function found(args)
      local out, err, code = helper.sift(args)
      assert.are.same({ 1, "" }, { code, err })
      local got = {}
      for i, f in ipairs(cjson.decode(out).findings) do got[i] = { f.method, f.criterion, f.line } end
      return got
    end
    -- method, criterion, the text on the line of the opening instruction
    local want = {
      { "closedOnOneBranch", "not-closed-on-path", "new FileInputStream(f)" },
      { "factoryNeverClosed", "never-closed", "open(f)" },
      -- if opening the second throws, the first leaks; the second is never closed
      { "secondNeverClosed", "not-closed-on-exception", "new FileInputStream(a)" },
      { "secondNeverClosed", "never-closed", "new FileInputStream(b)" },
      { "storedAfterThrow", "not-closed-on-exception", "new FileInputStream(f)" },
      -- in leaks when opening out throws; out when the copy (or in.close) throws
      { "twoResources", "not-closed-on-exception", "new FileInputStream(a)" },
      { "twoResources", "not-closed-on-exception", "new FileOutputStream(b)" },
    }
    for _, w in ipairs(want) do w[3] = assert(line_in(source, w[1], w[3]), w[1]) end
    assert.are.same(want, found { "lint", "--json", "--rules", "closeable", "--classpath", dir .. "/lib", "--",
      dir .. "/classes" })
    -- without the jar that holds lib.Closing.shut, the stream it closes is closed nowhere sift can see
    local without = found { "lint", "--json", "--rules", "closeable", dir .. "/classes" }
    table.insert(want, 1, { "closedInOtherJar", "never-closed", line_in(source, "closedInOtherJar", "new FileInputStream") })
    assert.are.same(want, without)
    -- the model's summaries of the helpers: closeAll closes through quietly; open is a factory; getStream an accessor
    local lint_classes = assert(lint.load { dir .. "/classes" })
    local rules = lint.select("closeable")
    local summaries = require("sift.lint").summaries(lint_classes, rules.closeable)
    local function summary(name, desc)
      local s = summaries["sample/Resources." .. name .. desc]
      return s and { s.closes[1] or false, s.fresh, s.kept }
    end
    assert.are.same({ true, false, false }, summary("closeAll", "(Ljava/io/InputStream;)V"))
    assert.are.same({ true, false, false }, summary("quietly", "(Ljava/io/InputStream;)V"))
    assert.are.same({ false, true, false }, summary("open", "(Ljava/io/File;)Ljava/io/InputStream;"))
    assert.are.same({ false, false, true }, summary("getStream", "()Ljava/io/InputStream;"))
    os.execute("rm -rf " .. quote(dir))
  end)
end)

-- the Cursor shapes as dex (what d8 makes of them: registers, move-result,
-- catch-all handlers), written by spec/dex_writer.lua
local function shapes_dex()
  local writer = dofile("spec/dex_writer.lua")
  local DB, CURSOR = "Landroid/database/sqlite/SQLiteDatabase;", "Landroid/database/Cursor;"
  local raw = { class = DB, name = "rawQuery", params = { "Ljava/lang/String;", "[Ljava/lang/String;" }, ret = CURSOR }
  local count = { class = CURSOR, name = "getCount", params = {}, ret = "I" }
  local close = { class = CURSOR, name = "close", params = {}, ret = "V" }
  local first = { class = CURSOR, name = "moveToFirst", params = {}, ret = "Z" }
  local kept = { class = "Lsample/DexShapes;", name = "kept", type = CURSOR }
  -- the query that opens a Cursor into v0 (pcs 0-6), then the rest
  local function opened(...)
    local code = { { "const-string", 0, "select 1" }, { "const/4", 1, 0 }, { "invoke-virtual", { 2, 0, 1 }, raw },
      { "move-result-object", 0 } }
    for _, ins in ipairs { ... } do code[#code + 1] = ins end
    return code
  end
  local w = writer.new()
  w:class { name = "Lsample/DexShapes;", source = "DexShapes.java", methods = {
    { name = "outsideTry", params = { DB }, ret = "I", registers = 3, lines = { { 0, 10 }, { 7, 11 }, { 11, 12 } },
    locals = { { reg = 0, name = "c", type = CURSOR, start = 7, stop = 15 }, { reg = 1, name = "n", type = "I", start = 11, stop = 15 } },
      code = opened({ "invoke-interface", { 0 }, count }, { "move-result", 1 }, { "invoke-interface", { 0 }, close },
        { "return", 1 }) },
    { name = "tryFinally", params = { DB }, ret = "I", registers = 3, lines = { { 0, 20 }, { 7, 21 }, { 11, 23 } },
      code = opened({ "invoke-interface", { 0 }, count }, { "move-result", 1 }, { "invoke-interface", { 0 }, close },
        { "return", 1 }, { "move-exception", 1 }, { "invoke-interface", { 0 }, close }, { "throw", 1 }),
      tries = { { start = 7, count = 4, catch_all = 15 } } },
    { name = "tryCatch", params = { DB }, ret = "Z", registers = 3, lines = { { 0, 30 }, { 7, 31 } },
      code = opened({ "invoke-interface", { 0 }, first }, { "move-result", 1 }, { "return", 1 },
        { "move-exception", 1 }, { "const/4", 1, 0 }, { "return", 1 }),
      tries = { { start = 7, count = 4, handlers = { { "Ljava/lang/RuntimeException;", 12 } } } } },
    { name = "returned", params = { DB }, ret = CURSOR, registers = 3, lines = { { 0, 40 } },
      code = opened({ "invoke-interface", { 0 }, first }, { "return-object", 0 }) },
    { name = "storedInField", params = { DB }, ret = "V", registers = 3, lines = { { 0, 50 } },
      code = opened({ "sput-object", 0, kept }, { "invoke-interface", { 0 }, first }, { "return-void" }) },
  } }
  return w:bytes()
end

-- dexdump's view of a dex file: per method "Class.name", its instructions
-- {pc, mnemonic}, catches {start, end, handler, type}, positions {pc, line}
-- and named locals {start, end, register, name, type}
local function dexdump(path)
  local p = io.popen("env -u LD_PRELOAD dexdump -d " .. quote(path) .. " 2>&1")
  local text = p:read("a")
  p:close()
  local out, m, section = {}, nil, nil
  for line in text:gmatch("[^\n]+") do
    local name = line:match("^%x+:%s+|%[%x+%] ([%w.$]+:)")
    if name then
      m = { code = {}, catches = {}, positions = {}, locals = {} }
      out[name:gsub(":$", ""):match("[^.]+%.[^.]+$")] = m
      section = "code"
    elseif m then
      local pc, op = line:match("^%x+: [%x ]+|(%x+): ([%w/-]+)")
      if pc then m.code[#m.code + 1] = { tonumber(pc, 16), op } end
      if line:match("^%s+catches") then section = "catches" end
      if line:match("^%s+positions") then section = "positions" end
      local a, b = line:match("^%s+0x(%x+) %- 0x(%x+)$")
      if a and section == "catches" then m.range = { tonumber(a, 16), tonumber(b, 16) } end
      local type, h = line:match("^%s+(%S+) %-> 0x(%x+)$")
      if type and m.range then
        m.catches[#m.catches + 1] = { m.range[1], m.range[2], tonumber(h, 16), type ~= "<any>" and type or nil }
      end
      if line:match("^%s+locals") then section = "locals" end
      local from, to, reg, lname, ltype = line:match("^%s+0x(%x+) %- 0x(%x+) reg=(%d+) (%S+) (%S+)")
      if from and section == "locals" and lname ~= "(null)" then  -- (parameters without names left out)
        m.locals[#m.locals + 1] = { tonumber(from, 16), tonumber(to, 16), tonumber(reg), lname, ltype }
      end
      local at, l = line:match("^%s+0x(%x+) line=(%d+)$")
      if at and section == "positions" then m.positions[#m.positions + 1] = { tonumber(at, 16), tonumber(l) } end
    end
  end
  return out
end

describe("sift lint on dex", function()
  it("reads dex as Android's dexdump does, and finds the same shapes as in class files, in a dex and an apk", function()
    local core = require "sift.core"
    local dir = helper.tmpdir()
    local path = dir .. "/classes.dex"
    local f = assert(io.open(path, "wb"))
    f:write(shapes_dex())
    f:close()
    local classes = assert(core.dexfile(helper.read(path)))
    assert.are.same({ "sample/DexShapes", "java/lang/Object", "DexShapes.java" },
      { classes[1].name, classes[1].super, classes[1].source })
    -- the second opinion: dexdump's disassembly, catches and positions
    if os.execute("command -v dexdump >/dev/null") then
      local dumped = dexdump(path)
      for _, m in ipairs(classes[1].methods) do
        local d = assert(dumped["DexShapes." .. m.name], m.name)
        local code, lines = {}, {}
        for i, ins in ipairs(m.code) do code[i] = { ins.pc, ins.op } end
        assert.are.same(d.code, code)
        local tries = {}
        for i, t in ipairs(m.tries) do
          tries[i] = { t.start, t.stop, t.handler, t.type and ("L" .. t.type .. ";") or nil }
        end
        assert.are.same(d.catches, tries)
        for _, ins in ipairs(m.code) do lines[ins.pc] = ins.line end
        for _, pos in ipairs(d.positions) do assert.are.equal(pos[2], lines[pos[1]]) end
        local locals = {}
        for i, l in ipairs(m.locals) do locals[i] = { l.start, l.stop, l.index, l.name, l.desc } end
        assert.are.same(d.locals, locals)
      end
    else
      pending("no dexdump: the disassembly is not compared")
    end
    local function found(target)
      local out, err, code = helper.sift { "lint", "--json", target }
      assert.are.same({ 1, "" }, { code, err })
      local got = {}
      for i, x in ipairs(cjson.decode(out).findings) do got[i] = { x.method, x.criterion, x.pc, x.line } end
      return got, cjson.decode(out).findings
    end
    local want = { { "outsideTry", "op-outside-try", 7, 11 }, { "returned", "not-closed-on-exception", 3, 40 },
      { "tryCatch", "never-closed", 3, 30 }, { "tryCatch", "try-without-close", 7, 31 } }
    assert.are.same(want, (found(path)))
    -- in an apk (a zip holding classes.dex)
    assert(os.execute(("cd %s && env -u LD_PRELOAD jar cfM app.apk classes.dex"):format(quote(dir))))
    local from_apk, findings = found(dir .. "/app.apk")
    assert.are.same(want, from_apk)
    assert.matches("app%.apk!/classes%.dex$", findings[1].file)
    -- a cut dex: skipped, said, the rest still read
    local bytes = helper.read(path)
    local cut = helper.tmpfile(bytes:sub(1, 0x200))
    local out, err, code = helper.sift { "lint", "--json", cut, path }
    assert.are.same({ 4, 3 }, { #cjson.decode(out).findings, code })  -- (four findings; status 3: an input not read)
    assert.matches("^sift: skipped .-: dex file: [%w' ]+ at byte %d+\n$", err)
    os.remove(cut)
    os.execute("rm -rf " .. quote(dir))
  end)
end)

-- FindBugs (Debian's 3.1.0~preview2) reads neither JDK 17's class library
-- (no rt.jar; its ASM stops at NestMembers) nor so classes built against
-- it: it gets the samples compiled for Java 8 against this stub of the
-- few JDK classes they use, written and compiled here.
local BOOT = {
  ["java/lang/Object"] = "public class Object { public Object() {} public boolean equals(Object o) { return this == o; } "
    .. "public int hashCode() { return 0; } public String toString() { return null; } }",
  ["java/lang/Throwable"] = "public class Throwable implements java.io.Serializable { public Throwable() {} "
    .. "public void addSuppressed(Throwable t) {} }",
  ["java/lang/Exception"] = "public class Exception extends Throwable { public Exception() {} }",
  ["java/lang/RuntimeException"] = "public class RuntimeException extends Exception { public RuntimeException() {} }",
  ["java/lang/IllegalStateException"] = "public class IllegalStateException extends RuntimeException {}",
  ["java/lang/InterruptedException"] = "public class InterruptedException extends Exception {}",
  ["java/lang/Error"] = "public class Error extends Throwable {}",
  ["java/lang/String"] = "public final class String implements CharSequence { public int length() { return 0; } }",
  ["java/lang/CharSequence"] = "public interface CharSequence { int length(); }",
  ["java/lang/AutoCloseable"] = "public interface AutoCloseable { void close() throws Exception; }",
  ["java/lang/Class"] = "public final class Class<T> {}",
  ["java/lang/Iterable"] = "public interface Iterable<T> { java.util.Iterator<T> iterator(); }",
  ["java/io/Serializable"] = "public interface Serializable {}",
  ["java/io/Closeable"] = "public interface Closeable extends AutoCloseable { void close() throws IOException; }",
  ["java/io/IOException"] = "public class IOException extends Exception { public IOException() {} }",
  ["java/io/FileNotFoundException"] = "public class FileNotFoundException extends IOException {}",
  ["java/io/InputStream"] = "public abstract class InputStream implements Closeable { "
    .. "public abstract int read() throws IOException; public void close() throws IOException {} }",
  ["java/io/FileInputStream"] = "public class FileInputStream extends InputStream { "
    .. "public FileInputStream(String s) throws FileNotFoundException {} public int read() throws IOException { return 0; } }",
  ["java/util/Iterator"] = "public interface Iterator<E> { boolean hasNext(); E next(); }",
  ["java/util/Collection"] = "public interface Collection<E> extends Iterable<E> { boolean add(E e); void clear(); }",
  ["java/util/List"] = "public interface List<E> extends Collection<E> {}",
  ["java/util/ArrayList"] = "public class ArrayList<E> implements List<E> { public ArrayList() {} "
    .. "public boolean add(E e) { return true; } public void clear() {} public Iterator<E> iterator() { return null; } }",
}

-- FindBugs's findings that name a sample method first: "Class.method PATTERN", sorted
local function findbugs(dir)
  local sources = {}
  for name, body in pairs(BOOT) do
    local path = ("%s/boot-src/%s.java"):format(dir, name)
    os.execute("mkdir -p " .. quote(path:match("^(.*)/")))
    local f = assert(io.open(path, "w"))
    f:write("package ", name:match("^(.*)/"):gsub("/", "."), ";\n", body, "\n")
    f:close()
    sources[#sources + 1] = quote(path)
  end
  local javac = "env -u LD_PRELOAD javac -nowarn -source 8 -target 8 -Xlint:-options "
  assert(os.execute(("%s -d %s/boot %s"):format(javac, quote(dir), table.concat(sources, " "))))
  local p = io.popen("find spec/java/lint -name '*.java'")
  local samples = p:read("a"):gsub("\n", " ")
  p:close()
  assert(os.execute(("%s -bootclasspath %s/boot -d %s/java8 %s"):format(javac, quote(dir), quote(dir), samples)))
  p = io.popen(("env -u LD_PRELOAD findbugs -textui -effort:max -low -auxclasspath %s/boot %s/java8 2>/dev/null")
    :format(quote(dir), quote(dir)))
  local out = {}
  for pattern, method in p:read("a"):gmatch("\n?%u %u (%u+): sample%.([%w.]+)%(") do
    out[#out + 1] = method .. " " .. pattern
  end
  p:close()
  table.sort(out)
  return out
end

describe("sift lint beside FindBugs", function()
  it("finds what FindBugs's open-resource detectors find on streams, and the Cursors they do not know", function()
    if not os.execute("command -v findbugs >/dev/null && command -v javac >/dev/null") then
      return pending("no findbugs or JDK")
    end
    local dir = helper.tmpdir()
    local theirs = findbugs(dir)
    -- FindBugs: the stream read and never closed (OS_OPEN_STREAM, OBL_UNSATISFIED_OBLIGATION); no Cursor
    -- finding (they know java.io and java.sql, not Android); no finding on the stream closed only when the
    -- read does not throw
    assert.are.same({ "Streams.leaks OBL", "Streams.leaks OS" }, theirs)
    -- sift on the same classes: the same stream, the one closed only when read does not throw, and the Cursors
    local ours = {}
    for _, rules in ipairs { "closeable", "cursor" } do
      local out = helper.sift { "lint", "--json", "--rules", rules, dir .. "/java8" }
      for _, f in ipairs(cjson.decode(out).findings) do
        ours[#ours + 1] = f.class:match("[^.]+$") .. "." .. f.method .. " " .. f.criterion
      end
    end
    table.sort(ours)
    assert.are.same({ "Shapes.closeInCatchOnly try-without-close", "Shapes.loopOutsideTry op-outside-try",
      "Shapes.neverClosed never-closed", "Shapes.outsideTry op-outside-try", "Shapes.returned not-closed-on-exception",
      "Shapes.tryCatchWithoutClose never-closed", "Shapes.tryCatchWithoutClose try-without-close",
      "Streams.closesUnlessThrown not-closed-on-exception", "Streams.leaks never-closed" }, ours)
    os.execute("rm -rf " .. quote(dir))
  end)
end)

describe("unclosed resources in heap dumps (sift leaks)", function()
  it("finds the JDK file streams a program left open, not the closed one nor the JDK's own", function()
    local dump = helper.jvm_dump("OpenStreams")
    if not dump then return pending("no JDK") end
    local report = cjson.decode((helper.sift { "leaks", "--json", "-q", dump }))
    local got = {}
    for _, g in ipairs(report.unclosed_resources) do
      local roots = {}
      for _, t in ipairs(g.traces) do
        assert.matches("^a java%.io%.File%a+Stream that was never closed %(file descriptor %d+%)$",
          t.elements[#t.elements].reason)
        roots[#roots + 1] = t.elements[2].ref
      end
      got[#got + 1] = { g.description, #g.traces, roots[1] }
    end
    table.sort(got, function(a, b) return a[1] < b[1] end)
    assert.are.same({ { "java.io.FileInputStream never closed", 2, "static OPEN" },
      { "java.io.FileOutputStream never closed", 1, "static log" } }, got)
  end)

  it("finds armed CloseGuards, open Cursors and CursorWindows in an Android dump", function()
    local writer = dofile("spec/hprof_writer.lua")
    local w = writer.new { version = "1.0.3", id_size = 4 }
    local object = w:class("java.lang.Object")
    local string = w:class("java.lang.String", { super = object, fields = { { "count", "int" }, { "value", "object" } } })
    local throwable = w:class("java.lang.Throwable", { super = object, fields = { { "detailMessage", "object" } } })
    local guard = w:class("dalvik.system.CloseGuard", { super = object,
      fields = { { "closerNameOrAllocationInfo", "object" } } })
    local window = w:class("android.database.CursorWindow", { super = object,
      fields = { { "mWindowPtr", "long" }, { "mCloseGuard", "object" } } })
    local abstract = w:class("android.database.AbstractCursor", { super = object, fields = { { "mClosed", "boolean" } } })
    local cursor = w:class("android.database.sqlite.SQLiteCursor", { super = abstract,
      fields = { { "mWindow", "object" } } })
    local socket = w:class("com.example.Channel", { super = object, fields = { { "guard", "object" } } })
    local array = w:class("java.lang.Object[]", { super = object })
    local db = w:class("com.example.Db", { super = object, statics = { { "open", "object" } } })
    local function str(s)
      local chars = {}
      for i = 1, #s do chars[i] = s:sub(i, i) end
      return w:instance(string, { count = #s, value = w:primitive_array("char", chars) })
    end
    local armed = w:instance(guard, { closerNameOrAllocationInfo = str("close") })
    local window1 = w:instance(window, { mWindowPtr = 0x7f001000, mCloseGuard = armed })
    local window2 = w:instance(window, { mWindowPtr = 0, mCloseGuard = w:instance(guard, {}) })
    local open_cursor = w:instance(cursor, { mClosed = false, mWindow = window1 })
    local closed_cursor = w:instance(cursor, { mClosed = true })
    local site = w:instance(throwable, { detailMessage = str("Explicit termination method 'close' not called") })
    local channel = w:instance(socket, { guard = w:instance(guard, { closerNameOrAllocationInfo = site }) })
    w:set_static(db, "open", w:object_array(array, { open_cursor, closed_cursor, window2, channel }))
    w:root("sticky_class", db)
    local path = helper.tmpfile(w:bytes())
    local out, err = helper.sift { "leaks", "--json", "-q", path }
    os.remove(path)
    assert.are.equal("", err)
    local report = cjson.decode(out)
    local got = {}
    for _, g in ipairs(report.unclosed_resources) do
      local last = g.traces[1].elements[#g.traces[1].elements]
      got[#got + 1] = { last.class, last.reason }
    end
    table.sort(got, function(a, b) return a[1] < b[1] end)
    assert.are.same({
      { "android.database.CursorWindow", "its CloseGuard is armed: close() was never called" },
      { "android.database.sqlite.SQLiteCursor", "a android.database.sqlite.SQLiteCursor that was never closed" },
      { "com.example.Channel", "its CloseGuard is armed: allocated at: Explicit termination method 'close' not called" },
    }, got)
  end)
end)
