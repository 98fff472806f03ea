-- The docs run as written: every `$`-prompted console block of README.md
-- and docs/getting-started.md is run (`sh -c`, stderr with stdout) and its
-- output compared with the block's, line by line. The commands run in a
-- scratch checkout: a directory `main` whose bin/, lua/, build/ and
-- examples/ are links to this checkout's, beside `shared/fixtures` (a link
-- to the fixtures), where the file names the docs use are links to
-- fixtures (FILES below), so a command prints what it prints for a user
-- with those files. The normalisation, and all of it:
--   - an output line `...` (any indentation) stands for any number of lines;
--   - lines starting with `> ` are the command's standard input (a REPL's
--     entries), not its output;
--   - trailing blanks are ignored.
-- Every command must exit 0 (a block that shows a failure shows its status:
-- `...; echo "exit status $?"`).
-- Also: `sift info --help` lists exactly the facts `sift info` prints, and
-- `sift run` runs a script as lua5.4 would, from anywhere.
local helper = require "spec.helper"

-- the files the docs name, as fixtures
local FILES = {
  ["app.hprof"] = "hprof/generated-jdk17/leaky_jdk17_live.hprof",
  ["onCreate.trace"] = "trace/perflib-basic.trace",
  ["bank.qfx"] = "ofx/ofxparse/checking.ofx",
}
local DOCS = { "README.md", "docs/getting-started.md" }

