--- The OFX grammar: headers (v1 key:value lines, v2 `<?xml?>` and
-- `<?OFX?>`, none at all) and one body grammar for SGML and XML that
-- builds a tree of aggregates and elements by the OFX rules. The LPeg
-- patterns are built once, at load (LPeg 1.0.2 is enough).
--
--     local grammar = require "sift.ofx.grammar"
--     local doc = assert(grammar.parse(text))     -- lenient: doc.warnings
--     print(doc:find("OFX/SIGNONMSGSRSV1/SONRS/STATUS/CODE").value)
--
-- The rules (docs/ofx.md): a start tag followed by text is an element
-- (its end tag may follow and is swallowed); a start tag followed by
-- another start tag is an aggregate, which ends at its end tag or, when
-- that is missing, when an ancestor's end tag arrives; an end tag that
-- closes nothing open (a leaf's, nested in reverse as some banks write
-- them) is swallowed. Comments, processing instructions, `<!...>`
-- declarations and CDATA are read; entities are decoded; proprietary
-- dotted tags (`INTU.BID`) are kept.
-- @module sift.ofx.grammar

local lpeg = require "lpeg"
local core = require "sift.core"

local P, S, R, C, Cp, Ct, Cg, Cc = lpeg.P, lpeg.S, lpeg.R, lpeg.C, lpeg.Cp, lpeg.Ct, lpeg.Cg, lpeg.Cc

local M = {}

