-- luacheck (Debian's lua-check): `make lint-lua` checks lua/, bin/sift and spec/.
std = "lua54"
-- the width the code is written to: long format strings and HTML rows stay on one line
max_line_length = 140

files["spec/**/*.lua"] = { std = "+busted" }
-- `sift run` gives the script its `arg`, as lua.c does, and puts the old one back
files["lua/sift/cli/run.lua"] = { globals = { "arg" } }

-- the judged findings: each verdict's reason is one line of data, as it was written
files["spec/lint/corpus.lua"] = { max_line_length = false }
files["spec/lint/findbugs.lua"] = { max_line_length = false }
