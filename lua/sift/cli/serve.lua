--- `sift serve`: the web UI and upload endpoint (`sift.serve`).
-- @module sift.cli.serve

local size = require "sift.size"
local common = require "sift.cli.common"

local M = { define = {}, commands = {} }

function M.define.serve(parser)
  local serve = parser:command("serve", "Serve a web UI over FILEs (heap dumps, BMD, traces, OFX) and uploads.")
    :description("Serve a local web UI over each FILE and over what is uploaded to --data: heap pages "
      .. "(histogram, classes, objects, paths from GC roots, dominator tree, leaks, diff with --baseline), trace "
      .. "pages (hot methods, flame graph and icicle, call tree, play mode) and OFX statements; with --db, the "
      .. "finance report. Each file is analysed in a thread of its own. Every page has a JSON twin: add .json "
      .. "to its path or send Accept: application/json. POST /upload takes a file as the body or an HTML form "
      .. "(curl --data-binary @app.hprof 'http://127.0.0.1:PORT/upload?name=app.hprof').")
  serve:argument("file", "Files to serve."):args("*")
  serve:option("--port", "The port (0: any free one).", "8080"):convert(tonumber)
  serve:option("--bind", "The address to listen on; other than loopback needs --token.", "127.0.0.1")
  serve:option("--token", "A token every request must carry (Authorization: Bearer TOKEN, or open "
    .. "/?token=TOKEN once in the browser). ps shows it to every local user: prefer --token-file or SIFT_TOKEN.")
  serve:option("--token-file", "Read the token from this file (its first line; only its owner may read it).")
  serve:option("--allow-host", "A name the Host header may give besides 127.0.0.1, [::1] and localhost "
    .. "(on other binds: the only names taken). Requests naming another host are refused (DNS rebinding)."):count("*")
  serve:option("--data", "The directory uploads go to (kept between runs; 0700, files 0600). "
    .. "Default: $XDG_DATA_HOME/sift/serve, else ~/.local/share/sift/serve.")
  serve:option("--group", "Let this group read the data (files 0640, directories 0750 in the group): for "
    .. "workers on other machines running as another user of the group.")
  serve:option("--max-connections", "Connections open at once; one more is answered 503.", "64"):convert(tonumber)
  serve:option("--header-timeout", "Seconds a request's line and headers may take.", "30"):convert(tonumber)
  serve:option("--body-timeout", "Seconds a request's body may stay silent.", "60"):convert(tonumber)
  serve:option("--max-upload", "The largest upload (e.g. 512M, 2G).", "2G")
  serve:option("--strings", "For BMD dumps: a jar, apk, dex or class file to recover names from."):count("*")
  serve:option("--mapping", "A ProGuard/R8 mapping file: heap dumps' class and field names deobfuscated (as "
    .. "sift histogram --mapping).")
  serve:option("--baseline", "A dump of the same process taken earlier: heap pages get a diff with it "
    .. "(as sift diff-heap).")
  serve:option("--analyses", "How many long jobs (opening a file, a computation such as waste) may run at once, "
    .. "each in a thread of its own; the others wait, and pages of open files answer meanwhile.", "2"):convert(tonumber)
  serve:flag("--ingest", "Take dumps and traces from devices at POST /ingest (with X-Sift-App, -Version, "
    .. "-Device, -OS, -Time, -Tags), queue them for workers and show the leak groups at /fleet.")
  serve:option("--workers", "With --ingest: run this many sift worker processes (on --data, or on --redis and "
    .. "--postgres).", "0"):convert(tonumber)
  require("sift.cli.fleet").engine_options(serve)
  serve:option("--db", "A finance store (sift import): its report and chart at /finance, and the finance app at "
    .. "/finance/accounts (transactions, add, edit, categorise, rules, charts, budgets, OFX upload).")
  serve:option("--model", "Size model for heaps: shark, jvm or visualvm.", "shark")
    :choices { "shark", "jvm", "visualvm" }
end

function M.commands.serve(args, out, err)
  local max = size.parse(args.max_upload)
  if not max or max <= 0 then
    err:write("sift: --max-upload: not a size: ", common.printable(args.max_upload), "\n")
    return common.EXIT_USAGE
  end
  if not args.analyses or args.analyses < 1 then
    err:write("sift: --analyses: at least 1\n")
    return common.EXIT_USAGE
  end
  for _, k in ipairs { "max_connections", "header_timeout", "body_timeout" } do
    if not args[k] or args[k] <= 0 then
      err:write("sift: --", k:gsub("_", "-"), ": a positive number\n")
      return common.EXIT_USAGE
    end
  end
  local private = require "sift.private"
  local restricted, why = private.restrict(args.group)
  if not restricted then
    err:write("sift: --group: ", common.printable(why), "\n")
    return common.EXIT_USAGE
  end
  local token = args.token or os.getenv("SIFT_TOKEN")
  if args.token_file then
    token, why = private.read_secret(args.token_file)
    if not token then
      err:write("sift: --token-file: ", common.printable(why), "\n")
      return common.EXIT_USAGE
    end
  end
  local redis, postgres = require("sift.cli.fleet").engines(args)
  local server, msg = require("sift.serve").new { files = args.file, data = args.data, host = args.bind,
    port = args.port, token = token, max_upload = max, strings = #args.strings > 0 and args.strings or nil, mapping = args.mapping,
    model = args.model, baseline = args.baseline, db = args.db,
    analyses = args.analyses, ingest = args.ingest, redis = redis, postgres = postgres,
    allow_hosts = args.allow_host, group = args.group, max_connections = args.max_connections,
    header_timeout = args.header_timeout, body_timeout = args.body_timeout }
  if not server then
    err:write("sift: ", common.printable(msg), "\n")
    return common.EXIT_USAGE
  end
  local listening, failure = pcall(server.listen, server)
  if not listening then
    err:write("sift: cannot listen on ", args.bind, ":", tostring(args.port), ": ",
      tostring(failure):gsub("^.-:%d+: ", ""), "\n")
    return common.EXIT_USAGE
  end
  if args.ingest and args.workers > 0 then  -- the workers: this program again, as `sift worker`
    local core = require "sift.core"
    local f = io.open("/proc/self/stat")
    local pid = f and f:read("n") or 0
    if f then f:close() end
    -- (the engines' URLs in their environment, not on a command line ps shows)
    if redis then
      core.setenv("SIFT_REDIS", redis)
      core.setenv("SIFT_POSTGRES", postgres)
    end
    -- the running interpreter and script, an argv array: no shell
    local argv = { arg and arg[-1] or "lua5.4", arg and arg[0] or "sift", "worker", "-q", "--data", server.store.dir,
      "--parent", tostring(pid) }
    if args.group then argv[#argv + 1] = "--group" argv[#argv + 1] = args.group end
    for _ = 1, args.workers do
      local started, spawn_failure = core.spawn(argv)
      if not started then err:write("sift: cannot start a worker: ", common.printable(spawn_failure), "\n") end
    end
  end
  out:write("sift serve: ", server:url(), token and " (with a token)" or "", args.ingest and ", ingesting" or "", "\n")
  out:flush()
  server:run()
  return common.EXIT_OK
end

return M
