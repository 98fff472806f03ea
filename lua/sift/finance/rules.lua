--- Categorisation rules: a small language, compiled by LPeg.
--
--     # one rule per line; a line that starts with space continues the last
--     if payee ~ "tesco" or payee ~ "sainsbury*" then Food:Groceries
--     if name ~ "^ACME PAYROLL" and amount > 0 then Income:Salary payee "ACME Corp" priority 10
--     if memo ~ "rent" and amount <= -500 then Housing:Rent
--     if text ~ "netflix|spotify" then "Subscriptions" payee "Streaming"
--     if account = "999988" and not type = "XFER" then Misc
--
-- Conditions: `FIELD ~ "PATTERN"` (the pattern occurs in the field,
-- ignoring case in every script: both NFC-normalised and case-folded; `*` is any text, `?` one character, `|` separates
-- alternatives, `^` and `$` anchor at the start and end), `FIELD = "TEXT"`
-- and `FIELD != "TEXT"` (whole field, ignoring case; an absent field is
-- ""), `amount` compared
-- with `< <= > >= = !=` and a decimal number, `and`, `or`, `not` and
-- parentheses. FIELD is payee, name, memo, text (any of the three),
-- account (its number), type or checknum.
--
-- Rules are tried by priority (highest first; 0 by default), then in the
-- order of the file; the first that matches sets the category, and the
-- normalised payee when it says `payee "..."`. Rules always win over the
-- learner's guesses.
-- @module sift.finance.rules

local lpeg = require "lpeg"
local core = require "sift.core"

local P, S, R, C, Ct, Cc, V = lpeg.P, lpeg.S, lpeg.R, lpeg.C, lpeg.Ct, lpeg.Cc, lpeg.V

local M = {}

