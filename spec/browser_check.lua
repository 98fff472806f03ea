-- make check-browser: the flame graph's script works in a real browser.
-- Renders a real trace, adds a probe that searches, zooms and resets, and
-- loads the SVG in headless Chromium; the probe writes what it saw into
-- the page, which --dump-dom prints.
local flame = require "sift.trace.flame"
local sift = require "sift"

local fixture = (os.getenv("SIFT_FIXTURES") or "../shared/fixtures") .. "/trace/amp-legacy.trace"
local trace = assert(sift.open(fixture))
local svg = flame.svg(flame.from_trace(trace, { clock = "cpu" }), { title = "browser check" })
local probe = [==[
<text id="probe" x="0" y="0"></text>
<script><![CDATA[
  var sift = document.documentElement.sift;
  var all = sift.visible();
  var hits = sift.search("cad3d");
  var matched = document.querySelector(".matched").textContent;
  var width = sift.zoom("com.github.grishberg.cad3d.ui.Cad3dActivity.onCreate");
  var zoomed = sift.visible();
  document.querySelector(".unzoom").dispatchEvent(new Event("click"));
  var reset = sift.visible();
  document.getElementById("probe").textContent =
    "visible=" + all + " hits=" + hits + " " + matched + " zoomwidth=" + width +
    " zoomed=" + zoomed + " reset=" + reset;
]]></script>
</svg>]==]
svg = svg:gsub("</svg>\n$", function() return probe .. "\n" end)
local path = os.tmpname() .. ".svg"
local f = assert(io.open(path, "w"))
f:write(svg)
f:close()
local browser = os.getenv("CHROMIUM") or "chromium"
local p = io.popen(browser .. " --headless --no-sandbox --disable-gpu --dump-dom file://" .. path .. " 2>/dev/null")
local dom = p:read("a")
p:close()
os.remove(path)
local line = dom:match('<text id="probe"[^>]*>([^<]*)</text>')
if not line then
  io.stderr:write("check-browser: the probe did not run (is chromium installed?)\n")
  os.exit(1)
end
print("check-browser: " .. line)
local all, hits, shown, pct, width, zoomed, reset = line:match(
  "visible=(%d+) hits=(%d+) (%d+) matches, ([%d.]+)%% zoomwidth=(%d+) zoomed=(%d+) reset=(%d+)")
all, hits, shown, pct, width, zoomed, reset = tonumber(all), tonumber(hits), tonumber(shown), tonumber(pct),
  tonumber(width), tonumber(zoomed), tonumber(reset)
local ok = all and all > 100 and hits > 0 and shown == hits and pct > 0 and pct <= 100 and width > 0
  and zoomed < all and zoomed > 0 and reset == all
if not ok then
  io.stderr:write("check-browser: FAILED\n")
  os.exit(1)
end
print("check-browser: search, zoom and reset work")

-- The finance report's chart: Chromium loads it (every month's group is in
-- its DOM) and takes a screenshot of it.
local finance = require "sift.finance"
local report = require "sift.finance.report"
local sample = require "sift.finance.sample"
local db = os.tmpname()
os.remove(db)
local books = assert(finance.open(db))
books:import(sample.statements { transactions = 1500 })
books:categorize { rules = 'if text ~ "tesco|lidl|aldi|waitrose" then Groceries\nif text ~ "rent" then Rent\n' }
local r = books:report {}
books:close()
os.remove(db)
local chart = os.tmpname() .. ".svg"
f = assert(io.open(chart, "w"))
f:write(report.svg(r))
f:close()
p = io.popen(browser .. " --headless --no-sandbox --disable-gpu --dump-dom file://" .. chart .. " 2>/dev/null")
dom = p:read("a")
p:close()
local groups = select(2, dom:gsub('<g class="month">', ""))
local shot = os.getenv("SIFT_SCREENSHOT") or (os.tmpname() .. ".png")
os.execute(("%s --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,700 "
  .. "--screenshot=%s file://%s >/dev/null 2>&1"):format(browser, shot, chart))
local png = io.open(shot, "rb")
local bytes = png and png:read("a") or ""
if png then png:close() end
os.remove(chart)
print(("check-browser: report chart: %d of %d months in the DOM, screenshot %s (%d bytes)"):format(groups,
  #r.months, shot, #bytes))
if groups ~= #r.months or groups == 0 or bytes:sub(2, 4) ~= "PNG" or #bytes < 10000 then
  io.stderr:write("check-browser: the report chart FAILED\n")
  os.exit(1)
end
