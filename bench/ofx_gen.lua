-- A deterministic bank statement of N transactions, OFX v1 (SGML, leaves
-- unclosed) or v2 (XML), for bench/ofx.lua:
--   lua5.4 bench/ofx_gen.lua N 1|2 > statement.ofx
local n, version = tonumber(arg[1]) or 1000, tonumber(arg[2]) or 1
local xml = version == 2
local out = {}
local function w(s) out[#out + 1] = s end
local function leaf(tag, v) w(("<%s>%s%s\n"):format(tag, v, xml and ("</" .. tag .. ">") or "")) end
if xml then
  w('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n')
  w('<?OFX OFXHEADER="200" VERSION="211" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n')
else
  w("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\n"
    .. "COMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n")
end
w("<OFX>\n<SIGNONMSGSRSV1>\n<SONRS>\n<STATUS>\n") leaf("CODE", 0) leaf("SEVERITY", "INFO") w("</STATUS>\n")
leaf("DTSERVER", "20240101120000.000[-5:EST]") leaf("LANGUAGE", "ENG")
w("</SONRS>\n</SIGNONMSGSRSV1>\n<BANKMSGSRSV1>\n<STMTTRNRS>\n") leaf("TRNUID", 1)
w("<STATUS>\n") leaf("CODE", 0) leaf("SEVERITY", "INFO") w("</STATUS>\n<STMTRS>\n") leaf("CURDEF", "USD")
w("<BANKACCTFROM>\n") leaf("BANKID", "121099999") leaf("ACCTID", "999988") leaf("ACCTTYPE", "CHECKING")
w("</BANKACCTFROM>\n<BANKTRANLIST>\n") leaf("DTSTART", "20230101") leaf("DTEND", "20231231")
local payees = { "GROCER & SONS", "COFFEE SHOP #12", "PAYROLL ACME", "RENT", "UTILITY CO", "BOOK STORE" }
local seed, balance = 12345, 0
for i = 1, n do
  seed = (seed * 1103515245 + 12345) % 2147483648
  local cents = (seed % 200000) - 150000
  balance = balance + cents
  local day = 1 + i % 28
  local month = 1 + (i // 28) % 12
  w("<STMTTRN>\n")
  leaf("TRNTYPE", cents < 0 and "DEBIT" or "CREDIT")
  leaf("DTPOSTED", ("2023%02d%02d120000.000[-5:EST]"):format(month, day))
  leaf("TRNAMT", ("%s%d.%02d"):format(cents < 0 and "-" or "", math.abs(cents) // 100, math.abs(cents) % 100))
  leaf("FITID", ("T%08d"):format(i))
  leaf("NAME", payees[1 + seed % #payees]:gsub("&", "&amp;"))
  leaf("MEMO", "REF " .. (seed % 1000000))
  w("</STMTTRN>\n")
end
w("</BANKTRANLIST>\n<LEDGERBAL>\n")
leaf("BALAMT", ("%s%d.%02d"):format(balance < 0 and "-" or "", math.abs(balance) // 100, math.abs(balance) % 100))
leaf("DTASOF", "20231231") w("</LEDGERBAL>\n</STMTRS>\n</STMTTRNRS>\n</BANKMSGSRSV1>\n</OFX>\n")
io.write(table.concat(out))
