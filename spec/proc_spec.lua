-- Processes, directories and the terminal without a shell (csrc/core/lproc.c,
-- lfiles.c, sift_core.c): what `sift serve --workers`, `sift worker --parent`
-- and a profile's password_command stand on.
local core = require "sift.core"

local function tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(core.mkdir(dir))
  return dir
end

describe("core.spawn, core.wait, core.kill", function()
  it("runs an argv array with no shell between: each word is one argument, nothing is expanded", function()
    local pid, out = core.spawn({ "printf", "[%s]\\n", "a b", "$HOME", "*", "x;y" }, { stdout = true })
    assert.are.equal("integer", math.type(pid))
    assert.are.equal("[a b]\n[$HOME]\n[*]\n[x;y]\n", out:read("a"))
    assert.is_true(out:close())
    assert.are.same({ "exit", 0 }, { core.wait(pid) })
  end)

  it("gives a child's exit status and the signal that ended it; kill 0 says whether it is there", function()
    assert.are.same({ "exit", 3 }, { core.wait((core.spawn { "sh", "-c", "exit 3" })) })
    local pid = assert(core.spawn { "sleep", "30" })
    assert.is_true(core.kill(pid, 0))
    assert.is_true(core.kill(pid, "TERM"))
    assert.are.same({ "signal", 15 }, { core.wait(pid) })
    assert.are.same({ nil, ("process %d: No such process"):format(pid), "io" }, { core.kill(pid, 0) })
  end)

  it("writes stdout and stderr to files (created 0600) when told", function()
    local dir = tmpdir()
    local pid = assert(core.spawn({ "sh", "-c", "echo out; echo err >&2" },
      { stdout = dir .. "/out", stderr = dir .. "/err" }))
    assert.are.same({ "exit", 0 }, { core.wait(pid) })
    for name, text in pairs { out = "out\n", err = "err\n" } do
      local f = assert(io.open(dir .. "/" .. name))
      assert.are.equal(text, f:read("a"))
      f:close()
      assert.are.equal(384, core.stat(dir .. "/" .. name).mode)  -- 0600
      os.remove(dir .. "/" .. name)
    end
    assert(os.remove(dir))
  end)

  it("says nil, message, io for a program that is not there", function()
    assert.are.same({ nil, "sift-no-such-program: No such file or directory", "io" },
      { core.spawn { "sift-no-such-program", "x" } })
  end)

  it("raises an error naming the argument when misused", function()
    local cases = {
      { core.spawn, { {} }, "bad argument #1 to 'sift.core.spawn' (argv: a program and its arguments, as a list of strings)" },
      { core.spawn, { { "ls", 3 } }, "bad argument #1 to 'sift.core.spawn' (argv[2] is not a string)" },
      { core.spawn, { "ls -l" }, "bad argument #1 to 'sift.core.spawn' (table expected, got string)" },
      { core.spawn, { { "" } }, "bad argument #1 to 'sift.core.spawn' (argv[1] is empty or holds a zero byte)" },
      { core.spawn, { { "ls" }, { stdout = 1 } }, "bad argument #2 to 'sift.core.spawn' (opts.stdout: a path or true (a pipe))" },
      { core.spawn, { { "ls" }, { stderr = true } }, "bad argument #2 to 'sift.core.spawn' (opts.stderr: a path)" },
      { core.kill, { 0, 0 }, "bad argument #1 to 'sift.core.kill' (a process id above 0)" },
      { core.kill, { -1, "KILL" }, "bad argument #1 to 'sift.core.kill' (a process id above 0)" },
      { core.kill, { 1, "STOPIT" }, "bad argument #2 to 'sift.core.kill' (invalid option 'STOPIT')" },
      { core.wait, { 0 }, "bad argument #1 to 'sift.core.wait' (a process id above 0)" },
      { core.mkdir, { "/tmp/x", 65536 }, "bad argument #2 to 'sift.core.mkdir' (a mode between 0 and 07777)" },
      { core.dir, { "" }, "bad argument #1 to 'sift.core.dir' (a directory name)" },
      { core.echo, { io.stdout, "off" }, "bad argument #2 to 'sift.core.echo' (boolean expected, got string)" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1], table.unpack(c[2]))
      assert.are.same({ false, c[3] }, { ok, err })
    end
  end)
end)

describe("core.mkdir, core.dir", function()
  it("makes one directory 0700, and says so when it is there", function()
    local dir = tmpdir()
    assert.are.equal(448, core.stat(dir).mode)  -- 0700
    assert.are.same({ nil, dir .. ": File exists", "io" }, { core.mkdir(dir) })
    assert.are.same({ nil, dir .. "/a/b: No such file or directory", "io" }, { core.mkdir(dir .. "/a/b") })
    assert(os.remove(dir))
  end)

  it("lists the regular files under a directory at any depth, sorted bytewise, links not followed", function()
    local dir = tmpdir()
    for _, d in ipairs { "/b", "/b/c", "/a" } do assert(core.mkdir(dir .. d)) end
    for _, name in ipairs { "/z", "/b/c/x.class", "/b/y.jar", "/a/B", "/a/a" } do
      assert(io.open(dir .. name, "w")):close()
    end
    assert.are.same({ "exit", 0 }, { core.wait(assert(core.spawn { "ln", "-s", "/etc", dir .. "/b/etc" })) })
    local files, unreadable = core.dir(dir .. "/")
    assert.are.same({ dir .. "/a/B", dir .. "/a/a", dir .. "/b/c/x.class", dir .. "/b/y.jar", dir .. "/z" }, files)
    assert.are.same({}, unreadable)
    assert.are.same({ nil, dir .. "/none: No such file or directory", "io" }, { core.dir(dir .. "/none") })
    for _, name in ipairs { "/z", "/b/c/x.class", "/b/y.jar", "/a/B", "/a/a", "/b/etc", "/b/c", "/b", "/a", "" } do
      assert(os.remove(dir .. name))
    end
  end)
end)

describe("core.echo", function()
  it("refuses what is no terminal", function()
    local f = assert(io.open("/dev/null"))
    assert.are.same({ nil, "not a terminal: Inappropriate ioctl for device", "io" }, { core.echo(f, false) })
    f:close()
  end)
end)
