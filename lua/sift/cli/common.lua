--- What the commands of `sift` share: exit codes, printable text, progress
-- bars, the memory budget and its message, failures said once, opening a
-- heap, and where output goes. Each domain's commands live in their own
-- module (sift.cli.heap, .trace, .ofx, .finance; sift.cli.info for every
-- format); sift.cli puts them on one parser.
-- @module sift.cli.common

local sift = require "sift"
local progress = require "sift.progress"
local size = require "sift.size"

local M = {}

--- Exit status: 0 ok, 1 bad input (for `sift lint`: findings), 2 bad
-- usage, 3 (`sift lint`) an input could not be read, so the check is
-- incomplete.
M.EXIT_OK, M.EXIT_BAD_INPUT, M.EXIT_USAGE, M.EXIT_UNREAD = 0, 1, 2, 3

--- A value as one printable line: control characters as \xNN.
local function printable(v)
  return (tostring(v):gsub("%c", function(c) return ("\\x%02x"):format(c:byte()) end))
end

--- Run fn(progress) with a progress bar labelled `label` when allowed
-- (`bytes`: false when the work is not counted in bytes).
local function with_progress(args, label, fn, bytes)
  local bar = progress.bar { label = label, quiet = args.quiet or args.quiet_here, bytes = bytes }
  local a, b, c = fn(bar and bar.update)
  if bar then bar.finish() end
  return a, b, c
end

-- the budget in force (bytes), for the message when it is exceeded
local budget

local function over_budget()
  return ("needs more memory than the budget of %s (--max-memory)"):format(size.format(budget))
end

-- say why a file could not be read: its message, or, when memory ran out
-- under a budget, that
local function say_failure(err, path, msg, code)
  if code == "no_memory" and budget then
    err:write("sift: ", printable(path), ": ", over_budget(), "\n")
  else
    err:write("sift: ", printable(msg), "\n")
  end
end

-- the bytes of index arrays kept in memory under a budget: three quarters
-- of it, or of what the machine's (or the cgroup's) memory leaves beside
-- the files read when that is less (their pages need the page cache: in a
-- memory cgroup they count against the same limit, and arrays that leave
-- the dump no room make every step wait for the disk), and at least a
-- seventh of the budget (docs/heap.md, "Dumps bigger than memory")
local function spill_threshold(core, bytes, args)
  local files, paths = 0, args.file
  for _, path in ipairs(type(paths) == "table" and paths or { paths }) do
    local f = type(path) == "string" and io.open(path, "rb")
    if f then
      local n = f:seek("end")  -- (a directory's is 2^63 - 1 here: not a file's)
      if n and n < 1 << 62 then files = files + n end
      f:close()
    end
  end
  local memory = core.memory_default() // 3 * 4
  return math.max(bytes // 7, math.min(bytes, memory - files) // 4 * 3)
end

-- the budget of this run: --max-memory, or the machine's default; false
-- when none can be set (AddressSanitizer); nil and why when SIZE is bad
local function apply_budget(args)
  local core = require "sift.core"
  local bytes = core.memory_default()
  if args.max_memory then
    bytes = size.parse(args.max_memory)
    if not bytes then return nil, ("--max-memory: cannot read '%s' (say 512M or 4G)"):format(args.max_memory) end
  end
  budget = core.memory_budget(bytes) and bytes > 0 and bytes or false
  -- past 3/4 of the budget, the index's big arrays go to files (mapped back)
  local dir = args.spill or os.getenv("TMPDIR") or "/tmp"
  if args.spill then
    local probe = dir .. "/.sift-spill-check"
    local f = io.open(probe, "w")
    if not f then return nil, ("--spill: cannot write in '%s'"):format(dir) end
    f:close()
    os.remove(probe)
  end
  if bytes > 0 then core.spill(dir, spill_threshold(core, bytes, args)) else core.spill(nil) end
  return true
end


--- The message for work that ran out of memory: over the budget, or not
-- enough memory when no budget is set.
local function out_of_memory()
  return budget and over_budget() or "not enough memory"
end

local function open_heap(args, path)
  return with_progress(args, path, function(update)
    return sift.open(path, { mapping = args.mapping, dump = args.dump, progress = update,
      strings = args.strings })
  end)
end

local group_digits = size.grouped  -- (html.num, on the pages of sift serve, writes the same)

local function try(err, path, fn, ...)
  local r = table.pack(pcall(fn, ...))
  if not r[1] then
    err:write("sift: ", path, ": ", (tostring(r[2]):gsub("^.-:%d+: ", "")), "\n")
    return nil
  end
  return table.unpack(r, 2, r.n)
end

-- where output goes: args.output opened for writing, or out; nil after
-- saying why on err
local function open_output(args, out, err)
  if not args.output then return out end
  local f, msg = io.open(args.output, "wb")
  if not f then err:write("sift: ", msg, "\n") end
  return f
end

-- --minwidth pixels as a share of the graph's width

--- The memory budget's option, on every command that reads a big file
-- (the others run under the default one).
local function budget_option(cmd)
  cmd:option("--max-memory", "Fail with a message, rather than be killed, when the work needs more "
    .. "than SIZE of memory besides the mapped file (e.g. 512M, 4G; 0: no budget). Default: 3/4 of the "
    .. "machine's (or the cgroup's) memory. Index arrays past 3/4 of SIZE, or of what that memory leaves "
    .. "beside the dump when less (at least 1/7 of SIZE), go to files in --spill DIR.")
  cmd:option("--spill", "Where index arrays past the budget go, as files mapped back (deleted at once; a "
    .. "dump bigger than memory opens, only slower). Default: $TMPDIR or /tmp.")
end

M.printable, M.with_progress, M.say_failure, M.apply_budget = printable, with_progress, say_failure, apply_budget
M.out_of_memory, M.open_heap, M.group_digits, M.try = out_of_memory, open_heap, group_digits, try
M.open_output, M.budget_option = open_output, budget_option

return M
