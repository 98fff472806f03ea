--- A leak report as people and machines read it: LeakCanary's text (the
-- trace with its underlined suspects), the JSON of `sift leaks --json`, and
-- a self-contained HTML page.
-- @module sift.heap.leak_report

local fields = require "sift.heap.fields"
local suspects = require "sift.heap.suspects"
local size = require "sift.size"

local M = {}

local simple, root_description = fields.simple, fields.root_description
local format, concat = string.format, table.concat

--- {======================================================
-- Rendering
-- =======================================================

local ZWSP = "\u{200B}"

--- Bytes as LeakCanary writes them: SI units, one decimal ("1.2 kB").
M.bytes_text = size.si

local function node_text(e, first_prefix, prefix, type_name)
  local status = e.status == "UNKNOWN" and "UNKNOWN"
    or format("%s (%s)", e.status == "LEAKING" and "YES" or "NO", e.reason)
  local lines = { first_prefix .. e.class .. " " .. (type_name or e.type), prefix .. "Leaking: " .. status }
  if e.retained and e.retained_count then
    lines[#lines + 1] = format("%sRetaining %s in %d objects", prefix, M.bytes_text(e.retained), e.retained_count)
  end
  for _, label in ipairs(e.labels) do lines[#lines + 1] = prefix .. label end
  return concat(lines, "\n")
end

--- One trace as LeakCanary draws it.
function M.render_trace(trace)
  local out = { "┬───", "│ GC Root: " .. root_description(trace.root) .. (trace.root_inferred and " (inferred)" or ""), "│" }
  local n = #trace.elements
  for k = 1, n - 1 do
    local e = trace.elements[k]
    out[#out + 1] = node_text(e, "├─ ", "│    ")
    local line = format("    ↓%s %s.%s", e.ref_type == "static" and " static" or "", simple(e.owner), e.ref_name)
    out[#out + 1] = "│" .. line
    if e.suspect then
      local before = utf8.len(line:match("^(.*%.)"))
      out[#out + 1] = "│" .. (" "):rep(before) .. ("~"):rep(utf8.len(line) - before)
    end
  end
  out[#out + 1] = node_text(trace.elements[n], "╰→ ", ZWSP .. "     ")
  return concat(out, "\n")
end

--- The whole report as text: application leaks, library leaks, objects
-- that should be dead but that no root reaches, metadata.
function M.render(report)
  local out = {}
  local function section(title, leaks)
    out[#out + 1] = "===================================="
    out[#out + 1] = format("%d %s", #leaks, title)
    out[#out + 1] = ""
    if #leaks > 0 then  -- LeakCanary's legend
      out[#out + 1] = 'References underlined with "~~~" are likely causes.'
      out[#out + 1] = ""
    end
    for _, leak in ipairs(leaks) do
      out[#out + 1] = format("%d bytes retained by leaking objects", leak.retained)
      if leak.pattern then out[#out + 1] = "Leak pattern: " .. leak.pattern end
      out[#out + 1] = "Description: " .. leak.description
      out[#out + 1] = "Signature: " .. leak.signature
      for _, trace in ipairs(leak.traces) do out[#out + 1] = M.render_trace(trace) end
      out[#out + 1] = ""
    end
  end
  section("APPLICATION LEAKS", report.application_leaks)
  section("LIBRARY LEAKS", report.library_leaks)
  section("UNCLOSED RESOURCES", report.unclosed_resources or {})
  out[#out + 1] = "===================================="
  out[#out + 1] = format("%d UNREACHABLE OBJECTS (should be dead and are: no strong path from a GC root)",
    #report.unreachable)
  for _, obj in ipairs(report.unreachable) do out[#out + 1] = tostring(obj) end
  if report.suspects then
    out[#out + 1] = "===================================="
    out[#out + 1] = format("%d LEAK SUSPECTS (what holds more than a tenth of the reachable heap)", #report.suspects)
    for i, sus in ipairs(report.suspects) do
      out[#out + 1] = ""
      out[#out + 1] = format("Suspect %d. %s", i, suspects.text(sus, report.reachable_bytes))
    end
  end
  out[#out + 1] = "===================================="
  out[#out + 1] = "METADATA"
  local keys = {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = format("%s: %s", k, tostring(report.metadata[k])) end
  out[#out + 1] = "===================================="
  return concat(out, "\n")
end

--- The report as plain tables for JSON (the `sift leaks --json` contract).
function M.to_json(report)
  local array = require("sift.json").array
  local function trace_json(t)
    local elements = array {}
    for i, e in ipairs(t.elements) do
      local ref
      if e.ref_type == "static" then ref = "static " .. e.ref_name
      elseif e.ref_type == "field" then ref = "field " .. e.ref_name
      elseif e.ref_type == "local" then ref = "local"
      elseif e.ref_type == "jvm" then ref = e.ref_name
      elseif e.entry and not e.entry:match("^%d+$") then ref = e.entry  -- key(), "name", element()
      else ref = e.ref_name end
      elements[i] = { class = e.class, id = format("0x%x", e.object:id()), ref = ref, status = e.status,
                      reason = e.reason, suspect = e.suspect or nil, retained = e.retained,
                      retained_count = e.retained_count }
    end
    local f = t.frame  -- a local variable's root: Shark's text has the thread first; both are here
    return { root = t.root, root_inferred = t.root_inferred, thread = t.thread,
             frame = f and { method = f.method, class = f.class, source = f.source, line = f.line } or nil,
             leaking_class = t.leaking.class, leaking_id = format("0x%x", t.leaking.object:id()),
             retained = t.retained, elements = elements }
  end
  local function leaks_json(list)
    local out = array {}
    for i, g in ipairs(list) do
      local traces = array {}
      for j, t in ipairs(g.traces) do traces[j] = trace_json(t) end
      out[i] = { signature = g.signature, description = g.description, retained = g.retained,
                 pattern = g.pattern, traces = traces }
    end
    return out
  end
  local unreachable = array {}
  for i, obj in ipairs(report.unreachable) do
    unreachable[i] = { class = obj:class_name(), id = format("0x%x", obj:id()) }
  end
  local suspect_rows
  if report.suspects then
    suspect_rows = array {}
    for i, sus in ipairs(report.suspects) do
      local path = array {}
      for k, st in ipairs(sus.path or {}) do
        path[k] = { class = st.object:as_class() and st.object:as_class().name or st.object:class_name(),
                    id = format("0x%x", st.object:id()), ref = k > 1 and st.label or nil, root = st.root }
      end
      local nested = array {}
      for j, inner in ipairs(sus.nested or {}) do
        nested[j] = { kind = inner.kind, class = inner.class, id = format("0x%x", inner.object:id()),
          retained = inner.retained, share = inner.share, count = inner.count }
      end
      suspect_rows[i] = { kind = sus.kind, class = sus.class, id = format("0x%x", sus.object:id()), nested = nested,
        retained = sus.retained, share = sus.share, count = sus.count,
        accumulation = { class = sus.accumulation.object:class_name(),
                         id = format("0x%x", sus.accumulation.object:id()), retained = sus.accumulation.retained },
        path = path }
    end
  end
  return { application_leaks = leaks_json(report.application_leaks),
           library_leaks = leaks_json(report.library_leaks),
           unclosed_resources = leaks_json(report.unclosed_resources or {}), unreachable = unreachable,
           suspects = suspect_rows, metadata = report.metadata }
end

--- The report as one self-contained HTML page: a section per leak, each
-- trace collapsible, statuses coloured, suspects underlined.
function M.html(report, title)
  local function esc(v)
    return (tostring(v):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
  end
  local out = { "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>", esc(title or "sift leaks"),
    "</title><style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}",
    "pre{background:#f6f6f6;padding:1em;overflow-x:auto}summary{cursor:pointer;font-weight:600}",
    ".LEAKING{color:#b00}.NOT_LEAKING{color:#070}.UNKNOWN{color:#555}.suspect{text-decoration:underline wavy #b00}",
    "li{margin:.3em 0}</style></head><body><h1>", esc(title or "sift leaks"), "</h1>" }
  local function section(name, list)
    out[#out + 1] = format("<h2>%d %s</h2>", #list, name)
    for _, leak in ipairs(list) do
      out[#out + 1] = format("<details open><summary>%s — %s bytes retained, %d trace%s%s</summary>",
        esc(leak.description), size.grouped(leak.retained), #leak.traces, #leak.traces == 1 and "" or "s",
        leak.pattern and (" — pattern " .. esc(leak.pattern)) or "")
      out[#out + 1] = "<p>Signature <code>" .. leak.signature .. "</code></p>"
      for i, trace in ipairs(leak.traces) do
        out[#out + 1] = format("<details%s><summary>Trace %d: GC root %s</summary><ol>", i == 1 and " open" or "", i,
          esc(root_description(trace.root)))
        for _, e in ipairs(trace.elements) do
          out[#out + 1] = format("<li><b>%s</b> %s <span class=\"%s\">%s%s</span>", esc(e.class), e.type, e.status,
            e.status, e.reason and (" (" .. esc(e.reason) .. ")") or "")
          for _, label in ipairs(e.labels) do out[#out + 1] = "<br>" .. esc(label) end
          if e.ref_name then
            out[#out + 1] = format("<br>↓ %s<span%s>%s</span>", e.ref_type == "static" and "static " or "",
              e.suspect and " class=\"suspect\"" or "", esc(simple(e.owner) .. "." .. e.ref_name))
          end
          out[#out + 1] = "</li>"
        end
        out[#out + 1] = "</ol><pre>" .. esc(M.render_trace(trace)) .. "</pre></details>"
      end
      out[#out + 1] = "</details>"
    end
  end
  section("application leaks", report.application_leaks)
  section("library leaks", report.library_leaks)
  section("unclosed resources", report.unclosed_resources or {})
  if report.suspects then
    out[#out + 1] = format("<h2>%d leak suspects</h2><ol>", #report.suspects)
    for _, sus in ipairs(report.suspects) do
      out[#out + 1] = "<li>" .. esc(suspects.text(sus, report.reachable_bytes)):gsub("\n", "<br>") .. "</li>"
    end
    out[#out + 1] = "</ol>"
  end
  out[#out + 1] = format("<h2>%d unreachable objects</h2><ul>", #report.unreachable)
  for _, obj in ipairs(report.unreachable) do out[#out + 1] = "<li>" .. esc(tostring(obj)) .. "</li>" end
  out[#out + 1] = "</ul><h2>Metadata</h2><table>"
  local keys = {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    out[#out + 1] = format("<tr><td>%s</td><td>%s</td></tr>", esc(k), esc(report.metadata[k]))
  end
  out[#out + 1] = "</table></body></html>\n"
  return concat(out)
end

-- }======================================================


return M
