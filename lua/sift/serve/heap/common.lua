--- What the heap's pages share: links, the navigation, the dominator tree
-- built once per heap, how a value is shown.
-- @module sift.serve.heap.common

local views = require "sift.heap.views"
local html = require "sift.serve.html"

local esc, num, a = html.escape, html.num, html.a
local hex = views.hex

local M = {}

M.PAGE = 100  -- instances, elements, referrers per page

--- The link of a page of this file.
function M.href(ctx, page, query) return html.file_href(ctx.entry.id, page, query) end
local href = M.href

M.STRING_CUT = 100  -- characters of a String shown beside its link

-- how a String's characters are written inside its quotes, as in Java's
-- literals: quote and backslash escaped, control characters as escapes
local LITERAL = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- text cut after n characters, then `…`
local function cut(s, n)
  local len = utf8.len(s)
  if len and len > n then return s:sub(1, utf8.offset(s, n + 1) - 1) .. "…" end
  return s
end

--- Text as a Java literal, `"Ada Lovelace"`: quote, backslash and
-- control characters escaped; cut after n characters (then `…`) if n.
function M.literal(s, n)
  if n then s = cut(s, n) end
  return '"' .. s:gsub('[%c"\\]', function(c) return LITERAL[c] or ("\\u%04x"):format(c:byte()) end) .. '"'
end

-- a String's text, up to STRING_CUT + 1 characters (so a cut shows); nil
-- for any other object
local function string_head(obj)
  if obj:kind() ~= "instance" or obj:class_name() ~= "java.lang.String" then return nil end
  return obj:string(M.STRING_CUT + 1)
end

--- A java.lang.String's text as a literal cut at STRING_CUT characters;
-- nil for any other object.
function M.string_literal(obj)
  local s = string_head(obj)
  return s and M.literal(s, M.STRING_CUT)
end

--- An object as a link to its page; a String with its text beside it
-- (every page that shows an object shows it this way).
function M.object_link(ctx, obj)
  local link = a(href(ctx, "object/" .. hex(obj:id())), views.object_text(obj))
  local text = M.string_literal(obj)
  return text and (link .. ' <span class="str">' .. esc(text) .. "</span>") or link
end

--- An object named by its id text ("0x1f") as object_link shows it; a
-- link with `text` when the dump has no such object.
function M.id_link(ctx, id, text)
  local obj = ctx.doc:object(tonumber(id:match("^0x(%x+)$") or "", 16) or -1)
  if obj then return M.object_link(ctx, obj) end
  return a(href(ctx, "object/" .. id), text or id)
end

--- The link of a Bitmap's picture (a `sift.heap.bitmaps` record; nil
-- when it has none).
function M.picture_href(ctx, b)
  if not b.format then return nil end
  return href(ctx, "bitmap/" .. b.id .. "." .. require("sift.heap.bitmaps").EXTENSIONS[b.format])
end

--- A class name as a link to its page.
function M.class_link(ctx, name)
  return a(href(ctx, "class", { name = name }), name)
end

--- The navigation of every heap page.
function M.nav(ctx)
  local links = { { href(ctx, ""), ctx.entry.name }, { href(ctx, "histogram"), "histogram" },
    { href(ctx, "dominators"), "dominator tree" }, { href(ctx, "leaks"), "leaks" }, { href(ctx, "waste"), "waste" },
    { href(ctx, "threads"), "threads" }, { href(ctx, "loaders"), "class loaders" } }
  links[#links + 1] = { href(ctx, "bitmaps"), "bitmaps" }
  if ctx.server.opts.baseline then links[#links + 1] = { href(ctx, "diff"), "diff with the baseline" } end
  return links
end

--- The dominator tree, built once per heap (the first page that needs it).
function M.dominators(ctx)
  local heap = ctx.doc
  if not heap._served_tree then
    heap._served_tree = heap:dominators { model = ctx.model }
  end
  return heap._served_tree
end

--- A field's or element's value as a view (objects, which are userdata, as
-- their id and class; a String with its text, cut as links show it).
function M.value_view(v)
  if type(v) == "userdata" then
    local s = string_head(v)
    return { id = hex(v:id()), class = v:class_name(), string = s and cut(s, M.STRING_CUT) }
  end
  return v
end

--- A value as HTML: objects as links, null in grey.
function M.value_html(ctx, v)
  if type(v) == "userdata" then return M.object_link(ctx, v) end
  if v == nil then return '<span class="muted">null</span>' end
  return esc(v)
end

--- What "unreachable" counts on the overview and on the leaks page, in
-- words (they count different things): the paragraph of `page` ("" or
-- "leaks"), with the counts each page knows
function M.unreachable_note(ctx, page, all, flagged)
  local graph = ("in the graph of the dominator tree (%s; sizes --model %s)"):format(
    ctx.model == "visualvm" and "weak, soft, phantom and finalizer referents followed, as VisualVM follows them"
      or "weak, soft, phantom and finalizer referents not followed", esc(ctx.model or "shark"))
  local overview = ("%s objects of the dump (instances, arrays and classes) that no GC root reaches %s: garbage the "
    .. "dump kept (a jcmd dump with -all, an Android dump) and what only weak references hold"):format(num(all), graph)
  local should_be_dead = "that a leak finder says should be dead (watched by a KeyedWeakReference, a destroyed "
    .. "Activity, …) and that no strong path from a GC root reaches: the collector will free them, so they are no leak"
  if page == "leaks" then
    return ('<p id="unreachable-note">Unreachable here: the %s object%s %s. The %s counts another thing: its %s.</p>')
      :format(num(flagged), flagged == 1 and "" or "s", should_be_dead, a(href(ctx, ""), "overview"), overview)
  end
  return ('<p id="unreachable-note">Unreachable objects here: the %s. The %s lists only the objects %s.</p>')
    :format(overview, a(href(ctx, "leaks"), "leaks page"), should_be_dead)
end


return M
