--- The diff with a baseline, waste, threads and class loaders pages.
-- @module sift.serve.heap.reports

local views = require "sift.heap.views"
local html = require "sift.serve.html"
local common = require "sift.serve.heap.common"

local esc, num, a = html.escape, html.num, html.a
local PAGE, href, class_link, nav, dominators =
  common.PAGE, common.href, common.class_link, common.nav, common.dominators

local M = {}

--- Diff with the baseline (`--baseline`): `sift diff-heap`'s view.
function M.diff(ctx)
  local base, msg = ctx.server:baseline()
  if not base then return nil, msg and 422 or 404, msg or "no baseline: start the server with --baseline FILE" end
  local view = views.diff_json(base, ctx.doc, ctx.model, PAGE)
  return view, function()
    local rows = {}
    for i, r in ipairs(view.classes) do
      if i > 1000 then break end
      rows[i] = { class_link(ctx, r.class), num(r.count_delta), num(r.shallow_delta), num(r.count), num(r.shallow) }
    end
    local new = {}
    for i, o in ipairs(view.new_objects.first) do
      new[i] = { a(href(ctx, "object/" .. o.id), o.class .. " " .. o.id), num(o.shallow) }
    end
    return html.page("Diff with the baseline", nav(ctx), table.concat {
      html.facts { { "baseline", ctx.server.opts.baseline }, { "instances then", view.base_instances },
        { "instances now", view.instances }, { "objects new since", view.new_objects.count },
        { "bytes new since", view.new_objects.bytes } },
      "<h2>Classes that changed</h2>",
      html.table({ "class", "#Δ instances", "#Δ bytes", "#instances", "#bytes" }, rows, "diff"),
      "<h2>New since the baseline (first 100)</h2>", html.table({ "object", "#shallow" }, new, "new"),
    })
  end
end

