-- One punch on one department's board, and its event in the department's outbox, atomically.
-- KEYS[1] board hash (field = employee id, value = "i<secs>,o<secs>,..." see board/record.rs)
-- KEYS[2] outbox hash (field = event id, value = event JSON)
-- ARGV: 1 employee id, 2 secs into the work day, 3 kind (in|out|auto), 4 repeat window secs,
--       5 max tokens, 6 late minutes if in, 7 early minutes if out, 8 event id,
--       9 event JSON without kind/late/early/changed ('' = no event)
-- Returns {kind, changed 0|1, duplicate 0|1, first_in or -1, last_out or -1, event JSON or ''}
local board, outbox = KEYS[1], KEYS[2]
local emp, t, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local window, maxtok = tonumber(ARGV[4]), tonumber(ARGV[5])

local value = redis.call('HGET', board, emp) or ''
local toks, n, first_in, last_out = {}, 0, nil, nil
for tok in string.gmatch(value, '[^,]+') do
  local k, s = string.match(tok, '^([io])(%-?%d+)$')
  if k then
    s = tonumber(s)
    n = n + 1
    toks[n] = tok
    if k == 'i' then
      if first_in == nil or s < first_in then first_in = s end
    elseif last_out == nil or s > last_out then
      last_out = s
    end
  end
end

-- An unlabelled punch: the first of the day is a check-in; one within the repeat window of the
-- first check-in repeats it (a double scan never becomes an early check-out); later ones are out.
if kind == 'auto' then
  if first_in == nil then
    if last_out == nil then kind = 'in' else kind = 'out' end
  elseif t < first_in + window then
    kind = 'in'
  else
    kind = 'out'
  end
end

local tok = (kind == 'in' and 'i' or 'o') .. t
for i = 1, n do
  if toks[i] == tok then
    return {kind, 0, 1, first_in or -1, last_out or -1, ''}
  end
end

local nf, nl = first_in, last_out
if kind == 'in' then
  if nf == nil or t < nf then nf = t end
elseif nl == nil or t > nl then
  nl = t
end
local changed = (nf ~= first_in) or (nl ~= last_out)

if n >= maxtok then
  -- Full: compact the history to the record itself plus this punch.
  toks = {}
  if nf then toks[#toks + 1] = 'i' .. nf end
  if nl then toks[#toks + 1] = 'o' .. nl end
  if tok ~= toks[1] and tok ~= toks[2] then toks[#toks + 1] = tok end
else
  toks[n + 1] = tok
end
redis.call('HSET', board, emp, table.concat(toks, ','))

local ev = ''
if ARGV[9] ~= '' then
  local e = cjson.decode(ARGV[9])
  local late, early = tonumber(ARGV[6]), tonumber(ARGV[7])
  e.kind = kind
  e.late = kind == 'in' and late > 0
  e.late_minutes = kind == 'in' and late or 0
  e.early = kind == 'out' and early > 0
  e.early_minutes = kind == 'out' and early or 0
  e.changed = changed
  ev = cjson.encode(e)
  redis.call('HSET', outbox, ARGV[8], ev)
end
return {kind, changed and 1 or 0, 0, nf or -1, nl or -1, ev}
