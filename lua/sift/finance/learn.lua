--- A categoriser that learns from categorised transactions: multinomial
-- naive Bayes over the words of the payee, name and memo, the amount's
-- sign and order of magnitude and the weekday (as GnuCash's and reckon's
-- Bayesian matchers do), with Laplace smoothing.
--
--     local learn = require "sift.finance.learn"
--     local model = learn.train(examples)     -- { {t, category}, ... }
--     local category, confidence = model:guess(t)
--     print(learn.evaluate(examples, 5).accuracy)
--
-- A transaction here has `payee`, `name`, `memo`, `amount` (decimal text)
-- and `posted` ("YYYY-MM-DD").
-- @module sift.finance.learn

local store = require "sift.finance.store"

local M = {}

local WEEKDAYS = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" }

-- the day of the week of "YYYY-MM-DD" (Sakamoto's method)
local function weekday(date)
  local y, m, d = (date or ""):match("^(%d%d%d%d)-(%d%d)-(%d%d)")
  if not y then return nil end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  local offsets = { 0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4 }
  if m < 3 then y = y - 1 end
  return WEEKDAYS[(y + y // 4 - y // 100 + y // 400 + offsets[m] + d) % 7 + 1]
end

--- The features of a transaction: words (lower case, two letters or more,
-- no digits: store numbers and references are noise), `amt:` sign and
-- magnitude, `day:` weekday.
function M.features(t)
  local out, seen = {}, {}
  local function add(f)
    if not seen[f] then seen[f] = true out[#out + 1] = f end
  end
  for _, field in ipairs { "payee", "name", "memo" } do
    local v = t[field]
    if v then
      for word in v:lower():gmatch("[%w'&]+") do
        if #word >= 2 and not word:find("%d") then add(word) end
      end
    end
  end
  local amount = tonumber(t.amount)
  if amount then
    local magnitude = amount == 0 and 0 or math.floor(math.log(math.abs(amount), 10) * 2)
    add(("amt:%s%d"):format(amount < 0 and "-" or "+", magnitude))
  end
  local day = weekday(t.posted)
  if day then add("day:" .. day) end
  return out
end

--- The merchant of a transaction: the first word of its payee with the
-- payment channel and numbers taken off, lower case; nil with no payee.
function M.merchant(t)
  local payee = store.normalise_payee(t.payee or t.name)
  return payee and payee:lower():match("[%w'&]+")
end

local Model = {}
Model.__index = Model

--- Train on examples: a list of `{ t, category }`.
function M.train(examples)
  local m = setmetatable({ docs = {}, total = 0, counts = {}, words = {}, vocabulary = 0, merchants = {} }, Model)
  local vocab = {}
  for _, ex in ipairs(examples) do
    local t, c = ex[1], ex[2]
    m.docs[c] = (m.docs[c] or 0) + 1
    m.total = m.total + 1
    local counts = m.counts[c] or {}
    m.counts[c] = counts
    m.merchants[c] = m.merchants[c] or {}
    local merchant = M.merchant(t)
    if merchant then m.merchants[c][merchant] = true end
    for _, f in ipairs(M.features(t)) do
      counts[f] = (counts[f] or 0) + 1
      m.words[c] = (m.words[c] or 0) + 1
      if not vocab[f] then vocab[f] = true m.vocabulary = m.vocabulary + 1 end
    end
  end
  m.categories, m.spread = {}, {}
  for c, counts in pairs(m.counts) do
    m.categories[#m.categories + 1] = c
    for f in pairs(counts) do m.spread[f] = (m.spread[f] or 0) + 1 end
  end
  table.sort(m.categories)
  return m
end

--- The likeliest category of t and its probability (0..1); nil (and the
-- probability) when the model knows no category, or none of t's words in it.
function Model:guess(t)
  if #self.categories == 0 then return nil end
  local features = M.features(t)
  local scores, best, best_score = {}, nil, -math.huge
  local log = math.log
  for _, c in ipairs(self.categories) do
    local counts, denominator = self.counts[c], (self.words[c] or 0) + self.vocabulary + 1
    local s = log(self.docs[c] / self.total)
    for _, f in ipairs(features) do
      s = s + log(((counts[f] or 0) + 1) / denominator)
    end
    scores[c] = s
    if s > best_score then best, best_score = c, s end
  end
  -- the posterior of the best, from the log scores
  local sum = 0
  for _, s in pairs(scores) do sum = sum + math.exp(s - best_score) end
  -- no guess without evidence: the merchant (the first word of the
  -- payee, channel and numbers taken off) seen in that category; or,
  -- with no payee, a word seen in it and in at most half of the
  -- categories. Otherwise words every category has (CARD, LONDON), the
  -- amount and the weekday make a confident guess out of nothing: a
  -- NETFLIX payment called Groceries because Groceries is most of what
  -- the model knows.
  local counts = self.counts[best]
  local merchant = M.merchant(t)
  if merchant then
    if self.merchants[best][merchant] then return best, 1 / sum end
  else
    local most = math.max(1, #self.categories // 2)
    for _, f in ipairs(features) do
      if counts[f] and self.spread[f] <= most and not f:find(":", 1, true) then return best, 1 / sum end
    end
  end
  return nil, 1 / sum
end

--- k-fold cross-validation: accuracy of guesses on each fold by a model
-- trained on the others (examples shuffled with a fixed seed first).
-- @return `{ accuracy, correct, total, folds, per_category = { [c] = { correct, total } } }`
function M.evaluate(examples, k, seed)
  k = k or 5
  local order = {}
  for i = 1, #examples do order[i] = i end
  -- a fixed permutation (a small LCG: the same on every machine)
  local state = seed or 12345
  for i = #order, 2, -1 do
    state = (state * 1103515245 + 12345) % 2147483648
    local j = state % i + 1
    order[i], order[j] = order[j], order[i]
  end
  local correct, total, per = 0, 0, {}
  for fold = 1, k do
    local train, test = {}, {}
    for pos, i in ipairs(order) do
      if pos % k == fold - 1 then test[#test + 1] = examples[i] else train[#train + 1] = examples[i] end
    end
    local model = M.train(train)
    for _, ex in ipairs(test) do
      local guess = model:guess(ex[1])
      local p = per[ex[2]] or { correct = 0, total = 0 }
      per[ex[2]] = p
      p.total = p.total + 1
      total = total + 1
      if guess == ex[2] then
        correct = correct + 1
        p.correct = p.correct + 1
      end
    end
  end
  return { accuracy = total > 0 and correct / total or 0, correct = correct, total = total, folds = k,
    per_category = per }
end

return M
