-- Convert an OFX or QFX statement between v1 (SGML) and v2 (XML) through
-- its typed statements: bank, credit-card and investment statements and
-- the securities list are read, written back, and read again to check
-- that nothing changed.
--
--   sift run examples/ofx_convert.lua statement.qfx statement.xml [1|2]
local ofx = require "sift.ofx"
local writer = require "sift.ofx.writer"

local input, output, version = arg[1], arg[2], tonumber(arg[3] or "2")
assert(input and output, "usage: sift run examples/ofx_convert.lua IN.ofx OUT.ofx [1|2]")

local doc = assert(ofx.read(input))
local text = writer.write(writer.tree(doc), { version = version })
local f = assert(io.open(output, "wb"))
f:write(text)
f:close()

-- read it back, strictly, and compare what was read
local back = assert(ofx.read(output, { strict = true }))
local trades, positions = 0, 0
for i, st in ipairs(doc.statements) do
  local again = back.statements[i]
  assert(again and #again.transactions == #st.transactions, "the transactions changed")
  trades = trades + #(st.investment_transactions or {})
  positions = positions + #(st.positions or {})
  assert(#(again.investment_transactions or {}) == #(st.investment_transactions or {}), "the trades changed")
end
print(("%s -> %s (OFX %s): %d statement(s), %d trade(s), %d position(s), %d securities; read back the same")
  :format(input, output, back.version, #doc.statements, trades, positions, #(doc.securities or {})))
