-- The play mode of `sift serve` in headless Chromium, driven as a person
-- drives it (spec/cdp.lua: real key presses, the page's live layout) on a
-- real trace whose first thread with records is a 6-call background
-- thread: the page opens on the busiest thread, follows the current call
-- while it plays, stops following when the reader scrolls away, answers
-- space, arrows and +/-, and `#thread=TID&at=N` opens at call N of that
-- thread. Expected methods are `sift calls`' own lines.
local helper = require "spec.helper"
local cdp = require "spec.cdp"
local sift = require "sift"

local TRACE = "trace/firefox-art-trace-regular.trace"

-- the methods of `sift calls --thread TID` in order, one per call line
-- (loop brackets are not calls), and what it says on stderr
local function listed_calls(path, tid)
  local out, err, code = helper.sift { "calls", "--thread", tostring(tid), path }
  assert.are.equal(0, code, err)
  local methods = {}
  for line in out:gmatch("[^\n]+") do
    local call = line:gsub("^%s*", ""):gsub("^%[%d+%] ", "")
    if not call:find("^┌") and not call:find("^└") then
      methods[#methods + 1] = (call:gsub("^│ ", ""):gsub(" ×%d+$", ""))
    end
  end
  return methods, err
end

-- what the player shows now: the call count, the current row (its
-- method, its box) and the state around it
local STATE = [[(function () {
  var g = document.querySelector("#graph g.row.current"), box = g && g.getBoundingClientRect();
  var svg = document.getElementById("graph").getBoundingClientRect();
  return { count: document.getElementById("count").textContent,
    row: g ? g.querySelector("text").textContent : "", rows: document.querySelectorAll("#graph g.current").length,
    current: document.getElementById("current").textContent,
    top: box ? box.top : -1, bottom: box ? box.bottom : -1, height: box ? box.height : 0,
    row_in_page: box ? box.top - svg.top : -1,
    bar: document.getElementById("controls").getBoundingClientRect().bottom,
    inner: window.innerHeight, scroll: window.scrollY, hash: location.hash, search: location.search,
    button: document.getElementById("play").textContent, speed: document.getElementById("speed").value,
    follow: document.getElementById("follow").checked,
    thread: document.getElementById("thread").value,
    title: document.querySelector("h1").textContent };
})()]]

describe("sift serve's play mode in headless Chromium #heavy", function()
  it("opens on the busiest thread, follows the current call, answers keys and #thread=&at=", function()
    local path = helper.fixture(TRACE)
    if not path then return end
    if not helper.have_chromium() then
      pending("chromium is not installed (apt-get install chromium)")
      return
    end
    -- the busiest thread, by sift's own count of each thread's calls; the
    -- first thread with records is the 6-call one the page used to open on
    local trace = assert(sift.open(path))
    local busiest, first
    for _, th in ipairs(trace:threads()) do
      if th.records > 0 then
        local _, stats = trace:calls { thread = th.tid }
        first = first or { th.tid, th.name, stats.calls }
        if not busiest or stats.calls > busiest[3] then busiest = { th.tid, th.name, stats.calls } end
      end
    end
    trace:close()
    assert.are.same({ 21491, "main", 4308 }, busiest)
    assert.are.same({ 21591, "SharedPreferencesImpl-load", 6 }, first)
    local main, main_err = listed_calls(path, 21491)
    assert.truthy(main_err:find("thread main: 4,308 calls", 1, true), main_err)
    local pool, pool_err = listed_calls(path, 21530)
    assert.truthy(pool_err:find("thread pool-3-thread-1: 549 calls", 1, true), pool_err)

    local url, pid, dir = helper.serve { path }
    local browser, why
    local ok, err = pcall(function()
      assert.truthy(url, "the server did not start: " .. helper.read(dir .. "/out"))
      browser, why = cdp.open { width = 1000, height = 700 }
      assert(browser, why)
      browser:navigate(url)
      local file = browser:eval([[document.querySelector('a[href^="/f/"]').getAttribute("href")]])
      local play = url .. file:match("^/(f/%x+/)") .. "play"
      local function open(address)
        browser:navigate("about:blank")  -- (a fresh load, as a shared link is opened)
        browser:navigate(address)
        return helper.wait_for("the player of " .. address, function()
          local ok_state, s = pcall(browser.eval, browser, "window.siftPlayer ? " .. STATE .. " : null")
          return ok_state and s, s
        end, 300)
      end
      local function state() return browser:eval(STATE) end
      local function in_view(s)
        return s.height > 0 and s.top >= s.bar and s.bottom <= s.inner
      end

      -- opens on the busiest thread: selected in the picker, named in the title
      local s = open(play)
      assert.are.same({ "21491", "Play: main (tid 21491)", "0 / " .. #main, "" },
        { s.thread, s.title, s.count, s.row })
      local label = browser:eval([[document.querySelector("#thread option:checked").textContent]])
      assert.are.equal("main (tid 21491): 4,308 calls", label)
      local options = browser:eval([[Array.prototype.map.call(document.querySelectorAll("#thread option"),
        function (o) { return o.textContent; }).join("\n")]])
      assert.truthy(options:find("SharedPreferencesImpl-load (tid 21591): 6 calls", 1, true), options)
      assert.truthy(options:find("SharedPreferencesImpl-load (tid 21725): 13 calls", 1, true), options)
      local keys = browser:eval([[document.getElementById("keys").textContent]])
      for _, said in ipairs { "space", "play/pause", "→", "←", "↑", "↓", "+", "faster/slower" } do
        assert.truthy(keys:find(said, 1, true), keys)
      end

      -- arrows step one call forward and back; the address follows
      for _ = 1, 3 do browser:key("ArrowRight") end
      s = state()
      assert.are.same({ "3 / " .. #main, main[3], "#thread=21491&at=3", 1 }, { s.count, s.row, s.hash, s.rows })
      assert.truthy(s.current:find(main[3], 1, true) == 1, s.current)
      browser:key("ArrowLeft")
      s = state()
      assert.are.same({ "2 / " .. #main, main[2], "#thread=21491&at=2" }, { s.count, s.row, s.hash })

      -- ↑ and + faster, ↓ and - slower, along the speeds offered
      for _ = 1, 4 do browser:key("ArrowUp") end
      assert.are.equal("200", state().speed)
      browser:key("-")
      assert.are.equal("100", state().speed)
      browser:key("+")
      browser:key("ArrowDown")
      browser:key("ArrowUp")
      assert.are.equal("200", state().speed)

      -- space plays until the current call's row lies more than two screens
      -- down the graph (a loop folded into one row holds many calls: the
      -- row, not the count, says how far), yet the page has followed it
      -- into view; space pauses
      browser:key(" ")
      assert.are.equal("pause", state().button)
      helper.wait_for("the player's row to pass two screens down the graph", function()
        local now = state()
        return now.row_in_page > 2 * now.inner, ("call %s, its row %.0f px down"):format(now.count, now.row_in_page)
      end, 300)
      browser:key(" ")
      s = state()
      local at = tonumber(s.count:match("^%d+"))
      assert.are.equal("play", s.button)
      assert.are.same({ at .. " / " .. #main, main[at], "#thread=21491&at=" .. at }, { s.count, s.row, s.hash })
      assert.is_true(s.row_in_page > 2 * s.inner, ("row %.0f px into the graph, viewport %.0f px"):format(s.row_in_page, s.inner))
      assert.is_true(s.scroll > 0 and in_view(s), ("the current call's box %.0f-%.0f, viewport %.0f-%.0f, scrolled "
        .. "%.0f px, following %s"):format(s.top, s.bottom, s.bar, s.inner, s.scroll, tostring(s.follow)))
      os.execute("sleep 0.3")
      assert.are.equal(s.count, state().count)  -- (paused)

      -- the reader wheels back to the top: following stops, and the
      -- next steps leave the page where the reader put it; F resumes
      browser:wheel(-10 * s.scroll)
      helper.wait_for("the page at the top, no longer following", function()
        local now = state()
        return not now.follow and now.scroll == 0, ("follow %s, at %.0f px"):format(tostring(now.follow), now.scroll)
      end, 30)
      browser:key("ArrowRight")
      browser:key("ArrowRight")
      s = state()
      assert.are.same({ (at + 2) .. " / " .. #main, main[at + 2], 0, false }, { s.count, s.row, s.scroll, in_view(s) })
      browser:key("f")
      s = state()
      assert.is_true(s.follow and s.scroll > 0 and in_view(s), ("follow %s, box %.0f-%.0f"):format(tostring(s.follow),
        s.top, s.bottom))

      -- #thread=TID&at=N: another thread opens at its Nth call, in view
      s = open(play .. "#thread=21530&at=300")
      assert.are.same({ "21530", "?thread=21530", "Play: pool-3-thread-1 (tid 21530)", "300 / " .. #pool, pool[300],
        "#thread=21530&at=300" }, { s.thread, s.search, s.title, s.count, s.row, s.hash })
      assert.truthy(s.current:find(pool[300], 1, true) == 1, s.current)
      assert.is_true(in_view(s), ("the current call's box %.0f-%.0f, viewport %.0f-%.0f"):format(s.top, s.bottom, s.bar, s.inner))
      -- and a fragment changed in place seeks within the thread
      browser:eval([[location.hash = "#thread=21530&at=7"]])
      s = helper.wait_for("the player to seek to call 7", function()
        local now = state()
        return now.count == "7 / " .. #pool and now, now.count
      end, 30)
      assert.are.same({ pool[7], "?thread=21530" }, { s.row, s.search })
    end)
    if browser then browser:close() end
    os.execute("kill " .. pid)
    os.execute("rm -rf " .. helper.quote(dir))
    assert(ok, err)
  end)
end)