--- {======================================================
-- Nodes built in Lua
-- =======================================================

-- A parsed document's tree is C's (sift.OfxNode handles on core.ofx_tree:
-- csrc/ofx/ltree.c). A tree built in Lua (the writer's) is made of Nodes
-- with the same methods: an aggregate is a Node with `tag` and its
-- children in order in its array part, an aggregate child as its Node and
-- an element as two slots, its tag and then its value. `items` walks the
-- children without making anything; `child`, `children`, `find` and
-- `each` hand an element out as a Node with `tag` and `value`.

local Node = {}
Node.__index = Node
M.Node = Node

local function element(tag, value)
  return setmetatable({ tag = tag, value = value }, Node)
end

-- the first child with this tag: an aggregate's Node, an element's value
local function first(node, tag)
  local i = 1
  while true do
    local x = node[i]
    if x == nil then return nil end
    if type(x) == "string" then
      if x == tag then return node[i + 1] end
      i = i + 2
    elseif x.tag == tag then
      return x
    else
      i = i + 1
    end
  end
end

--- Walk the children in order: `for tag, x in node:items()`, x being
-- the Node of an aggregate or the value (a string) of an element.
function Node:items()
  local i = 1
  return function()
    local x = self[i]
    if x == nil then return nil end
    if type(x) == "string" then
      i = i + 2
      return x, self[i - 1]
    end
    i = i + 1
    return x.tag, x
  end
end

--- The first child with this tag, or nil.
function Node:child(tag)
  local x = first(self, tag)
  if type(x) == "string" then return element(tag, x) end
  return x
end

--- Every child with this tag (all children when tag is nil), as a list.
function Node:children(tag)
  local out = {}
  for t, x in self:items() do
    if tag == nil or t == tag then out[#out + 1] = type(x) == "string" and element(t, x) or x end
  end
  return out
end

-- the aggregate or value down a path of tags
local function down(node, path)
  for tag in path:gmatch("[^/]+") do
    if type(node) ~= "table" then return nil end
    node = first(node, tag)
    if node == nil then return nil end
  end
  return node
end

--- The first node down a path of tags ("BANKACCTFROM/ACCTID"), or nil.
function Node:find(path)
  local x = down(self, path)
  if type(x) == "string" then return element(path:match("[^/]+$"), x) end
  return x
end

--- The value of the element down a path, or nil (also for an empty one).
function Node:text(path)
  local v = down(self, path)
  if type(v) ~= "string" or v == "" then return nil end
  return v
end

--- Iterate over the children as Nodes: `for child in node:each() do ... end`.
function Node:each()
  local walk = self:items()
  return function()
    local tag, x = walk()
    if type(x) == "string" then return element(tag, x) end
    return x
  end
end

--- How many children.
function Node:count()
  local n = 0
  for _ in self:items() do n = n + 1 end
  return n
end

function Node:__tostring()
  if self.value ~= nil then return ("<%s>%s"):format(self.tag, self.value) end
  return ("<%s> (%d children)"):format(self.tag, self:count())
end

-- }======================================================


--- {======================================================
-- Headers
-- =======================================================

local ws = S" \t"
local nl = S"\r\n"
local space = S" \t\r\n"
local KEYS = { "OFXHEADER", "DATA", "VERSION", "SECURITY", "ENCODING", "CHARSET", "COMPRESSION",
  "OLDFILEUID", "NEWFILEUID" }
local key = P(false)
for _, k in ipairs(KEYS) do key = key + P(k) end
-- a value runs to the end of its line or to the next key (files with no
-- line breaks between fields)
local field_value = C((1 - nl - (key * ws^0 * P":") - P"<")^0)
local field = Cg(C(key) * ws^0 * P":" * ws^0 * field_value) * (ws + nl)^0
local v1_header = Ct(Cg(Ct((field / function(k, v) return k, v end)^1), "fields")) * Cp()

local attr = C(R("AZ", "az")^1) * ws^0 * P"=" * ws^0 * (P'"' * C((1 - P'"')^0) * P'"' + P"'" * C((1 - P"'")^0) * P"'")
-- attributes as a list: name, value, name, value...
local xml_decl = P"<?xml" * Ct((space^1 * attr)^0) * space^0 * P"?>"
local ofx_pi = P"<?OFX" * Ct((space^1 * attr)^0) * space^0 * P"?>"
-- (the <?xml?> line may be missing: banks send <?OFX?> alone)
local v2_header = Ct(Cg(xml_decl, "xml")^-1 * space^0 * Cg(ofx_pi, "ofx")) * Cp()

local bom = P"\239\187\191"

-- the header: kind ("v1", "v2" or "none"), its fields, where the body starts
local function header(text)
  local start = bom:match(text) or 1
  start = (space^0 * Cp()):match(text, start)
  local h, pos = v2_header:match(text, start)
  if h then
    local fields = {}
    for i = 1, #h.ofx, 2 do fields[h.ofx[i]:upper()] = h.ofx[i + 1] end
    local xml = h.xml or {}
    for i = 1, #xml, 2 do fields["XML." .. xml[i]:upper()] = xml[i + 1] end
    return { kind = "v2", fields = fields }, pos
  end
  h, pos = v1_header:match(text, start)
  if h then
    local fields = {}
    for i = 1, #h.fields, 2 do fields[h.fields[i]] = h.fields[i + 1] end
    return { kind = "v1", fields = fields }, pos
  end
  return { kind = "none", fields = {} }, start
end
M.header = header

-- }======================================================


--- {======================================================
-- The body
-- =======================================================

local name = (R("AZ", "az", "09") + S"._-:")^1
local attrs = (space^1 * (1 - S"/>")^0)^-1
local comment = P"<!--" * (1 - P"-->")^0 * (P"-->" + -P(1))
local pi = P"<?" * (1 - P"?>")^0 * (P"?>" + -P(1))
local decl = P"<!" * -P"[CDATA[" * (1 - P">")^0 * P">"

local ENTITIES = { amp = "&", lt = "<", gt = ">", quot = '"', apos = "'", nbsp = "\194\160" }
local entity = P"&#" * S"xX" * C(R("09", "af", "AF")^1) * P";" / function(h) return utf8.char(tonumber(h, 16)) end
  + P"&#" * C(R"09"^1) * P";" / function(d) return utf8.char(tonumber(d)) end
  + P"&" * C(R("az", "AZ")^1) * P";" / function(n) return ENTITIES[n:lower()] or "&" .. n .. ";" end
local unescape = lpeg.Cs((entity + 1)^0)

-- aggregates the specification defines: a start tag of one of these with no
-- text after it opens an aggregate even when its end tag comes at once
local AGGREGATES = {}
for tag in ([[OFX SIGNONMSGSRSV1 SIGNONMSGSRQV1 SONRS SONRQ STATUS FI BANKMSGSRSV1 BANKMSGSRQV1
  STMTTRNRS STMTTRNRQ STMTRS STMTRQ BANKACCTFROM BANKACCTTO BANKACCTINFO BANKTRANLIST STMTTRN
  LEDGERBAL AVAILBAL BALLIST BAL CREDITCARDMSGSRSV1 CREDITCARDMSGSRQV1 CCSTMTTRNRS CCSTMTTRNRQ
  CCSTMTRS CCSTMTRQ CCACCTFROM CCACCTTO CCACCTINFO INVSTMTMSGSRSV1 INVSTMTMSGSRQV1 INVSTMTTRNRS
  INVSTMTTRNRQ INVSTMTRS INVSTMTRQ INVACCTFROM INVACCTINFO INVTRANLIST INVPOSLIST INVBAL INVOOLIST
  INVBANKTRAN INVTRAN INVBUY INVSELL BUYDEBT BUYMF BUYOPT BUYOTHER BUYSTOCK CLOSUREOPT INCOME
  INVEXPENSE JRNLFUND JRNLSEC MARGININTEREST REINVEST RETOFCAP SELLDEBT SELLMF SELLOPT SELLOTHER
  SELLSTOCK SPLIT TRANSFER POSDEBT POSMF POSOPT POSOTHER POSSTOCK INVPOS SECID SECLISTMSGSRSV1
  SECLIST SECINFO DEBTINFO MFINFO OPTINFO OTHERINFO STOCKINFO SIGNUPMSGSRSV1 SIGNUPMSGSRQV1
  ACCTINFOTRNRS ACCTINFOTRNRQ ACCTINFORS ACCTINFORQ ACCTINFO INCTRAN INCPOS PAYEE EXTDPAYEE
  CURRENCY ORIGCURRENCY MKTGINFO YEARTODATE PROFMSGSRSV1 PROFTRNRS PROFRS MSGSETLIST SIGNONINFOLIST
  SIGNONINFO]]):gmatch("%S+") do
  AGGREGATES[tag] = true
end
M.AGGREGATES = AGGREGATES

-- lists that hold only these: another start tag in one means its end tag
-- is missing (a bank that never closes BANKTRANLIST)
local LIST_MEMBERS = { BANKTRANLIST = {}, INVTRANLIST = {} }
for tag in ("DTSTART DTEND STMTTRN"):gmatch("%S+") do LIST_MEMBERS.BANKTRANLIST[tag] = true end
for tag in ([[DTSTART DTEND INVBANKTRAN BUYDEBT BUYMF BUYOPT BUYOTHER BUYSTOCK CLOSUREOPT INCOME
  INVEXPENSE JRNLFUND JRNLSEC MARGININTEREST REINVEST RETOFCAP SELLDEBT SELLMF SELLOPT SELLOTHER
  SELLSTOCK SPLIT TRANSFER]]):gmatch("%S+") do
  LIST_MEMBERS.INVTRANLIST[tag] = true
end

--- Line and column (1-based) of a byte position in text. cache (a
-- table) keeps where the lines start, for the next call.
function M.line_col(text, pos, cache)
  local starts = cache and cache.line_starts
  if not starts then
    starts = { 1 }
    for at in text:gmatch("\n()") do starts[#starts + 1] = at end
    if cache then cache.line_starts = starts end
  end
  local lo, hi = 1, #starts
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if starts[mid] <= pos then lo = mid else hi = mid - 1 end
  end
  return lo, pos - starts[lo] + 1
end

-- The tree builder. A parse's state is one table, `st`, made by
-- `begin` and handed to the body pattern as its extra argument
-- (`body:match(text, at, st)`): every token's pattern starts with
-- `lpeg.Carg(1)`, so each function gets it first (as re.lua hands its
-- definitions through `Carg`). Nothing of a parse lives in the module,
-- and two parses (a coroutine's, a nested one) cannot meet. The tree is
-- C's (core.ofx_tree): nodes are numbers here, and a run's values stay
-- where they are in the text.
--   st.subject, st.strict, st.tree    the text, the mode, the tree being built
--   st.stack, st.tags, st.depth       the open aggregates' numbers and tags
--   st.pending, st.pending_pos        a start tag not yet known as element or aggregate
--   st.last_at                        the element just read (its number), while more of its value may come
--   st.problems, st.lines             what was found wrong; where lines start (for line_col)

-- the tree's methods, the same for every tree
local new_aggregate, new_element, append, tag_of, value_of, set_value, has_element
do
  local t = core.ofx_tree("")
  new_aggregate, new_element, append = t.aggregate, t.element, t.append
  tag_of, value_of, set_value, has_element = t.tag, t.value, t.set_value, t.has_element
end

local function begin(text, is_strict)
  return { subject = text, strict = is_strict, tree = core.ofx_tree(text), stack = { 0 }, tags = { "#document" },
    depth = 1, pending = nil, pending_pos = nil, last_at = nil, problems = {}, lines = {} }
end

local function problem(st, pos, msg)
  local line, col = M.line_col(st.subject, pos, st.lines)
  local problems = st.problems
  problems[#problems + 1] = { line = line, column = col, message = msg }
  if st.strict then error({ ofx_problem = problems[#problems] }, 0) end
end

local function add_element(st, tag, value)
  return new_element(st.tree, st.stack[st.depth], tag, value)
end

local function open(st, tag, pos)
  local stack, depth = st.stack, st.depth
  local node = new_aggregate(st.tree, stack[depth], tag, pos)
  depth = depth + 1
  st.depth, stack[depth], st.tags[depth] = depth, node, tag
end

-- the pending start tag becomes an element with this value
local function leaf(st, value)
  st.last_at = add_element(st, st.pending, value)
  st.pending = nil
end

-- a pending start tag followed by another start tag (or the end of a
-- run's context) was an aggregate
local function open_pending(st)
  if st.pending then
    open(st, st.pending, st.pending_pos)
    st.pending = nil
  end
end

-- a start tag: what was pending is an aggregate, and a list that does
-- not hold this tag lacks its end tag
local function begin_tag(st, pos, tag)
  if st.pending then open_pending(st) end
  st.last_at = nil
  local tags, depth = st.tags, st.depth
  local members = LIST_MEMBERS[tags[depth]]
  if members and not members[tag] and not tag:find(".", 1, true) then
    problem(st, pos, ("<%s> has no end tag (closed before <%s>)"):format(tags[depth], tag))
    st.depth = depth - 1
  end
end

local function start(st, pos, tag, selfclosing)
  begin_tag(st, pos, tag)
  if selfclosing then
    add_element(st, tag, "")
  else
    st.pending, st.pending_pos = tag, pos
  end
end

local function text_token(st, pos, s)
  if not s:find("[^ \t\r\n]") then return end
  local value = s:match("^[ \t\r\n]*(.-)[ \t\r\n]*$")
  if value:find("&", 1, true) then value = unescape:match(value) end
  if st.pending then
    leaf(st, value)
  elseif st.last_at then  -- more of the same value, after a comment
    set_value(st.tree, st.last_at, value_of(st.tree, st.last_at) .. value)
  else
    problem(st, pos, ("text outside any element: %q"):format(s:sub(1, 40)))
  end
end

-- a start tag and its text, trimmed ("" when there was only space)
local function opened(st, pos, tag, s)
  if s == "" or st.pending or LIST_MEMBERS[st.tags[st.depth]] then
    start(st, pos, tag, false)
    if s == "" then return end
  end
  if s:find("&", 1, true) then s = unescape:match(s) end
  st.last_at = add_element(st, tag, s)
  st.pending = nil
end

local function finish(st, pos, tag)
  local pending = st.pending
  if pending then
    if pending == tag then  -- <TAG></TAG>: an empty element or aggregate
      if AGGREGATES[tag] then new_aggregate(st.tree, st.stack[st.depth], tag, st.pending_pos) st.pending = nil
      else leaf(st, "") end
      st.last_at = nil
      return
    end
    if AGGREGATES[pending] then open_pending(st)
    else leaf(st, "") end  -- <MEMO></STMTTRN>: an empty element
  end
  local last_at = st.last_at
  st.last_at = nil
  if last_at and tag_of(st.tree, last_at) == tag then return end  -- the element's own end tag
  local tags = st.tags
  for d = st.depth, 2, -1 do
    if tags[d] == tag then
      for k = st.depth, d + 1, -1 do
        problem(st, pos, ("<%s> has no end tag (closed by </%s>)"):format(tags[k], tag))
      end
      st.depth = d - 1
      return
    end
  end
  -- closes nothing open: a leaf's end tag out of order, or a stray one
  if has_element(st.tree, st.stack[st.depth], tag) then return end
  problem(st, pos, ("</%s> closes nothing that is open"):format(tag))
end

-- a run of elements, as captured (two positions each, then perhaps
-- one more end tag's name). Outside a list, C appends them to the
-- parent until one is closed by another's end tag (the parent's, in
-- SGML); in a list each is checked, one per call with a tail call for
-- the rest.
local run
local function run_checked(st, at, close_at, ...)
  local subject = st.subject
  local tag, from = subject:match("^<([^>]*)>[ \t\r\n]*()", at)
  local value_end = subject:find("<", from, true)
  opened(st, at, tag, subject:sub(from, value_end - 1):match("^(.-)[ \t\r\n]*$"))
  local close = close_at and subject:match("^[^>]+", close_at)
  if close == tag then
    st.last_at = nil
  elseif close then
    finish(st, close_at - 2, close)
  end
  if (...) ~= nil then return run(st, ...) end
end
run = function(st, ...)
  local n = select("#", ...)
  if n == 1 then  -- the one more end tag
    local at = ...
    return finish(st, at - 2, st.subject:match("^[^>]+", at))
  end
  local depth = st.depth
  if LIST_MEMBERS[st.tags[depth]] then return run_checked(st, ...) end
  local used, at, close, close_at = append(st.tree, st.stack[depth], ...)
  st.last_at = at
  if close then
    finish(st, close_at, close)
    if n > used then return run(st, select(used + 1, ...)) end
  end
end

local function cdata(st, s)
  s = s:gsub("^[ \t\r\n]+", ""):gsub("[ \t\r\n]+$", "")
  if st.pending then leaf(st, s)
  elseif st.last_at then set_value(st.tree, st.last_at, value_of(st.tree, st.last_at) .. s) end
end

-- the file ends inside a tag: what was open stays open (and is named
-- by finish_document); a pending start tag was an aggregate
local function unfinished(st, pos, s)
  open_pending(st)
  problem(st, pos, ("the file ends inside a tag: %q"):format(s:sub(1, 40)))
end

local function finish_document(st)
  if st.pending then leaf(st, "") end
  for k = st.depth, 2, -1 do
    problem(st, #st.subject + 1, ("<%s> has no end tag (the file ends)"):format(st.tags[k]))
  end
  return st.tree:node(0), st.problems
end

-- The body's tokens, each a match-time capture (Cmt) of the parse state
-- (Carg(1)) and its captures, whose function acts on the tree at once
-- and returns true: nothing piles up, so a file of millions of tags costs
-- time in proportion. The patterns are named for what they match, the
-- functions for what they do.
local state = lpeg.Carg(1)
local function on(fn)
  return function(_, _, ...) fn(...) return true end
end

-- most tags are a start tag and its text: one token for both
local word = (1 - S"< \t\r\n")^1
local start_and_text = lpeg.Cmt(state * Cp() * P"<" * C(name) * P">" * space^0
  * C((word * (space^1 * word)^0)^-1) * space^0 * #P"<", on(opened))
-- and most of those come in runs (a transaction's fields): one token for
-- a run, whose elements are captured as two positions each (the start
-- tag's '<', and the name of an end tag after it or false) for C to add
-- to the tree (tree:append), the value running to the next '<'. Values
-- with entities take the slower way.
local elem = Cp() * P"<" * name * P">" * space^0 * (1 - S"<&")^1 * #P"<"
  * (P"</" * Cp() * name * P">" * space^0 + Cc(false))
-- (bounded: the captures go on Lua's stack; an end tag after the run,
-- the parent's in XML, comes with it)
local elems = elem * elem^-80 * (P"</" * Cp() * name * P">" * space^0)^-1
M.runs = elems  -- (for bench/ofx_floor.lua)
-- (a run's captures are many: these two hand them on once, not through on)
-- a run of elements opens a pending aggregate, then goes to the tree
local elem_run = lpeg.Cmt(state * elems, function(_, _, st, ...)
  if st.pending then open_pending(st) end
  run(st, ...)
  return true
end)
-- an aggregate's start tag and the run of elements it begins with
local start_then_run = lpeg.Cmt(state * Cp() * P"<" * C(name) * P">" * space^0 * elems, function(_, _, st, pos, tag, ...)
  begin_tag(st, pos, tag)
  open(st, tag, pos)
  run(st, ...)
  return true
end)
local start_tag = lpeg.Cmt(state * Cp() * P"<" * C(name) * attrs * space^0 * (C"/" + Cc(false)) * P">", on(start))
local end_tag = lpeg.Cmt(state * Cp() * P"</" * space^0 * C(name) * space^0 * P">", on(finish))
local cdata_section = lpeg.Cmt(state * P"<![CDATA[" * C((1 - P"]]>")^0) * P"]]>", on(cdata))
local text_run = lpeg.Cmt(state * Cp() * C((1 - P"<")^1), on(text_token))
-- a tag the file ends in (a download cut short)
local cut_tag = lpeg.Cmt(state * Cp() * C(P"<" * (1 - S"<>")^0) * -P(1), on(unfinished))
local stray = lpeg.Cmt(state * Cp() * C(P"<"), on(text_token))  -- a '<' that starts no tag is text
-- (the common tokens first: a comment, `<!...>` or `<?...?>` is none of them)
local body = (start_then_run + elem_run + start_and_text + start_tag + end_tag + comment + pi + cdata_section + decl
  + text_run + cut_tag + stray)^0 * -P(1)

-- from this many bytes of text on, a parse runs the collector in
-- generational mode (below it, the full collection a switch of mode costs
-- is more than the parse saves: it walks everything the program holds)
local GENERATIONAL_FROM = 1 << 20

--- Run fn(...) on `size` bytes of text; a problem raised in strict mode
-- becomes nil and "line L, column C: message" (other errors propagate).
-- On a big text the collector meanwhile runs in generational mode
-- (restored after): building a tree or statements makes little garbage,
-- and an incremental collector would walk what is being built again and
-- again.
function M.protect(size, fn, ...)
  local mode = size >= GENERATIONAL_FROM and collectgarbage("generational")
  local ok, a, b = pcall(fn, ...)
  if mode and mode ~= "generational" then collectgarbage(mode) end
  if ok then return a, b end
  if type(a) == "table" and a.ofx_problem then
    local p = a.ofx_problem
    if not p.line then return nil, p.message end
    return nil, ("line %d, column %d: %s"):format(p.line, p.column, p.message)
  end
  error(a, 0)
end

--- Parse OFX text (bytes as read from the file) into a tree.
-- @tparam string text
-- @tparam[opt] table opts `strict` (the first problem is an error)
-- @return the document node (`header`, `warnings`, children: `OFX`...),
--   or nil, "line L, column C: message", "corrupt" (strict)
function M.parse(text, opts)
  local strict = opts and opts.strict
  local head, start_at = header(text)
  local fields = head.fields
  -- the characters: a v1 file's CHARSET decides; otherwise UTF-8, and
  -- any byte that is not UTF-8 read as CP1252 (and counted)
  local charset = "utf8"
  if head.kind == "v1" then
    local cs = (fields.CHARSET or ""):upper()
    if cs == "1252" or cs == "WINDOWS-1252" or cs == "CP1252" then charset = "cp1252"
    elseif cs == "ISO-8859-1" or cs == "8859-1" or cs == "LATIN1" then charset = "latin1" end
  end
  -- (the header is ASCII, so the body starts at the same byte once decoded)
  local decoded, fixed = core.ofx_utf8(text, charset)
  local st = begin(decoded, strict)
  local root, problems = M.protect(#decoded, function()
    body:match(decoded, start_at, st)
    return finish_document(st)
  end)
  if not root then return nil, problems, "corrupt" end
  root.header = head
  root.charset = charset
  root.source = decoded  -- for line and column numbers
  root.warnings = problems
  if fixed > 0 then
    table.insert(root.warnings, 1, { message = ("%d bytes that are not UTF-8 were read as CP1252"):format(fixed) })
  end
  return root
end

-- }======================================================

return M
