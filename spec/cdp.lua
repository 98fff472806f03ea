--- Headless Chromium driven over the DevTools protocol, for specs that
-- press keys and read live page state (what --dump-dom cannot do): one
-- browser per session, on a free loopback port, its page reached through
-- lua-http's WebSocket client. A session evaluates JavaScript in the page
-- (returning plain values), presses keys and turns the mouse wheel as a
-- person does (the browser's own input events, not synthetic DOM events)
-- and navigates.
--
--     local browser = cdp.open { width = 1000, height = 700 }
--     browser:navigate(url)
--     browser:key("ArrowRight")
--     print(browser:eval("document.title"))
--     browser:close()
local helper = require "spec.helper"

local cdp = {}

-- the keys specs press: DOM key name -> { code, Windows virtual key code }
local KEYS = {
  [" "] = { "Space", 32 }, ArrowLeft = { "ArrowLeft", 37 }, ArrowUp = { "ArrowUp", 38 },
  ArrowRight = { "ArrowRight", 39 }, ArrowDown = { "ArrowDown", 40 }, Home = { "Home", 36 }, End = { "End", 35 },
  ["+"] = { "Equal", 187 }, ["-"] = { "Minus", 189 }, f = { "KeyF", 70 },
}

local Session = {}
Session.__index = Session

--- Send a DevTools command and wait for its answer: the result table
-- (a protocol error raises).
function Session:call(method, params)
  local cjson = require "cjson"
  self.id = self.id + 1
  assert(self.ws:send(cjson.encode { id = self.id, method = method, params = params or cjson.decode("{}") }))
  while true do
    local text, err = self.ws:receive(60)
    assert(text, ("no answer to %s from Chromium: %s"):format(method, tostring(err)))
    local msg = cjson.decode(text)
    if msg.id == self.id then
      if msg.error then error(("%s: %s"):format(method, msg.error.message), 2) end
      return msg.result
    end
  end
end

--- The value of a JavaScript expression in the page (JSON-like values;
-- a promise is awaited; an exception raises with its text).
function Session:eval(expression)
  local r = self:call("Runtime.evaluate", { expression = expression, returnByValue = true, awaitPromise = true })
  if r.exceptionDetails then
    local ex = r.exceptionDetails.exception
    error(("in the page: %s"):format(ex and ex.description or r.exceptionDetails.text), 2)
  end
  local v = r.result.value
  if v == require("cjson").null then return nil end
  return v
end

--- Load a URL and wait until its document has loaded (scripts ran).
function Session:navigate(url)
  self:call("Page.navigate", { url = url })
  helper.wait_for("Chromium to load " .. url, function()
    local ok, state = pcall(self.eval, self, "document.readyState + ' ' + location.href")
    local here = ok and state:match("^complete (.*)$")  -- (the new document's, not the one before)
    return here and (url == "about:blank" or here ~= "about:blank") and state, state
  end, 120)
end

--- Press and release a key (a name of KEYS: " ", "ArrowRight", "+", ...).
function Session:key(name)
  local k = assert(KEYS[name], "no such key in spec/cdp.lua: " .. name)
  local ev = { key = name, code = k[1], windowsVirtualKeyCode = k[2], nativeVirtualKeyCode = k[2] }
  ev.type = "keyDown"
  if #name == 1 then ev.text = name end
  self:call("Input.dispatchKeyEvent", ev)
  ev.type, ev.text = "keyUp", nil
  self:call("Input.dispatchKeyEvent", ev)
end

--- Turn the mouse wheel over the page's middle: dy CSS pixels down
-- (negative: up), as a reader scrolls.
function Session:wheel(dy)
  self:call("Input.dispatchMouseEvent", { type = "mouseWheel", x = 300, y = 300, deltaX = 0, deltaY = dy })
end

--- Stop the browser and remove its profile.
function Session:close()
  if self.ws then pcall(self.ws.close, self.ws) end
  os.execute("kill " .. self.pid .. " 2>/dev/null")
  helper.wait_for("Chromium to stop", function()
    return not os.execute("kill -0 " .. self.pid .. " 2>/dev/null")
  end, 60)
  os.execute("rm -rf " .. helper.quote(self.dir))
end

--- A headless Chromium with one page of `width` × `height` CSS pixels
-- (default 1000 × 700), or nil and why when Chromium cannot be started.
function cdp.open(opts)
  opts = opts or {}
  require("sift.paths").older_lua()  -- (lua-http is packaged for Lua 5.1-5.3)
  local request, websocket, cjson = require "http.request", require "http.websocket", require "cjson"
  local dir = helper.tmpdir()
  -- (exec'd by env: the pid is the browser's; no sanitizer runtime)
  os.execute(("env -u LD_PRELOAD %s --headless --no-sandbox --disable-gpu --hide-scrollbars "
    .. "--remote-debugging-port=0 --remote-debugging-address=127.0.0.1 --user-data-dir=%s/profile about:blank "
    .. ">/dev/null 2>%s/err & echo $! > %s/pid"):format(helper.CHROMIUM, dir, dir, dir))
  local pid = helper.read(dir .. "/pid"):match("%d+")
  local session = setmetatable({ dir = dir, pid = pid, id = 0 }, Session)
  local ok, err = pcall(function()
    local port = helper.wait_for("Chromium's DevTools port", function()
      local f = io.open(dir .. "/err")
      local text = f and f:read("a") or ""
      if f then f:close() end
      return text:match("DevTools listening on ws://127%.0%.0%.1:(%d+)/"), text
    end, 120)
    local headers, stream = request.new_from_uri(("http://127.0.0.1:%s/json/list"):format(port)):go(30)
    assert(headers, stream)
    local page
    for _, target in ipairs(cjson.decode(stream:get_body_as_string())) do
      if target.type == "page" then page = target.webSocketDebuggerUrl break end
    end
    assert(page, "Chromium shows no page")
    session.ws = websocket.new_from_uri(page)
    assert(session.ws:connect(30))
    session:call("Emulation.setDeviceMetricsOverride", { width = opts.width or 1000, height = opts.height or 700,
      deviceScaleFactor = 1, mobile = false })
  end)
  if not ok then
    session:close()
    return nil, err
  end
  return session
end

return cdp
