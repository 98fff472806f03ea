-- Redis and PostgreSQL for the fleet specs and bench: Debian's
-- redis-server and postgresql, started as this process's own on free
-- loopback ports in a temporary directory, and stopped by `stop()`.
-- PostgreSQL refuses to run as root: as root, its cluster belongs to the
-- `postgres` user Debian's package makes, and its commands run as that user.
local helper = require "spec.helper"

local M = {}

local PG_BIN = "/usr/lib/postgresql/15/bin"

local function free_port()
  local socket = require "socket"
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  s:close()
  return tonumber(port)
end

local sh = helper.sh

local function as_postgres(cmd)
  local root = io.popen("id -u"):read("n") == 0
  return root and ("runuser -u postgres -- " .. cmd) or cmd
end

--- Start both; returns an object with `redis` and `postgres` (URLs),
-- `fresh()`, `restart_postgres()`, `stop()`; or nil and why (not installed).
function M.start()
  if not sh("command -v redis-server") or not io.open(PG_BIN .. "/initdb") then
    return nil, "no redis-server or PostgreSQL 15 (make deps)"
  end
  local dir = helper.tmpdir()
  local e = { dir = dir, redis_port = free_port(), pg_port = free_port() }
  -- Redis: no snapshots, daemonized with its pid file here
  assert(sh(("redis-server --port %d --bind 127.0.0.1 --dir %s --save '' --appendonly no --daemonize yes "
    .. "--pidfile %s/redis.pid --logfile %s/redis.log"):format(e.redis_port, dir, dir, dir)))
  e.redis = ("redis://127.0.0.1:%d/0"):format(e.redis_port)
  -- PostgreSQL: a cluster of its own, trust on loopback, its socket here
  assert(sh("chown postgres " .. dir .. " 2>/dev/null || true"))
  local ok, out = sh(as_postgres(("%s/initdb -D %s/pg -A trust -U sift"):format(PG_BIN, dir)))
  assert(ok, out)
  -- (-w -t 300: pg_ctl waits for the server, up to 5 minutes on a busy machine)
  e.pg_ctl = as_postgres(("%s/pg_ctl -D %s/pg -l %s/pg.log -w -t 300 -o '-p %d -k %s -c listen_addresses=127.0.0.1 "
    .. "-c fsync=off'"):format(PG_BIN, dir, dir, e.pg_port, dir))
  ok, out = sh(e.pg_ctl .. " start")
  assert(ok, out)
  e.postgres = ("postgresql://sift@127.0.0.1:%d/postgres"):format(e.pg_port)
  helper.wait_for("redis-server to answer", function()  -- (it daemonizes before it listens)
    local up, answer = sh(("redis-cli -p %d ping"):format(e.redis_port))
    return up and answer:match("PONG"), answer
  end)

  --- Stop PostgreSQL, wait `down` seconds, start it again.
  function e.restart_postgres(down)
    assert(sh(e.pg_ctl .. " -m immediate stop"))
    os.execute(("sleep %g"):format(down or 1))
    local started, why = sh(e.pg_ctl .. " start")
    assert(started, why)
  end

  --- URLs of a fresh Redis database and a fresh PostgreSQL database (for
  -- one spec each: Redis has 16).
  local made = 0
  function e.fresh()
    made = made + 1
    assert(made < 16, "Redis has 16 databases")
    local created, why = sh(("%s/psql -h 127.0.0.1 -p %d -U sift -d postgres -q -c 'CREATE DATABASE fleet%d'"):format(
      PG_BIN, e.pg_port, made))
    assert(created, why)
    return ("redis://127.0.0.1:%d/%d"):format(e.redis_port, made),
      ("postgresql://sift@127.0.0.1:%d/fleet%d"):format(e.pg_port, made)
  end

  --- Run SQL in the PostgreSQL database of a URL (fresh()'s); its output.
  function e.psql(url, sql)
    local db = url:match("/([^/]*)$")
    local done, answer = sh(("%s/psql -h 127.0.0.1 -p %d -U sift -d %s -v ON_ERROR_STOP=1 -q -A -t -c %s"):format(
      PG_BIN, e.pg_port, db, helper.quote(sql)))
    assert(done, answer)
    return answer
  end

  function e.stop()
    sh(e.pg_ctl .. " -m immediate stop")
    sh(("redis-cli -p %d shutdown nosave"):format(e.redis_port))
    sh("rm -rf " .. helper.quote(dir))
  end
  return e
end

return M
