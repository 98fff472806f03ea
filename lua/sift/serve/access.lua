--- Who may talk to `sift serve`: the rules on `Host`, `Origin`, the CSRF
-- token and the access token, apart from the pages (docs/serve.md,
-- "Security").
--
-- - **Host.** On a loopback bind, a request must name the server as
--   127.0.0.1, [::1], localhost or a name given with `--allow-host`: a
--   page whose DNS name was rebound to 127.0.0.1 names its own host, and
--   is refused. On other binds `Host` must be one of the `--allow-host`
--   names when any is given (the access token guards the rest).
-- - **Cross-site writes.** A request that changes state (any method but
--   GET and HEAD) is refused when its `Origin` is another site's (or
--   `null`) or `Sec-Fetch-Site` says cross-site. One that comes from a
--   browser (it has an `Origin` or a cookie) must also carry the server's
--   CSRF token (`?csrf=` or `X-Sift-CSRF`), which the server's own pages
--   put in their forms and scripts. A request with neither `Origin` nor a
--   cookie is a program's (curl, a fleet's devices): it needs only the
--   access token, when the server has one.
-- @module sift.serve.access

local M = {}

local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true, localhost = true }

--- Whether a bind address is loopback.
function M.loopback(host) return LOOPBACK[host] == true end

-- the name of a Host header (no port; IPv6 without brackets), lower case
local function host_name(value)
  if not value or value == "" then return nil end
  value = value:lower()
  local v6 = value:match("^%[([%x:.]+)%]:?%d*$")
  if v6 then return v6 end
  local name = value:match("^([^:]+):?%d*$")
  return name
end

--- The rules of one server.
-- @tparam table opts `bind` (its address), `allow_hosts` (names), `csrf`
--   (the CSRF token)
function M.new(opts)
  local hosts = {}
  for _, h in ipairs(opts.allow_hosts or {}) do hosts[h:lower()] = true end
  local loopback = M.loopback(opts.bind)
  if loopback then for h in pairs(LOOPBACK) do hosts[h] = true end end
  return { hosts = hosts, loopback = loopback, any_host = not loopback and #(opts.allow_hosts or {}) == 0,
    csrf = opts.csrf }
end

--- Whether a request's Host is one the server answers to: true, or nil
-- and why.
function M.host_ok(rules, host_header)
  if rules.any_host then return true end
  local name = host_name(host_header)
  if not name then return nil, "a request without a Host header" end
  if rules.hosts[name] then return true end
  return nil, ("Host %q is not this server's (it answers to %s; add a name with --allow-host)"):format(
    host_header:sub(1, 60), rules.loopback and "127.0.0.1, [::1] and localhost" or "its --allow-host names")
end

-- the origin of this server as a browser on it would send it
local function same_origin(origin, host_header)
  if not host_header then return false end
  host_header = host_header:lower()
  return origin == "http://" .. host_header or origin == "https://" .. host_header
end

--- Whether a request that changes state may: true, or nil and why. The
-- CSRF token is looked for in `given_csrf` (the query's or the header's).
function M.write_ok(rules, headers, given_csrf)
  local origin = headers:get("origin")
  if origin then origin = origin:lower() end
  local site = (headers:get("sec-fetch-site") or ""):lower()
  if site == "cross-site" then return nil, "a cross-site request may not change anything here" end
  if origin and not same_origin(origin, headers:get(":authority")) then
    return nil, ("a request from %s may not change anything here"):format(origin == "null" and "an opaque origin (null)"
      or origin:sub(1, 80))
  end
  local browser = origin ~= nil or headers:has("cookie")
  if browser and not M.same(given_csrf, rules.csrf) then
    return nil, "a request from a browser needs this server's form token (open the page again)"
  end
  return true
end

--- The access token a request carries: bearer, cookie, or ?token=.
function M.token_of(headers, query)
  local auth = headers:get("authorization")
  if auth then return auth:match("^[Bb]earer%s+(%S+)") end
  local cookie = headers:get("cookie") or ""
  return cookie:match("sift_token=([^;%s]+)") or query.token
end

--- Compare two strings in a time that does not depend on where they
-- differ (a token guessed byte by byte learns nothing from the clock).
function M.same(a, b)
  if type(a) ~= "string" or type(b) ~= "string" or #a ~= #b then return false end
  local diff = 0
  for i = 1, #a do diff = diff | (a:byte(i) ~ b:byte(i)) end
  return diff == 0
end

return M
