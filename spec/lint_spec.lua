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
    assert.matches("\n6 findings in 4 classes\n$", out)
    local doc = cjson.decode((helper.sift { "lint", "--json", classes }))
    assert.are.same({ 4, 6, 0 }, { doc.classes, #doc.findings, #doc.skipped })
    -- SARIF 2.1.0: one run, rules by id, results located at the source line
    local sarif = cjson.decode((helper.sift { "lint", "--sarif", classes }))
    assert.are.equal("2.1.0", sarif.version)
    local run = sarif.runs[1]
    assert.are.equal("sift", run.tool.driver.name)
    local ids = {}
    for i, r in ipairs(run.tool.driver.rules) do ids[r.id] = i - 1 end
    assert.are.equal(6, #run.results)
    for _, r in ipairs(run.results) do
      assert.are.equal(ids[r.ruleId], r.ruleIndex)
      local loc = r.locations[1].physicalLocation
      assert.are.equal("sample/Shapes.java", loc.artifactLocation.uri)
      assert.is_true(loc.region.startLine > 0)
    end
    -- the closeable rule on streams; a rule that finds nothing exits 0
    out, err, code = helper.sift { "lint", "--rules", "closeable", "--json", classes }
    local streams = cjson.decode(out).findings
    local seen = {}
    for i, f in ipairs(streams) do seen[i] = f.method .. " " .. f.criterion end
    assert.are.same({ "closesUnlessThrown op-outside-try", "leaks never-closed", "leaks op-outside-try" }, seen)
    out, err, code = helper.sift { "lint", "--rules", "typedarray", classes }
    assert.are.same({ 0, "0 findings in 4 classes\n" }, { code, out })
    _, err, code = helper.sift { "lint", "--rules", "nope", classes }
    assert.are.same({ 2, "sift: --rules: unknown rule 'nope' (known: closeable, cursor, parcelfiledescriptor, "
      .. "typedarray)\n" }, { code, err })
    -- a cut class file and a file that is no class: skipped, said on stderr, the rest checked
    local shapes = helper.read(classes .. "/sample/Shapes.class")
    local cut = helper.tmpfile(shapes:sub(1, #shapes // 2))
    out, err, code = helper.sift { "lint", "--json", cut, classes }
    assert.are.equal(6, #cjson.decode(out).findings)
    assert.matches("^sift: skipped .-: class file: [%a' ]+ at byte %d+\n$", err)
    local junk = helper.tmpfile("PK\3\4 not really a zip")
    out, err, code = helper.sift { "lint", junk }
    assert.are.same({ "", 1 }, { out, code })
    assert.matches("no zip directory", err)
    os.remove(cut)
    os.remove(junk)
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
