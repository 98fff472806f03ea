--- Lint findings as SARIF 2.1.0, the format code review tools (GitHub
-- code scanning, IDEs) read: one run of the tool `sift`, a rule per
-- rule/criterion pair, a result per finding located at the source file
-- (its path guessed from the package and the class's SourceFile) and line,
-- with the method as a logical location.
-- @module sift.lint.sarif

local json = require "sift.json"
local lint = require "sift.lint"

local M = {}

M.SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

-- where the source of a finding's class is, relative to a source root
local function source_uri(f)
  local package = f.class:match("^(.*)%.[^.]+$")
  local file = f.source or (f.class:match("[^.$]+$") .. ".java")
  return package and (package:gsub("%.", "/") .. "/" .. file) or file
end

--- The SARIF log (a table; encode it with sift.json) of findings made
-- with rules (name → rule, as sift.lint.check took them). With `skipped`
-- (the inputs sift.lint.load could not read), the run's invocation says
-- so: `executionSuccessful` false and an error notification per input.
function M.log(findings, rules, version, skipped)
  local descriptors, index = json.array {}, {}
  local names = {}
  for name in pairs(rules) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    for _, criterion in ipairs(lint.CRITERIA_ORDER) do
      local id = name .. "/" .. criterion
      index[id] = #descriptors
      descriptors[#descriptors + 1] = { id = id, name = (name .. "-" .. criterion):gsub("%-(%l)", string.upper),
        shortDescription = { text = ("%s: %s"):format(rules[name].what, lint.CRITERIA[criterion]) },
        defaultConfiguration = { level = "warning" } }
    end
  end
  local results = json.array {}
  for _, f in ipairs(findings) do
    local id = f.rule .. "/" .. f.criterion
    results[#results + 1] = {
      ruleId = id, ruleIndex = index[id], level = "warning",
      message = { text = ("%s in %s.%s at %s"):format(f.message, f.class, f.method, f.instruction) },
      locations = json.array { {
        physicalLocation = { artifactLocation = { uri = source_uri(f) },
          region = f.line and f.line > 0 and { startLine = f.line } or nil },
        logicalLocations = json.array { { fullyQualifiedName = f.class .. "." .. f.method, kind = "function" } },
      } },
      partialFingerprints = f.fingerprint and { ["siftFinding/v1"] = f.fingerprint } or nil,
      properties = { class = f.class, method = f.method .. f.desc, pc = f.pc, file = f.file },
    }
  end
  local invocation
  if skipped then
    local notes = json.array {}
    for _, p in ipairs(skipped) do
      notes[#notes + 1] = { level = "error", message = { text = ("not read: %s"):format(p.message) },
        locations = json.array { { physicalLocation = { artifactLocation = { uri = p.file } } } } }
    end
    invocation = json.array { { executionSuccessful = #skipped == 0, toolExecutionNotifications = notes } }
  end
  return { ["$schema"] = M.SCHEMA, version = "2.1.0", runs = json.array { {
    tool = { driver = { name = "sift", version = version,
      rules = descriptors } },
    invocations = invocation,
    results = results,
  } } }
end

return M
