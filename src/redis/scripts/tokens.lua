-- (Prepended to the scripts that merge two values of one employee's day: cutover.lua,
-- move_in.lua.) The union of two board values as sets of comma-separated tokens, in order of
-- first appearance, each token once. The tokens are not interpreted: whatever punch.lua writes.
local function union_tokens(a, b)
  local seen, toks, n = {}, {}, 0
  for _, v in ipairs({a, b}) do
    for tok in string.gmatch(v, '[^,]+') do
      if not seen[tok] then
        seen[tok] = true
        n = n + 1
        toks[n] = tok
      end
    end
  end
  return table.concat(toks, ',')
end

