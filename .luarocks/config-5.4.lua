-- Project configuration for LuaRocks (found because .luarocks/ and
-- lua_modules/ exist in the checkout). The rocks sift needs come from
-- Debian packages, so they are declared as provided and no rocks server is
-- asked: `luarocks --lua-version=5.4 make` works offline and installs into
-- ./lua_modules (or --tree=DIR).
lua_version = "5.4"
rocks_servers = {}
rocks_provided = {
  argparse = "0.7.1-1",      -- lua-argparse
  ["lua-cjson"] = "2.1.0-1", -- lua-cjson
  lpeg = "1.0.2-1",          -- lua-lpeg
  busted = "2.1.1-1",        -- lua-busted
  http = "0.4-0",            -- lua-http (with lua-cqueues and lua-luaossl)
  luasocket = "3.1.0-1",     -- lua-socket (the specs' local OFX server)
  luasec = "1.2.0-1",        -- lua-sec (the same, over TLS)
}