--- Waste: duplicate strings and arrays, collections below capacity,
-- arrays of zeros, boxed primitives (`sift waste`), each under its rule.
function M.waste(ctx)
  local heap = ctx.doc
  local model = ctx.model or "shark"
  local r = ctx.compute("waste:" .. model, function() return require("sift.heap.waste").report(heap, { model = model }) end)
  return r, function()
    local dup, arr, coll, zero, box = {}, {}, {}, {}, {}
    for i, d in ipairs(r.duplicate_strings) do
      dup[i] = { num(d.count), num(d.arrays), num(d.wasted), esc(d.value), esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, d in ipairs(r.duplicate_arrays) do
      arr[i] = { num(d.count), num(d.wasted), esc(d.class:gsub("%[%]$", "[" .. d.length .. "]")), esc(d.preview),
        esc(d.holders[1] and d.holders[1].class or "") }
    end
    for i, c in ipairs(r.collections) do
      local worst = {}
      for j, w in ipairs(c.worst) do
        worst[j] = ('<a href="%s">%s of %s</a>'):format(esc(href(ctx, "object/" .. w.id)), num(w.size), num(w.capacity))
      end
      coll[i] = { class_link(ctx, c.class), num(c.count), esc(c.fill and ("%.0f%%"):format(100 * c.fill) or "-"),
        num(c.wasted), table.concat(worst, ", ") }
    end
    for i, z in ipairs(r.zero_arrays) do zero[i] = { esc(z.class), num(z.count), num(z.wasted) } end
    for i, b in ipairs(r.boxed) do box[i] = { esc(b.class), num(b.count), b.distinct and num(b.distinct) or "?", num(b.wasted) } end
    local function rule(name) return "<p class=rule>wasted: " .. esc(r.rules[name]) .. "</p>" end
    return html.page("Wasted memory", nav(ctx), table.concat {
      ("<p>sizes: --model %s; duplicate strings: %s values held more than once, %s bytes wasted in all; "
        .. "duplicate arrays: %s, %s bytes</p>"):format(esc(r.model), num(r.totals.duplicate_strings.groups),
        num(r.totals.duplicate_strings.wasted), num(r.totals.duplicate_arrays.groups),
        num(r.totals.duplicate_arrays.wasted)),
      "<h2>Duplicate strings</h2>", rule("duplicate_strings"),
      html.table({ "#copies", "#arrays", "#wasted", "value", "held by" }, dup, "strings"),
      "<h2>Duplicate arrays</h2>", rule("duplicate_arrays"),
      html.table({ "#copies", "#wasted", "type", "first elements", "held by" }, arr, "arrays"),
      "<h2>Collections below capacity</h2>", rule("collections"),
      html.table({ "class", "#instances", "fill", "#wasted", "worst (size of capacity)" }, coll, "collections"),
      "<h2>Arrays of zeros</h2>", rule("zero_arrays"), html.table({ "type", "#arrays", "#bytes" }, zero, "zeros"),
      "<h2>Boxed primitives</h2>", rule("boxed"), html.table({ "class", "#boxes", "#values", "#wasted" }, box, "boxes"),
    })
  end
end

--- Threads: stacks, the locals each frame holds, what they retain (`sift threads`).
function M.threads(ctx)
  local heap = ctx.doc
  local threads = ctx.compute("threads", function()
    dominators(ctx)
    return require("sift.heap.census").threads(heap)
  end)
  return threads, function()
    local parts = {}
    for _, t in ipairs(threads) do
      local rows, by_frame = {}, {}
      for _, l in ipairs(t.locals) do
        by_frame[l.frame or 0] = by_frame[l.frame or 0] or {}
        table.insert(by_frame[l.frame or 0], l)
      end
      for i, f in ipairs(t.frames) do
        local held = {}
        for j, l in ipairs(by_frame[i] or {}) do
          held[j] = a(href(ctx, "object/" .. l.id), l.class .. " " .. l.id) .. " (" .. num(l.retained) .. ")"
        end
        rows[#rows + 1] = { esc(("%s.%s"):format(f.class or "?", f.method or "?")),
          esc(f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line) or (f.source or "")), table.concat(held, "<br>") }
      end
      parts[#parts + 1] = ("<h2>%s</h2><p>the thread retains %s bytes; its stack holds %s</p>"):format(
        esc(t.name or ("thread " .. t.serial)), num(t.retained or 0), num(t.held))
      parts[#parts + 1] = html.table({ "frame", "source", "locals (retained)" }, rows, "thread-" .. t.serial)
    end
    if #parts == 0 then parts[1] = "<p>no threads in this dump</p>" end
    return html.page("Threads", nav(ctx), table.concat(parts))
  end
end

--- Class loaders: classes, instances, retained, duplicate classes (`sift loaders`).
function M.loaders(ctx)
  local heap = ctx.doc
  local both = ctx.compute("loaders", function()
    dominators(ctx)
    local loaders, duplicates = require("sift.heap.census").loaders(heap)
    return { loaders, duplicates }
  end)
  local loaders, duplicates = both[1], both[2]
  return { loaders = loaders, duplicates = duplicates }, function()
    local rows, dups = {}, {}
    for i, l in ipairs(loaders) do
      rows[i] = { l.id and a(href(ctx, "object/" .. l.id), l.name) or esc(l.name), num(l.classes), num(l.instances),
        l.retained and num(l.retained) or "-", esc(l.parent or ""), esc(table.concat(l.dex or {}, ", ")) }
    end
    for i, d in ipairs(duplicates) do
      local names = {}
      for j, l in ipairs(d.loaders) do names[j] = esc(l.name) end
      dups[i] = { class_link(ctx, d.name), table.concat(names, "<br>") }
    end
    return html.page("Class loaders", nav(ctx), table.concat {
      html.table({ "loader", "#classes", "#instances", "#retained", "parent", "dex" }, rows, "loaders"),
      "<h2>Classes more than one loader defined</h2>", html.table({ "class", "loaders" }, dups, "duplicates"),
    })
  end
end

return M
