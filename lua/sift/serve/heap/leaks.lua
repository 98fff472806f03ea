--- The leaks page: `sift leaks --suspects` inside the site.
-- @module sift.serve.heap.leaks

local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex
local href, object_link, nav, dominators = common.href, common.object_link, common.nav, common.dominators

local M = {}

-- the LeakCanary-style leaks (a group: description, retained, traces) as
-- HTML: each trace's root and nodes, every node a link to its object page
local function leaks_html(ctx, groups, kind)
  local fields = require "sift.heap.fields"
  local leak_report = require "sift.heap.leak_report"
  local out = {}
  for g, leak in ipairs(groups) do
    out[#out + 1] = ('<section class="leak" id="%s-%d"><h3>%s</h3><p>%s retained by the leaking objects of %s trace%s%s; '
      .. "signature <code>%s</code></p>"):format(kind, g, esc(leak.description), html.bytes(leak.retained),
      num(#leak.traces), #leak.traces == 1 and "" or "s", leak.pattern and (", pattern " .. esc(leak.pattern)) or "",
      esc(leak.signature))
    for i, trace in ipairs(leak.traces) do
      local root = views.root_text { root = trace.root, root_inferred = trace.root_inferred, thread = trace.thread,
        frame_info = trace.frame }
      local nodes = { '<li class="root">' .. esc(root) .. "</li>" }
      for _, e in ipairs(trace.elements) do
        local status = e.status == "UNKNOWN" and "Leaking: UNKNOWN"
          or ("Leaking: %s (%s)"):format(e.status == "LEAKING" and "YES" or "NO", e.reason)
        local lines = { ('<a class="node" href="%s">%s %s <span class="mono">%s</span></a>'):format(
          esc(href(ctx, "object/" .. hex(e.object:id()))), esc(e.class), esc(e.type), hex(e.object:id())),
          ('<span class="%s">%s</span>'):format(e.status, esc(status)) }
        if e.retained and e.retained_count then
          lines[#lines + 1] = ("Retaining %s in %s objects"):format(html.bytes(e.retained), num(e.retained_count))
        end
        for _, label in ipairs(e.labels) do lines[#lines + 1] = esc(label) end
        if e.ref_name then
          lines[#lines + 1] = ("↓ %s<span%s>%s</span>"):format(e.ref_type == "static" and "static " or "",
            e.suspect and ' class="suspect" title="likely cause"' or "", esc(fields.simple(e.owner) .. "." .. e.ref_name))
        end
        nodes[#nodes + 1] = "<li>" .. table.concat(lines, "<br>") .. "</li>"
      end
      out[#out + 1] = ('<details%s><summary>Trace %s: %s</summary><ol class="trace">%s</ol>'
        .. "<details><summary>as LeakCanary's text</summary><pre>%s</pre></details></details>"):format(
        i == 1 and " open" or "", num(i), esc(root), table.concat(nodes), esc(leak_report.render_trace(trace)))
    end
    out[#out + 1] = "</section>"
  end
  if #groups == 0 then out[1] = '<p class="muted">none</p>' end
  return table.concat(out)
end

-- the suspects as HTML: what, its share, its object and where the memory
-- accumulates (links to the dominator tree expanded there), the path to it
local function suspects_html(ctx, list, reachable)
  local function subtree(obj)
    return a(href(ctx, "dominators", { of = hex(obj:id()) }), "dominator subtree")
  end
  local function what(sus)
    if sus.kind == "object" then
      return ('one <span class="suspect-class">%s</span> (%s)'):format(esc(sus.class), object_link(ctx, sus.object))
    end
    return ('%s instances of <span class="suspect-class">%s</span>, all held by %s'):format(num(sus.count),
      esc(sus.class), object_link(ctx, sus.holder))
  end
  local out = {}
  for i, sus in ipairs(list) do
    local lines = { ("%s %s %s bytes, %.1f%% of the %s reachable bytes; its %s"):format(what(sus),
      sus.kind == "class" and "retain" or "retains", num(sus.retained), 100 * sus.share, num(reachable),
      subtree(sus.object)) }
    for _, inner in ipairs(sus.nested or {}) do
      lines[#lines + 1] = ("inside it: %s %s %s bytes (%.1f%%); its %s"):format(what(inner),
        inner.kind == "class" and "retain" or "retains", num(inner.retained), 100 * inner.share, subtree(inner.object))
    end
    local acc = sus.accumulation
    if acc.object ~= sus.object then
      lines[#lines + 1] = ("the memory accumulates in %s (%s bytes); its %s"):format(object_link(ctx, acc.object),
        num(acc.retained), subtree(acc.object))
    end
    if sus.path then
      local steps = {}
      for k, st in ipairs(sus.path) do
        steps[k] = k == 1 and ("root " .. esc(st.root) .. " " .. object_link(ctx, st.object))
          or (esc(st.label) .. " " .. object_link(ctx, st.object))
      end
      lines[#lines + 1] = "path: " .. table.concat(steps, " → ")
    end
    out[i] = ('<li id="suspect-%d">%s</li>'):format(i, table.concat(lines, "<br>"))
  end
  if #out == 0 then return '<p class="muted">nothing holds a tenth of the reachable heap</p>' end
  return '<ol id="suspects">' .. table.concat(out) .. "</ol>"
end

-- the leaks page's HTML, from `sift.heap.leaks`' report
local function leaks_page(ctx, report)
  local summary = dominators(ctx)
  local unreachable = {}
  for i, obj in ipairs(report.unreachable) do unreachable[i] = "<li>" .. object_link(ctx, obj) .. "</li>" end
  local meta, keys = {}, {}
  for k in pairs(report.metadata) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do meta[i] = { k, report.metadata[k] } end
  local function count(n, what) return num(n) .. " " .. what .. (n == 1 and "" or "s") end
  return html.page("Leaks", nav(ctx), table.concat {
    ('<p id="counts"><a href="#application">%s</a>, <a href="#library">%s</a>, <a href="#unclosed">%s</a>, '
      .. '<a href="#suspects-h">%s</a>, <a href="#unreachable">%s</a></p>'):format(
      count(#report.application_leaks, "application leak"), count(#report.library_leaks, "library leak"),
      count(#report.unclosed_resources, "unclosed resource"), count(#report.suspects, "leak suspect"),
      count(#report.unreachable, "unreachable object")),
    '<h2 id="application">Application leaks</h2>', leaks_html(ctx, report.application_leaks, "application"),
    '<h2 id="library">Library leaks</h2>', leaks_html(ctx, report.library_leaks, "library"),
    '<h2 id="unclosed">Unclosed resources</h2>', leaks_html(ctx, report.unclosed_resources, "unclosed"),
    '<h2 id="suspects-h">Leak suspects</h2><p>What holds more than a tenth of the reachable heap, as Eclipse MAT '
      .. "reports it (sizes: --model shark, as sift leaks --suspects gives them).</p>",
    suspects_html(ctx, report.suspects, report.reachable_bytes),
    '<h2 id="unreachable">Unreachable: should be dead, and are</h2>',
    common.unreachable_note(ctx, "leaks", summary.unreachable, #report.unreachable),
    #unreachable > 0 and ('<ul id="unreachable-list">' .. table.concat(unreachable) .. "</ul>") or "",
    "<h2>Metadata</h2>", html.facts(meta),
  })
end

--- Leaks: `sift leaks --suspects` as a page of the site: LeakCanary's
-- traces (each node a link to its object), library leaks, unclosed
-- resources, MAT-style suspects (each linked to its dominator subtree),
-- the objects that should be dead and are; the JSON twin is `sift leaks
-- --suspects --json`'s.
function M.leaks(ctx)
  local leaks = require "sift.heap.leaks"
  local heap = ctx.doc
  -- computed once, with its page (the report holds objects, which stay in
  -- the thread that computed it; its JSON and HTML are plain text)
  local kept = ctx.compute("leaks:" .. (ctx.model or "shark"), function()
    local report = leaks.analyze(heap, { suspects = true })  -- (its sizes: --model shark, as the CLI's)
    if ctx.model ~= "shark" then heap:dominators { model = ctx.model } end  -- (the other pages' tree back)
    return { view = leaks.to_json(report), page = leaks_page(ctx, report) }
  end)
  return kept.view, function() return kept.page end
end

return M
