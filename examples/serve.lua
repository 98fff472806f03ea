-- Serve files in the browser with sift.serve, and read one page's JSON
-- twin from Lua the way any HTTP client would.
-- Usage: sift run examples/serve.lua FILE... [--for SECONDS]
--   with --for, it stops after that many seconds (default: run until ^C)
require("sift.paths").older_lua()
local serve = require "sift.serve"
local cqueues = require "cqueues"
local request = require "http.request"

local files, seconds = {}, nil
for i = 1, #arg do
  if arg[i - 1] == "--for" then seconds = tonumber(arg[i])
  elseif arg[i] ~= "--for" then files[#files + 1] = arg[i] end
end
assert(#files > 0, "usage: sift run examples/serve.lua FILE... [--for SECONDS]")

-- (uploads, none here, would go to the per-user default: ~/.local/share/sift/serve)
local server = assert(serve.new { files = files })
server:listen()
print("open " .. server:url())

local cq = cqueues.new()
cq:wrap(function() server:run() end)
cq:wrap(function()
  -- every page has a JSON twin: the same path with .json
  local headers, stream = assert(request.new_from_uri(server:url() .. "index.json"):go(10))
  print(headers:get(":status"), stream:get_body_as_string():sub(1, 200))
  if seconds then
    cqueues.sleep(seconds)
    server.http:close()
  end
end)
assert(cq:loop())
server:close()
