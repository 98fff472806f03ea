--- CSV statements for banks that no longer speak OFX: the file read with
-- a rules file in the shape of hledger's CSV rules, its rows imported as
-- an OFX statement's are (one SQLite transaction, idempotent).
--
--     local fcsv = require "sift.finance.csv"
--     local books <close> = assert(require("sift.finance").open("books.db"))
--     local counts = assert(fcsv.import(books, "bank.csv", { rules = "bank.rules" }))
--
-- The rules (see docs/finance.md, "Banks without OFX: CSV"): `skip`,
-- `fields`, `date-format`, `decimal-mark`, `separator`, `newest-first`,
-- field assignments with `%N` and `%name` interpolation, and `if` blocks
-- of regular expressions (POSIX ERE, ignoring case, as hledger's) with
-- indented assignments, `skip` and `end`. A directive sift does not know
-- is refused with its line.
--
-- A row's key is the bank's id (the field `code`) when the rules give
-- one, else `csv:<hash>#<n>`: the FNV-1a hash of the row's fields (each
-- with its spaces made single and trimmed) and n counting identical rows
-- in the file. It is kept as the row's FITID, so importing the file again,
-- or a download that overlaps it, adds nothing.
-- @module sift.finance.csv

local core = require "sift.core"
local store = require "sift.finance.store"
local entries = require "sift.finance.entries"

local M = {}

local function fail(msg, code) return nil, msg, code end

