--- The file of a multipart/form-data body (RFC 7578), streamed: what an
-- HTML form's upload sends. lua-http reads the body in chunks but has no
-- multipart reader, so this is the little of it an upload needs: the
-- first part with a filename is the file; other parts are passed over.
-- @module sift.serve.multipart

local M = {}

--- The boundary of a Content-Type header, or nil.
function M.boundary(content_type)
  local b = (content_type or ""):match('^%s*multipart/form%-data.-;%s*boundary="([^"]+)"')
    or (content_type or ""):match("^%s*multipart/form%-data.-;%s*boundary=([^%s;]+)")
  return b
end

--- Read up to the file part's data: returns a function giving the file's
-- bytes in chunks (nil at its end; nil and a failure, {status, message},
-- on a body that breaks off or is malformed) and the part's filename; or
-- nil, message and the failure.
-- @tparam function next_chunk the body's chunks (nil at the end; nil and a
--   failure when it broke off)
-- @tparam string boundary
-- @tparam[opt] integer max_head bytes allowed before the file (64 kB)
function M.file(next_chunk, boundary, max_head)
  local buf, dash = "", "--" .. boundary
  local function more()
    local c, failure = next_chunk()
    if not c then
      failure = failure or { status = 400, message = "the body ends inside the form" }
      return nil, failure.message, failure
    end
    buf = buf .. c
    return true
  end
  -- parts until one has a filename
  while true do
    local at = buf:find(dash, 1, true)
    while not at do
      if #buf > (max_head or 65536) then return nil, "no file in the first 64 kB of the form" end
      local ok, err, failure = more()
      if not ok then return nil, err, failure end
      at = buf:find(dash, 1, true)
    end
    local head_end = buf:find("\r\n\r\n", at, true)
    while not head_end do
      if #buf > (max_head or 65536) then return nil, "a form part's headers are too long" end
      local ok, err, failure = more()
      if not ok then return nil, err, failure end
      head_end = buf:find("\r\n\r\n", at, true)
    end
    local head = buf:sub(at, head_end)
    buf = buf:sub(head_end + 4)
    local filename = head:match('[Cc]ontent%-[Dd]isposition:[^\r\n]-filename="([^"]*)"')
    if filename then
      -- the file's bytes run to CRLF and the boundary; a tail as long as
      -- that delimiter stays in buf between chunks, in case it is cut
      local delim, done = "\r\n" .. dash, false
      return function()
        if done then return nil end
        while true do
          local stop = buf:find(delim, 1, true)
          if stop then
            local out = buf:sub(1, stop - 1)
            buf, done = "", true
            if out == "" then return nil end
            return out
          end
          if #buf > #delim then
            local out = buf:sub(1, #buf - #delim)
            buf = buf:sub(#buf - #delim + 1)
            return out
          end
          local c, failure = next_chunk()
          if not c then return nil, failure or { status = 400, message = "the form broke off inside the file" } end
          buf = buf .. c
        end
      end, filename
    end
    -- not the file: on to the next part
  end
end

return M
