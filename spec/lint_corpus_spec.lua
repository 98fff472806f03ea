-- sift lint on real code: the jars of spec/lint/corpus.lua (Debian's
-- /usr/share/java, pinned by package version and SHA-256), and the findings
-- judged by reading their bytecode. Every finding judged true must still be
-- found; the precision over the judged findings sift reports now (true ones
-- over all of them) is printed, per jar and in all, and must be 90 % or more.
local helper = require "spec.helper"

local corpus = dofile("spec/lint/corpus.lua")
local cached = dofile("spec/lint/android_corpus.lua")  -- (findings cached by SHA-256 and the model)

-- the jar's SHA-256 and its package's version, or nil and why the jar is skipped
local function pinned(jar)
  local f = io.open(jar.path, "rb")
  if not f then return nil, "not installed" end
  f:close()
  local p = io.popen("sha256sum " .. helper.quote(jar.path))
  local sha = p:read("a"):match("^(%x+)")
  p:close()
  if sha ~= jar.sha256 then return nil, ("SHA-256 %s, not the pinned %s"):format(sha, jar.sha256) end
  p = io.popen("dpkg-query -W -f='${Version}' " .. helper.quote(jar.package) .. " 2>/dev/null")
  local version = p:read("a")
  p:close()
  if version ~= jar.version then
    return nil, ("%s %s, not the pinned %s"):format(jar.package, version, jar.version)
  end
  return true
end

local function key(class, method, desc, criterion, pc)
  return table.concat({ class, method, desc, criterion, pc }, "|")
end

-- (#heavy: make spec-asan leaves it out; the model it judges is Lua, and
-- the C that reads class files and jars runs under ASan in lint_spec and
-- in fuzz_bytecode)
describe("sift lint on the corpus of Debian jars #heavy", function()
  it("finds every finding judged true, and 90 % of the judged findings it reports are true", function()
    local found, available, checked = {}, {}, 0
    for _, jar in ipairs(corpus.jars) do
      local ok, why = pinned(jar)
      if ok then
        local got = cached.findings_of(jar.path, jar.sha256, "closeable")
        checked = checked + got.classes
        available[jar.name] = true
        for _, f in ipairs(got) do
          found[key(f.class, f.method, f.desc, f.criterion, f.pc)] = f
        end
      else
        print(("lint corpus: %s skipped: %s"):format(jar.name, why))
      end
    end
    if next(available) == nil then return pending("no corpus jar is installed as pinned") end
    local per_jar, missed = {}, {}
    local judged, reported, right, first_right = 0, 0, 0, 0
    for _, j in ipairs(corpus.judged) do
      if available[j.jar] then
        local t = per_jar[j.jar] or { judged = 0, reported = 0, right = 0, first_right = 0 }
        per_jar[j.jar] = t
        t.judged, judged = t.judged + 1, judged + 1
        if j.verdict then t.first_right, first_right = t.first_right + 1, first_right + 1 end
        if found[key(j.class, j.method, j.desc, j.criterion, j.pc)] then
          t.reported, reported = t.reported + 1, reported + 1
          if j.verdict then t.right, right = t.right + 1, right + 1
          else print(("lint corpus: judged false, still reported: #%d %s.%s %s"):format(j.n, j.class, j.method, j.criterion)) end
        elseif j.verdict then
          missed[#missed + 1] = ("%s.%s%s %s at pc %d"):format(j.class, j.method, j.desc, j.criterion, j.pc)
        end
      end
    end
    local names = {}
    for name in pairs(per_jar) do names[#names + 1] = name end
    table.sort(names)
    print(("lint corpus: %d classes; %d findings judged; when judged %d true (%.1f %%); now reported %d, "
      .. "of which %d true: precision %.1f %%"):format(checked, judged, first_right, 100 * first_right / judged,
        reported, right, reported > 0 and 100 * right / reported or 0))
    for _, name in ipairs(names) do
      local t = per_jar[name]
      print(("  %-28s judged %3d  true when judged %3d  reported now %3d  true %3d"):format(name, t.judged,
        t.first_right, t.reported, t.right))
    end
    assert.are.same({}, missed)
    assert.is_true(right >= 0.9 * reported, ("precision %d/%d is below 90 %%"):format(right, reported))
  end)
end)
