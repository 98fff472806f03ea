-- sift serve computes each result a page needs once per file, in the
-- file's compute thread, while its page thread answers every other page.
-- The computation is made as long as the spec likes with the test option
-- `hold` (a computation waits while that file exists, its progress saying
-- so): no race with the clock, and every condition is polled.
local cjson = require "cjson"
local helper = require "spec.helper"

local JVM = "hprof/generated-jdk17/leaky_jdk17_all.hprof"

-- the computation of key in a progress.json view
local function job(progress, key)
  for _, c in ipairs(progress.computations) do
    if c.key == key then return c end
  end
end

describe("sift serve's computations", function()
  it("answer a second page of the file while a long one runs, show their own progress, and are kept", function()
    local heap = helper.fixture(JVM)
    if not heap then return end
    local hold = helper.tmpdir() .. "/hold"
    assert(io.open(hold, "w")):close()
    helper.with_server({ files = { heap }, data = helper.tmpdir(), hold = hold }, function(get)
      local ok, why = pcall(function()
        local _, index = get("/index.json")
        local url = index.files[1].url
        -- the file opens (a JSON client waits for that); the overview needs
        -- no computation
        local s0, overview = get(url .. "index.json")
        assert.are.same({ 200, 13521 }, { s0, overview.instances })
        -- a browser asks for the waste page: its computation starts, and the
        -- page it gets shows that computation's progress
        local s1, waiting = get(url .. "waste", { accept = "text/html" })
        assert.are.equal(200, s1)
        assert.truthy(waiting:find('var KEY = "waste:shark";', 1, true) and waiting:find('<p id="progress">', 1, true),
          waiting)
        local held = helper.wait_for("the waste computation to be running, held", function()
          local _, p = get(url .. "progress.json")
          local w = job(p, "waste:shark")
          return w and w.state == "working" and w.label == "waste:shark: held (test option hold)" and w, cjson.encode(p)
        end)
        assert.are.same({ 0, 1 }, { held.done, held.total })
        -- the histogram needs a computation too: it waits its turn, with its
        -- own entry (not the waste's progress)
        local s2, queued = get(url .. "histogram", { accept = "text/html" })
        assert.are.equal(200, s2)
        assert.truthy(queued:find('var KEY = "histogram:shark";', 1, true), queued)
        -- meanwhile the other pages of the same file answer with their content
        local s3, page = get(url, { accept = "text/html" })
        assert.are.equal(200, s3)
        local top = overview.top[1]
        assert.truthy(page:find('<table id="top">', 1, true) and page:find(top.id, 1, true), page)
        local s4, obj = get(url .. "object/" .. top.id .. ".json")
        assert.are.same({ 200, top.id, top.retained }, { s4, obj.id, obj.retained })
        local s5, cls = get(url .. "class.json?name=java.lang.String")
        assert.are.same({ 200, "java.lang.String" }, { s5, cls.name })
        assert.is_true(cls.instances > 100)
        -- and the waste computation was still running when they answered
        local _, p = get(url .. "progress.json")
        local w, hist = job(p, "waste:shark"), job(p, "histogram:shark")
        assert.are.same({ "working", 0, 1 }, { w.state, w.done, w.total })
        assert.are.equal("queued", hist.state)
        -- released, both are computed, one after the other, and kept
        os.remove(hold)
        helper.wait_for("both computations to be done", function()
          local _, q = get(url .. "progress.json")
          return job(q, "waste:shark").state == "ready" and job(q, "histogram:shark").state == "ready", cjson.encode(q)
        end)
        local s6, waste = get(url .. "waste", { accept = "text/html" })
        assert.are.equal(200, s6)
        assert.truthy(waste:find("<h2>Duplicate strings</h2>", 1, true), waste)
        local _, histogram = get(url .. "histogram.json?filter=LeakyApp")
        assert.is_true(#histogram.rows > 0)
        for _, r in ipairs(histogram.rows) do assert.truthy(r.class:find("LeakyApp", 1, true)) end
        -- asked again, nothing is computed again: the same two, done
        get(url .. "waste.json")
        get(url .. "histogram.json?sort=count")
        local _, after = get(url .. "progress.json")
        assert.are.same({ "histogram:shark", "waste:shark" }, { after.computations[1].key, after.computations[2].key })
        assert.are.same({ 2, "ready", "ready" }, { #after.computations, after.computations[1].state,
          after.computations[2].state })
      end)
      os.remove(hold)  -- (a held computation would keep the server from closing)
      if not ok then error(why, 0) end
    end)
  end)
end)
