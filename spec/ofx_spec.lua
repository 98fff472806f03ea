-- OFX: the C helpers, the grammar and tree, typed statements against what
-- the fixtures' source projects expect (../shared/fixtures/ofx/MANIFEST.md),
-- strict and lenient modes, writing back, the CLI.
local core = require "sift.core"
local ofx = require "sift.ofx"
local grammar = require "sift.ofx.grammar"
local writer = require "sift.ofx.writer"
local helper = require "spec.helper"

-- an exact decimal in its shortest form: "-1500.0000" -> "-1500"
local function dec(s)
  if not s then return s end
  s = s:find("%.") and s:gsub("0+$", ""):gsub("%.$", "") or s
  return s == "-0" and "0" or s
end

local function read(name, opts)
  local path = helper.fixture("ofx/" .. name)
  if not path then return nil end
  return assert(ofx.read(path, opts))
end

describe("OFX values (C helpers)", function()
  it("reads amounts exactly, with comma or period radix and unambiguous grouping", function()
    local cases = {
      { "-6.60", -660, 2, "-6.60" }, { "200,29", 20029, 2, "200.29" }, { "-1.006,60", -100660, 2, "-1006.60" },
      { "-1,006.60", -100660, 2, "-1006.60" }, { "+1 006,60", 100660, 2, "1006.60" }, { "-0", 0, 0, "0" },
      { "-42.4", -424, 1, "-42.4" }, { "115.8331", 1158331, 4, "115.8331" }, { " 12 ", 12, 0, "12" },
      { "1,006,000", 1006000, 0, "1006000" }, { "000000025.635000000", 25635000000, 9, "25.635000000" },
      { ".05", 5, 2, "0.05" }, { "-0.001", -1, 3, "-0.001" },
    }
    for _, c in ipairs(cases) do assert.are.same({ c[2], c[3], c[4] }, { core.ofx_amount(c[1]) }, c[1]) end
    for _, bad in ipairs { "$120", "", "null", "-", "1,00,0", "12-3", ("9"):rep(20) } do
      local units, why = core.ofx_amount(bad)
      assert.is_nil(units, bad)
      assert.is_string(why)
    end
  end)

  it("reads date-times with offsets, zone names and the odd forms banks send", function()
    local cases = {
      { "19961005132200.124[-5:EST]", "1996-10-05T18:22:00Z", -300, "EST", 124 },  -- the spec's example
      { "20090401", "2009-04-01" }, { "20090523122017", "2009-05-23T12:20:17Z" },
      { "200510291120", "2005-10-29T11:20:00Z" }, { "2009021100000000[-5:EST]", "2009-02-11T05:00:00Z", -300, "EST" },
      { "20180804093914:014", "2018-08-04T09:39:14Z" }, { "20001201120000 [0:GMT]", "2000-12-01T12:00:00Z", 0, "GMT" },
      { "20091217162416.000[-:EST]", "2009-12-17T21:24:16Z", -300, "EST" },
      { "20200101000000[+5.30:IST]", "2019-12-31T18:30:00Z", 330, "IST" },
      { "20200101000000[-5.5:XXX]", "2020-01-01T05:30:00Z", -330, "XXX" },
      { "20140112083600[9:GMT]", "2014-01-11T23:36:00Z", 540, "GMT" },  -- the number wins over the name
    }
    for _, c in ipairs(cases) do
      local iso, _, offset, zone, msec = core.ofx_date(c[1])
      assert.are.same({ c[2], c[3], c[4] }, { iso, offset, zone }, c[1])
      if c[5] then assert.are.equal(c[5], msec) end
    end
    for _, bad in ipairs { "", "00000000", "20120231", "201120000000", "2011", "20110101[", "20110101x" } do
      assert.is_nil((core.ofx_date(bad)), bad)
    end
  end)

  it("transcodes CP1252 and Latin-1, and keeps valid UTF-8 when no charset is declared", function()
    assert.are.same({ "à € ’", 0 }, { core.ofx_utf8("\224 \128 \146", "cp1252") })
    assert.are.same({ "à \194\128", 0 }, { core.ofx_utf8("\224 \128", "latin1") })
    assert.are.same({ "é à", 1 }, { core.ofx_utf8("\195\169 \224", "utf8") })
  end)
end)

