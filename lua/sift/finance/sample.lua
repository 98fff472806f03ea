--- A deterministic generator of labelled bank data, for the demo, the
-- benchmark and the categoriser's evaluation: a current account and a
-- credit card over some months, with payee strings as banks write them
-- (prefixes, store numbers, places, references, truncation, the odd
-- typo), 24 categories, salary, rent, and card repayments that are
-- transfers between the two accounts.
--
--     local sample = require "sift.finance.sample"
--     local doc, labels = sample.statements { transactions = 5000, seed = 7 }
--     -- doc is shaped as sift.ofx.parse returns; labels[fitid] = category
-- @module sift.finance.sample

local M = {}

-- category, sign, low and high amount, merchants
M.CATEGORIES = {
  { "Groceries", -1, 3, 140, { "TESCO STORES", "SAINSBURYS S/MKT", "LIDL GB", "ALDI STORES", "WAITROSE", "MORRISONS" } },
  { "Eating Out", -1, 8, 90, { "PRET A MANGER", "NANDOS", "PIZZA EXPRESS", "WAGAMAMA", "MCDONALDS", "FIVE GUYS" } },
  { "Coffee", -1, 2, 9, { "STARBUCKS", "COSTA COFFEE", "CAFFE NERO", "BLACK SHEEP COFFEE" } },
  { "Transport", -1, 2, 60, { "TFL TRAVEL CH", "UBER *TRIP", "TRAINLINE", "NATIONAL EXPRESS" } },
  { "Fuel", -1, 30, 95, { "SHELL", "BP CONNECT", "ESSO", "TEXACO" } },
  { "Rent", -1, 1200, 1200, { "HOMELET PROPERTIES RENT" } },
  { "Utilities", -1, 30, 160, { "BRITISH GAS", "EDF ENERGY", "THAMES WATER", "OCTOPUS ENERGY" } },
  { "Phone and Internet", -1, 15, 70, { "VODAFONE", "BT GROUP", "VIRGIN MEDIA", "EE LIMITED" } },
  { "Subscriptions", -1, 5, 18, { "NETFLIX.COM", "SPOTIFY", "DISNEY PLUS", "APPLE.COM/BILL" } },
  { "Shopping", -1, 5, 250, { "AMAZON.CO.UK", "AMZN MKTP UK", "ARGOS", "JOHN LEWIS", "EBAY O" } },
  { "Clothing", -1, 10, 180, { "H&M", "ZARA", "PRIMARK", "UNIQLO", "NEXT RETAIL" } },
  { "Health", -1, 3, 120, { "BOOTS", "SUPERDRUG", "LLOYDS PHARMACY", "SMILE DENTAL CARE" } },
  { "Fitness", -1, 20, 45, { "PUREGYM", "THE GYM GROUP", "DECATHLON" } },
  { "Entertainment", -1, 8, 80, { "ODEON CINEMAS", "VUE CINEMA", "TICKETMASTER", "STEAMGAMES.COM" } },
  { "Travel", -1, 40, 600, { "EASYJET", "RYANAIR", "BRITISH AIRWAYS", "BOOKING.COM", "AIRBNB" } },
  { "Insurance", -1, 15, 90, { "AVIVA", "ADMIRAL INSURANCE", "DIRECT LINE" } },
  { "Salary", 1, 8800, 9400, { "ACME LTD SALARY", "ACME PAYROLL" } },
  { "Interest", 1, 0.1, 9, { "GROSS INTEREST", "INTEREST PAID" } },
  { "Cash", -1, 10, 200, { "CASH WITHDRAWAL", "ATM LINK CASH" } },
  { "Charity", -1, 5, 50, { "OXFAM", "BRITISH RED CROSS", "CANCER RESEARCH UK" } },
  { "Home", -1, 5, 400, { "IKEA", "B&Q", "WICKES", "DUNELM" } },
  { "Pets", -1, 5, 70, { "PETS AT HOME", "ZOOPLUS", "VETS4PETS" } },
  { "Education", -1, 10, 200, { "UDEMY", "COURSERA", "WATERSTONES" } },
  { "Council Tax", -1, 140, 160, { "LB HACKNEY COUNCIL TAX" } },
}

local PREFIXES = { "", "", "CARD PAYMENT TO ", "POS ", "VIS ", "CONTACTLESS ", "DD ", "SO " }
local PLACES = { "LONDON", "MANCHESTER", "LEEDS GB", "BRISTOL", "ONLINE", "GB", "" }
local MONTHS = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" }

-- a small LCG: the same numbers on every machine
local function rng(seed)
  local state = seed or 1
  return function(lo, hi)
    state = (state * 1103515245 + 12345) % 2147483648
    local x = state // 65536
    if lo then return lo + x % (hi - lo + 1) end
    return x / 32768
  end
end

local function days_in(y, m)
  local days = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
  if m == 2 and (y % 4 == 0 and y % 100 ~= 0 or y % 400 == 0) then return 29 end
  return days[m]
end

-- a date n days after 2024-01-01
local function date_after(n)
  local y, m, d = 2024, 1, 1 + n
  while d > days_in(y, m) do
    d = d - days_in(y, m)
    m = m + 1
    if m > 12 then m, y = 1, y + 1 end
  end
  return ("%04d-%02d-%02d"):format(y, m, d), m, d
