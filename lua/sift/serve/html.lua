--- The server's HTML: escaping, the page around every view, tables, links.
-- Pages are made on the server (no framework, no build step); the little
-- script they carry is in the page itself.
-- @module sift.serve.html

local size = require "sift.size"

local M = {}

local ESCAPES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

--- Text as HTML (any value; nil is "").
function M.escape(v)
  if v == nil then return "" end
  return (tostring(v):gsub("[&<>\"']", ESCAPES))
end
local esc = M.escape

--- A query string's value: percent-encoded.
function M.encode(v)
  return (tostring(v):gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

--- A number as every page writes it: exact, its thousands separated by
-- commas as the CLI writes them (`sift.size.grouped`), in a span that the
-- page's style never breaks across lines: `<span class="n">3,356,758</span>`.
-- Anything but a number is escaped text.
function M.num(n)
  if type(n) ~= "number" then return esc(n) end
  return '<span class="n">' .. size.grouped(n) .. "</span>"
end

--- Bytes with a unit, for summaries (`4.1 kB`, as LeakCanary writes
-- them), the exact number in its tooltip: tables show `num` instead.
function M.bytes(n)
  if type(n) ~= "number" then return esc(n) end
  return ('<span class="n" title="%s bytes">%s</span>'):format(size.grouped(n), size.si(n))
end

--- The link of a page of a served file: `/f/ID/page?k=v` (query sorted).
function M.file_href(id, page, query)
  local q = {}
  for k, v in pairs(query or {}) do q[#q + 1] = k .. "=" .. M.encode(v) end
  table.sort(q)
  return ("/f/%s/%s%s"):format(id, page, #q > 0 and ("?" .. table.concat(q, "&")) or "")
end

--- A link: href and text (escaped).
function M.a(href, text)
  return ('<a href="%s">%s</a>'):format(esc(href), esc(text))
end

local STYLE = [[
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#222}
header{background:#263238;color:#fff;padding:8px 16px}header a{color:#cfd8dc;margin-right:14px}
main{padding:12px 16px}h1{font-size:20px}h2{font-size:16px;margin-top:22px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.n{white-space:nowrap}
code,.mono{font-family:ui-monospace,monospace;font-size:13px}
.muted{color:#777}.err{color:#b00020}.bar{background:#90caf9;height:10px;display:inline-block}
form.inline{display:inline}input[type=text]{width:22em}
.LEAKING{color:#b00}.NOT_LEAKING{color:#070}.UNKNOWN{color:#555}.suspect{text-decoration:underline wavy #b00}
ol.trace li{margin:.3em 0}details details pre{background:#f6f6f6;padding:8px;overflow-x:auto}
]]

--- A whole page: title, the navigation (list of {href, text}) and body.
function M.page(title, nav, body)
  local links = { M.a("/", "sift") }
  for _, n in ipairs(nav or {}) do links[#links + 1] = M.a(n[1], n[2]) end
  return table.concat {
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", esc(title),
    " · sift</title><style>", STYLE, "</style></head><body><header>", table.concat(links),
    "</header><main><h1>", esc(title), "</h1>\n", body, "\n</main></body></html>\n",
  }
end

--- A table: heads (list of strings; a head starting with "#" is a number
-- column) and rows (lists of HTML cells, already escaped). With no rows,
-- no table of headers alone: the words `empty` (plain text, a sentence;
-- "None." when not given) in a grey paragraph that carries the table's id.
function M.table(heads, rows, id, empty)
  if #rows == 0 then
    return ('<p class="muted empty"%s>%s</p>'):format(id and (' id="%s"'):format(esc(id)) or "", esc(empty or "None."))
  end
  local out = { id and ('<table id="%s">'):format(esc(id)) or "<table>", "<tr>" }
  local numeric = {}
  for i, h in ipairs(heads) do
    numeric[i] = h:sub(1, 1) == "#"
    out[#out + 1] = (numeric[i] and '<th class="n">%s</th>' or "<th>%s</th>"):format(esc(numeric[i] and h:sub(2) or h))
  end
  out[#out + 1] = "</tr>"
  for _, row in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for i, cell in ipairs(row) do
      out[#out + 1] = (numeric[i] and '<td class="n">%s</td>' or "<td>%s</td>"):format(cell)
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

--- A key-value list as a two-column table.
function M.facts(pairs_list)
  local rows = {}
  for _, kv in ipairs(pairs_list) do
    if kv[2] ~= nil then rows[#rows + 1] = { esc(kv[1]), type(kv[2]) == "number" and M.num(kv[2]) or esc(kv[2]) } end
  end
  return M.table({ "", "" }, rows)
end

return M