describe("OFX grammar", function()
  it("reads v1 headers however they are spaced, v2 headers in any attribute order, or none", function()
    local h = grammar.header("OFXHEADER:100DATA:OFXSGMLVERSION:102SECURITY:NONE ENCODING: USASCII\r\r\nCHARSET: 1252<OFX>")
    assert.are.same({ "v1", "102", "USASCII", "1252" }, { h.kind, h.fields.VERSION, h.fields.ENCODING, h.fields.CHARSET })
    h = grammar.header('<?xml version="1.0"?><?OFX VERSION="211" OFXHEADER="200"?><OFX>')
    assert.are.same({ "v2", "211", "200" }, { h.kind, h.fields.VERSION, h.fields.OFXHEADER })
    assert.are.equal("none", grammar.header("junk\n<OFX></OFX>").kind)
    -- <?OFX?> without the <?xml?> line, after a BOM (banks send it so): still v2, its version read
    h = grammar.header('\239\187\191<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE"?>\r\n<OFX>')
    assert.are.same({ "v2", "220", "200" }, { h.kind, h.fields.VERSION, h.fields.OFXHEADER })
    local file = helper.tmpfile('<?OFX OFXHEADER="200" VERSION="211"?>\n<OFX><SIGNONMSGSRSV1><SONRS><STATUS>'
      .. "<CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS><DTSERVER>20240101</DTSERVER><LANGUAGE>ENG</LANGUAGE>"
      .. "</SONRS></SIGNONMSGSRSV1></OFX>\n")
    local out, err, code = helper.sift { "ofx", file }
    assert.are.same({ 0, "", file .. ": OFX 211 (XML), signon 0 INFO\n" }, { code, err, out })
  end)

  it("builds the tree by the OFX rules: leaves, swallowed and reversed end tags, implicit closes", function()
    local doc = grammar.parse("<OFX><A><B>1<C>two words </C><!-- c --><D></D><E><![CDATA[x<y]]></E></A>"
      .. "<S><CODE>0<SEVERITY>INFO<MESSAGE>ok</MESSAGE></SEVERITY></CODE></S>"
      .. "<L><X>1</L><T><MEMO></T><INTU.BID>7</OFX>")
    local a = doc:find("OFX/A")
    assert.are.same({ "1", "two words", "", "x<y" }, { a:text("B"), a:find("C").value, a:find("D").value, a:text("E") })
    assert.are.same({ "0", "INFO", "ok" }, { doc:text("OFX/S/CODE"), doc:text("OFX/S/SEVERITY"), doc:text("OFX/S/MESSAGE") })
    assert.are.equal("", doc:find("OFX/T/MEMO").value)
    assert.are.equal("7", doc:text("OFX/INTU.BID"))
    assert.are.equal(0, #doc.warnings)
    -- runs of elements ended by their parent's end tag, or by two, as XML and SGML write them
    for _, text in ipairs { "<OFX><A><B>1</B><C>2 3</C></A><D>4</D><E><F>5</F></E></OFX><G>6</G>",
                            "<OFX><A><B>1<C>2 3</A><D>4<E><F>5</E></OFX><G>6" } do
      doc = grammar.parse(text)
      local shape = {}
      for tag, x in doc:find("OFX"):items() do shape[#shape + 1] = tag .. "=" .. (type(x) == "string" and x or x:count()) end
      assert.are.same({ "A=2", "D=4", "E=1" }, shape, text)
      assert.are.same({ "1", "2 3", "5", "6" }, { doc:text("OFX/A/B"), doc:text("OFX/A/C"), doc:text("OFX/E/F"), doc:text("G") })
      assert.are.same({ 0, 2 }, { #doc.warnings, doc:count() })
    end
    -- an aggregate left open is closed by its parent's end tag, and said
    doc = grammar.parse("<OFX><LIST><ITEM><V>1</ITEM></OFX>")
    assert.are.same({ "<LIST> has no end tag (closed by </OFX>)" }, { doc.warnings[1].message })
    local ok, msg, code = grammar.parse("<OFX>\n<LIST>\n<ITEM><V>1</ITEM>\n</OFX>", { strict = true })
    assert.is_nil(ok)
    assert.are.same({ "corrupt", "line 4, column 1: <LIST> has no end tag (closed by </OFX>)" }, { code, msg })
    -- a file that ends inside an aggregate
    ok, msg, code = ofx.parse("<OFX>\n<A><B>1", { strict = true })
    assert.is_nil(ok)
    assert.are.same({ "corrupt", "line 2, column 8: <A> has no end tag (the file ends)" }, { code, msg })
  end)

  it("survives random tag soups and deep nesting without error or hang", function()
    math.randomseed(7)
    local tags = { "<OFX>", "</OFX>", "<A>", "</A>", "<B>", "x", "</B>", "<![CDATA[", "]]>", "<!--", "-->",
      "&amp;", "&", "<", ">", "<?", "?>", " ", "\n", "<STMTTRN>", "</STMTTRN>", "<TRNAMT>", "1.0", "</TRNAMT>",
      "<NAME>", "A B", "</NAME>", "<BANKTRANLIST>", "</BANKTRANLIST>", "<DTPOSTED>", "20240101" }
    -- every aggregate's children: an aggregate (a node whose tag is the one
    -- items gives, with a position) or an element's string value
    local function well_formed(node)
      for tag, x in node:items() do
        if type(tag) ~= "string" then return false end
        if type(x) ~= "string" and not (x.tag == tag and x.value == nil and math.type(x.pos) == "integer"
          and well_formed(x)) then
          return false
        end
      end
      return true
    end
    for _ = 1, 500 do
      local parts = {}
      for i = 1, math.random(0, 60) do parts[i] = tags[math.random(#tags)] end
      local text = table.concat(parts)
      local doc, _, code = grammar.parse(text)
      assert.is_truthy(doc or code, text)
      assert.is_true(not doc or well_formed(doc), text)
      assert.is_truthy(ofx.parse(text) or true)
    end
    local deep = ("<A>"):rep(100000) .. "<B>1" .. ("</A>"):rep(100000)
    local doc = grammar.parse(deep)
    local node, depth = doc, 0
    while node:child("A") do node, depth = node:child("A"), depth + 1 end
    assert.are.same({ 100000, "1" }, { depth, node:text("B") })
  end)

  it("leaves the collector as it found it: running, in its mode, after a parse and after a strict refusal", function()
    -- (a text of a megabyte or more is parsed in generational mode, a smaller one as it is)
    local big = "<OFX>" .. ("<C>1</C>"):rep(140000) .. "<A><B>1</OFX>"
    for _, text in ipairs { "<OFX><A><B>1</OFX>", big } do
      for _, mode in ipairs { "incremental", "generational" } do
        collectgarbage(mode)
        assert.truthy(ofx.parse(text))
        assert.are.same({ nil, ("line 1, column %d: <A> has no end tag (closed by </OFX>)"):format(#text - 5),
          "corrupt" }, { grammar.parse(text, { strict = true }) })
        assert.are.same({ true, mode }, { collectgarbage("isrunning"), collectgarbage(mode) })
      end
    end
    collectgarbage("incremental")
    collectgarbage("stop")  -- a program that stopped it keeps it stopped
    assert.truthy(ofx.parse(big))
    assert.is_false(collectgarbage("isrunning"))
    -- and a small statement costs no collection of all the program holds
    for i = 1, 100000 do local _ = { i } end
    local before = collectgarbage("count")
    assert.truthy(ofx.parse("<OFX><A>1</A></OFX>"))
    assert.is_true(collectgarbage("count") >= before, "the garbage was collected")
    collectgarbage("restart")
  end)
end)

describe("OFX statements against the fixtures' source projects", function()
  it("parses every fixture in lenient mode", function()
    local root = helper.fixtures()
    if not root then return end
    local p = io.popen(("find %s/ofx -type f \\( -name '*.ofx' -o -name '*.xml' -o -name '*.sgml' \\)"):format(helper.quote(root)))
    local n = 0
    for path in p:lines() do
      local doc, msg = ofx.read(path)
      assert.is_truthy(doc, msg)
      n = n + 1
    end
    p:close()
    assert.is_true(n >= 80)
  end)

  it("reads ofxparse's bank statement: header, account, balances, period, transactions", function()
    local doc = read("ofxparse/bank_medium.ofx")
    if not doc then return end
    assert.are.same({ "100", "OFXSGML", "102", "NONE", "USASCII", "1252", "NONE" }, { doc.header.OFXHEADER,
      doc.header.DATA, doc.header.VERSION, doc.header.SECURITY, doc.header.ENCODING, doc.header.CHARSET,
      doc.header.NEWFILEUID })
    local st = doc.statements[1]
    assert.are.same({ bank_id = "160000100", branch_id = "00", id = "12300 000012345678", type = "CHECKING" }, st.account)
    assert.are.same({ amount = "382.34", date = "2009-05-23T12:20:17Z" }, st.ledger_balance)
    assert.are.equal("682.34", st.available_balance.amount)
    assert.are.same({ "2009-04-01", "2009-05-23T12:20:17Z", "CAD" }, { st.start, st["end"], st.currency })
    assert.are.equal(3, #st.transactions)
    local t = st.transactions[1]
    assert.are.same({ "MCDONALD'S #112", "POS", "-6.60" }, { t.name, t.type, t.amount })
  end)

  it("reads checking statements as ledger-autosync and beancount-import expect", function()
    local doc = read("ofxparse/checking.ofx")
    if not doc then return end
    local st = doc.statements[1]
    local t1, t3 = st.transactions[1], st.transactions[3]
    assert.are.same({ "0.01", "2011-03-31T12:00:00Z", "0000486" }, { t1.amount, t1.posted:sub(1, 10) .. "T12:00:00Z", t1.fitid })
    assert.are.equal("DIVIDEND EARNED FOR PERIOD OF 03/01/2011 THROUGH 03/31/2011 ANNUAL PERCENTAGE YIELD EARNED IS 0.05%", t1.memo)
    assert.are.equal("DIVIDEND EARNED FOR PERIOD OF 03", t1.name)
    assert.are.same({ "-25.00", "319" }, { t3.amount, t3.checknum })
    assert.are.same({ "100.99", "2013-05-25" }, { st.ledger_balance.amount, st.ledger_balance.date:sub(1, 10) })
    assert.are.same({ "5472369148", "1452687~7" }, { st.account.bank_id, st.account.id })
    doc = read("beancount-import/checking-emptyledgerbal.ofx")
    assert.are.equal(3, #doc.statements[1].transactions)
    assert.is_nil(doc.statements[1].ledger_balance)
    doc = read("ledger-autosync/comments.ofx")
    assert.are.same({ 2, "0" }, { #doc.statements[1].transactions, doc.statements[1].transactions[2].amount })
  end)

  it("reads credit-card statements, with and without headers, reversed end tags included", function()
    local cases = {
      { "beancount-import/amex.ofx", 3, "-2356.38", "2014-01-12", "USD" },
      { "beancount-import/anzcc.ofx", 1, "-123.45", "2017-05-10", "AUD", "1234123412341234" },
      { "beangulp/tests_ofx_ofxdownload.ofx", 12, "-2356.38", "2013-12-18", "USD" },
      { "beangulp/beangulp_file_type_testdata_example.ofx", 17, "-3609.07" },
      { "beangulp/documents_Liabilities_US_CreditCard_2013-12-03.bofa.ofx", 27, "-2093.01" },
      { "ofxtools/br_nubank_cc.ofx", 6, "-1280.91" },
    }
    for _, c in ipairs(cases) do
      local doc = read(c[1])
      if not doc then return end
      local st = doc.statements[1]
      assert.are.same({ "creditcard", c[2], c[3] }, { st.kind, #st.transactions, st.ledger_balance.amount }, c[1])
      if c[4] then assert.are.equal(c[4], st.ledger_balance.date:sub(1, 10), c[1]) end
      if c[5] then assert.are.equal(c[5], st.currency, c[1]) end
      if c[6] then assert.are.equal(c[6], st.account.id, c[1]) end
    end
    local t = read("beangulp/tests_ofx_ofxdownload.ofx").statements[1].transactions[1]
    assert.are.same({ "-9.99", "SPOTIFY USA         28770130901", "2600720879  WWW.SPOTIFY.COM" }, { t.amount, t.name, t.memo })
  end)

  it("keeps the charset's characters, CDATA values, comma radix and several statements per file", function()
    local doc = read("ledger-autosync/accented_characters_latin1.ofx")
    if not doc then return end
    assert.are.equal("Virement Interac à: Jean", doc.statements[1].transactions[1].payee)
    local t = read("ofxparse/suncorp.ofx").statements[1].transactions[1]
    assert.are.same({ "EFTPOS WDL HANDYWAY ALDI STORE", "EFTPOS WDL HANDYWAY ALDI STORE   GEELONG WEST VICAU", "-16.85" },
      { t.name, t.memo, t.amount })
    local euro = read("ofxtools/stmtrs_euro.ofx").statements[1]
    assert.are.same({ "-200.00", "-300.00", "200.29" }, { euro.transactions[1].amount, euro.transactions[2].amount,
      euro.ledger_balance.amount })
    local multi = read("ofxparse/multiple_accounts.ofx").statements
    assert.are.same({ "9100", "CHECKING", "111", "9200", "SAVINGS", "222", "123" }, { multi[1].account.id,
      multi[1].account.type, multi[1].ledger_balance.amount, multi[2].account.id, multi[2].account.type,
      multi[2].ledger_balance.amount, multi[2].account.bank_id })
    local spec = read("libofx/ofx-2.1.1-sect-16.5.3.2.ofx").statements
    assert.are.same({ "bank", "2156.56", 1, "creditcard", "-562.00", 2 }, { spec[1].kind, spec[1].ledger_balance.amount,
      #spec[1].transactions, spec[2].kind, spec[2].ledger_balance.amount, #spec[2].transactions })
    local two = read("libofx/ofx-2.1.1-sect-16.5.4.2.ofx").statements
    assert.are.same({ "2156.56", "3452.00" }, { two[1].ledger_balance.amount, two[2].ledger_balance.amount })
  end)

  it("reads sign-on and statement STATUS codes with their meanings", function()
    local doc = read("ofxparse/signon_fail.ofx")
    if not doc then return end
    assert.are.same({ 15500, "ERROR", "Signon invalid (user ID or password wrong)" },
      { doc.signon.code, doc.signon.severity, doc.signon.meaning })
    assert.matches("^Your request could not be processed because you supplied an invalid identification code", doc.signon.message)
    doc = read("ofxparse/signon_success.ofx")
    assert.are.same({ 0, "INFO", "Login successful" }, { doc.signon.code, doc.signon.severity, doc.signon.message })
    assert.is_nil(read("ofxparse/signon_success_no_message.ofx").signon.message)
    doc = read("ofxparse/error_message.ofx")
    assert.are.same({ 0, 2000, "ERROR", "General Server Error", 0 }, { doc.signon.code, doc.status[1].code,
      doc.status[1].severity, doc.status[1].message, #doc.statements })
  end)

  it("leaves out what it cannot read, says why, and never invents a value (ofxparse's fail_nice)", function()
    local doc = read("ofxparse/fail_nice/date_missing.ofx")
    if not doc then return end
    assert.are.same({ 0, 3 }, { #doc.statements[1].transactions, doc.discarded })
    local text = {}
    for _, w in ipairs(doc.warnings) do text[#text + 1] = w.message end
    text = table.concat(text, "\n")
    assert.matches("has no DTPOSTED", text)
    assert.matches('DTPOSTED "20120231" is not a date', text)
    doc = read("ofxparse/fail_nice/decimal_error.ofx")
    assert.are.same({ 0, 1 }, { #doc.statements[1].transactions, doc.discarded })
    doc = read("ofxparse/fail_nice/empty_balance.ofx")
    assert.are.same({ 1, 0 }, { #doc.statements[1].transactions, doc.discarded })
    assert.is_nil(doc.statements[1].ledger_balance)
    assert.is_nil(doc.statements[1].available_balance)
    doc = read("ofxparse/ofx-v102-empty-tags.ofx")
    local st = doc.statements[1]
    assert.are.same({ "12345678", "NPBS" }, { st.account.id, st.account.bank_id })
    assert.is_nil(st.currency)
    assert.is_nil(st.account.type)
    for _, name in ipairs { "date_missing", "decimal_error", "empty_balance" } do
      local ok, msg, code = ofx.read(helper.fixture("ofx/ofxparse/fail_nice/" .. name .. ".ofx"), { strict = true })
      assert.is_nil(ok, name)
      assert.are.equal("corrupt", code)
      assert.matches("line %d+, column %d+: ", msg)
    end
    assert.is_nil(ofx.read(helper.fixture("ofx/ofxparse/ofx-v102-empty-tags.ofx"), { strict = true }))
    -- a statement aggregate that the file made text of (found by fuzz/fuzz_ofx_grammar.c)
    local garbled = "<OFX>\n<CREDITCARDMSGSRSV1>\n<CCSTMTTRNRS>\n<CCSTMTRS>\n<CCACCTINFOA<>\nCCTID>\n"
      .. "</CCSTMTRS>\n</CCSTMTTRNRS>\n</CREDITCARDMSGSRSV1>\n</OFX>\n"
    doc = assert(ofx.parse(garbled))
    assert.are.same({ 0, "<CCSTMTRS> holds text, not a statement: left out", 3 },
      { #doc.statements, doc.warnings[1].message, doc.warnings[1].line })
    assert.are.same({ nil, "line 3, column 1: <CCSTMTRS> holds text, not a statement: left out", "corrupt" },
      { ofx.parse(garbled, { strict = true }) })
    -- a trade whose text field is an aggregate (found by the same fuzzer)
    doc = assert(ofx.parse("<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS><CURDEF>USD<INVTRANLIST><BUYSTOCK>"
      .. "<INVBUY><INVTRAN><FITID>1<DTTRADE>20050824</INVTRAN><UNITS>5</INVBUY><BUYTYPE><X>1</X></BUYTYPE>"
      .. "</BUYSTOCK></INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>"))
    local trade = doc.statements[1].investment_transactions[1]
    assert.are.same({ "1", "5" }, { trade.fitid, trade.units })
    assert.is_nil(trade.buy_type)
  end)

  it("reads investment statements: trades, positions, balances, securities", function()
    local doc = read("ofxparse/fidelity.ofx")
    if not doc then return end
    local st = doc.statements[1]
    assert.are.same({ 6, 7, 18, "Networth", "32993.79", "18073.98" }, { #st.positions, #doc.securities,
      #st.balances.list, st.balances.list[1].name, st.balances.list[1].value, st.balances.available_cash })
    assert.are.same({ "128", "5231.36" }, { dec(st.positions[1].units), dec(st.positions[1].market_value) })
    local buy = st.investment_transactions[1]
    assert.are.same({ "buystock", "YOU BOUGHT", "100", "25.635", "7.95", "-2571.45", "458140100" }, { buy.kind,
      buy.memo, dec(buy.units), dec(buy.unit_price), dec(buy.commission), dec(buy.total), buy.security.id })
    st = read("ofxparse/investment_401k.ofx").statements[1]
    local t = st.investment_transactions
    assert.are.same({ "buymf", "8.846699", "22.2908", "-197.2", "FOO" }, { t[1].kind, t[1].units, t[1].unit_price,
      t[1].total, t[1].security.id })
    assert.are.same({ "transfer", "OUT", "-9.060702", "21.928764", "BAZ" }, { t[3].kind, t[3].transfer_action,
      t[3].units, t[3].unit_price, t[3].security.id })
    assert.are.same({ "17.604312", "396.4", "13.550983", "395.89", "0" }, { st.positions[1].units,
      st.positions[1].market_value, st.positions[2].units, st.positions[2].market_value, dec(st.positions[3].units) })
    st = read("ofxparse/fidelity-savings.ofx").statements[1]
    assert.are.same({ 4, "CHECK", "2012-07-20T04:00:00Z", "-1500", "115.8331" }, { #st.transactions,
      st.transactions[1].type, st.transactions[1].posted, dec(st.transactions[1].amount), st.transactions[2].amount })
    assert.are.equal("TRANSFERRED FROM     VS X10-08144", st.transactions[2].name)
    doc = read("ofxparse/tiaacref.ofx")
    st = doc.statements[1]
    assert.are.same({ "111A1111 22B222 33C333", "TIAA#20170307160000.000[-4:EDT]160000.000[-4:EDT]", "transfer", 6 },
      { st.account.id, st.investment_transactions[1].fitid, st.investment_transactions[1].kind, #st.positions })
    doc = read("ofxparse/vanguard.ofx")
    assert.are.same({ "01234567890.0123.07152011.0", "2011-07-15T21:00:00Z", "102", 2 },
      { doc.statements[1].investment_transactions[1].fitid, doc.statements[1].investment_transactions[1].trade_date,
        dec(doc.statements[1].positions[1].units), #doc.securities })
    st = read("ofxparse/vanguard401k.ofx").statements[1]
    local last = st.investment_transactions[#st.investment_transactions]
    assert.are.same({ 5, "1234567890123456795AAA", "transfer", "MATCH" }, { #st.investment_transactions, last.fitid,
      last.kind, last.inv401k_source })
    doc = read("ofxparse/td_ameritrade.ofx")
    assert.are.same({ "023135106", "1", "1000", "912810RW0", "1000", "100", "AMZN", "Amazon.com, Inc. - Common Stock",
      "US Treasury 2047" }, { doc.statements[1].positions[1].security.id, doc.statements[1].positions[1].units,
      doc.statements[1].positions[1].market_value, doc.statements[1].positions[2].security.id,
      doc.statements[1].positions[2].units, doc.statements[1].positions[2].unit_price, doc.securities[1].ticker,
      doc.securities[1].name, doc.securities[2].name })
    st = read("libofx/ofx-2.1.1-sect-13.12.ofx").statements[1]
    assert.are.same({ 1, 1 }, { #st.transactions, #st.investment_transactions })
  end)

  it("reads account lists", function()
    local doc = read("ofxparse/account_listing_aggregation.ofx")
    if not doc then return end
    local a = doc.accounts
    assert.are.same({ 4, "bank", "SAVINGS", "USAA SAVINGS", "0000000001", "314074269" },
      { #a, a[1].kind, a[1].type, a[1].description, a[1].id, a[1].bank_id })
    assert.are.same({ "CHECKING", "FOUR STAR CHECKING", "0000000002" }, { a[2].type, a[2].description, a[2].id })
    assert.are.same({ "CREDITLINE", "00000000000003" }, { a[3].type, a[3].id })
    assert.are.same({ "creditcard", "MY CREDIT CARD", "4111111111111111" }, { a[4].kind, a[4].description, a[4].id })
    assert.are.equal("USAA", doc.signon.org)
  end)

  it("gives libofx's crash files a clean result or a clean error", function()
    for _, name in ipairs { "downcast.ofx", "failing-ofx-file1.xml", "failing-ofx-file2.xml", "heap-buffer-overflow-1.ofx",
        "heap-buffer-overflow-2.ofx", "null-ptr-deref-1.ofx", "null-ptr-deref-2.ofx", "use-after-free.ofx" } do
      local path = helper.fixture("ofx/libofx/" .. name)
      if not path then return end
      local doc = assert(ofx.read(path))
      assert.is_true(#doc.warnings > 0, name)
      for _, st in ipairs(doc.statements) do assert.are.equal(0, #st.transactions, name) end
      local ok, msg, code = ofx.read(path, { strict = true })
      assert.is_nil(ok, name)
      assert.are.equal("corrupt", code)
      assert.is_string(msg)
    end
  end)
end)

describe("OFX lazy transactions (what sift ofx reads)", function()
  local json = require "sift.json"

  it("read, iterate, range and write JSON exactly as the tables of every fixture", function()
    local root = helper.fixtures()
    if not root then return end
    local p = io.popen(("find %s/ofx -type f \\( -name '*.ofx' -o -name '*.qfx' -o -name '*.xml' \\)"):format(helper.quote(root)))
    local files, lists = 0, 0
    for path in p:lines() do
      local plain, lazy = ofx.read(path), ofx.read(path, { lazy = true })
      if plain then
        files = files + 1
        assert.are.equal(json.encode(ofx.view(plain), { arrays = ofx.view_arrays }),
          json.encode(ofx.view(lazy), { arrays = ofx.view_arrays }), path)
        for i, st in ipairs(lazy.statements) do
          local want, got = plain.statements[i].transactions, st.transactions
          if #want > 0 then
            lists = lists + 1
            assert.are.equal("userdata", type(got))
          end
          assert.are.equal(#want, #got, path)
          for k, t in pairs(got) do assert.are.same(want[k], t, path) end
          assert.are.same({ ofx.range(want, "posted") }, { ofx.range(got, "posted") }, path)
          assert.are.same({ ofx.range(want, "fitid") }, { ofx.range(got, "fitid") }, path)
        end
      end
    end
    p:close()
    assert.is_true(files >= 80 and lists >= 40, ("%d files, %d lists"):format(files, lists))
  end)

  it("keep what is assigned and appended, and refuse what a list cannot hold", function()
    local doc = read("ofxparse/bank_medium.ofx", { lazy = true })
    if not doc then return end
    local txns = doc.statements[1].transactions
    local n, first = #txns, txns[1]
    assert.are.equal(first, txns[1])  -- made once
    first.category = "Books"
    txns[2] = { fitid = "MINE", posted = "2009-04-02", amount = "1.00" }
    table.insert(txns, { fitid = "LAST", posted = "2010-01-01", amount = "-2.50" })
    assert.are.same({ n + 1, "Books", "MINE", "LAST" }, { #txns, txns[1].category, txns[2].fitid, txns[n + 1].fitid })
    assert.are.same({ "2009-04-01T17:20:17Z", "2010-01-01" }, { ofx.range(txns, "posted") })
    local text = json.encode(txns)
    assert.truthy(text:find('"category":"Books"', 1, true) and text:find('"fitid":"MINE"', 1, true)
      and text:find('"fitid":"LAST"', 1, true), text)
    assert.are.same({ nil, nil, nil }, { txns[0], txns[n + 2], txns.fitid })
    assert.has_error(function() txns[n + 3] = {} end)
    assert.has_error(function() txns[1] = "a string" end)
  end)

  it("read a list or a transaction that is an element, not an aggregate, as holding nothing", function()
    for _, lazy in ipairs { false, true } do
      local doc = assert(ofx.parse("<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST>oops"
        .. "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>", { lazy = lazy }))
      assert.are.equal(0, #doc.statements[1].transactions)
      doc = assert(ofx.parse("<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS><CURDEF>USD<INVTRANLIST>"
        .. "<INVBANKTRAN><STMTTRN>text<SUBACCTFUND>CASH</INVBANKTRAN></INVTRANLIST></INVSTMTRS>"
        .. "</INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>", { lazy = lazy }))
      assert.are.same({ 0, 1 }, { #doc.statements[1].transactions, doc.discarded })
    end
  end)
end)

describe("OFX writing", function()
  -- the statements without what depends on the file's form
  local function statements(doc) return doc.statements end

  it("round-trips every bank, card and investment fixture through v1 and v2", function()
    for _, name in ipairs { "ofxparse/bank_medium.ofx", "beancount-import/amex.ofx", "ofxparse/fidelity.ofx",
        "ofxtools/stmtrs_euro.ofx", "ledger-autosync/accented_characters_latin1.ofx", "ofxparse/suncorp.ofx",
        "libofx/ofx-2.1.1-sect-16.5.3.2.ofx", "ofxparse/investment_401k.ofx", "ofxparse/tiaacref.ofx" } do
      local doc = read(name)
      if not doc then return end
      for _, version in ipairs { 1, 2, "102" } do
        local back = assert(ofx.parse(writer.write(doc.tree, { version = version, close_leaves = version == "102" })))
        assert.are.same(statements(doc), statements(back), name .. " v" .. version)
        assert.are.same(doc.securities, back.securities, name)
      end
    end
  end)

  it("writes typed bank, card and investment statements that read back the same", function()
    for _, name in ipairs { "ofxparse/bank_medium.ofx", "beancount-import/amex.ofx", "ofxparse/multiple_accounts.ofx",
        "libofx/ofx-2.1.1-sect-16.5.3.2.ofx" } do
      local doc = read(name)
      if not doc then return end
      local text = writer.write(writer.tree(doc), { version = 2 })
      assert.matches('^<%?xml version="1.0" encoding="UTF%-8" standalone="no"%?>\r\n<%?OFX OFXHEADER="200" VERSION="211"', text)
      local back = assert(ofx.parse(text, { strict = true }))
      assert.are.same(statements(doc), statements(back), name)
    end
    -- trades of every kind the fixtures hold, cash, positions, balances and securities, as v1 and v2
    local kinds, counts = {}, { trades = 0, positions = 0, securities = 0, balances = 0 }
    for _, name in ipairs { "ofxparse/fidelity.ofx", "ofxparse/vanguard.ofx", "ofxparse/td_ameritrade.ofx",
        "ofxparse/tiaacref.ofx", "beancount-import/fidelity_treasury.ofx",
        "beancount-import/investment_buy_sell_income.ofx", "libofx/ofx-2.1.1-sect-13.12.ofx" } do
      local doc = read(name)
      for _, version in ipairs { 1, 2 } do
        local back = assert(ofx.parse(writer.write(writer.tree(doc), { version = version }), { strict = true }))
        assert.are.same({ doc.statements, doc.securities }, { back.statements, back.securities }, name .. " v" .. version)
      end
      local st = doc.statements[1]
      for _, t in ipairs(st.investment_transactions or {}) do kinds[t.kind] = true end
      counts.trades = counts.trades + #(st.investment_transactions or {})
      counts.positions = counts.positions + #(st.positions or {})
      counts.securities = counts.securities + #(doc.securities or {})
      counts.balances = counts.balances + (st.balances and #st.balances.list or 0)
    end
    assert.are.same({ trades = 38, positions = 34, securities = 37, balances = 50 }, counts)
    for _, kind in ipairs { "buydebt", "buymf", "buystock", "income", "sellmf", "sellother", "sellstock", "transfer" } do
      assert.is_true(kinds[kind], kind)
    end
  end)
end)

describe("sift ofx", function()
  it("prints a summary per statement, JSON by the contract, CSV, and fails in strict mode", function()
    local path = helper.fixture("ofx/ofxparse/bank_medium.ofx")
    if not path then return end
    local out, _, status = helper.sift { "ofx", path }
    assert.are.equal(0, status)
    assert.matches("bank CHECKING 160000100/00/12300 000012345678 %(CAD%)", out)
    assert.matches("ledger balance +382.34 at 2009%-05%-23T12:20:17Z", out)
    out = helper.sift { "ofx", path, "--json" }
    local v = require("cjson").decode(out)
    assert.are.same({ "102", "bank", "382.34", "-6.60", "POS", 0, "INFO" }, { v.version, v.statements[1].kind,
      v.statements[1].ledger_balance.amount, v.statements[1].transactions[1].amount,
      v.statements[1].transactions[1].type, v.signon.code, v.signon.severity })
    out = helper.sift { "ofx", path, "--csv" }
    assert.matches("^file,statement,account,currency,fitid,type,posted,amount,name,memo,payee,checknum,refnum\n", out)
    assert.matches(",0000123456782009040200004,CHECK,2009%-04%-02T17:20:17Z,%-316.67,Joe's Bald Hairstyles,", out)
    local err
    _, err, status = helper.sift { "ofx", "--strict", helper.fixture("ofx/ofxtools/br_nubank_cc.ofx") }
    assert.are.equal(1, status)
    assert.matches("line %d+, column %d+: <BANKTRANLIST> has no end tag %(closed before <LEDGERBAL>%)", err)
  end)
end)
