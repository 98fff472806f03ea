--- The heap's pages (HPROF and BMD): overview, histogram, class, object,
-- dominator tree, leaks, waste, threads, class loaders, the diff with a
-- baseline. Each page is a view, a table in the CLI's JSON schemas
-- (`sift.heap.views`), and the HTML made from it; a module per page or
-- family of pages, their shared parts in `sift.serve.heap.common`. Every
-- function a page module returns is a page (its name the page's path):
-- what they share stays in common.
-- @module sift.serve.heap

local M = { pages = {} }

for _, name in ipairs { "overview", "class", "object", "dominators", "leaks", "diff", "waste", "threads", "loaders",
  "bitmaps" } do
  for page, fn in pairs(require("sift.serve.heap." .. name)) do M.pages[page] = fn end
end
M.pages[""], M.pages.overview = M.pages.overview, nil

return M
