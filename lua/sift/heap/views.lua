--- The heap's views as people and programs read them: how an object, a
-- reference and a GC root are named, and the JSON of a histogram, a path,
-- the top retainers and an object, in the schemas of docs/schema/. The
-- CLI (`sift.cli.heap`) and the server (`sift.serve`) both use them, so
-- they always agree.
-- @module sift.heap.views

local json = require "sift.json"
local object_parts = require("sift.core").object_parts
local size = require "sift.size"
local root_description = require("sift.heap.fields").root_description

local M = {}

--- An object id as JSON writes it: "0x1a2b".
function M.hex(id) return ("0x%x"):format(id) end

-- how a path step is written in text and JSON: "static CACHE", "field
-- elementData", "[3]"
function M.ref_text(st)
  if st.ref == "static" then return "static " .. st.name end
  if st.ref == "field" then return "field " .. st.name end
  if st.ref == "element" then return st.label end
  return st.name  -- what the JVM keeps without a field: <class>, <loader>...
end

function M.object_text(obj)
  local cls = obj:as_class()
  if cls then return "class " .. cls.name end
  return tostring(obj)
end

-- a short name for a path step: "class Foo", "ArrayList", "Object[]"
function M.short(obj)
  local cls = obj:as_class()
  if cls then return "class " .. cls.name:match("[^.]+$") end
  return (obj:class_name():match("[^.]+$"))
end

-- how a step's reference from `holder` reads: "ArrayList.elementData",
-- "static LeakyApp.CACHE", "Object[][3]", "class Plugin.<loader>"
function M.ref_label(holder, st)
  if st.ref == "element" then return M.short(holder) .. st.label end
  if st.ref == "static" then return "static " .. holder:as_class().name:match("[^.]+$") .. "." .. st.name end
  if st.ref == "field" then return holder:class_name():match("[^.]+$") .. "." .. (st.name or "?") end
  return M.short(holder) .. "." .. (st.name or st.ref or "?")
end

-- how one reference from a holder reads beside it on an object page's
-- referrers: ".orders", "[2]", "static HeapPages.planted", "<loader>"
local function via_text(st)
  if st.ref == "field" then return "." .. st.name end
  if st.ref == "element" or st.ref == "static" then return st.label end
  return st.name or st.ref
end

--- How `holder` refers to `target` (an object page's referrers): the
-- references, as via_text writes them, at most max of them, and how many
-- there are. An object array is scanned by id (no Object per element);
-- an instance's fields and a class's statics are few.
function M.refs_to(heap, holder, target, max)
  local out, n = json.array {}, 0
  if holder:kind() == "object_array" then
    local id, index, _, num = target:id(), heap.index, object_parts(holder)
    for i = 1, holder:length() do
      if index:element(num, i) == id then
        n = n + 1
        if n <= max then out[n] = ("[%d]"):format(i - 1) end
      end
    end
  else
    for _, st in ipairs(heap:references(holder)) do
      if st.object == target then
        n = n + 1
        if n <= max then out[n] = via_text(st) end
      end
    end
  end
  return out, n
end

-- the root of a path, as Shark writes it, with the thread and frame
function M.root_text(first)
  local text = "GC Root: " .. root_description(first.root) .. (first.root_inferred and " (inferred)" or "")
  if first.thread then text = text .. " (thread " .. first.thread .. ")" end
  local f = first.frame_info
  if f then
    text = text .. (" in %s.%s(%s)"):format(f.class or "?", f.method or "?",
      f.line and f.line > 0 and ((f.source or "?") .. ":" .. f.line) or (f.source or "unknown source"))
  end
  return text
end

-- a path as JSON: steps { id, class, ref?, count?, last_id? }, the root's
-- kind, thread and frame
function M.path_json(path)
  local steps = json.array {}
  for k, st in ipairs(path) do
    local nxt = path[k + 1]
    local cls = st.object:as_class()
    steps[k] = { id = M.hex(st.object:id()), class = cls and cls.name or st.object:class_name(),
                 ref = nxt and M.ref_text(nxt) or nil }
    if (st.count or 1) > 1 then  -- a run: count objects, each holding the next by run_ref
      steps[k].count, steps[k].last_id, steps[k].run_ref = st.count, M.hex(st.last:id()), M.ref_text(st)
    end
  end
  return steps
end

-- the root of a path in JSON: its kind, and for a thread's roots the
-- thread's name and (a local variable's) frame
function M.root_json(r, first)
  r.root, r.thread, r.root_inferred = first.root, first.thread, first.root_inferred
  local f = first.frame_info
  if f then r.frame = { method = f.method, class = f.class, source = f.source, line = f.line } end
