-- sift lint beside FindBugs (Debian's findbugs 3.1) on the corpus' Java 8
-- jars (class files of version 52 or less): FindBugs is run at test time
-- (its output cached in build/findbugs/ by the jars' SHA-256s, so it runs
-- once), with JDK 8's class signatures, made from the JDK's ct.sym by
-- spec/lint/ct8.py, on its aux classpath. Each of its open-resource
-- findings (OS_OPEN_STREAM*, OBL_*, ODR_*) is judged in spec/lint/findbugs.lua;
-- every one judged right must be found by sift (a finding of the closeable
-- rule in the same method), and one not judged yet fails the spec. Only
-- the jars the data says are judged are compared; the others are named.
local helper = require "spec.helper"
local lint = require "sift.lint"

local corpus = dofile("spec/lint/corpus.lua")
local lint_cache = dofile("spec/lint/android_corpus.lua")  -- (findings cached by SHA-256 and the model)
local judged = dofile("spec/lint/findbugs.lua")
local CT_SYM = "/usr/lib/jvm/java-17-openjdk-amd64/lib/ct.sym"

local function sha256(path)
  local p = io.popen("sha256sum " .. helper.quote(path))
  local sha = p:read("a"):match("^(%x+)")
  p:close()
  return sha
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- FindBugs' text output on the jars (one run: one JVM start), cached by
-- their SHA-256s; only the two detectors of open resources are run
-- (FindOpenStream: OS_*, ODR_*; FindUnsatisfiedObligation: OBL_*), which
-- report what the full run does on these jars in a third of its time
local function findbugs(jars, boot)
  local paths, shas = {}, {}
  for _, jar in ipairs(jars) do
    paths[#paths + 1] = helper.quote(jar.path)
    shas[#shas + 1] = jar.sha256
  end
  local list = helper.tmpfile(table.concat(shas, "\n") .. "\n")
  local cached = ("build/findbugs/%s.txt"):format(sha256(list))
  os.remove(list)
  if not exists(cached) then
    assert(os.execute(("env -u LD_PRELOAD findbugs -textui -effort:max -low "
      .. "-visitors FindOpenStream,FindUnsatisfiedObligation -auxclasspath %s %s > %s.tmp 2>&1 && mv %s.tmp %s")
      :format(helper.quote(boot), table.concat(paths, " "), cached, cached, cached)))
  end
  return helper.read(cached)
end

-- its open-resource findings: {pattern, class, method}; a constructor is
-- "new pkg.Class(...)", a static initializer "pkg.Class.<static initializer for Class>()"
local function open_resource(text)
  local out = {}
  for abbrev, where in text:gmatch("\n%u %u (%u+): ([^\n]+)") do
    if abbrev == "OS" or abbrev == "OBL" or abbrev == "ODR" then
      local ctor = where:match("^new ([%w.$_]+)%(")
      local clinit = where:match("^([%w.$_]+)%.<static initializer for ")
      local class, method = where:match("^([%w.$_]+)%.([%w$_<>]+)%(")
      if ctor then class, method = ctor, "<init>" end
      if clinit then class, method = clinit, "<clinit>" end
      out[#out + 1] = { abbrev, class, method }
    end
  end
  return out
end

describe("sift lint beside FindBugs on the corpus #heavy", function()
  it("finds every open-resource finding of FindBugs judged right", function()
    if not (os.execute("command -v findbugs >/dev/null") and exists(CT_SYM)) then
      return pending("no findbugs or no JDK ct.sym")
    end
    local boot = "build/findbugs/jdk8-ct.jar"
    os.execute("mkdir -p build/findbugs")
    if not exists(boot) then assert(os.execute(("python3 spec/lint/ct8.py %s %s"):format(CT_SYM, boot))) end
    local verdicts, compared = {}, {}
    for _, j in ipairs(judged.judged) do verdicts[table.concat({ j.jar, j.pattern, j.class, j.method }, "|")] = j end
    for _, name in ipairs(judged.jars) do compared[name] = true end
    local not_compared = {}
    local unjudged, missed, right, wrong = {}, {}, 0, 0
    local jars, jar_of, ours = {}, {}, {}
    for _, jar in ipairs(corpus.jars) do
      if exists(jar.path) and sha256(jar.path) == jar.sha256 then
        local classes = lint.load { jar.path }
        local newest = 0
        for _, c in ipairs(classes) do newest = math.max(newest, c.version) end
        if newest <= 52 and not compared[jar.name] and not (judged.not_compared or {})[jar.name] then
          not_compared[#not_compared + 1] = jar.name
        end
        if newest <= 52 and compared[jar.name] then
          jars[#jars + 1] = jar
          for _, c in ipairs(classes) do jar_of[c.name:gsub("/", ".")] = jar.name end
          for _, f in ipairs(lint_cache.findings_of(jar.path, jar.sha256, "closeable")) do ours[f.class .. "." .. f.method] = true end
        end
      end
    end
    for _, t in ipairs(open_resource(findbugs(jars, boot))) do
      local where = table.concat({ jar_of[t[2]] or "?", t[1], t[2], t[3] }, "|")
      local j = verdicts[where]
      if not j then
        unjudged[#unjudged + 1] = where
      elseif j.verdict then
        right = right + 1
        if not ours[t[2] .. "." .. (j.sift or t[3])] then missed[#missed + 1] = where end
      else
        wrong = wrong + 1
      end
    end
    print(("lint beside FindBugs: %d Java 8 jars compared; FindBugs' open-resource findings: %d right, %d wrong; "
      .. "right ones sift misses: %d"):format(#jars, right, wrong, #missed))
    for name, why in pairs(judged.not_compared or {}) do print(("lint beside FindBugs: %s judged, not compared: %s"):format(name, why)) end
    if #not_compared > 0 then
      print("lint beside FindBugs: Java 8 jars not compared yet (their findings not judged): "
        .. table.concat(not_compared, ", "))
    end
    assert.are.same({}, unjudged)
    assert.are.same({}, missed)
  end)
end)
