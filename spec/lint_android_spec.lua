-- sift lint on real Android apps: the dex and apk files of Debian's androguard package (its
-- examples; fetched and unpacked into build/ by spec/lint/android_corpus.lua when missing, each
-- file pinned by SHA-256 in spec/lint/android.lua), with Android Lint's Recycle rules and the
-- Cursor rule (`--rules android`), and findings judged by reading their bytecode (dexdump -d).
-- Every finding judged true must still be found; the precision over the judged findings sift
-- reports now is printed and must be 90 % or more (the files that hold them are linted). The d8 and dx builds of the same code give the
-- same findings. Findings are cached in build/lint-android/ by each file's SHA-256 and the
-- model's: a run after the first reads them.
local corpus = dofile("spec/lint/android_corpus.lua")
local data = dofile("spec/lint/android.lua")

local function key(sha, class, method, desc, rule, criterion, pc)
  return table.concat({ sha, class, method, desc, rule, criterion, pc }, "|")
end

describe("sift lint on the androguard apps #heavy", function()
  local files, why = nil, nil
  setup(function()
    local ok, err = corpus.ensure(data.package)
    if not ok then why = err; return end
    -- the files that hold a judged finding, and the d8/dx pairs: what the
    -- checks need (the whole corpus, 347 files, takes minutes cold)
    local needed = {}
    for _, j in ipairs(data.judged) do needed[j.sha256] = true end
    for _, pair in ipairs(data.pairs) do needed[pair[1]], needed[pair[2]] = true, true end
    local paths = {}
    for _, f in ipairs(data.files) do
      if needed[f.sha256] or needed[f.path] then paths[#paths + 1] = f.path end
    end
    local sums = corpus.sums(paths)
    files = {}
    for _, f in ipairs(data.files) do
      if sums[f.path] == f.sha256 then files[#files + 1] = f
      elseif sums[f.path] then print(("lint android: %s skipped: SHA-256 %s, not the pinned %s"):format(f.path,
        sums[f.path], f.sha256)) end
    end
  end)

  it("finds every finding judged true, and 90 % of the judged findings it reports are true", function()
    if not files then return pending(why) end
    local found, available, classes, total = {}, {}, 0, 0
    for _, f in ipairs(files) do
      available[f.sha256] = true
      local got = corpus.findings(f.path, f.sha256, "android")
      classes, total = classes + got.classes, total + #got
      for _, x in ipairs(got) do found[key(f.sha256, x.class, x.method, x.desc, x.rule, x.criterion, x.pc)] = x end
    end
    local judged, first_right, reported, right, missed = 0, 0, 0, 0, {}
    for _, j in ipairs(data.judged) do
      if available[j.sha256] then
        judged = judged + 1
        if j.verdict then first_right = first_right + 1 end
        if found[key(j.sha256, j.class, j.method, j.desc, j.rule, j.criterion, j.pc)] then
          reported = reported + 1
          if j.verdict then right = right + 1
          else print(("lint android: judged false, still reported: #%d %s.%s %s/%s"):format(j.n, j.class, j.method,
            j.rule, j.criterion)) end
        elseif j.verdict then
          missed[#missed + 1] = ("#%d %s.%s%s %s/%s at pc %d"):format(j.n, j.class, j.method, j.desc, j.rule,
            j.criterion, j.pc)
        end
      end
    end
    print(("lint android: %d files with judged findings, %d classes, %d findings; %d judged; when judged %d true (%.1f %%); now reported "
      .. "%d, of which %d true: precision %.1f %%"):format(#files, classes, total, judged, first_right,
        100 * first_right / judged, reported, right, reported > 0 and 100 * right / reported or 0))
    assert.are.same({}, missed)
    assert.is_true(judged >= 80)
    assert.is_true(right >= 0.9 * reported, ("precision %d/%d"):format(right, reported))
  end)

  it("gives the same findings on the d8 and the dx build of the same code", function()
    if not files then return pending(why) end
    local by_path = {}
    for _, f in ipairs(files) do by_path[f.path] = f end
    for _, pair in ipairs(data.pairs) do
      local a, b = by_path[pair[1]], by_path[pair[2]]
      if a and b then
        for _, names in ipairs { "android", "closeable" } do
          local fa, fb = corpus.findings(a.path, a.sha256, names), corpus.findings(b.path, b.sha256, names)
          local sa, sb = {}, {}
          for _, x in ipairs(fa) do sa[#sa + 1] = table.concat({ x.rule, x.criterion, x.class, x.method, x.desc }, " ") end
          for _, x in ipairs(fb) do sb[#sb + 1] = table.concat({ x.rule, x.criterion, x.class, x.method, x.desc }, " ") end
          table.sort(sa)
          table.sort(sb)
          print(("lint android: %s / %s, rules %s: %d and %d findings"):format(pair[1], pair[2], names, #sa, #sb))
          assert.are.same(sa, sb)
          assert.are.equal(pair[names], #sa)
        end
      end
    end
  end)
end)