end

-- how a bank writes a merchant's name
local function noisy(merchant, random, month, day)
  local s = PREFIXES[random(1, #PREFIXES)] .. merchant
  local r = random()
  if r < 0.5 then s = s .. " " .. random(100, 9999) end
  if random() < 0.6 then s = s .. " " .. PLACES[random(1, #PLACES)] end
  if random() < 0.2 then s = s .. (" ON %02d %s"):format(day, MONTHS[month]) end
  if random() < 0.05 then  -- a typo: one letter dropped
    local i = random(2, #s - 1)
    s = s:sub(1, i - 1) .. s:sub(i + 1)
  end
  if #s > 32 then s = s:sub(1, 32) end
  s = s:gsub("%s+$", "")
  return s
end

local function amount(random, lo, hi, sign)
  local cents = math.floor(lo * 100) + random(0, math.floor((hi - lo) * 100))
  local text = ("%d.%02d"):format(cents // 100, cents % 100)
  return sign < 0 and "-" .. text or text
end

--- Generate labelled statements.
-- @tparam table opts `transactions` (about how many, default 5000),
--   `seed`
-- @return a document shaped as `sift.ofx.parse` returns (a checking
--   account and a credit card), and labels: `labels[fitid] = category`
function M.statements(opts)
  opts = opts or {}
  local n = opts.transactions or 5000
  local random = rng(opts.seed or 7)
  local checking = { kind = "bank", currency = "GBP", transactions = {},
    account = { bank_id = "400000", id = "11223344", type = "CHECKING" } }
  local card = { kind = "creditcard", currency = "GBP", transactions = {}, account = { id = "4111000011112222" } }
  local labels, serial = {}, 0
  local per_day = 5
  local days = n * 5 // 18 + 1  -- (about 3.6 transactions a day)
  local function add(st, date, amt, name, category, memo)
    serial = serial + 1
    local fitid = ("S%08d"):format(serial)
    st.transactions[#st.transactions + 1] = { fitid = fitid, posted = date, amount = amt, name = name,
      payee = name, memo = memo, type = amt:sub(1, 1) == "-" and "DEBIT" or "CREDIT" }
    labels[fitid] = category
  end
  local card_spent = 0
  for day = 0, days - 1 do
    local date, month, dom = date_after(day)
    if dom == 1 then
      add(checking, date, "-1200.00", noisy("HOMELET PROPERTIES RENT", random, month, dom), "Rent", "SO RENT")
      add(checking, date, "-152.00", noisy("LB HACKNEY COUNCIL TAX", random, month, dom), "Council Tax")
    elseif dom == 25 then
      local c = M.CATEGORIES[17]
      add(checking, date, amount(random, c[3], c[4], 1), noisy(c[5][random(1, 2)], random, month, dom), "Salary",
        "BGC")
    elseif dom == 28 and card_spent > 0 then  -- the card is paid off: a transfer
      local paid = ("%d.%02d"):format(card_spent // 100, card_spent % 100)
      add(checking, date, "-" .. paid, "PAYMENT TO CREDIT CARD 2222", "Transfer")
      add(card, date_after(day + random(1, 3)), paid, "PAYMENT RECEIVED - THANK YOU", "Transfer")
      card_spent = 0
    end
    for _ = 1, per_day - 1 do
      local c = M.CATEGORIES[random(1, #M.CATEGORIES)]
      if c[1] ~= "Rent" and c[1] ~= "Council Tax" and c[1] ~= "Salary" then
        local merchant = c[5][random(1, #c[5])]
        local amt = amount(random, c[3], c[4], c[2])
        local on_card = c[2] < 0 and c[1] ~= "Cash" and random() < 0.4
        local memo = random() < 0.3 and ("CARD %04d"):format(random(1000, 9999)) or nil
        add(on_card and card or checking, date, amt, noisy(merchant, random, month, dom), c[1], memo)
        if on_card then
          local units = tonumber((amt:gsub("[-.]", "")))
          card_spent = card_spent + units
        end
      end
    end
  end
  -- the balances at the end: the checking account opened with 2500.00
  for st, opening in pairs { [checking] = 250000, [card] = 0 } do
    local sum = opening
    for _, t in ipairs(st.transactions) do sum = sum + tonumber((t.amount:gsub("%.", ""))) end
    st.start = st.transactions[1].posted
    st["end"] = st.transactions[#st.transactions].posted
    local sign, abs = sum < 0 and "-" or "", math.abs(sum)
    st.ledger_balance = { amount = ("%s%d.%02d"):format(sign, abs // 100, abs % 100), date = st["end"] }
  end
  return { version = "102", signon = { code = 0, severity = "INFO", org = "SIFTBANK", fid = "9999" },
    statements = { checking, card }, status = {}, warnings = {} }, labels
end

--- Labelled examples for the learner (`sift.finance.learn`): a list of
-- `{ transaction, category }`, and how many categories there are.
function M.examples(opts)
  local doc, labels = M.statements(opts)
  local examples, seen, n = {}, {}, 0
  for _, st in ipairs(doc.statements) do
    for _, t in ipairs(st.transactions) do
      local c = labels[t.fitid]
      examples[#examples + 1] = { t, c }
      if not seen[c] then seen[c], n = true, n + 1 end
    end
  end
  return examples, n
end

return M