end

function M.merged_json(trees)
  local out = json.array {}
  for i, node in ipairs(trees) do
    local st = node.step
    out[i] = { id = M.hex(st.object:id()), class = st.object:as_class() and st.object:as_class().name
               or st.object:class_name(), ref = M.ref_text(st), root = st.root, count = node.count,
               children = M.merged_json(node.children) }
  end
  return out
end

-- the rows of `sift top`: the n largest retainers. Unless flat, each row is
-- an object only the GC roots dominate (so no row holds another: the top
-- of MAT's dominator tree), and `inside` is its chain folded: its largest
-- dominated object, that one's, and so on while they keep at least half of
-- the row's bytes (at most 6 steps)
local INSIDE = 6  -- steps folded into a row of `sift top` at most
function M.top_rows(heap, n, flat)
  if flat then return heap:top(n) end
  local tops = heap:dominated(nil, n)  -- largest first
  local rows = {}
  for i = 1, #tops do
    local obj = tops[i]
    local row = { object = obj, class = obj:class_name(), shallow = heap:shallow(obj),
                  retained = heap:retained(obj), inside = {} }
    local v = obj
    while #row.inside < INSIDE do
      local child = heap:dominated(v, 1)[1]
      if not child or heap:retained(child) * 2 < row.retained then break end
      row.inside[#row.inside + 1] = { object = child, class = child:class_name(), shallow = heap:shallow(child),
                                      retained = heap:retained(child) }
      v = child
    end
    rows[i] = row
  end
  return rows
end

--- Where a row of `sift top` hangs, as its "via" line says it: the GC
-- root's kind and the objects on the path from it ("System class: class
-- LauncherHelper → ArrayList"); nil when a root holds the object itself
-- or nothing reaches it. `path`: heap:path_to_root's for the row's object.
function M.top_via(path)
  if not path or #path <= 1 then return nil end
  local parts = {}
  for k = 1, #path - 1 do parts[k] = M.short(path[k].object) end
  return root_description(path[1].root) .. ": " .. table.concat(parts, " → ")
end

--- What a row of `sift top` holds, as its "holds" line says it: the chain
-- folded into the row with each step's retained size ("BufferedWriter
-- (16,424) → char[] (16,384)"), a run of one class (a list's nodes) as one
-- step ("Node × 3 (…)"); nil when nothing is folded in.
function M.top_holds(row)
  if not row.inside or #row.inside == 0 then return nil end
  local parts, last, same = {}, nil, 0
  for _, x in ipairs(row.inside) do
    local name = M.short(x.object)
    if name == last then
      same = same + 1
      parts[#parts] = ("%s × %d (%s)"):format(name, same, size.grouped(x.retained))
    else
      last, same = name, 1
      parts[#parts + 1] = ("%s (%s)"):format(name, size.grouped(x.retained))
    end
  end
  return table.concat(parts, " → ") .. (#row.inside == INSIDE and " → …" or "")
end


-- the Android heaps in the order ahat's overview lists them (the app's
-- own first)
local HEAP_ORDER = { "app", "zygote", "image", "default", "jit", "other" }

--- The Android heaps a dump has (heap:info().heaps), in ahat's order:
-- app, zygote, image, default; {} for a JVM's dump.
function M.heap_names(heap)
  local have, names = heap:info().heaps or {}, {}
  for _, name in ipairs(HEAP_ORDER) do
    if have[name] then names[#names + 1] = name end
  end
  return names
end

--- Whether the dump has the Android heap `name`.
function M.has_heap(heap, name)
  return (heap:info().heaps or {})[name] ~= nil
end

--- The histogram's JSON (`sift histogram --json`): the dump's counts and
-- the rows, the largest shallow size first (at most top of them); with
-- `which`, of the objects of that Android heap only (and `heap` says it).
function M.histogram_json(heap, model, top, which)
  local info, all = heap:info(), heap:histogram(model, which)
  local rows = json.array {}
  for i, r in ipairs(all) do
    if top and top > 0 and i > top then break end
    rows[i] = r
  end
  return {
    format = info.format, version = info.version, id_size = info.id_size,
    instances = info.instances, classes = info.classes,
    object_arrays = info.object_arrays, primitive_arrays = info.primitive_arrays,
    roots = info.roots, rows = rows, model = model, heap = which,
  }, all
end

-- the package of a histogram row's class (MAT's "group by package"):
-- arrays by their element's, primitive arrays apart
local PRIMITIVE = { boolean = true, char = true, float = true, double = true, byte = true, short = true, int = true,
  long = true }
local function package_of(name)
  local base = name:gsub("%[%]", "")
  if PRIMITIVE[base] then return "(primitive arrays)" end
  if name == "(class not in the dump)" then return name end
  return base:match("^(.*)%.[^.]*$") or "(default package)"
end

--- The histogram as MAT's "group by" makes it: rows `{ name, count,
-- shallow, retained? }` by `group` "class" (the default: one row per class
-- name, `retained` from heap:retained_by_class), "package" (java.util…;
-- arrays by their element's package, primitive arrays apart) or "loader"
-- (by the loader that defined the class, named as `sift loaders` names it,
-- with its `loader` id; primitive arrays are the bootstrap loader's).
-- With `retained`, class rows have `retained` (heap:retained_by_class:
-- builds the dominator tree when there is none); groups of several classes
-- never do (their classes hold each other: summing would count bytes
-- twice). `which`: one Android heap.
function M.histogram_groups(heap, model, group, which, retained)
  local rows, by = json.array {}, {}
  local function add(key, name, r, extra)
    local row = by[key]
    if not row then
      row = { name = name, count = 0, shallow = 0 }
      for k, v in pairs(extra or {}) do row[k] = v end
      by[key] = row
      rows[#rows + 1] = row
    end
    row.count, row.shallow = row.count + r.count, row.shallow + r.shallow
  end
  if group == "loader" then
    local loader_name = require("sift.heap.census").loader_name
    for _, r in ipairs(heap:class_histogram(model, which)) do
      local loader = r.class and r.class.loader
      if r.class or r.elem then
        local id = loader and M.hex(loader:id()) or nil
        add(id or "", loader_name(loader) .. (id and (" " .. id) or ""), r, { loader = id })
      else
        add("?", "(class not in the dump)", r)
      end
    end
  else
    for _, r in ipairs(heap:histogram(model, which)) do
      local key = group == "package" and package_of(r.class) or r.class
      add(key, key, r)
    end
    if group ~= "package" and retained then
      for _, r in ipairs(heap:retained_by_class(which)) do  -- (classes that share a name: one row)
        local row = by[r.class]
        if row then row.retained = (row.retained or 0) + r.retained end
      end
      for _, row in ipairs(rows) do row.retained = row.retained or 0 end
    end
  end
  return rows
end

--- The rows of histogram_groups beside the same grouping of a baseline
-- dump (`base_rows`): each row gains `base_count`, `base_shallow`,
-- `count_delta` and `shallow_delta` (ahat's baseline columns; a group only
-- the baseline has is added with count 0). The same numbers as `sift
-- diff-heap` gives per class.
function M.with_baseline(rows, base_rows)
  local before = {}
  for _, r in ipairs(base_rows) do before[r.name] = r end
  local seen = {}
  for _, r in ipairs(rows) do
    local was = before[r.name] or { count = 0, shallow = 0 }
    seen[r.name] = true
    r.base_count, r.base_shallow = was.count, was.shallow
    r.count_delta, r.shallow_delta = r.count - was.count, r.shallow - was.shallow
  end
  for _, was in ipairs(base_rows) do
    if not seen[was.name] then
      rows[#rows + 1] = { name = was.name, loader = was.loader, count = 0, shallow = 0,
        retained = was.retained and 0 or nil, base_count = was.count, base_shallow = was.shallow,
        count_delta = -was.count, shallow_delta = -was.shallow }
    end
  end
  return rows
end

--- A class's change since a baseline dump (for its page): `{ count,
-- shallow, base_count, base_shallow, count_delta, shallow_delta }` of the
-- histogram row named `name` in each dump (classes that share a name are
-- one row, as in `sift diff-heap`).
function M.class_delta(base, heap, name, model)
  local function row(h)
    for _, r in ipairs(h:histogram(model)) do
      if r.class == name then return r end
    end
    return { count = 0, shallow = 0 }
  end
  local now, was = row(heap), row(base)
  return { count = now.count, shallow = now.shallow, base_count = was.count, base_shallow = was.shallow,
    count_delta = now.count - was.count, shallow_delta = now.shallow - was.shallow }
end

--- The dump's totals, as the histogram counts them (`model`): `{ count,
-- shallow }` of every instance and array (class objects are not rows),
-- of one Android heap with `which`.
function M.histogram_total(heap, model, which)
  local count, shallow = 0, 0
  for _, r in ipairs(heap:histogram(model, which)) do count, shallow = count + r.count, shallow + r.shallow end
  return { count = count, shallow = shallow }
end

--- The Android heaps as ahat's overview lists them: rows `{ name,
-- instances, classes, object_arrays, primitive_arrays, count, shallow,
-- reachable }` in ahat's order; `count` and `shallow` are `sift histogram
-- --heap NAME`'s total line, `reachable` the bytes of the heap's objects
-- the roots reach (ahat's "Java size" of the heap; needs the dominator
-- tree). Empty for a JVM's dump.
function M.heap_sizes(heap, model)
  local have, rows = heap:info().heaps or {}, json.array {}
  for _, name in ipairs(M.heap_names(heap)) do
    local h, total = have[name], M.histogram_total(heap, model, name)
    rows[#rows + 1] = { name = name, instances = h.instances or 0, classes = h.classes or 0,
      object_arrays = h.object_arrays or 0, primitive_arrays = h.primitive_arrays or 0,
      count = total.count, shallow = total.shallow, reachable = heap:reachable_bytes(name) }
  end
  return rows
end

--- The JSON of `sift top`'s rows (see top_rows).
function M.top_json(rows)
  local list = json.array {}
  for i, r in ipairs(rows) do
    list[i] = { id = M.hex(r.object:id()), class = r.class, shallow = r.shallow, retained = r.retained }
    if r.inside then
      list[i].inside = json.array {}
      for j, x in ipairs(r.inside) do
        list[i].inside[j] = { id = M.hex(x.object:id()), class = x.class, shallow = x.shallow, retained = x.retained }
      end
    end
  end
  return list
end

--- An object and its shortest strong path from a GC root (one entry of
-- `sift path --json`): id, class, shallow, retained (opts.retained), root,
-- thread, frame and path (runs of one class folded unless opts.full); and
-- the path's steps. The heap's path search must have been run for it
-- (heap:path_search).
function M.object_path(heap, obj, opts)
  local r = { id = M.hex(obj:id()), class = obj:class_name(), shallow = heap:shallow(obj, opts.model) }
  if opts.retained then r.retained = heap:retained(obj) end
  local path = heap:path_segments(obj, not opts.full)
  if path then
    r.path = M.path_json(path)
    M.root_json(r, path[1])
  end
  return r, path
end

--- What changed from a baseline dump of the same process (`sift diff-heap
-- BASE HEAP --json`, ahat's baseline): per class, instances and shallow
-- bytes in each dump and the change, the largest change in bytes first
-- (classes that did not change are left out); and the objects new since
-- the baseline (ids it does not have), their count, bytes and the first
-- max of them.
function M.diff_json(base, heap, model, max)
  local before, seen, rows = {}, {}, json.array {}
  for _, r in ipairs(base:histogram(model)) do before[r.class] = r end
  local function row(class, now, was)
    if now.count ~= was.count or now.shallow ~= was.shallow then
      rows[#rows + 1] = { class = class, count = now.count, shallow = now.shallow, base_count = was.count,
        base_shallow = was.shallow, count_delta = now.count - was.count, shallow_delta = now.shallow - was.shallow }
    end
  end
  local none = { count = 0, shallow = 0 }
  for _, r in ipairs(heap:histogram(model)) do
    seen[r.class] = true
    row(r.class, r, before[r.class] or none)
  end
  for class, r in pairs(before) do
    if not seen[class] then row(class, none, r) end
  end
  table.sort(rows, function(x, y)
    local dx, dy = math.abs(x.shallow_delta), math.abs(y.shallow_delta)
    if dx ~= dy then return dx > dy end
    return x.class < y.class
  end)
  local count, bytes, nums = heap.index:new_since(base.index, max or 100)
  local first = json.array {}
  for i, num in ipairs(nums) do
    local obj = heap:object((heap.index:object(num)))
    first[i] = { id = M.hex(obj:id()), class = obj:class_name(), shallow = heap:shallow(obj, model) }
  end
  local b, h = base:info(), heap:info()
  return { model = model, base_instances = b.instances, instances = h.instances, classes = rows,
    new_objects = { count = count, bytes = bytes, first = first } }
end

return M
