-- Leaks with references of your own left out or called library leaks, as
-- LeakCanary's app-side matchers do: here, the native global roots that
-- hold Binders (a Service's binder stub lives as long as its client).
--
--   sift run examples/matchers.lua leak_service_binder_ignored.hprof
local sift = require "sift"
local leaks = require "sift.heap.leaks"

local path = assert(arg[1], "usage: sift run examples/matchers.lua DUMP")
for _, case in ipairs {
  { "no matcher", nil },
  { "Binder roots ignored", { ignored = { { root_class = "android.os.Binder" } } } },
  { "Binder roots a library leak", { library = { { root_class = "android.os.Binder",
      description = "A binder stub lives as long as the remote side holds it." } } } },
} do
  local heap <close> = assert(sift.open(path))
  local report = leaks.analyze(heap, { finder = "keyed", matchers = case[2] })
  print(("%-28s %d application leak(s), %d library leak(s), %d unreachable"):format(case[1],
    #report.application_leaks, #report.library_leaks, #report.unreachable))
  for _, g in ipairs(report.library_leaks) do
    print(("%28s %s, %d bytes: %s"):format("", g.pattern, g.retained, g.description))
  end
end
