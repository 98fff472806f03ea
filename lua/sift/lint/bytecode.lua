--- What the resource model needs to know of an instruction: descriptors
-- parsed, the JVM's stack effect of each simple opcode (in slots: a long
-- or a double takes two), and the edges of a method's control-flow graph
-- (jumps, switches, falling through) for class files and dex files.
-- @module sift.lint.bytecode

local M = {}

local descs = {}

--- A method descriptor's parameters ({type, slots} each; type as written:
-- "I", "Ljava/io/File;") and return type, parsed once per descriptor.
function M.desc(d)
  local got = descs[d]
  if got then return got end
  local params, i, slots = {}, 2, 0
  while i <= #d and d:sub(i, i) ~= ")" do
    local j = i
    while d:sub(j, j) == "[" do j = j + 1 end
    local e = d:sub(j, j) == "L" and (d:find(";", j, true) or #d) or j
    local t = d:sub(i, e)
    local n = (t == "J" or t == "D") and 2 or 1
    params[#params + 1] = { type = t, slots = n, class = t:match("^L(.*);$") }
    slots = slots + n
    i = e + 1
  end
  local ret = d:sub(i + 1)
  got = { params = params, slots = slots, ret = ret, ret_class = ret:match("^L(.*);$"),
    ret_slots = (ret == "V" and 0) or ((ret == "J" or ret == "D") and 2) or 1 }
  descs[d] = got
  return got
end

--- Whether an opcode is a call: `INVOKE[op]` (invokevirtual, invoke-static/range...).
M.INVOKE = setmetatable({}, { __index = function(t, op)
  t[op] = op:sub(1, 6) == "invoke"
  return t[op]
end })

--- Slots a field of descriptor d takes.
function M.field_slots(d) return (d == "J" or d == "D") and 2 or 1 end

-- the JVM opcodes whose effect on the stack is only: pop n slots, push m
-- unknown values (not references this model follows)
local SIMPLE = {}
local function simple(pop, push, ...)
  for _, op in ipairs { ... } do SIMPLE[op] = { pop, push } end
end
simple(0, 0, "nop", "iinc", "goto", "goto_w", "ret", "return")
simple(0, 1, "aconst_null", "iconst_m1", "iconst_0", "iconst_1", "iconst_2", "iconst_3", "iconst_4", "iconst_5",
  "fconst_0", "fconst_1", "fconst_2", "bipush", "sipush", "ldc", "ldc_w", "jsr", "jsr_w")
simple(0, 2, "lconst_0", "lconst_1", "dconst_0", "dconst_1", "ldc2_w")
simple(2, 1, "iaload", "faload", "aaload", "baload", "caload", "saload", "iadd", "isub", "imul", "idiv", "irem",
  "iand", "ior", "ixor", "ishl", "ishr", "iushr", "fadd", "fsub", "fmul", "fdiv", "frem", "fcmpl", "fcmpg", "l2i",
  "l2f", "d2i", "d2f")
simple(2, 2, "laload", "daload", "lneg", "dneg", "l2d", "d2l")
simple(3, 0, "iastore", "fastore", "bastore", "castore", "sastore")
simple(4, 0, "lastore", "dastore")
simple(1, 0, "pop", "ifeq", "ifne", "iflt", "ifge", "ifgt", "ifle", "tableswitch", "lookupswitch", "ireturn",
  "freturn", "monitorenter", "monitorexit")
simple(2, 0, "pop2", "if_icmpeq", "if_icmpne", "if_icmplt", "if_icmpge", "if_icmpgt", "if_icmple", "if_acmpeq",
  "if_acmpne", "lreturn", "dreturn")
simple(4, 2, "ladd", "lsub", "lmul", "ldiv", "lrem", "land", "lor", "lxor", "dadd", "dsub", "dmul", "ddiv", "drem")
simple(3, 2, "lshl", "lshr", "lushr")
simple(1, 1, "ineg", "fneg", "i2f", "f2i", "i2b", "i2c", "i2s", "newarray", "anewarray", "arraylength",
  "instanceof")
simple(1, 2, "i2l", "i2d", "f2l", "f2d")
simple(4, 1, "lcmp", "dcmpl", "dcmpg")
M.SIMPLE = SIMPLE

local JVM_EXIT = { ireturn = true, lreturn = true, freturn = true, dreturn = true, areturn = true, ["return"] = true,
  athrow = true, ret = true }

--- The successors of a method's instructions: succ[i] = {index...}, from
-- jumps, switches (class files: every case) and falling through; and at
-- (pc -> index). A dex switch's cases are read from its payload.
function M.graph(code, dex)
  local at = {}
  for i, ins in ipairs(code) do at[ins.pc] = i end
  local succ = {}
  for i, ins in ipairs(code) do
    local op, out = ins.op, {}
    if dex then
      local jump = op:sub(1, 4) == "goto" or op:sub(1, 3) == "if-"
      if jump and ins.branch and at[ins.branch] then out[#out + 1] = at[ins.branch] end
      local payload = op:find("switch", 1, true) and not op:find("payload", 1, true) and at[ins.branch or -1]
      for _, off in ipairs(payload and code[payload].offsets or {}) do  -- (its cases, relative to the switch)
        if at[ins.pc + off] then out[#out + 1] = at[ins.pc + off] end
      end
      if op:sub(1, 4) ~= "goto" and op:sub(1, 6) ~= "return" and op ~= "throw" and not op:find("payload", 1, true)
          and code[i + 1] then
        out[#out + 1] = i + 1
      end
    else
      if ins.branch and at[ins.branch] then out[#out + 1] = at[ins.branch] end
      for _, t in ipairs(ins.targets or {}) do
        if at[t] then out[#out + 1] = at[t] end
      end
      if not JVM_EXIT[op] and op ~= "goto" and op ~= "goto_w" and op ~= "tableswitch" and op ~= "lookupswitch"
          and code[i + 1] then
        out[#out + 1] = i + 1
      end
    end
    succ[i] = out
  end
  return succ, at
end

return M
