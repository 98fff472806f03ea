-- Download statements from your bank's OFX server (Direct Connect) with a
-- profile, and import them into your books: run it every week, it never
-- doubles anything.
--
--   sift run examples/fetch.lua PROFILE BOOKS.db [SINCE] [PROFILES.ini]
--
-- The password comes from the profile's password_env or password_command,
-- or a prompt; it is never printed or written anywhere.
require("sift.paths").older_lua()  -- lua-http (under sift.ofx.direct) is packaged for Lua 5.1-5.3
local direct = require "sift.ofx.direct"
local finance = require "sift.finance"

local name, db, since, file = arg[1], arg[2], arg[3], arg[4]
assert(name and db, "usage: sift run examples/fetch.lua PROFILE BOOKS.db [SINCE] [PROFILES.ini]")
local profiles = assert(direct.load_profiles(file))
local profile = assert(profiles[name], "no such profile: " .. name)
local password = assert(direct.password(profile))

local doc, text = direct.statements(profile, password, { since = since })
if not doc then error(text, 0) end  -- e.g. "sign-on refused by MYBANK: 15500 ERROR: ..."
for _, st in ipairs(doc.statements) do
  print(("%s %s: %d transactions, balance %s"):format(st.kind, st.account.id, #st.transactions,
    st.ledger_balance and st.ledger_balance.amount or "not given"))
end

local books <close> = assert(finance.open(db))
local counts = assert(books:import { text = text })
print(("imported: %d new, %d already there"):format(counts.new, counts.duplicate))
