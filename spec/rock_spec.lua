-- Installing: the rock builds offline with the project's LuaRocks config,
-- and `make install` honours PREFIX and DESTDIR. Tagged #rock: the
-- sanitizer pass of `make test` skips it (it builds its own copy).
local helper = require "spec.helper"

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

local function tmpdir()
  local path = os.tmpname()
  os.remove(path)
  assert(os.execute("mkdir -p " .. helper.quote(path)))
  return path
end

describe("installation #rock", function()
  it("luarocks make installs offline; the installed sift and require 'sift' work", function()
    local tree = tmpdir()
    local out, code = run("luarocks --lua-version=5.4 make --tree=" .. helper.quote(tree) .. " sift-scm-1.rockspec")
    assert.are.equal(0, code, out)
    assert.matches("sift scm%-1 is now installed", out)

    out, code = run(helper.quote(tree .. "/bin/sift") .. " --version")
    assert.are.equal(0, code, out)
    assert.matches("^sift %d+%.%d+%.%d+\n$", out)

    -- from another directory, with only the tree on the paths
    local probe = ("cd /tmp && lua5.4 -e %s"):format(helper.quote(([[
      package.path = "%s/share/lua/5.4/?.lua;%s/share/lua/5.4/?/init.lua"
      package.cpath = "%s/lib/lua/5.4/?.so"
      local sift = require "sift"
      io.write(sift._VERSION, " ", package.searchpath("sift.core", package.cpath))
    ]]):format(tree, tree, tree)))
    out, code = run(probe)
    assert.are.equal(0, code, out)
    assert.are.equal(require("sift")._VERSION .. " " .. tree .. "/lib/lua/5.4/sift/core.so", out)
    os.execute("rm -rf " .. helper.quote(tree))
  end)

  it("make install and uninstall honour PREFIX and DESTDIR", function()
    local dest = tmpdir()
    local out, code = run("make -s install PREFIX=/opt/sift DESTDIR=" .. helper.quote(dest))
    assert.are.equal(0, code, out)
    local lmod = dest .. "/opt/sift/share/lua/5.4"
    local cmod = dest .. "/opt/sift/lib/x86_64-linux-gnu/lua/5.4"
    for _, f in ipairs { lmod .. "/sift/init.lua", lmod .. "/sift/cli/init.lua", cmod .. "/sift/core.so",
                         dest .. "/opt/sift/bin/sift" } do
      assert.truthy(io.open(f), f .. " is missing")
    end
    out, code = run(("LUA_PATH='%s/?.lua;%s/?/init.lua;;' LUA_CPATH='%s/?.so;;' %s --version")
      :format(lmod, lmod, cmod, helper.quote(dest .. "/opt/sift/bin/sift")))
    assert.are.equal(0, code, out)
    assert.matches("^sift ", out)

    out, code = run("make -s uninstall PREFIX=/opt/sift DESTDIR=" .. helper.quote(dest))
    assert.are.equal(0, code, out)
    out = run("find " .. helper.quote(dest) .. " -type f")
    assert.are.equal("", out)
    os.execute("rm -rf " .. helper.quote(dest))
  end)
end)