-- {======================================================
-- Regular expressions: POSIX ERE with GNU's word boundaries, ignoring
-- case (ASCII letters, and any letter core.fold folds), matched anywhere
-- =======================================================

-- a node is { kind = "set", set = { [byte] = true }, negate, utf8 },
-- "seq" (list), "alt" (list), "rep" (node, min, max), "bol", "eol",
-- "word" (\b), "nonword" (\B), "wstart" (\<), "wend" (\>)

local function word_byte(b) return b ~= nil and (b == 95 or (b >= 48 and b <= 57) or (b >= 65 and b <= 90)
  or (b >= 97 and b <= 122) or b >= 128) end

local CLASSES = {
  alpha = "%a", digit = "%d", alnum = "%w", space = "%s", upper = "%a", lower = "%a", punct = "%p",
  xdigit = "%x", blank = "[ \t]", cntrl = "%c", print = "[\32-\126]", graph = "[\33-\126]",
}

local function parse_regex(re)
  local pos = 1
  local parse_alt
  local function err(msg) error({ regex = ("%s at character %d of %q"):format(msg, pos, re) }, 0) end
  local function atom()
    local c = re:sub(pos, pos)
    if c == "(" then
      pos = pos + 1
      local node = parse_alt()
      if re:sub(pos, pos) ~= ")" then err("unclosed (") end
      pos = pos + 1
      return node
    elseif c == "." then
      pos = pos + 1
      return { kind = "set", set = { [10] = true }, negate = true }
    elseif c == "^" then pos = pos + 1 return { kind = "bol" }
    elseif c == "$" then pos = pos + 1 return { kind = "eol" }
    elseif c == "[" then
      pos = pos + 1
      local set, negate = {}, false
      if re:sub(pos, pos) == "^" then negate, pos = true, pos + 1 end
      local first = true
      while true do
        local ch = re:sub(pos, pos)
        if ch == "" then err("unclosed [") end
        if ch == "]" and not first then pos = pos + 1 break end
        first = false
        local cls = re:match("^%[:(%a+):%]", pos)
        if cls then
          if not CLASSES[cls] then err("no class [:" .. cls .. ":]") end
          for b = 0, 127 do if string.char(b):find("^" .. CLASSES[cls] .. "$") then set[b] = true end end
          pos = pos + #cls + 4
        else
          local lo = re:byte(pos)
          if re:sub(pos + 1, pos + 1) == "-" and re:sub(pos + 2, pos + 2) ~= "]" and pos + 2 <= #re then
            local hi = re:byte(pos + 2)
            if hi < lo then err("a range backwards") end
            for b = lo, hi do set[b] = true end
            pos = pos + 3
          else
            set[lo] = true
            pos = pos + 1
          end
        end
      end
      -- (ignoring case: a letter stands for both its cases)
      for b = 65, 90 do if set[b] or set[b + 32] then set[b], set[b + 32] = true, true end end
      if negate then set[10] = true end
      return { kind = "set", set = set, negate = negate }
    elseif c == "\\" then
      local e = re:sub(pos + 1, pos + 1)
      pos = pos + 2
      if e == "" then err("a \\ at the end") end
      local kinds = { b = "word", B = "nonword", ["<"] = "wstart", [">"] = "wend" }
      if kinds[e] then return { kind = kinds[e] } end
      local b = e:lower():byte()
      return { kind = "set", set = { [b] = true, [e:upper():byte()] = true } }
    elseif c == "" or c == ")" or c == "|" then
      return { kind = "seq" }
    elseif c == "*" or c == "+" or c == "?" or c == "{" then
      err("nothing to repeat")
    end
    -- a literal character (all its bytes), folded
    local len = #(re:match("^[\192-\255][\128-\191]*", pos) or c)
    local text = re:sub(pos, pos + len - 1)
    pos = pos + len
    local folded = core.fold(text)
    local seq = { kind = "seq" }
    for i = 1, #folded do
      local b = folded:byte(i)
      local set = { [b] = true }
      if b >= 97 and b <= 122 then set[b - 32] = true end
      seq[i] = { kind = "set", set = set }
    end
    return seq
  end
  local function repeated()
    local node = atom()
    while true do
      local c = re:sub(pos, pos)
      if c == "*" then node, pos = { kind = "rep", node = node, min = 0, max = math.huge }, pos + 1
      elseif c == "+" then node, pos = { kind = "rep", node = node, min = 1, max = math.huge }, pos + 1
      elseif c == "?" then node, pos = { kind = "rep", node = node, min = 0, max = 1 }, pos + 1
      elseif c == "{" then
        local lo, comma, hi, after = re:match("^{(%d*)(,?)(%d*)}()", pos)
        if not lo or lo == "" then err("a bad {m,n}") end
        lo = tonumber(lo)
        hi = comma == "" and lo or (hi == "" and math.huge or tonumber(hi))
        if hi < lo then err("a bad {m,n}") end
        node, pos = { kind = "rep", node = node, min = lo, max = hi }, after
      else
        return node
      end
    end
  end
  local function sequence()
    local seq = { kind = "seq" }
    while pos <= #re and re:sub(pos, pos) ~= "|" and re:sub(pos, pos) ~= ")" do seq[#seq + 1] = repeated() end
    return seq
  end
  function parse_alt()
    local alt = { kind = "alt", sequence() }
    while re:sub(pos, pos) == "|" do
      pos = pos + 1
      alt[#alt + 1] = sequence()
    end
    return #alt == 1 and alt[1] or alt
  end
  local node = parse_alt()
  if pos <= #re then err("an unmatched )") end
  return node
end

-- whether a node may match no text
local function nullable(node)
  local kind = node.kind
  if kind == "set" then return false end
  if kind == "seq" then
    for _, n in ipairs(node) do if not nullable(n) then return false end end
    return true
  end
  if kind == "alt" then
    for _, n in ipairs(node) do if nullable(n) then return true end end
    return false
  end
  if kind == "rep" then return node.min == 0 or nullable(node.node) end
  return true  -- (anchors and boundaries)
end

-- the bytes a match of a node that is not nullable may start with, added to `into`
local function first(node, into)
  local kind = node.kind
  if kind == "set" then
    for b = 0, 255 do if (node.set[b] ~= nil) ~= (node.negate == true) then into[b] = true end end
  elseif kind == "seq" then
    for _, n in ipairs(node) do
      first(n, into)
      if not nullable(n) then break end
    end
  elseif kind == "alt" then
    for _, n in ipairs(node) do first(n, into) end
  elseif kind == "rep" then
    first(node.node, into)
  end
  return into
end

local BOUNDARY = {
  bol = function(_, i) return i == 1 end,
  eol = function(s, i) return i == #s + 1 end,
  word = function(s, i) return word_byte(s:byte(i - 1)) ~= word_byte(s:byte(i)) end,
  nonword = function(s, i) return word_byte(s:byte(i - 1)) == word_byte(s:byte(i)) end,
  wstart = function(s, i) return not word_byte(s:byte(i - 1)) and word_byte(s:byte(i)) end,
  wend = function(s, i) return word_byte(s:byte(i - 1)) and not word_byte(s:byte(i)) end,
}

-- the node, followed by the continuation k, as a function m(s, i): true
-- when the node matches s at i and k matches from where it ends. Every
-- function is made here, none while matching: an alternative or a
-- repetition tries its choices in turn, each with the rest of the
-- pattern after it (backtracking: a match only has to exist).
local function compile(node, k)
  local kind = node.kind
  if kind == "set" then
    local set = node.set
    if node.negate then
      return function(s, i)
        local b = s:byte(i)
        if not b or set[b] then return false end
        -- (one whole UTF-8 character)
        local j = i + 1
        if b >= 192 then while (s:byte(j) or 0) & 0xC0 == 0x80 do j = j + 1 end end
        return k(s, j)
      end
    end
    return function(s, i)
      local b = s:byte(i)
      return b ~= nil and set[b] ~= nil and k(s, i + 1)
    end
  elseif kind == "seq" then
    for i = #node, 1, -1 do k = compile(node[i], k) end
    return k
  elseif kind == "alt" then
    local fs = {}
    for i, n in ipairs(node) do fs[i] = compile(n, k) end
    return function(s, i)
      for _, f in ipairs(fs) do if f(s, i) then return true end end
      return false
    end
  elseif kind == "rep" then
    -- (a part that may match nothing, repeated, would loop: refused)
    if nullable(node.node) then error({ regex = "a repeated part may match no text", in_pattern = true }, 0) end
    local tail = k
    if node.max == math.huge then
      local loop
      local body = compile(node.node, function(s, i) return loop(s, i) end)
      loop = function(s, i) return body(s, i) or k(s, i) end
      tail = loop
    else
      for _ = node.min + 1, node.max do
        local once = compile(node.node, tail)
        tail = function(s, i) return once(s, i) or k(s, i) end
      end
    end
    for _ = 1, node.min do tail = compile(node.node, tail) end
    return tail
  end
  local test = BOUNDARY[kind]
  return function(s, i) return test(s, i) and k(s, i) end
end

local function accept() return true end

--- A regular expression (POSIX ERE, `\b \B \< \>`), ignoring case, as a
-- function of text that says whether it matches anywhere in it
-- (`f(text, true)`: the text is case-folded already, by `core.fold`).
-- @return the function, or nil and why
function M.regex(re)
  local ok, node = pcall(parse_regex, re)
  local m
  if ok then ok, m = pcall(compile, node, accept) end
  if not ok then
    local e = m or node
    if type(e) ~= "table" then error(e, 0) end
    return nil, e.in_pattern and ("%s (as (a*)* does) in %q"):format(e.regex, re) or e.regex
  end
  -- (where a match may start: the text is searched for those bytes first)
  local class
  if not nullable(node) then
    local bytes = {}
    for b in pairs(first(node, {})) do
      local ch = string.char(b)
      bytes[#bytes + 1] = ch:match("%w") and ch or "%" .. ch
    end
    if #bytes < 256 then class = "[" .. table.concat(bytes) .. "]" end
  end
  return function(text, folded)
    if not folded then text = core.fold(text) end
    if not class then
      for i = 1, #text + 1 do if m(text, i) then return true end end
      return false
    end
    local i = text:find(class)
    while i do
      if m(text, i) then return true end
      i = text:find(class, i + 1)
    end
    return false
  end
end

-- }======================================================

-- {======================================================
-- Rules
-- =======================================================

-- hledger's fields sift reads, and what it makes of them
local USED = { date = true, date2 = true, description = true, comment = true, code = true, amount = true,
  amount1 = true, ["amount-in"] = true, ["amount-out"] = true, ["amount1-in"] = true, ["amount1-out"] = true,
  currency = true, currency1 = true, account1 = true }
-- hledger's fields sift reads but does not keep (hledger makes postings,
-- tags and assertions of them): status, balances, other postings' accounts
-- and comments
local function ignored(name)
  if name == "status" or name == "balance" or name == "balance1" then return true end
  local what, n = name:match("^(%a+)(%d+)$")
  n = tonumber(n)
  return (what == "account" and n >= 2 and n <= 99) or (what == "comment" and n >= 1 and n <= 99)
end

local function known_field(name) return USED[name] or ignored(name) end

local SEPARATORS = { [","] = ",", [";"] = ";", ["|"] = "|", tab = "\t", space = " " }

local MONTHS = { "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec" }
local LONG_MONTHS = { "january", "february", "march", "april", "may", "june", "july", "august", "september",
  "october", "november", "december" }

-- a date-format (strptime: %Y %y %m %d %b %h %B %e %H %M %S %l %p %%,
-- a - after % for no leading zero) as a list of pieces
local function parse_date_format(fmt)
  local pieces, i = {}, 1
  while i <= #fmt do
    local c = fmt:sub(i, i)
    if c == "%" then
      local flag, d = fmt:match("^(%-?)(.)", i + 1)
      if not d or d == "" then return nil, "a % at the end of the date format" end
      if not ("YymdbhBeHMSlpI%"):find(d, 1, true) then
        return nil, ("%%%s is not a date format directive sift reads (%%Y %%y %%m %%d %%b %%B %%e %%H %%M %%S %%l "
          .. "%%I %%p %%%%)"):format(d)
      end
      pieces[#pieces + 1] = d == "%" and { lit = "%" } or { dir = d, loose = flag == "-" }
      i = i + 2 + #flag
    else
      pieces[#pieces + 1] = { lit = c }
      i = i + 1
    end
  end
  for _, need in ipairs { "Yy", "mbhB", "de" } do
    local found = false
    for _, p in ipairs(pieces) do found = found or (p.dir and need:find(p.dir, 1, true) ~= nil) end
    if not found then return nil, "the date format has no year, month or day" end
  end
  return pieces
end

-- a date read with a parsed format, as YYYY-MM-DD; nil when it does not read
local function read_date(pieces, text)
  local i, y, m, d = 1, nil, nil, nil
  local function digits(lo, hi)
    local s = text:match("^" .. ("%d"):rep(lo) .. ("%d?"):rep(hi - lo), i)
    if not s then return nil end
    i = i + #s
    return tonumber(s)
  end
  for _, p in ipairs(pieces) do
    if p.lit then
      if text:sub(i, i) ~= p.lit then return nil end
      i = i + 1
    else
      local dir, lo = p.dir, p.loose and 1 or 2
      if dir == "Y" then
        y = digits(4, 4)
        if not y then return nil end
      elseif dir == "y" then
        local yy = digits(2, 2)
        if not yy then return nil end
        y = yy < 69 and 2000 + yy or 1900 + yy  -- (as strptime and hledger take two-digit years)
      elseif dir == "m" or dir == "d" or dir == "e" then
        if dir == "e" and text:sub(i, i) == " " then i = i + 1 end
        local v = digits(dir == "e" and 1 or lo, 2)
        if not v then return nil end
        if dir == "m" then m = v else d = v end
      elseif dir == "b" or dir == "h" or dir == "B" then
        local word = text:match("^%a+", i)
        if not word then return nil end
        local lw = word:lower()
        for n = 1, 12 do if lw == MONTHS[n] or (dir == "B" and lw == LONG_MONTHS[n]) then m = n end end
        if not m then return nil end
        i = i + #word
      elseif dir == "p" then
        local w = text:match("^[AaPp][Mm]", i)
        if not w then return nil end
        i = i + 2
      else  -- H M S I l: read, not kept
        if dir == "l" and text:sub(i, i) == " " then i = i + 1 end
        if not digits(dir == "l" and 1 or lo, 2) then return nil end
      end
    end
  end
  if i <= #text or not (y and m and d) then return nil end
  return entries.check_date(("%04d-%02d-%02d"):format(y, m, d))
end

-- a field assignment's value: literal text and %N / %name references
local function parse_template(value, names, where, field)
  local parts, i = {}, 1
  while true do
    local s, e, ref = value:find("%%([%w_%-]+)", i)
    if not s then
      if i <= #value then parts[#parts + 1] = value:sub(i) end
      break
    end
    if s > i then parts[#parts + 1] = value:sub(i, s - 1) end
    local n = math.tointeger(tonumber(ref))
    if not n then
      -- (a name: the longest one the fields list has that starts here)
      local best
      for name in pairs(names) do
        if ref:sub(1, #name) == name and (not best or #name > #best) then best = name end
      end
      if not best then
        return nil, ("%s: %s: no field named %s (the fields list names them)"):format(where, field, ref)
      end
      n, e = names[best], s + #best
    elseif n < 1 then
      return nil, ("%s: %s: %%%s: fields are counted from 1"):format(where, field, ref)
    end
    parts[#parts + 1] = n
    i = e + 1
  end
  return parts
end

-- text without the spaces at its ends
local function trim(v)
  local a = v:find("%S")
  if not a then return "" end
  local b = #v
  while v:find("^%s", b) do b = b - 1 end
  return a == 1 and b == #v and v or v:sub(a, b)
end

local function expand(parts, record)
  local out = {}
  for i, p in ipairs(parts) do
    if type(p) == "number" then
      out[i] = trim(record[p] or "")
    else
      out[i] = p
    end
  end
  return table.concat(out)
end

--- Read a rules file's text (path names it in errors).
-- @return the rules, or nil, "PATH:LINE: why" and the code "rules"
function M.parse_rules(text, path)
  path = path or "rules"
  local rules = { skip = 0, separator = ",", names = {}, fields = {}, assignments = {}, blocks = {},
    decimal_mark = nil, date_format = nil }
  local lines = {}
  for line in (text:gsub("\r\n", "\n") .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  local n = 0
  local function where() return ("%s:%d"):format(path, n) end
  local function bad(msg) return fail(("%s: %s"):format(where(), msg), "rules") end
  -- assignments are kept with their templates compiled once the fields are named
  local pending = {}
  local function assign(list, name, value)
    if not known_field(name) then
      if name:match("^amount%d+") or name:match("^currency%d+") then
        return ("%s: sift keeps one amount a row: %s (another posting's amount) is not read"):format(where(), name)
      end
      return ("%s: %s is not a field sift reads (%s)"):format(where(), name,
        "date, date2, description, comment, code, amount, amount-in, amount-out, currency, account1; "
        .. "read and not kept: status, balance, account2..99, comment1..99")
    end
    local item = { name = name, value = value, line = n, where = where() }
    list[#list + 1] = item
    pending[#pending + 1] = item
  end
  local block
  local i = 0
  while i < #lines do
    i = i + 1
    n = i
    local line = lines[i]
    local indented = line:match("^%s") ~= nil
    local body = line:gsub("^%s+", ""):gsub("%s+$", "")
    if body == "" or body:match("^[#;*]") then
      if body == "" and block and block.rules_started then block = nil end
    elseif indented then
      if not block then return bad("an indented line outside an if block") end
      block.rules_started = true
      local word, rest = body:match("^(%S+)%s*(.*)$")
      if word == "skip" and rest == "" then block.skip = true
      elseif word == "end" and rest == "" then block["end"] = true
      else
        local err = assign(block.assignments, word, rest)
        if err then return fail(err, "rules") end
      end
    elseif block and not block.rules_started then
      -- a matcher line of an `if` with its matchers below it
      local ok, err = block.add(body)
      if not ok then return bad(err) end
    else
      if block and #block.assignments == 0 and not block.skip and not block["end"] then
        return fail(("%s:%d: this if block has no indented rules under it"):format(path, block.line), "rules")
      end
      block = nil
      local word, rest = body:match("^(%S+)%s*(.*)$")
      if word == "skip" then
        local k = rest == "" and 1 or math.tointeger(tonumber(rest))
        if not k or k < 0 or not rest:match("^%d*$") then return bad("skip takes a number of lines") end
        rules.skip = k
      elseif word == "fields" then
        local list = {}
        for name in (rest .. ","):gmatch("([^,]*),") do list[#list + 1] = name:gsub("^%s+", ""):gsub("%s+$", "") end
        if #list < 2 then return bad("fields names two fields or more, separated by commas") end
        for k, name in ipairs(list) do
          if name ~= "" and not name:match("^[%w_%-]+$") then
            return bad(("field %d's name %q: letters, digits, _ and - only"):format(k, name))
          end
          if name ~= "" and name ~= "_" then rules.names[name] = k end
          if known_field(name) then assign(rules.assignments, name, "%" .. k) end
        end
        rules.fields = list
      elseif word == "date-format" then
        local pieces, err = parse_date_format(rest)
        if not pieces then return bad(err) end
        rules.date_format, rules.date_format_text = pieces, rest
      elseif word == "decimal-mark" then
        if rest ~= "." and rest ~= "," then return bad("decimal-mark is . or ,") end
        rules.decimal_mark = rest
      elseif word == "separator" then
        local sep = SEPARATORS[rest:lower()] or (#rest == 1 and not rest:match("[%w\"]") and rest)
        if not sep then return bad(("separator %q: one character (not a letter, digit or quote), TAB or SPACE"):format(rest)) end
        rules.separator = sep
      elseif word == "newest-first" then
        rules.newest_first = true  -- (sift orders by date: nothing to do)
      elseif word == "if" then
        block = { line = n, assignments = {}, matchers = {} }
        function block.add(m)
          local conj = m:match("^&%s*")
          if conj then m = m:sub(#conj + 1) end
          local field, re = m:match("^%%([%w_%-]+)%s+(.*)$")
          local ref
          if field then
            ref = math.tointeger(tonumber(field)) or rules.names[field]
            if not ref then return nil, ("%%%s: no field of that name or number"):format(field) end
          else
            re = m
          end
          local match, err = M.regex(re)
          if not match then return nil, "the pattern: " .. err end
          local matcher = { field = ref, match = match }
          if conj then
            local last = block.matchers[#block.matchers]
            if not last then return nil, "& with no matcher before it" end
            last[#last + 1] = matcher
          else
            block.matchers[#block.matchers + 1] = { matcher }
          end
          return true
        end
        if rest ~= "" then
          local ok, err = block.add(rest)
          if not ok then return bad(err) end
        end
        rules.blocks[#rules.blocks + 1] = block
      elseif word:match("^if[^%w_%-]") then
        return bad("if tables (if followed by a separator) are not supported: write if blocks")
      elseif word == "include" or word == "end" or word == "balance-type" or word == "timezone" then
        return bad(("%s is an hledger rule sift does not support"):format(word))
      else
        local err = assign(rules.assignments, word, rest)
        if err then return fail(err, "rules") end
      end
    end
  end
  n = #lines
  if block and #block.assignments == 0 and not block.skip and not block["end"] then
    return fail(("%s:%d: this if block has no indented rules under it"):format(path, block.line), "rules")
  end
  for _, b in ipairs(rules.blocks) do
    if #b.matchers == 0 then return fail(("%s:%d: this if block has no pattern"):format(path, b.line), "rules") end
  end
  for _, item in ipairs(pending) do
    local parts, err = parse_template(item.value, rules.names, item.where, item.name)
    if not parts then return fail(err, "rules") end
    item.parts, item.needs = parts, 0
    for _, p in ipairs(parts) do if type(p) == "number" and p > item.needs then item.needs = p end end
  end
  local function assigned(name)
    for _, a in ipairs(rules.assignments) do if a.name == name then return true end end
    for _, b in ipairs(rules.blocks) do for _, a in ipairs(b.assignments) do if a.name == name then return true end end end
  end
  if not assigned("date") then return fail(path .. ": the rules give no date (fields ... date ... or date %N)", "rules") end
  if not (assigned("amount") or assigned("amount1") or assigned("amount-in") or assigned("amount-out")
      or assigned("amount1-in") or assigned("amount1-out")) then
    return fail(path .. ": the rules give no amount (amount, or amount-in and amount-out)", "rules")
  end
  return rules
end

-- }======================================================

-- {======================================================
-- Reading the CSV
-- =======================================================

--- The records of CSV text (RFC 4180 quoting: a quoted field may hold
-- the separator, quotes doubled and line breaks) with the line each
-- starts on.
-- @return list of `{ line = N, field, field, ... }`, or nil and why
function M.records(text, sep)
  local out, i, line, len = {}, 1, 1, #text
  local stops = "[%" .. sep .. "\r\n]"  -- (what ends a field not quoted)
  if text:sub(1, 3) == "\239\187\191" then i = 4 end  -- (a byte order mark)
  while i <= len do
    local record, start = { line = line }, line
    while true do
      local field
      if text:sub(i, i) == '"' then
        local parts, j = {}, i + 1
        while true do
          local q = text:find('"', j, true)
          if not q then return nil, ("row %d, column %d: a quoted field is not closed"):format(start, #record + 1) end
          parts[#parts + 1] = text:sub(j, q - 1)
          if text:sub(q + 1, q + 1) == '"' then
            parts[#parts + 1] = '"'
            j = q + 2
          else
            i = q + 1
            break
          end
        end
        field = table.concat(parts)
        line = line + select(2, field:gsub("\n", ""))
        local c = text:sub(i, i)
        if c ~= sep and c ~= "\n" and c ~= "\r" and c ~= "" then
          return nil, ("row %d, column %d: text after a quoted field's closing quote"):format(start, #record + 1)
        end
      else
        local j = text:find(stops, i) or len + 1
        field = text:sub(i, j - 1)
        i = j
      end
      record[#record + 1] = field
      local c = text:sub(i, i)
      if c == sep then
        i = i + 1
      else
        if c == "\r" then i = i + 1 end
        if text:sub(i, i) == "\n" then i = i + 1 end
        line = line + 1
        break
      end
    end
    out[#out + 1] = record
  end
  return out
end

-- }======================================================

-- {======================================================
-- Rows as transactions
-- =======================================================

-- an amount's text as an exact decimal ("-1234.56"), hledger's way:
-- a + goes, parentheses or a second - flip the sign, a currency symbol or
-- code before or after it goes; digit groups by the mark that is not the
-- decimal mark. "" when the field holds no amount (empty, or a sign alone).
local function read_amount(text, mark)
  local s = text:gsub("^%s+", ""):gsub("%s+$", "")
  local negative = false
  local function strip_sign()
    local changed = true
    while changed do
      changed = false
      local sign = s:match("^[-+]")
      if sign then
        s, changed = s:sub(2):gsub("^%s+", ""), true
        if sign == "-" then negative = not negative end
      end
      local inner = s:match("^%((.*)%)$")
      if inner then s, negative, changed = inner:gsub("^%s+", ""):gsub("%s+$", ""), not negative, true end
    end
  end
  strip_sign()
  -- a currency symbol ($, or a non-ASCII one: £ €) or code (EUR) before
  -- or after the number
  s = s:gsub("^%$", ""):gsub("^[\128-\255]+", ""):gsub("^%u%u%u%s*", "")
  s = s:gsub("%s*%$$", ""):gsub("%s*[\128-\255]+$", ""):gsub("%s*%u%u%u$", "")
  strip_sign()
  if s == "" then return "" end
  mark = mark or "."
  local group = mark == "." and "," or "."
  local int, frac = s, nil
  local at = s:find(mark, 1, true)
  if at then int, frac = s:sub(1, at - 1), s:sub(at + 1) end
  if frac and not frac:match("^%d+$") then return nil end
  if int:find(group, 1, true) or int:find("[ ']") then
    -- groups of three digits after the first
    local head, rest = int:match("^(%d%d?%d?)(.*)$")
    if not head or rest:gsub("[" .. group .. " ']%d%d%d", "") ~= "" then return nil end
    int = int:gsub("[^%d]", "")
  end
  if not int:match("^%d*$") or (int == "" and not frac) then return nil end
  return (negative and "-" or "") .. (int == "" and "0" or int) .. (frac and ("." .. frac) or "")
end

local function normalised(v) return trim((v:gsub("%s+", " "))) end

--- The transactions of CSV text read with parsed rules: `{ posted,
-- user_date, amount (decimal text), name, memo, fitid, currency,
-- account, row, key }` in the file's order, or nil and "row R, column C
-- (NAME): why" (R is the line of the file the row starts on), code "csv".
function M.transactions(text, rules)
  local records, err = M.records(text, rules.separator)
  if not records then return fail(err, "csv") end
  local out, seen, skipped, stop = {}, {}, 0, false
  -- (a statement's dates repeat: each text is read once)
  local dates = {}
  local function date_of(v)
    local d = dates[v]
    if d == nil then
      if rules.date_format then
        d = read_date(rules.date_format, v)
      else
        local y, m, dd = v:match("^(%d%d%d%d)[-/.](%d%d?)[-/.](%d%d?)$")
        d = y and entries.check_date(("%s-%02d-%02d"):format(y, tonumber(m), tonumber(dd)))
      end
      dates[v] = d or false
    end
    return d or nil
  end
  local function not_date(v)
    if rules.date_format then return ("%q is not a date in the format %s"):format(v, rules.date_format_text) end
    return ("%q is not a date (YYYY-MM-DD, or give a date-format)"):format(v)
  end
  for _, record in ipairs(records) do
    -- (blank lines are no rows; skip counts the others)
    if not (#record == 1 and record[1]:match("^%s*$")) then
      if skipped < rules.skip then
        skipped = skipped + 1
      else
        local values, skip = {}, false
        local function set(list)
          for _, a in ipairs(list) do values[a.name] = a end
        end
        set(rules.assignments)
        local folded = {}  -- (each subject folded once: the row is 0)
        for _, b in ipairs(rules.blocks) do
          local hit = false
          for _, all in ipairs(b.matchers) do
            local ok = true
            for _, m in ipairs(all) do
              local key = m.field or 0
              local subject = folded[key]
              if not subject then
                subject = core.fold(m.field and (record[m.field] or "") or table.concat(record, ","))
                folded[key] = subject
              end
              ok = ok and m.match(subject, true)
            end
            hit = hit or ok
          end
          if hit then
            if b["end"] then stop = true break end
            if b.skip then skip = true end
            set(b.assignments)
          end
        end
        if stop then break end
        if not skip then
          local row = record.line
          local function row_error(name, why)
            local a = values[name]
            local col = a and #a.parts == 1 and type(a.parts[1]) == "number" and a.parts[1]
            return fail(("row %d, column %s: %s"):format(row,
              col and ("%d (%s)"):format(col, rules.fields[col] ~= "" and rules.fields[col] or name)
                or ("%s (from %s)"):format(name, a and a.where or "?"), why), "csv")
          end
          local got, needed = {}, 0
          for name, a in pairs(values) do
            if a.needs > needed then needed = a.needs end
            got[name] = expand(a.parts, record)
          end
          if needed > #record then
            return fail(("row %d, column %d: the row has %d field(s), the rules read %d"):format(row, #record + 1,
              #record, needed), "csv")
          end
          local t = { row = row }
          -- the date
          t.posted = date_of(got.date or "")
          if not t.posted then return row_error("date", not_date(got.date or "")) end
          if got.date2 and got.date2 ~= "" then
            t.user_date = date_of(got.date2)
            if not t.user_date then return row_error("date2", not_date(got.date2)) end
          end
          -- the amount: amount (or amount1), else amount-in and amount-out
          local mark = rules.decimal_mark
          local function amount_of(name)
            if got[name] == nil then return nil end
            local a = read_amount(got[name], mark)
            if not a then return nil, ("%q is not an amount%s"):format(got[name],
              mark and (" (decimal mark %s)"):format(mark) or "") end
            return a
          end
          local amount, why, from
          for _, name in ipairs { "amount1", "amount" } do
            if not amount and got[name] then
              amount, why = amount_of(name)
              if not amount then return row_error(name, why) end
              from = name
            end
          end
          if not amount then
            local pin, pout = "amount1-in", "amount1-out"
            if got[pin] == nil and got[pout] == nil then pin, pout = "amount-in", "amount-out" end
            local ain, win = amount_of(pin)
            if win then return row_error(pin, win) end
            local aout, wout = amount_of(pout)
            if wout then return row_error(pout, wout) end
            local zin = not ain or not ain:find("[1-9]")
            local zout = not aout or not aout:find("[1-9]")
            if not zin and not zout then
              return row_error(pin, ("both %s (%s) and %s (%s) hold an amount"):format(pin, got[pin], pout, got[pout]))
            elseif not zin then amount, from = ain, pin
            elseif not zout then amount, from = aout:sub(1, 1) == "-" and aout:sub(2) or "-" .. aout, pout
            elseif ain and ain ~= "" then amount, from = ain, pin
            elseif aout and aout ~= "" then amount, from = aout, pout
            end
          end
          if not amount or amount == "" then return row_error(from or "amount", "no amount") end
          t.amount, t.amount_field = amount, from
          t.name = got.description and got.description ~= "" and normalised(got.description) or nil
          t.memo = got.comment and got.comment ~= "" and normalised(got.comment) or nil
          t.currency = got.currency1 or got.currency
          if t.currency == "" then t.currency = nil end
          t.account = got.account1 and got.account1 ~= "" and normalised(got.account1) or nil
          if got.code and got.code ~= "" then
            t.fitid = normalised(got.code)
          else
            -- (the fields apart by \31, which is no space)
            local h = core.hash((table.concat(record, "\31"):gsub("%s+", " "):gsub(" ?\31 ?", "\31")
              :gsub("^ ", ""):gsub(" $", "")))
            seen[h] = (seen[h] or 0) + 1
            t.fitid = ("csv:%s#%d"):format(h, seen[h])
          end
          out[#out + 1] = t
        end
      end
    end
  end
  -- a file newest first (its first date after its last, or newest-first)
  -- is stored oldest first, as hledger orders the rows of one day
  if #out > 1 and (rules.newest_first or out[1].posted > out[#out].posted) then
    for i = 1, #out // 2 do out[i], out[#out + 1 - i] = out[#out + 1 - i], out[i] end
  end
  return out
end

-- }======================================================

-- {======================================================
-- Importing
-- =======================================================

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("a")
  f:close()
  return text
end

-- the account named (its number, its name, or KIND:NUMBER), or nil when
-- none; an error when it names several, or a cash account
local function find_account(db, name)
  local kind, number = name:match("^(%l+):(.+)$")
  local found = {}
  for row in db:rows([[SELECT a.id, a.kind, a.bank_id, a.number, a.currency, i.org, i.fid FROM accounts a
      JOIN institutions i ON i.id = a.institution_id
      WHERE a.number = ? OR a.name = ? OR (a.kind = ? AND a.number = ?) ORDER BY a.id]], name, name, kind, number) do
    found[#found + 1] = row
  end
  if #found > 1 then
    local names = {}
    for i, a in ipairs(found) do names[i] = a.kind .. ":" .. a.number end
    return nil, ("account %s names %d accounts (%s): name one as KIND:NUMBER"):format(name, #found,
      table.concat(names, ", "))
  end
  return found[1] or false
end

--- Import a CSV file with a rules file, all or nothing: every row is read
-- and checked before anything is stored, and the rows are stored in one
-- SQLite transaction (`sift.finance.store.import`, as an OFX statement's:
-- keys, matching your own entries, counts).
-- @param books the books (`sift.finance.open`)
-- @param source a path, or `{ text = CSV, path = NAME }`
-- @tparam table opts `rules` (a path) or `rules_text` (+ `rules_path`);
--   `account` (overrides account1), `currency` (the account's, when it is
--   made and the rules give none), `on_transaction`
-- @return counts as `Books:import`'s (with `rows`), or nil, message, code
--   ("rules", "csv", "account", "io")
function M.import(books, source, opts)
  opts = opts or {}
  local text, path
  if type(source) == "table" then text, path = source.text, source.path
  else
    path = source
    local err
    text, err = read(path)
    if not text then return fail(err, "io") end
  end
  local rules_text, rules_path = opts.rules_text, opts.rules_path or opts.rules
  if not rules_text then
    if not opts.rules then return fail("no rules: give a rules file (--rules)", "rules") end
    local err
    rules_text, err = read(opts.rules)
    if not rules_text then return fail(err, "io") end
  end
  local rules, err = M.parse_rules(rules_text, rules_path)
  if not rules then return fail(err, "rules") end
  local prefix = path and (path .. ": ") or ""
  local ts
  ts, err = M.transactions(text, rules)
  if not ts then return fail(prefix .. err, "csv") end
  -- the account: --account, else account1 (one for the whole file)
  local name = opts.account
  if not name then
    for _, t in ipairs(ts) do
      if t.account and name and t.account ~= name then
        return fail(("%srow %d: account1 is %s, an earlier row's %s: one account a file (or --account)"):format(
          prefix, t.row, t.account, name), "account")
      end
      name = name or t.account
    end
  end
  if not name then return fail(prefix .. "no account: give account1 in the rules, or --account", "account") end
  local account
  account, err = find_account(books.db, name)
  if account == nil then return fail(err, "account") end
  local currency = account and account.currency or opts.currency
  for _, t in ipairs(ts) do
    if t.currency then
      if not t.currency:match("^%u%u%u$") then
        return fail(("%srow %d: currency %s is not an ISO 4217 code (GBP, EUR, USD)"):format(prefix, t.row,
          t.currency), "csv")
      end
      if currency and t.currency ~= currency then
        return fail(("%srow %d: currency %s, but account %s is in %s"):format(prefix, t.row, t.currency, name,
          currency), "account")
      end
      currency = t.currency
    end
  end
  if opts.currency and currency ~= opts.currency then
    return fail(("account %s is in %s, not %s"):format(name, currency, opts.currency), "account")
  end
  if not currency then
    return fail(("account %s is new: give its currency (currency in the rules, or --currency)"):format(name),
      "account")
  end
  if account and account.kind == "cash" then
    return fail(("account %s is a cash account (your own entries): import a bank's CSV into a bank account"):format(
      name), "account")
  end
  if not account then
    if name:find("[:;%c]") then
      return fail(("account %s: a new account's name may not have ':', ';' or control characters (account1 "
        .. "names sift's account, not an hledger account)"):format(name), "account")
    end
    account = { kind = "bank", bank_id = "", number = name, org = "", fid = "" }
  end
  -- every amount checked against the currency before anything is stored
  for _, t in ipairs(ts) do
    local units, why = store.minor_units(t.amount, currency)
    if not units then
      return fail(("%srow %d, column %s: %s"):format(prefix, t.row, t.amount_field, why), "csv")
    end
  end
  local doc = {
    signon = { org = account.org, fid = account.fid },
    statements = { { kind = account.kind, currency = currency, transactions = ts,
      account = { id = account.number, bank_id = account.bank_id } } },
  }
  local counts = store.import(books.db, doc, { path = path, text = text .. "\0" .. rules_text,
    on_transaction = opts.on_transaction })
  counts.rows, counts.account, counts.currency = #ts, name, currency
  return counts
end

-- }======================================================

return M