-- the console blocks of a Markdown file: { line, commands = { { line, text,
-- input = {...}, output = {...} } } }
local function console_blocks(path)
  local blocks, block, n = {}, nil, 0
  for line in io.lines(path) do
    n = n + 1
    if line:match("^```") then
      if block then
        if #block.commands > 0 then blocks[#blocks + 1] = block end
        block = nil
      else
        block = { line = n, commands = {} }
      end
    elseif block then
      local cmd = line:match("^%$ (.*)$")
      local last = block.commands[#block.commands]
      if cmd then
        block.commands[#block.commands + 1] = { line = n, text = cmd, input = {}, output = {} }
      elseif not last then
        block.commands[#block.commands + 1] = false  -- (not a $-prompted block: left alone)
      elseif line:match("^> ") then
        last.input[#last.input + 1] = line:sub(3)
      else
        last.output[#last.output + 1] = (line:gsub("%s+$", ""))
      end
    end
  end
  local prompted = {}
  for _, b in ipairs(blocks) do
    if b.commands[1] then prompted[#prompted + 1] = b end
  end
  return prompted
end

-- the scratch checkout (see the top); returns its `main` directory
local function scratch(root)
  local function sh_line(cmd)
    local p = io.popen(cmd)
    local line = p:read("l")
    p:close()
    return line
  end
  local dir, cwd = helper.tmpdir(), sh_line("pwd")
  root = sh_line("realpath " .. helper.quote(root))
  local links = { ("mkdir -p %s/main %s/shared"):format(dir, dir),
    ("ln -s %s %s/shared/fixtures"):format(helper.quote(root), dir) }
  for _, d in ipairs { "bin", "lua", "build", "examples" } do
    links[#links + 1] = ("ln -s %s/%s %s/main/%s"):format(helper.quote(cwd), d, dir, d)
  end
  for name, rel in pairs(FILES) do
    links[#links + 1] = ("ln -s %s/%s %s/main/%s"):format(helper.quote(root), rel, dir, name)
  end
  assert(os.execute(table.concat(links, " && ")))
  return dir .. "/main", dir
end

local function run(cwd, cmd, input)
  local inputfile = helper.tmpfile(#input > 0 and table.concat(input, "\n") .. "\n" or "")
  local p = io.popen(("cd %s && sh -c %s < %s 2>&1"):format(cwd, helper.quote(cmd), inputfile))
  local out = p:read("a")
  local _, _, status = p:close()
  os.remove(inputfile)
  return out, status
end
-- nil when the lines match the expected ones (`...` matching any run of
-- lines), else why not
local function compare(expected, got)
  local function match(i, j)
    if i > #expected then
      if j > #got then return nil end
      return ("output line %d %q: the document shows no more"):format(j, got[j])
    end
    if expected[i]:match("^%s*%.%.%.$") then
      for k = j, #got + 1 do
        if not match(i + 1, k) then return nil end
      end
      return ("no output after line %d matches the document's lines after its '...'"):format(j - 1)
    end
    if j > #got then return ("the output ends where the document shows %q"):format(expected[i]) end
    if expected[i] ~= got[j] then
      return ("output line %d: the document shows %q, the command printed %q"):format(j, expected[i], got[j])
    end
    return match(i + 1, j + 1)
  end
  return match(1, 1)
end

describe("docs", function()
  for _, doc in ipairs(DOCS) do
    it(doc .. ": every $-prompted console block prints what it shows", function()
      local root = helper.fixture("")
      if not root then return end
      local cwd, dir = scratch(root)
      local blocks = console_blocks(doc)
      assert.is_true(#blocks > 0, doc .. " has no $-prompted console block")
      for _, block in ipairs(blocks) do
        for _, c in ipairs(block.commands) do
          local out, status = run(cwd, c.text, c.input)
          local got = {}
          for line in (out .. (out:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
            got[#got + 1] = (line:gsub("%s+$", ""))
          end
          local where = ("%s:%d: $ %s"):format(doc, c.line, c.text)
          assert(status == 0, ("%s: exit status %s\n%s"):format(where, tostring(status), out))
          local why = compare(c.output, got)
          assert(not why, ("%s: %s\n--- printed:\n%s"):format(where, why, table.concat(got, "\n")))
        end
      end
      os.execute("rm -rf " .. dir)
    end)
  end

  it("sift info --help lists exactly the facts sift info prints, per format", function()
    local root = helper.fixture("")
    if not root then return end
    -- the help's lists: "  FORMAT: fact (what it is), fact; unless --header, from ...: fact, ..."
    local help = helper.sift { "info", "--help" }
    local listed = {}
    for label, list in help:gmatch("\n  ([%w ]+): ([^\n]*)") do
      local facts = {}
      list = list:gsub("%b()", ""):gsub("the first line describes the file", "")
        :gsub("unless %-%-header, from [%w ]+:", ","):gsub("with %-%-source:", ",")
      for piece in list:gmatch("[^,;]+") do
        local fact = piece:match("^%s*(.-)%s*$")
        if fact ~= "" then
          assert(fact:match("^[%l_]+$"), ("sift info --help, %s: %q is not a fact's name"):format(label, fact))
          facts[fact] = true
        end
      end
      listed[label] = facts
    end
    -- files that, together, have every fact of their format
    local trace_writer = dofile("spec/trace_writer.lua").new()
    local a, b = trace_writer:method("A", "a"), trace_writer:method("B", "b")
    trace_writer:enter(1, a, 1, 1); trace_writer:exit(1, b, 2, 2)
    local id4 = "JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 4, 0)
    local twice = string.pack(">BI4I4I4I4", 0x21, 0x10, 0, 0x99, 4) .. "abcd"   -- (class 0x99 absent)
      .. string.pack(">BI4I4I4I4", 0x21, 0x10, 0, 0x99, 0)
    local tmp = {
      helper.tmpfile(helper.read(root .. "hprof/generated-jdk17/leaky_jdk17_live.hprof"):sub(1, 500000)),
      helper.tmpfile(id4 .. string.pack(">BI4I4", 0x0C, 0, #twice) .. twice),
      helper.tmpfile(helper.read(root .. "trace/perflib-basic.trace"):sub(1, -15)),   -- a record short
      helper.tmpfile(trace_writer:bytes()),
      helper.tmpfile(helper.read(root .. "ofx/ofxparse/checking.ofx"):sub(1, -200)),
      helper.tmpfile("JAVA PROFILE 1.0.2\0" .. string.pack(">I4I8", 5, 0)),   -- (ids of 5 bytes: damaged)
      helper.tmpfile(helper.read(root .. "bmd/hprof-32.rt.bmd"):sub(1, 15)),    -- (cut in its header)
    }
    local cases = {
      { "HPROF", "hprof/android/perflib/dialer.android-hprof", "hprof/py-hprof/example-java.hprof.bz2", tmp[1],
        tmp[2], tmp[6] },
      { "BMD", "bmd/hprof-32.rt.bmd", tmp[7], "--source", root .. "hprof/hprof-slurp/hprof-32.bin" },
      { "trace", "trace/firefox-art-trace-streaming.trace", "trace/amp-legacy.trace", "trace/perflib-header.trace",
        tmp[3], tmp[4] },
      { "OFX", "ofx/ofxparse/checking.ofx", "ofx/libofx/example-listing2.xml", tmp[5] },
    }
    -- and gzip-compressed, for --header (a compressed BMD or trace is detected, not read: issue 32's report)
    local gz = {}
    for i, rel in ipairs(cases) do
      gz[i] = os.tmpname()
      assert(os.execute(("gzip -c %s > %s"):format(helper.quote(root .. rel[2]), gz[i])))
    end
    for i, case in ipairs(cases) do
      local args = { "info", "--json", "-q" }
      for k = 2, #case do
        args[#args + 1] = (case[k]:match("^/") or case[k]:match("^%-") or case[k]:match("^%.")) and case[k]
          or root .. case[k]
      end
      local results = require("cjson").decode((helper.sift(args)))
      if results.path then results = { results } end
      results[#results + 1] = require("cjson").decode((helper.sift { "info", "--json", "--header", gz[i] }))
      os.remove(gz[i])
      local printed, expected = {}, {}
      for _, r in ipairs(results) do
        for k in pairs(r) do
          if k ~= "path" and k ~= "description" and k ~= "problem_code" then printed[k] = true end
        end
      end
      for k in pairs(listed["every file"]) do expected[k] = true end
      for k in pairs(listed[case[1]]) do expected[k] = true end
      local function sorted(t)
        local list = {}
        for k in pairs(t) do list[#list + 1] = k end
        table.sort(list)
        return table.concat(list, " ")
      end
      assert.are.equal(sorted(expected), sorted(printed), case[1] .. ": listed vs printed")
    end
    for _, f in ipairs(tmp) do os.remove(f) end
  end)

  it("sift run runs a script as lua5.4 would, with sift's paths, from any directory", function()
    local dir = helper.tmpdir()
    local script = dir .. "/s.lua"
    local f = assert(io.open(script, "w"))
    f:write([[
local sift = require "sift"
print(arg[0], #arg, table.concat(arg, "|"), select("#", ...), (...), arg[-1], type(sift.open))
if arg[1] == "fail" then error("no luck") end
if arg[1] == "exit" then os.exit(tonumber(arg[2])) end
]])
    f:close()
    local p = io.popen("pwd")
    local cwd = p:read("l")
    p:close()
    -- (the specs' SIFT_CPATH, if any, is relative to the checkout)
    local cpath = os.getenv("SIFT_CPATH")
    local env = cpath and ("SIFT_CPATH=%s "):format(helper.quote((cpath:gsub("^([^/])", cwd .. "/%1")))) or ""
    local function sift_run(args)
      local proc = io.popen(("cd %s && %s%s/bin/sift run %s 2>&1"):format(dir, env, cwd, args))
      local out = proc:read("a")
      local _, _, status = proc:close()
      return out, status
    end
    assert.are.same({ "s.lua\t3\ta|--json|b c\t3\ta\trun\tfunction\n", 0 },
      { sift_run("s.lua a --json 'b c'") })
    assert.are.same({ "s.lua\t1\tfail\t1\tfail\trun\tfunction\nsift: s.lua:3: no luck\n", 1 }, { sift_run("s.lua fail") })
    assert.are.same({ "s.lua\t2\texit|7\t2\texit\trun\tfunction\n", 7 }, { sift_run("s.lua exit 7") })
    assert.are.same({ "sift: cannot open nothere.lua: No such file or directory\n", 1 }, { sift_run("nothere.lua") })
    os.execute("rm -rf " .. dir)
  end)
end)
