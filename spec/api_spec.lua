-- The heap API and the REPL as people use them (issue 31, item 5): a Class
-- stands for its class object in every heap function, bad arguments are
-- usage errors naming the argument, ids are integers shown in hex,
-- heap:class suggests near names, and a --where expression that raises is
-- reported with the object it raised on. On spec/java/LeakySample.java
-- dumped with jcmd.
local sift = require "sift"
local helper = require "spec.helper"

-- the message of the error fn raises, without a position
local function error_of(fn, ...)
  local ok, msg = pcall(fn, ...)
  assert.is_false(ok, "no error")
  return (tostring(msg):gsub("^[^:]*:%d+: ", ""))
end

describe("the heap API (spec/java/LeakySample.java)", function()
  local path, heap, session

  setup(function()
    local why
    path, why = helper.jvm_dump("LeakySample")
    if not path then print("api_spec: skipped: " .. why) return end
    heap = assert(sift.open(path))
    session = heap:class("LeakySample$Session"):instances()()
  end)

  it("takes a Class where it takes an object: the class object's retained size and path", function()
    if not heap then return pending("no JDK") end
    local cls = heap:class("LeakySample")
    local object = cls.object
    assert.are.equal("class LeakySample@" .. ("0x%x"):format(object:id()), tostring(object))
    -- a class object retains its own size and what it dominates (the SESSIONS map among them)
    local dominated, sum = heap:dominated(cls), object:size()
    for _, d in ipairs(dominated) do sum = sum + heap:retained(d) end
    assert.are.equal(sum, heap:retained(cls))
    assert.are.equal(heap:retained(object), heap:retained(cls))
    assert.are.equal(heap:retained_count(object), heap:retained_count(cls))
    assert.are.equal(heap:shallow(object), heap:shallow(cls))
    assert.is_true(heap:retained(cls) > heap:retained(cls:static("SESSIONS")))
    assert.are.equal("java.util.HashMap", dominated[1]:class_name())
    -- the path: the launcher's sticky class holds the application class in a static
    local p = assert(heap:path_to_root(cls))
    assert.are.same({ "class sun.launcher.LauncherHelper", "class LeakySample" },
      { tostring(p[1].object):match("^[^@]*"), tostring(p[2].object):match("^[^@]*") })
    assert.are.same({ "sticky_class", "static LauncherHelper.appClass" }, { p[1].root, p[2].label })
    local q = assert(heap:path_to_root(object))
    assert.are.same({ p[1].object:id(), p[2].object:id() }, { q[1].object:id(), q[2].object:id() })
    assert.are.equal(#heap:referrers(object), #heap:referrers(cls))
    assert.are.equal(#heap:references(object), #heap:references(cls))
    assert.are.equal("strong", heap:reachability(cls))
    assert.is_true(session:is_instance_of(heap:class("LeakySample$Session").object))
  end)

  it("says which argument is wrong, never an internal error", function()
    if not heap then return pending("no JDK") end
    assert.are.equal("bad argument #1 to 'retained' (object or class expected, got string)",
      error_of(heap.retained, heap, "LeakySample"))
    assert.are.equal("bad argument #1 to 'retained' (object or class expected, got nil)", error_of(heap.retained, heap))
    assert.are.equal("bad argument #1 to 'path_to_root' (object, class or list expected, got nil)",
      error_of(heap.path_to_root, heap, nil))
    assert.are.equal("bad argument #1 to 'paths' (objects or classes expected, [2] is a string)",
      error_of(heap.paths, heap, { session, "x" }))
    assert.are.equal("bad argument #1 to 'idom' (object or class expected, got number)", error_of(heap.idom, heap, 7))
    assert.are.equal("bad argument #1 to 'object' (integer id expected, got string)",
      error_of(heap.object, heap, ("0x%x"):format(session:id())))
    assert.are.equal("bad argument #1 to 'class' (string expected, got sift.Object)", error_of(heap.class, heap, session))
    assert.are.equal("bad argument #1 to 'top' (integer expected, got string)", error_of(heap.top, heap, "5"))
    assert.are.equal("bad argument #1 to 'histogram' (model expected: shark, jvm or visualvm, got 'jmv')",
      error_of(heap.histogram, heap, "jmv"))
    assert.are.equal("bad argument #1 to 'field' (string expected, got number)", error_of(session.field, session, 1))
    assert.are.equal("bad argument #1 to 'is_instance_of' (class or class name expected, got number)",
      error_of(session.is_instance_of, session, 1))
    assert.are.equal("bad argument #1 to 'analyze' (heap expected, got string)",
      error_of(require("sift.heap.leaks").analyze, "heap.hprof"))
  end)

  it("keeps ids integers, hex in text and JSON", function()
    if not heap then return pending("no JDK") end
    assert.are.equal("integer", math.type(session:id()))
    assert.are.equal(session, heap:object(session:id()))
    assert.are.equal(("LeakySample$Session@0x%x"):format(session:id()), tostring(session))
    local top = require("cjson").decode((helper.sift { "top", path, "-q", "-n", "1", "--json" }))
    assert.are.equal(("0x%x"):format(heap:top(1)[1].object:id()), top[1].id)
  end)

  it("suggests near names when no class has the name", function()
    if not heap then return pending("no JDK") end
    local near = "(did you mean 'LeakySample$Session'?)"
    for _, name in ipairs { "Session", "leakysample$session", "LeakySample$Sesion", "sesion" } do
      local cls, why = heap:class(name)
      assert.is_nil(cls)
      assert.are.equal(("no class named '%s' %s"):format(name, near), why)
    end
    assert.are.same({ nil, "no class named 'Zzqx'" }, { heap:class("Zzqx") })
  end)
end)

describe("the REPL and sift leaks --where (spec/java/LeakySample.java)", function()
  local path

  setup(function() path = helper.jvm_dump("LeakySample") end)

  it("shows ids in hex, a class's retained size, and usage errors", function()
    if not path then return pending("no JDK") end
    local heap = assert(sift.open(path))
    local s = heap:class("LeakySample$Session"):instances()()
    local hex = ("0x%x"):format(s:id())
    local out, err = helper.sift({ "repl", path, "-q" }, [[<<'EOF'
s = heap:class("LeakySample$Session"):instances()()
s:id()
print(s:id(), 2000)
{ id = s:id() }
heap:retained(heap:class("LeakySample")) == heap:retained(heap:class("LeakySample").object)
heap:class("Session")
heap:retained("s")
EOF]])
    assert.are.same({ hex, hex .. "\t2000", "{ id = " .. hex .. " }", "true",
      [[nil	"no class named 'Session' (did you mean 'LeakySample$Session'?)"]] }, helper.lines(out))
    assert.are.equal("error: bad argument #1 to 'retained' (object or class expected, got string)\n", err)
  end)

  it("stops at the object a --where expression raises on, and exits 2", function()
    if not path then return pending("no JDK") end
    local heap = assert(sift.open(path))
    local first = heap:class("LeakySample$Session"):instances()()
    local out, err, code = helper.sift { "leaks", path, "-q", "--class", "LeakySample$Session", "--where", "obj:clsoed()" }
    assert.are.equal(2, code)
    assert.are.equal("", out)
    assert.are.equal(("sift: --where failed on %s (id 0x%x, class LeakySample$Session): "
      .. "attempt to call a nil value (method 'clsoed')\n"):format(tostring(first), first:id()), err)
    out, err, code = helper.sift { "leaks", path, "-q", "--class", "Session", "--where", "obj.closed" }
    assert.are.same({ 1, "" }, { code, out })
    assert.are.equal(("sift: %s: --class: no class named 'Session' (did you mean 'LeakySample$Session'?)\n"):format(path),
      err)
    -- spelt right, the 2,000 closed sessions (17 + 4,096 bytes each)
    out, err, code = helper.sift { "leaks", path, "-q", "--json", "--class", "LeakySample$Session", "--where", "obj.closed" }
    assert.are.equal(0, code, err)
    local leak = require("cjson").decode(out).application_leaks[1]
    assert.are.same({ 2000, 2000 * (17 + 4096) }, { #leak.traces, leak.retained })
  end)
end)