-- {======================================================
-- Patterns: "tesco*metro|^aldi" -> an LPeg pattern that finds them
-- =======================================================

local cont = R"\128\191"
local CHAR = R"\0\127" + R"\194\223" * cont + R"\224\239" * cont * cont + R"\240\244" * cont * cont * cont + P(1)

-- one alternative: ^? (text | * | ?)* $?
local function alternative(text)
  local anchored_start = text:sub(1, 1) == "^"
  if anchored_start then text = text:sub(2) end
  local anchored_end = text:sub(-1) == "$"
  if anchored_end then text = text:sub(1, -2) end
  local parts = {}
  for piece, op in text:gmatch("([^*?]*)([*?]?)") do
    if piece ~= "" then parts[#parts + 1] = P(piece) end
    if op ~= "" then parts[#parts + 1] = op end
  end
  -- (`?` is one character: a UTF-8 sequence, or a byte that is not one)
  -- built right to left, so that `*` is a search for what follows it
  local patt = anchored_end and -P(1) or P(true)
  for i = #parts, 1, -1 do
    local part = parts[i]
    if part == "?" then patt = CHAR * patt
    elseif part == "*" then patt = P{ patt + P(1) * V(1) }
    else patt = part * patt end
  end
  if anchored_start then return patt end
  return P{ patt + P(1) * V(1) }  -- anywhere
end

--- Compile a pattern (see the module's notes) to a function of a string.
-- Both are compared NFC-normalised and case-folded (Unicode's full case
-- folding, from tables in C: `core.fold`), so that "café" matches "CAFÉ"
-- however its é was written, and "strasse" matches "STRAßE".
function M.pattern(text)
  local patt = P(false)
  for alt in (core.fold(text) .. "|"):gmatch("([^|]*)|") do
    if alt ~= "" then patt = patt + alternative(alt) end
  end
  return function(s)
    return s ~= nil and patt:match(core.fold(s)) ~= nil
  end
end

-- }======================================================

-- {======================================================
-- The language
-- =======================================================

local sp = S" \t\r\n"^0
local function kw(w) return P(w) * -R("az", "AZ", "09") * sp end
local function sym(s) return P(s) * sp end
local quoted = P'"' * lpeg.Cs((P'\\"' / '"' + (1 - P'"'))^0) * P'"' * sp
local number = C(S"+-"^-1 * R"09"^1 * (P"." * R"09"^1)^-1) * sp
local field = C((P"payee" + P"name" + P"memo" + P"text" + P"account" + P"type" + P"checknum")
  * -R("az", "AZ", "09")) * sp
local compare = C(P"<=" + P">=" + P"!=" + P"<" + P">" + P"=") * sp
local category = quoted + C((R("az", "AZ", "09") + S":_-&/.'")^1) * sp

local grammar = P{
  "rule",
  rule = sp * kw"if" * V"cond" * kw"then" * category
    * (kw"payee" * quoted + Cc(nil)) * (kw"priority" * number + Cc(nil)) * -P(1),
  cond = Ct(Cc"or" * V"conj" * (kw"or" * V"conj")^0),
  conj = Ct(Cc"and" * V"term" * (kw"and" * V"term")^0),
  term = Ct(Cc"not" * kw"not" * V"term") + sym"(" * V"cond" * sym")"
    + Ct(Cc"amount" * kw"amount" * compare * number)
    + Ct(Cc"match" * field * sym"~" * quoted)
    + Ct(Cc"equal" * field * C(P"!=" + P"=") * sp * quoted),
}

local function fields(t, name)
  if name == "text" then return { t.payee or "", t.name or "", t.memo or "" } end
  return { t[name] or "" }
end

local COMPARE = {
  ["<"] = function(a, b) return a < b end, ["<="] = function(a, b) return a <= b end,
  [">"] = function(a, b) return a > b end, [">="] = function(a, b) return a >= b end,
  ["="] = function(a, b) return a == b end, ["!="] = function(a, b) return a ~= b end,
}

-- a condition tree -> a predicate of a transaction (amounts compare
-- exactly, as integers at the larger of the two scales)
local function compile(node)
  local kind = node[1]
  if kind == "or" or kind == "and" then
    local parts = {}
    for i = 2, #node do parts[#parts + 1] = compile(node[i]) end
    if #parts == 1 then return parts[1] end
    if kind == "or" then
      return function(t)
        for _, p in ipairs(parts) do if p(t) then return true end end
        return false
      end
    end
    return function(t)
      for _, p in ipairs(parts) do if not p(t) then return false end end
      return true
    end
  elseif kind == "not" then
    local inner = compile(node[2])
    return function(t) return not inner(t) end
  elseif kind == "amount" then
    local op, units, scale = COMPARE[node[2]], core.ofx_amount(node[3])
    return function(t)
      local a, s = core.ofx_amount(t.amount)
      if not a then return false end
      -- bring both to the larger scale
      local x, y = a, units
      for _ = s + 1, scale do x = x * 10 end
      for _ = scale + 1, s do y = y * 10 end
      return op(x, y)
    end
  elseif kind == "match" then
    local name, matches = node[2], M.pattern(node[3])
    return function(t)
      for _, v in ipairs(fields(t, name)) do if matches(v) then return true end end
      return false
    end
  else  -- equal
    local name, negate, text = node[2], node[3] == "!=", core.fold(node[4])
    return function(t)
      local hit = false
      for _, v in ipairs(fields(t, name)) do if core.fold(v or "") == text then hit = true end end
      return hit ~= negate
    end
  end
end

--- Why a category name cannot be used (every journal tool must take
-- it): nil when it can. Words (any script), parts separated by single
-- colons, none empty, no control characters, no ";" or '"'.
function M.category_problem(name)
  if type(name) ~= "string" or not name:find("%S") then return "a category needs a name" end
  if name:find("[%c;\"]") then return ("category %q: no control characters, ';' or '\"'"):format(name) end
  for part in (name .. ":"):gmatch("([^:]*):") do
    if not part:find("%S") then return ("category %q: a part between colons is empty"):format(name) end
    if part:find("^%s") or part:find("%s$") then
      return ("category %q: a part starts or ends with a space"):format(name)
    end
  end
  if utf8.len(name) == nil then return "a category name must be UTF-8" end
  return nil
end

--- Compile rules text.
-- @return a rule set (`:match(t)` → category, payee, rule), or nil and
--   "line N: ..." for the first line that does not read
function M.compile(text, source)
  local rules, lines = {}, {}
  -- join continuation lines; drop comments and blank lines
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local body = line:gsub("%s+#.*$", ""):gsub("^#.*$", "")
    if body:match("^%s+%S") and #lines > 0 then
      lines[#lines].text = lines[#lines].text .. " " .. body
    elseif body:match("%S") then
      lines[#lines + 1] = { text = body, line = n }
    end
  end
  for i, l in ipairs(lines) do
    local cond, cat, payee, priority = grammar:match(l.text)
    if not cond then
      return nil, ("%s line %d: cannot read %s (expected: if CONDITION then CATEGORY [payee \"...\"] "
        .. "[priority N])"):format(source or "rules", l.line, require("sift.ofx").quoted(l.text))
    end
    local problem = M.category_problem(cat)
    if problem then return nil, ("%s line %d: %s"):format(source or "rules", l.line, problem) end
    rules[#rules + 1] = { test = compile(cond), category = cat, payee = payee,
      priority = tonumber(priority) or 0, line = l.line, order = i, text = l.text }
  end
  table.sort(rules, function(a, b)
    if a.priority ~= b.priority then return a.priority > b.priority end
    return a.order < b.order
  end)
  return setmetatable({ rules = rules, source = text }, { __index = M })
end

--- The first rule that matches transaction t (fields payee, name, memo,
-- account, type, checknum, amount as decimal text): category, payee
-- (or nil), the rule.
function M:match(t)
  for _, r in ipairs(self.rules) do
    if r.test(t) then return r.category, r.payee, r end
  end
end

-- }======================================================

return M
