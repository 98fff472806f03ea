-- docs/errors.md names every error code the library returns, and nothing
-- else: the codes are read from the sources, the third value of each
-- `return nil, message, code` in lua/ and bin/sift (a string literal) and
-- the codes the C side pushes (its status names and the literals it
-- pushes as the third of three results).

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function files(command)
  local out = {}
  local p = assert(io.popen(command))
  for path in p:lines() do out[#out + 1] = path end
  p:close()
  table.sort(out)
  return out
end

-- Lua source as tokens, comments dropped: { string = value } for string
-- literals, { text = ... } for names, numbers and punctuation; each with
-- its line
local function tokens(src)
  local out, i, line = {}, 1, 1
  local function advance(to)
    line = line + select(2, src:sub(i, to - 1):gsub("\n", ""))
    i = to
  end
  while i <= #src do
    local c = src:sub(i, i)
    local long_comment = src:match("^%-%-%[(=*)%[", i)
    if c:match("%s") then
      advance(i + 1)
    elseif long_comment then
      advance(select(2, assert(src:find("]" .. long_comment .. "]", i, true))) + 1)
    elseif src:find("^%-%-", i) then
      advance(src:find("\n", i, true) or #src + 1)
    elseif c == '"' or c == "'" then
      local j = i + 1
      while src:sub(j, j) ~= c do j = j + (src:sub(j, j) == "\\" and 2 or 1) end
      out[#out + 1] = { string = src:sub(i + 1, j - 1), line = line }
      advance(j + 1)
    elseif src:find("^%[=*%[", i) then
      local open, eq = src:match("^(%[(=*)%[)", i)
      local close = select(2, assert(src:find("]" .. eq .. "]", i, true)))
      out[#out + 1] = { string = src:sub(i + #open, close - #eq - 2), line = line }
      advance(close + 1)
    else
      local t = src:match("^[%a_][%w_]*", i) or src:match("^%d[%w%.]*", i) or src:match("^%.%.%.?", i)
        or src:match("^[=~<>/:]=?", i) or c
      out[#out + 1] = { text = t, line = line }
      advance(i + #t)
    end
  end
  return out
end

local DEPTH = { ["("] = 1, ["{"] = 1, ["["] = 1, ["function"] = 1, [")"] = -1, ["}"] = -1, ["]"] = -1, ["end"] = -1 }
-- what ends a return statement (it is the last in its block)
local AFTER_RETURN = { ["end"] = true, ["else"] = true, ["elseif"] = true, ["until"] = true, [";"] = true }

-- code -> { "file:line", ... } of every `return nil, message, "code"`;
-- a third value that is not one literal (a variable passing a code on, an
-- HTTP status's message in the server) is no code of its own
local function lua_codes()
  local codes = {}
  for _, path in ipairs(files("find lua -name '*.lua'; echo bin/sift")) do
    local t = tokens(read(path))
    for k = 1, #t - 2 do
      if t[k].text == "return" and t[k + 1].text == "nil" and t[k + 2].text == "," then
        local values, depth, j = { {} }, 0, k + 3
        while t[j] and not (depth == 0 and AFTER_RETURN[t[j].text]) do
          depth = depth + (DEPTH[t[j].text] or 0)
          if depth < 0 then break end
          if depth == 0 and t[j].text == "," then values[#values + 1] = {} else table.insert(values[#values], t[j]) end
          j = j + 1
        end
        local code = values[2] and #values[2] == 1 and values[2][1].string
        if code and code:match("^[%l_]+$") then
          codes[code] = codes[code] or {}
          table.insert(codes[code], ("%s:%d"):format(path, t[k].line))
        end
      end
    end
  end
  return codes
end

-- code -> { "file", ... }: the status names (`case SIFT_E...: return "code"`)
-- and a literal pushed just before `return 3` (after nil and a message);
-- and the number of status names
local function c_codes()
  local codes, statuses = {}, 0
  local function add(code, path)
    codes[code] = codes[code] or {}
    table.insert(codes[code], path)
  end
  for _, path in ipairs(files("find csrc -name '*.c'")) do
    local src = read(path)
    for code in src:gmatch("case SIFT_E[%u_]+:%s*return%s*\"([%l_]+)\"") do
      add(code, path)
      statuses = statuses + 1
    end
    for code in src:gmatch("lua_pushliteral%(L, \"([%l_]+)\"%);%s*return 3;") do add(code, path) end
  end
  return codes, statuses
end

-- the codes docs/errors.md lists: the first column of its code table
local function documented()
  local doc, codes = read("docs/errors.md"), {}
  local table_text = assert(doc:match("\n| code | meaning |\n|[-|]+|\n(.-)\n\n"), "docs/errors.md has no code table")
  for code in table_text:gmatch("| `([%l_]+)` |") do codes[code] = true end
  return codes
end

local function missing(codes, listed)
  local out = {}
  for code, where in pairs(codes) do
    if not listed[code] then out[#out + 1] = ("%s (%s)"):format(code, table.concat(where, ", ")) end
  end
  table.sort(out)
  return out
end

describe("docs/errors.md", function()
  local listed = documented()

  it("lists every code the Lua side returns", function()
    local codes = lua_codes()
    -- (the reading works: codes from three corners of the library)
    assert.is_truthy(codes.url and codes.engine and codes.version)
    assert.are.same({}, missing(codes, listed))
  end)

  it("lists every code the C side pushes, one for each status", function()
    local codes, named = c_codes()
    -- (the reading works: a name for each status, and sift.sqlite's "io")
    local statuses = 0
    for _ in read("csrc/core/common.h"):match("typedef enum sift_Status {(.-)}"):gmatch("SIFT_E[%u_]+") do
      statuses = statuses + 1
    end
    assert.are.equal(statuses, named)
    assert.are.equal("csrc/finance/lsqlite.c", codes.io[#codes.io])
    assert.are.same({}, missing(codes, listed))
  end)

  it("lists no code the sources do not return", function()
    local known = lua_codes()
    for code, where in pairs(c_codes()) do known[code] = where end
    local stale = {}
    for code in pairs(listed) do
      if not known[code] then stale[#stale + 1] = code end
    end
    table.sort(stale)
    assert.are.same({}, stale)
  end)
end)
