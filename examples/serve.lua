-- Serve files in the browser with sift.serve, and read pages' JSON twins
-- from Lua the way any HTTP client would: each heap's leak suspects, its
-- Android heaps and its bitmaps, each trace's busiest thread (where play
-- mode opens), the views of its flame page; with --upload, a file posted
-- the way curl posts one (JSON back).
-- Usage: sift run examples/serve.lua FILE... [--upload FILE] [--for SECONDS]
--   with --for, it stops after that many seconds (default: run until ^C)
require("sift.paths").older_lua()
local serve = require "sift.serve"
local cqueues = require "cqueues"
local request = require "http.request"
local cjson = require "cjson"

local files, seconds, upload = {}, nil, nil
for i = 1, #arg do
  if arg[i - 1] == "--for" then seconds = tonumber(arg[i])
  elseif arg[i - 1] == "--upload" then upload = arg[i]
  elseif arg[i] ~= "--for" and arg[i] ~= "--upload" then files[#files + 1] = arg[i] end
end
assert(#files > 0, "usage: sift run examples/serve.lua FILE... [--upload FILE] [--for SECONDS]")

-- uploads go to a private directory of this run's (the default is the
-- per-user ~/.local/share/sift/serve)
local data = os.tmpname()
os.remove(data)
assert(require("sift.private").directory(data))
local server = assert(serve.new { files = files, data = data })
server:listen()
print("open " .. server:url())

-- a request as a program makes it: no Accept header, so JSON comes back
local function call(path, body)
  local req = request.new_from_uri(server:url() .. path)
  if body then
    req.headers:upsert(":method", "POST")
    req:set_body(body)
  end
  local headers, stream = assert(req:go(300))
  return headers:get(":status"), cjson.decode(stream:get_body_as_string())
end

local cq = cqueues.new()
cq:wrap(function() server:run() end)
cq:wrap(function()
  local _, index = call("index.json")  -- every page has a JSON twin: the same path with .json
  for _, f in ipairs(index.files) do
    if f.format == "hprof" or f.format == "bmd" then  -- the leaks page: sift leaks --suspects --json
      local _, leaks = call(f.url:sub(2) .. "leaks.json")
      local s = leaks.suspects[1]
      print(("%s: %d suspects%s"):format(f.name, #leaks.suspects,
        s and (", the largest %s %s (%.1f%% of the reachable heap)"):format(s.class, s.id, 100 * s.share) or ""))
      -- the overview's heaps (Android's app, zygote...: none in a JVM's dump)
      -- and the bitmaps page, whose pictures are at bitmap/ID.png
      local _, overview = call(f.url:sub(2) .. "index.json")
      for _, h in ipairs(overview.heaps) do
        print(("  heap %s: %d objects, %d bytes"):format(h.name, h.count, h.shallow))
      end
      local _, pictures = call(f.url:sub(2) .. "bitmaps.json")
      if pictures.count > 0 then
        local b = pictures.bitmaps[1]
        print(("  %d bitmaps, the largest %dx%d at %sbitmap/%s.png"):format(pictures.count, b.width, b.height, f.url,
          b.id))
      end
    elseif f.format == "trace" then  -- play mode opens on the busiest thread
      local _, play = call(f.url:sub(2) .. "play.json")
      local t = play.threads[1]
      print(("%s: play opens on %s (tid %d, %d calls); flame views: %sflame?view=flame|icicle|left|time|diff|sandwich")
        :format(f.name, t.name, t.tid, t.calls, f.url))
    else
      print(("%s: %s"):format(f.name, f.format))
    end
  end
  if upload then  -- 201 and the file's id and URL; the same file again is 200, "duplicate": true
    local content = assert(io.open(upload, "rb")):read("a")
    local name = upload:match("[^/]+$")
    for _ = 1, 2 do
      local status, r = call("upload?name=" .. name, content)
      print(("upload %s: %s %s duplicate=%s"):format(name, status, r.url, r.duplicate))
    end
  end
  if seconds then
    cqueues.sleep(seconds)
    server.http:close()
  end
end)
assert(cq:loop())
server:close()
os.execute("rm -rf " .. ("%q"):format(data))
