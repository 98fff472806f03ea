-- Android's @SuppressLint in sift lint, read from the bytecode: spec/java/lintsuppress (a stub of
-- android.annotation.SuppressLint, class retention as the SDK's, and two samples) compiled by javac
-- now with the stubs of spec/java/lintandroid and spec/java/lint; a dex written by
-- spec/dex_writer.lua with annotation items added (visibility BUILD, as dx and some d8 builds keep
-- them); and damaged annotations in both, refused with the byte they are at.
local cjson = require "cjson"
local helper = require "spec.helper"

local quote = helper.quote

local function compile()
  if not os.execute("command -v javac >/dev/null") then return nil end
  local dir = helper.tmpdir()
  local p = io.popen("find spec/java/lintsuppress spec/java/lintandroid/android spec/java/lint/android -name '*.java'")
  local sources = p:read("a"):gsub("\n", " ")
  p:close()
  assert(os.execute(("env -u LD_PRELOAD javac -d %s/classes %s"):format(quote(dir), sources)))
  return dir .. "/classes"
end

local function found(out)
  local got = {}
  for _, f in ipairs(cjson.decode(out).findings) do
    got[#got + 1] = ("%s.%s %s/%s"):format(f.class, f.method, f.rule, f.criterion)
  end
  return got
end

-- what sift lint --rules android reports on the samples: the rest (12) an @SuppressLint covers
local REPORTED = {
  "sample.Suppressed.leaks typedarray/never-closed",
  "sample.Suppressed.oneCriterion cursor/never-closed",
  "sample.Suppressed.otherId typedarray/never-closed",
  "sample.Suppressed.twoLeaks cursor/never-closed",
  "sample.Suppressed.twoLeaks cursor/op-outside-try",
  "sample.Suppressed$2.run typedarray/never-closed",
  "sample.Suppressed$Inner.leaks typedarray/never-closed",
}

-- a class file of class A whose one class attribute is RuntimeInvisibleAnnotations holding body;
-- the pool: 6 the type Landroid/annotation/SuppressLint;, 7 "value", 8 "Recycle", 2 a Class entry.
-- Returns the bytes and the offset of body's first byte.
local function class_file(body)
  local function utf8(s) return string.pack(">BI2", 1, #s) .. s end
  local pool = { utf8("A"), string.pack(">BI2", 7, 1), utf8("java/lang/Object"), string.pack(">BI2", 7, 3),
    utf8("RuntimeInvisibleAnnotations"), utf8("Landroid/annotation/SuppressLint;"), utf8("value"), utf8("Recycle") }
  local head = string.pack(">I4I2I2I2", 0xCAFEBABE, 0, 52, #pool + 1) .. table.concat(pool)
    .. string.pack(">I2I2I2I2I2I2I2", 0x21, 2, 4, 0, 0, 0, 1) .. string.pack(">I2I4", 5, #body)
  return head .. body, #head
end

-- @SuppressLint({"Recycle"}) as an annotation's bytes (count, type, pairs, "value" = ["Recycle"])
local GOOD = string.pack(">I2I2I2I2", 1, 6, 1, 7) .. "[" .. string.pack(">I2", 1) .. "s" .. string.pack(">I2", 8)

-- {======================================================
-- A dex with annotations
-- =======================================================

local DB, CURSOR = "Landroid/database/sqlite/SQLiteDatabase;", "Landroid/database/Cursor;"
local SUPPRESS, ENCLOSING = "Landroid/annotation/SuppressLint;", "Ldalvik/annotation/EnclosingMethod;"

local function uleb(v)
  local out = {}
  repeat
    local b = v & 0x7f
    v = v >> 7
    out[#out + 1] = string.char(v ~= 0 and (b | 0x80) or b)
  until v == 0
  return table.concat(out)
end

-- the writer's dex: sample/DexSup with two methods leaking a Cursor the same way (leaks, quiet), and
-- one (value) that puts the strings and the types the annotations need into the dex's tables; and
-- sample/DexSup$1 (an anonymous class, once annotated) leaking it the same way in run
local function plain_dex()
  local writer = dofile("spec/dex_writer.lua")
  local raw = { class = DB, name = "rawQuery", params = { "Ljava/lang/String;", "[Ljava/lang/String;" }, ret = CURSOR }
  local count = { class = CURSOR, name = "getCount", params = {}, ret = "I" }
  local function leak(name)
    return { name = name, params = { DB }, ret = "I", registers = 3, lines = { { 0, 10 } },
      code = { { "const-string", 0, "select 1" }, { "const/4", 1, 0 }, { "invoke-virtual", { 2, 0, 1 }, raw },
        { "move-result-object", 0 }, { "invoke-interface", { 0 }, count }, { "move-result", 1 }, { "return", 1 } } }
  end
  local w = writer.new()
  w:class { name = "Lsample/DexSup;", source = "DexSup.java", methods = { leak("leaks"), leak("quiet"),
    { name = "value", params = { SUPPRESS, ENCLOSING }, ret = "V", registers = 3, lines = { { 0, 20 } },
      code = { { "const-string", 0, "Recycle" }, { "const-string", 0, "NewApi" }, { "return-void" } } } } }
  w:class { name = "Lsample/DexSup$1;", source = "DexSup.java", methods = { leak("run") } }
  return w:bytes()
end

local function u4(s, at) return (string.unpack("<I4", s, at + 1)) end

-- the dex's strings (text -> index), types (descriptor -> index) and methods (name -> index)
local function tables(s)
  local strings, names, types, methods = {}, {}, {}, {}
  for i = 0, u4(s, 0x38) - 1 do
    local at = u4(s, u4(s, 0x3c) + 4 * i) + 1
    while s:byte(at) >= 0x80 do at = at + 1 end  -- (the length in UTF-16 units, a ULEB128)
    local text = s:sub(at + 1, s:find("\0", at + 1, true) - 1)
    strings[text], names[i] = i, text
  end
  for i = 0, u4(s, 0x40) - 1 do types[names[u4(s, u4(s, 0x44) + 4 * i)]] = i end
  for i = 0, u4(s, 0x58) - 1 do methods[names[u4(s, u4(s, 0x5c) + 8 * i + 4)]] = i end
  return strings, types, methods
end

-- the dex with @SuppressLint("Recycle") (visibility BUILD) on quiet, @SuppressLint("NewApi")
-- (RUNTIME) on DexSup, and the system's EnclosingMethod on DexSup$1 (written in quiet), appended:
-- an annotation_item each, a set each, a directory per class. Returns the bytes and where each
-- part is.
local function annotated_dex()
  local s = plain_dex()
  local strings, types, methods = tables(s)
  local function item(visibility, id)
    return string.char(visibility) .. uleb(types[SUPPRESS]) .. uleb(1) .. uleb(strings.value)
      .. "\x1c" .. uleb(1) .. "\x77" .. string.pack("<I4", strings[id])  -- an array of one string (4-byte index)
  end
  local at = {}
  local out = s .. ("\0"):rep((4 - #s % 4) % 4)
  local function put(name, bytes)
    out = out .. ("\0"):rep((4 - #out % 4) % 4)
    at[name] = #out
    out = out .. bytes
  end
  put("method_item", item(0, "Recycle"))
  put("class_item", item(1, "NewApi"))
  put("enclosing_item", "\2" .. uleb(types[ENCLOSING]) .. uleb(1) .. uleb(strings.value)
    .. "\x7a" .. string.pack("<I4", methods.quiet))  -- (a method: 4-byte index)
  put("method_set", string.pack("<I4I4", 1, at.method_item))
  put("class_set", string.pack("<I4I4", 1, at.class_item))
  put("enclosing_set", string.pack("<I4I4", 1, at.enclosing_item))
  put("directory", string.pack("<I4I4I4I4I4I4", at.class_set, 0, 1, 0, methods.quiet, at.method_set))
  put("inner_directory", string.pack("<I4I4I4I4", at.enclosing_set, 0, 0, 0))
  at.class_def = u4(out, 0x64)
  out = out:sub(1, at.class_def + 20) .. string.pack("<I4", at.directory) .. out:sub(at.class_def + 25)
  out = out:sub(1, at.class_def + 52) .. string.pack("<I4", at.inner_directory) .. out:sub(at.class_def + 57)
  return out, at
end

-- bytes with n bytes at offset at (0-based) replaced by rep
local function patch(bytes, at, rep) return bytes:sub(1, at) .. rep .. bytes:sub(at + #rep + 1) end

-- }======================================================

describe("sift lint: @SuppressLint in the bytecode", function()
  local classes
  setup(function() classes = compile() end)

  it("reads an annotation's type and strings from a class file's RuntimeInvisibleAnnotations", function()
    if not classes then return pending("no javac") end
    local core = require "sift.core"
    local cls = assert(core.classfile(helper.read(classes .. "/sample/Suppressed.class")))
    local by = {}
    for _, m in ipairs(cls.methods) do by[m.name] = m.annotations end
    local function sl(...) return { { type = "android/annotation/SuppressLint", runtime = false, values = { ... } } } end
    assert.are.same(sl("Recycle"), by.recycleSuppressed)
    assert.are.same(sl("NewApi", "recycle"), by.listed)
    assert.are.same(sl("sift:cursor/op-outside-try"), by.oneCriterion)
    assert.is_nil(by.leaks)
    assert.is_nil(cls.annotations)
    assert.is_nil(cls.enclosing)
    -- an anonymous class: the method it is written in (EnclosingMethod)
    local anon = assert(core.classfile(helper.read(classes .. "/sample/Suppressed$1.class")))
    assert.are.same({ class = "sample/Suppressed", name = "inAnonymous", desc = "(Landroid/content/Context;)Ljava/lang/Runnable;" },
      anon.enclosing)
    local quiet = assert(core.classfile(helper.read(classes .. "/sample/Quiet.class")))
    assert.are.same(sl("Recycle"), quiet.annotations)
    -- a runtime one (@Retention's on the stub): RuntimeVisibleAnnotations, its enum value not a string
    local stub = assert(core.classfile(helper.read(classes .. "/android/annotation/SuppressLint.class")))
    local kinds = {}
    for _, a in ipairs(stub.annotations) do kinds[#kinds + 1] = ("%s %s %d"):format(a.type, a.runtime, #a.values) end
    table.sort(kinds)
    assert.are.same({ "java/lang/annotation/Retention true 0", "java/lang/annotation/Target true 0" }, kinds)
  end)

  it("leaves out the findings an @SuppressLint covers, counts them, and writes a baseline of the rest", function()
    if not classes then return pending("no javac") end
    local out, err, code = helper.sift { "lint", "--json", "--rules", "android", classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.are.same(REPORTED, found(out))
    out, err, code = helper.sift { "lint", "--rules", "android", classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.is_truthy(out:match("\n7 findings in 13 classes, 12 suppressed\n$"), out)
    -- the same leaks, the annotations not read: 19 (the library's check reports, the CLI then leaves out)
    local lint = require "sift.lint"
    local loaded = lint.load({ classes })
    local all = lint.check(loaded, lint.select("android"))
    assert.are.equal(19, #all)
    local left, n = lint.unsuppressed_in_code(all, loaded)
    assert.are.same({ 7, 12 }, { #left, n })
    -- the baseline holds what is left; SARIF has it too
    local baseline = helper.tmpdir() .. "/baseline.txt"
    local _, werr, wcode = helper.sift { "lint", "--rules", "android", "--write-baseline", baseline, classes }
    assert.are.same({ 1, "" }, { wcode, werr })
    local lines = {}
    for line in helper.read(baseline):gmatch("[^\n]+") do
      if not line:match("^#") then lines[#lines + 1] = line:match("^%x+ (%S+)") end
    end
    assert.are.same({ "sample.Suppressed.leaks(Landroid/content/Context;)I",
      "sample.Suppressed.oneCriterion(Landroid/database/sqlite/SQLiteDatabase;)I",
      "sample.Suppressed.otherId(Landroid/content/Context;)I",
      "sample.Suppressed.twoLeaks(Landroid/content/Context;Landroid/database/sqlite/SQLiteDatabase;)I",
      "sample.Suppressed.twoLeaks(Landroid/content/Context;Landroid/database/sqlite/SQLiteDatabase;)I",
      "sample.Suppressed$2.run()V",
      "sample.Suppressed$Inner.leaks(Landroid/content/Context;)I" }, lines)
    out, err, code = helper.sift { "lint", "--rules", "android", "--baseline", baseline, classes }
    assert.are.same({ 0, "0 findings in 13 classes, 12 suppressed, 7 in the baseline\n", "" }, { code, out, err })
    local sarif = cjson.decode((helper.sift { "lint", "--sarif", "--rules", "android", classes }))
    assert.are.equal(7, #sarif.runs[1].results)
    -- a suppressions file on top: counted together
    local file = helper.tmpdir() .. "/suppressions.txt"
    local f = assert(io.open(file, "wb"))
    f:write("Recycle sample.Suppressed.leaks\n")
    f:close()
    out, err, code = helper.sift { "lint", "--rules", "android", "--suppressions", file, classes }
    assert.are.same({ 1, "" }, { code, err })
    assert.is_truthy(out:match("\n6 findings in 13 classes, 13 suppressed\n$"), out)
  end)

  it("matches ids as Android Lint does, and sift's own by rule and criterion", function()
    local lint = require "sift.lint"
    local tf = { rule = "typedarray", criterion = "never-closed" }
    local cur = { rule = "cursor", criterion = "op-outside-try" }
    local io_ = { rule = "closeable", criterion = "never-closed" }
    local cases = {
      { "Recycle", tf, true }, { "RECYCLE", cur, true }, { "AndroidLintRecycle", tf, true },
      { "Performance", tf, true }, { "NewApi, Recycle", tf, true }, { "all", io_, true },
      { "Recycle", io_, false }, { "NewApi", tf, false }, { "Recycled", tf, false },
      { "sift:typedarray", tf, true }, { "sift:typedarray", cur, false },
      { "sift:cursor/op-outside-try", cur, true }, { "sift:cursor/never-closed", cur, false },
      { "sift:closeable", io_, true },
    }
    for _, c in ipairs(cases) do
      assert.are.equal(c[3], lint.suppress_lint_covers(c[1], c[2]), c[1] .. " " .. c[2].rule)
    end
  end)

  it("reads them from dex, of visibility BUILD and RUNTIME, and the system's EnclosingMethod", function()
    local core = require "sift.core"
    local bytes = annotated_dex()
    local dex = assert(core.dexfile(bytes))
    local by = {}
    for _, m in ipairs(dex[1].methods) do by[m.name] = m.annotations or false end
    assert.are.same({ type = "android/annotation/SuppressLint", runtime = false, values = { "Recycle" } }, by.quiet[1])
    assert.are.same({ leaks = false, quiet = true, value = false }, { leaks = by.leaks, quiet = #by.quiet == 1,
      value = by.value })
    assert.are.same({ { type = "android/annotation/SuppressLint", runtime = true, values = { "NewApi" } } },
      dex[1].annotations)
    assert.are.same({ "sample/DexSup$1", { class = "sample/DexSup", name = "quiet",
      desc = "(Landroid/database/sqlite/SQLiteDatabase;)I" } }, { dex[2].name, dex[2].enclosing })
    assert.is_nil(dex[2].annotations)  -- (the system's are not given)
    assert.is_nil(dex[1].enclosing)
    -- the Cursor rule: quiet's two findings suppressed and DexSup$1.run's (written in quiet), leaks' two reported
    local dir = helper.tmpdir()
    local f = assert(io.open(dir .. "/classes.dex", "wb"))
    f:write(bytes)
    f:close()
    local out, err, code = helper.sift { "lint", dir .. "/classes.dex" }
    assert.are.same({ 1, "" }, { code, err })
    assert.is_truthy(out:match("\n2 findings in 2 classes, 4 suppressed\n$"), out)
    assert.is_truthy(out:find("sample.DexSup.leaks [cursor/never-closed]", 1, true))
    -- the file without them: the same four findings, all reported
    f = assert(io.open(dir .. "/plain.dex", "wb"))
    f:write(plain_dex())
    f:close()
    out = helper.sift { "lint", dir .. "/plain.dex" }
    assert.is_truthy(out:match("\n6 findings in 2 classes\n$"), out)
  end)

  it("refuses a damaged annotation, saying where, in class files and in dex", function()
    local core = require "sift.core"
    local good, at = class_file(GOOD)
    assert.are.same({ { type = "android/annotation/SuppressLint", runtime = false, values = { "Recycle" } } },
      assert(core.classfile(good)).annotations)
    local function refused(bytes, message)
      local ok, err = (bytes:sub(1, 4) == "dex\n" and core.dexfile or core.classfile)(bytes)
      assert.is_nil(ok)
      assert.are.equal(message, err)
    end
    refused((class_file(string.pack(">I2", 0xFFFF) .. GOOD:sub(3))), ("class file: an annotation count at byte %d")
      :format(at + 2))
    refused((class_file(patch(GOOD, 8, "x"))), ("class file: an annotation's element at byte %d"):format(at + 8))
    local deep = string.pack(">I2I2I2I2", 1, 6, 1, 7) .. ("[" .. string.pack(">I2", 1)):rep(70) .. "s"
      .. string.pack(">I2", 8)
    refused((class_file(deep)), ("class file: an annotation's element at byte %d"):format(at + 8))
    refused((class_file(GOOD:sub(1, -2))), ("class file: an annotation's element at byte %d"):format(at + 8))
    -- a string element naming no Utf8 entry: left out, not invented
    assert.are.same({}, assert(core.classfile((class_file(patch(GOOD, 12, string.pack(">I2", 2)))))).annotations[1]
      .values)
    -- every cut of the file: refused with a message, never a crash
    for n = 0, #good - 1 do
      local ok, err = core.classfile(good:sub(1, n))
      assert.is_nil(ok)
      assert.is_truthy(err:match("^class file: .* at byte %d+$") or err:match("^class file: no class file magic"), err)
    end
    local dex, where = annotated_dex()
    refused(patch(dex, where.method_item, "\7"), ("dex file: an annotation's visibility at byte %d")
      :format(where.method_item))
    refused(patch(dex, where.method_set, string.pack("<I4", 0x40000000)),
      ("dex file: an annotation set's size at byte %d"):format(where.method_set))
    local array = where.method_item + 4  -- (visibility, type, size, name: a byte each here)
    assert.are.equal(0x1c, dex:byte(array + 1))
    refused(patch(dex, array, "\5"), ("dex file: an annotation's elements at byte %d"):format(where.method_item))
    refused(patch(dex, where.directory + 8, string.pack("<I4", 0x10000000)),
      ("dex file: an annotations directory's method count at byte %d"):format(where.directory + 8))
    refused(patch(dex, where.class_def + 20, string.pack("<I4", #dex + 8)),
      ("dex file: an annotations directory at byte %d"):format(#dex + 8))
    for n = where.method_item, #dex - 1 do  -- (cut inside the annotations: a directory is past the end, or cut)
      local ok, err = core.dexfile(dex:sub(1, n))
      assert.is_nil(ok)
      local expected = ("dex file: an annotations directory at byte %d"):format(where.inner_directory)
      if n < where.directory + 16 then
        expected = ("dex file: an annotations directory at byte %d"):format(where.directory)
      elseif n < where.directory + 24 then
        expected = ("dex file: an annotations directory's method count at byte %d"):format(where.directory + 8)
      end
      assert.are.equal(expected, err)
    end
    -- the EnclosingMethod's value damaged: an unknown value type
    refused(patch(dex, where.enclosing_item + 4, "\5"), ("dex file: an annotation's elements at byte %d")
      :format(where.enclosing_item))
  end)
end)
