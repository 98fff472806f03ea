--- Play mode (the Control Flow Tracer's): a thread's calls replayed in
-- order as a call graph growing row by row, loops collapsed as in `sift
-- calls`, filtered by package. It opens on the thread with the most
-- calls, keeps the current call in view while it plays (unless the reader
-- scrolled away from it), answers the keyboard, and keeps its place in
-- the address: `#thread=TID&at=N` is the thread's Nth call (a call row of
-- `sift calls`, loop brackets not counted).
-- @module sift.serve.play

local json = require "sift.json"
local html = require "sift.serve.html"
local size = require "sift.size"

local esc, num = html.escape, html.num

local M = {}

-- at most this many steps go into a page (the rest is cut, and said)
local MAX_STEPS = 20000

-- the speeds offered, in calls a second (↑/↓ move along them)
local SPEEDS = { 1, 2, 5, 10, 20, 50, 100, 200, 500 }

-- a filter's text (comma-separated substrings, not Lua patterns) as the
-- patterns sift.trace takes
local function literals(text)
  local out = {}
  for part in (text or ""):gmatch("[^,%s]+") do out[#out + 1] = (part:gsub("%p", "%%%0")) end
  return #out > 0 and out or nil
end

-- the threads that made calls, the most calls first (file order among
-- equals): { tid, name, calls }
local function busiest_first(trace)
  local calls, list = trace:thread_calls(), {}
  for i, th in ipairs(trace:threads()) do
    if (calls[th.tid] or 0) > 0 then list[#list + 1] = { tid = th.tid, name = th.name, calls = calls[th.tid], i = i } end
  end
  table.sort(list, function(x, y)
    if x.calls ~= y.calls then return x.calls > y.calls end
    return x.i < y.i
  end)
  for _, t in ipairs(list) do t.i = nil end
  return list
end

-- the steps as the page's script reads them: method names once, then a
-- call as [depth, name number, times, 1 when in a loop], a loop's start
-- as [depth, 0, times], its end as [depth, 0, 0]
local function packed(steps, tid, name)
  local names, number, out = {}, {}, {}
  for i, s in ipairs(steps) do
    if s.call then
      local k = number[s.call]
      if not k then
        names[#names + 1] = s.call
        k = #names
        number[s.call] = k
      end
      out[i] = { s.depth, k, s.times, s.in_loop and 1 or 0 }
    else
      out[i] = { s.depth, 0, s.loop or 0 }
    end
  end
  return json.encode { thread = tid, name = name or "", names = json.array(names), steps = json.array(out) }
end

-- the player: replays the steps embedded in the page (script type
-- application/json, id "steps")
local PLAYER = [==[
<style>
#controls{position:sticky;top:0;background:#fff;z-index:1;border-bottom:1px solid #ddd;padding:2px 0}
#controls p{margin:4px 0}#current{min-height:1.45em}kbd{border:1px solid #bbb;border-radius:3px;padding:0 4px;font-size:12px}
#graph .row rect{fill:none}#graph .row circle{fill:#90caf9}
#graph .row.current rect{fill:#ffecb3}#graph .row.current circle{fill:#e53935}
</style>
<p id="keys" class="muted">Keys: <kbd>space</kbd> play/pause · <kbd>→</kbd> <kbd>←</kbd> one call forward/back ·
<kbd>↑</kbd> <kbd>↓</kbd> or <kbd>+</kbd> <kbd>-</kbd> faster/slower · <kbd>F</kbd> follow on/off ·
<kbd>Home</kbd> <kbd>End</kbd> first/last call. Scrolling away from the current call stops following it.
The address (<code>#thread=…&amp;at=N</code>, N calls in) opens the player where it is now.</p>
<div id="controls">
<p><button id="play">play</button> <button id="back">◀ back</button> <button id="step">step ▶</button>
speed <select id="speed">SPEED_OPTIONS</select> calls a second
<label><input type="checkbox" id="follow" checked> follow the current call</label>
<input type="range" id="slider" min="0" value="0" style="width:30%"> call <span id="count"></span></p>
<p id="current" class="mono"></p>
</div>
<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="100%" height="200"></svg>
<script>
(function () {
  var data = JSON.parse(document.getElementById("steps").textContent);
  var names = data.names, steps = data.steps, NS = "http://www.w3.org/2000/svg";
  var svg = document.getElementById("graph"), slider = document.getElementById("slider");
  var count = document.getElementById("count"), current = document.getElementById("current");
  var playButton = document.getElementById("play"), speed = document.getElementById("speed");
  var follow = document.getElementById("follow"), controls = document.getElementById("controls");
  // the step of each call (loop brackets are steps, not calls)
  var calls = [];
  steps.forEach(function (s, i) { if (s[1] > 0) calls.push(i); });
  // at: calls played; done: steps applied; rows: a row per method
  var at, done, rows, nrows, edges, stack, loops, now, shown = null, playing = null;
  slider.max = calls.length;
  function reset() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    at = 0; done = 0; rows = {}; nrows = 0; edges = {}; stack = []; loops = []; now = null;
    svg.setAttribute("height", 200);
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  // a method's row, made when it is first called, indented by that depth
  function row(k, depth) {
    var r = rows[k];
    if (r) return r;
    r = { k: k, x: 10 + Math.min(depth - 1, 60) * 14, y: 12 + nrows++ * 20 };
    r.g = el("g", { "class": "row" });
    r.g.appendChild(el("title", {}, names[k - 1]));
    r.g.appendChild(el("rect", { x: 0, y: r.y - 10, width: "100%", height: 20 }));
    r.g.appendChild(el("circle", { cx: r.x, cy: r.y, r: 5 }));
    r.g.appendChild(el("text", { x: r.x + 9, y: r.y + 4, "font-size": 12 }, names[k - 1]));
    svg.appendChild(r.g);
    if (r.y + 20 > svg.getAttribute("height")) svg.setAttribute("height", r.y + 20);
    rows[k] = r;
    return r;
  }
  function apply(s) {
    var depth = s[0];
    if (s[1] === 0) { loops[depth] = s[2]; return; }  // (a loop's bracket)
    var r = row(s[1], depth), parent = stack[depth - 2];
    stack[depth - 1] = r; stack.length = depth;
    if (parent) {
      var key = parent.k + ">" + s[1];
      if (!edges[key]) {
        edges[key] = el("path", { d: "M" + parent.x + "," + parent.y + " V" + r.y + " H" + r.x,
          stroke: "#bbb", fill: "none" });
        svg.insertBefore(edges[key], svg.firstChild);
      }
    }
    now = { row: r, step: s };
  }
  // one call further: the steps up to the next call
  function forward() {
    if (at >= calls.length) return false;
    while (done <= calls[at]) apply(steps[done++]);
    at++;
    return true;
  }
  function seek(to) {
    to = Math.max(0, Math.min(to, calls.length));
    reset();
    while (at < to) forward();
    show(true);
  }
  // the reader's viewport below the controls
  function inView(box) {
    return box.top >= controls.getBoundingClientRect().bottom && box.bottom <= window.innerHeight;
  }
  // (where the player last scrolled the page; the page's own scrolling
  // while it loads is not the reader's)
  var scrolledTo = null, loaded = false, playerAt = 0, readerAt = 0;
  history.scrollRestoration = "manual";
  window.addEventListener("load", function () { loaded = true; reveal(); });
  function reveal() {
    if (!follow.checked || !now || inView(now.row.g.getBoundingClientRect())) return;
    var box = now.row.g.getBoundingClientRect(), top = controls.getBoundingClientRect().bottom;
    window.scrollBy(0, box.top + box.height / 2 - (top + window.innerHeight) / 2);
    scrolledTo = window.scrollY;
    playerAt = Date.now();
  }
  // the reader's own scrolling: wheel and touch (a scroll event comes
  // later, and may carry the player's last scroll adjusted by the browser)
  function reader() { readerAt = Date.now(); }
  window.addEventListener("wheel", reader, { passive: true });
  window.addEventListener("touchmove", reader, { passive: true });
  // a scroll the player did not make, leaving the current call out of
  // view, stops following it (F or the box turns it back on); one right
  // after the player's own, with no wheel or touch, is the player's
  window.addEventListener("scroll", function () {
    if (!loaded || window.scrollY === scrolledTo) return;
    if (Date.now() - playerAt < 500 && Date.now() - readerAt > 500) return;
    scrolledTo = null;
    if (follow.checked && now && !inView(now.row.g.getBoundingClientRect())) follow.checked = false;
  });
  follow.onchange = function () { reveal(); };
  var marked = 0;
  // the address: at once when still, at most four times a second in play
  function mark(still) {
    if (!still && Date.now() - marked < 250) return;
    history.replaceState(null, "", "#thread=" + encodeURIComponent(data.thread) + "&at=" + at);
    marked = Date.now();
  }
  function show(still) {
    if (shown) shown.classList.remove("current");
    shown = now && now.row.g;
    if (shown) shown.classList.add("current");
    var s = now && now.step, loop = s && s[3] ? loops[s[0]] : 0;
    current.textContent = s ? names[s[1] - 1] + (s[2] > 1 ? " ×" + s[2] : "") + (loop ? " (in a loop ×" + loop + ")" : "") : "";
    count.textContent = at + " / " + calls.length;
    slider.value = at;
    reveal();
    mark(still);
  }
  function stop() {
    if (playing) clearInterval(playing);
    playing = null;
    playButton.textContent = "play";
    mark(true);
  }
  function play() {
    if (at >= calls.length) seek(0);
    var rate = Number(speed.value), every = Math.max(1000 / rate, 40), n = Math.max(1, Math.round(rate * every / 1000));
    playButton.textContent = "pause";
    playing = setInterval(function () {
      for (var i = 0; i < n; i++) if (!forward()) break;
      show(false);
      if (at >= calls.length) stop();
    }, every);
  }
  function toggle() { if (playing) stop(); else play(); }
  function faster(by) {
    speed.selectedIndex = Math.max(0, Math.min(speed.options.length - 1, speed.selectedIndex + by));
    if (playing) { stop(); play(); }
  }
  playButton.onclick = toggle;
  document.getElementById("step").onclick = function () { stop(); if (forward()) show(true); };
  document.getElementById("back").onclick = function () { stop(); seek(at - 1); };
  speed.onchange = function () { if (playing) { stop(); play(); } };
  slider.oninput = function () { stop(); seek(Number(slider.value)); };
  document.addEventListener("keydown", function (e) {
    var t = e.target, tag = t.tagName;
    if (e.ctrlKey || e.metaKey || e.altKey || tag === "SELECT" || tag === "TEXTAREA"
        || (tag === "INPUT" && t.type !== "range" && t.type !== "checkbox")) return;
    switch (e.key) {
      case " ": toggle(); break;
      case "ArrowRight": stop(); if (forward()) show(true); break;
      case "ArrowLeft": stop(); seek(at - 1); break;
      case "ArrowUp": case "+": case "=": faster(1); break;
      case "ArrowDown": case "-": faster(-1); break;
      case "f": case "F": follow.checked = !follow.checked; reveal(); break;
      case "Home": stop(); seek(0); break;
      case "End": stop(); seek(calls.length); break;
      default: return;
    }
    e.preventDefault();  // (no page scroll, no click of a focused button)
  });
  // #thread=TID&at=N: another thread is another page (its steps are
  // not in this one), this one seeks
  function fromAddress() {
    var want = {};
    location.hash.slice(1).split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) want[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    if (want.thread && want.thread !== String(data.thread) && want.thread !== data.name) {
      var url = new URL(location.href);
      if (url.searchParams.get("thread") !== want.thread) {
        url.searchParams.set("thread", want.thread);
        location.replace(url.toString());
        return;
      }
    }
    stop();
    seek(/^\d+$/.test(want.at || "") ? Number(want.at) : 0);
  }
  window.addEventListener("hashchange", fromAddress);
  document.getElementById("thread").onchange = function () { this.form.submit(); };
  window.siftPlayer = { seek: seek, at: function () { return at; }, calls: calls.length };
  reset();
  fromAddress();
})();
</script>]==]

--- The play page of a trace: nav is the file's navigation. Its JSON twin
-- is the steps of `sift calls --json` with the thread and the threads.
function M.page(ctx, nav)
  local trace, q = ctx.doc, ctx.query
  local threads = busiest_first(trace)
  local thread = q.thread and q.thread ~= "" and (math.tointeger(tonumber(q.thread)) or q.thread)
    or (threads[1] and threads[1].tid)
  local ok, steps, th = pcall(trace.call_steps, trace, { thread = thread,
    include = literals(q.include), exclude = literals(q.exclude) })
  if not ok then return nil, 404, (tostring(steps):gsub("^.-:%d+: ", "")) end
  local truncated = #steps > MAX_STEPS
  for i = #steps, MAX_STEPS + 1, -1 do steps[i] = nil end
  local view = { thread = th, threads = json.array(threads), include = q.include, exclude = q.exclude,
    truncated = truncated, steps = json.array(steps) }
  return view, function()
    local choices, rows = {}, 0
    for i, t in ipairs(threads) do
      choices[i] = ('<option value="%d"%s>%s (tid %d): %s calls</option>'):format(t.tid,
        t.tid == th.tid and " selected" or "", esc(t.name or "thread"), t.tid, size.grouped(t.calls))
    end
    for _, s in ipairs(steps) do if s.call then rows = rows + 1 end end
    local speeds = {}
    for i, n in ipairs(SPEEDS) do speeds[i] = ('<option value="%d"%s>%d</option>'):format(n, n == 10 and " selected" or "", n) end
    local data = packed(steps, th.tid, th.name):gsub("</", "<\\/")
    return html.page(("Play: %s (tid %d)"):format(th.name or "thread", th.tid), nav, table.concat {
      ('<form method="get">thread <select name="thread" id="thread">%s</select> include <input type="text" '
        .. 'name="include" value="%s" placeholder="com.example"> exclude <input type="text" name="exclude" value="%s" '
        .. 'placeholder="android."> <button>apply</button></form>'):format(table.concat(choices), esc(q.include),
        esc(q.exclude)),
      ('<p id="summary">%s calls, shown as %s call rows (loops once)%s</p>'):format(num(th.calls), num(rows),
        truncated and (" of the first " .. num(MAX_STEPS) .. " steps") or ""),
      '<script type="application/json" id="steps">', data, "</script>",
      (PLAYER:gsub("SPEED_OPTIONS", table.concat(speeds))),
    })
  end
end

return M
