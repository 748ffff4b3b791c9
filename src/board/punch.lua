-- Punches on one department's board for one day, and their events in the department's outbox,
-- in one atomic step. Many punches per call amortise the call itself (bulk check-in).
-- KEYS[1] board hash (field = employee id, value = "i<secs>,o<secs>,..." see board/record.rs)
-- KEYS[2] outbox hash (field = event id, value = event JSON)
-- KEYS[3] the department's set of dates with boards (how settle finds days left to settle)
-- ARGV[1] repeat window secs, ARGV[2] max tokens per employee, ARGV[3] mode: '1' return the event
-- JSON, '0' do not, 'r' a replay from the journal (recover): no event JSON and nothing to the
-- outbox, since the event was published once already; ARGV[4] the work date (YYYY-MM-DD, the board's)
-- then 7 per punch: employee id, secs into the work day, kind (in|out|auto), late minutes if in,
-- early minutes if out, event id, event JSON prefix ('{"event_id":...' with no closing brace)
-- Returns 6 per punch: kind, changed 0|1, duplicate 0|1, first_in or -1, last_out or -1, event JSON or ''
local board, outbox, days = KEYS[1], KEYS[2], KEYS[3]
local window, maxtok, want_json, replay = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1', ARGV[3] == 'r'
local out = {}

-- Read every employee's day in one HMGET and write them back in one HSET: per-punch redis.call
-- overhead is what limits a bulk check-in, not the rules.
local emps = {}
for i = 5, #ARGV, 7 do emps[#emps + 1] = ARGV[i] end
local cur, dirty, events = {}, {}, {}
local vals = redis.call('HMGET', board, unpack(emps))
for j = 1, #emps do
  if cur[emps[j]] == nil then cur[emps[j]] = vals[j] or '' end
end

local function punch(emp, t, kind, late, early, id, prefix)
  local value = cur[emp]
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

  -- An unlabelled punch: the first of the day is a check-in; one within the repeat window of
  -- the first check-in repeats it (a double scan never becomes an early check-out); later: out.
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
      return kind, 0, 1, first_in or -1, last_out or -1, ''
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
  cur[emp] = table.concat(toks, ',')
  dirty[emp] = true

  local is_in = kind == 'in'
  if not is_in then late = 0 end
  if is_in then early = 0 end
  local ev = prefix .. ',"kind":"' .. kind .. '","late":' .. tostring(late > 0) .. ',"late_minutes":' .. late
    .. ',"early":' .. tostring(early > 0) .. ',"early_minutes":' .. early .. ',"changed":' .. tostring(changed) .. '}'
  events[#events + 1] = id
  events[#events + 1] = ev
  return kind, changed and 1 or 0, 0, nf or -1, nl or -1, ev
end

for i = 5, #ARGV, 7 do
  local kind, changed, dup, nf, nl, ev = punch(ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2],
    tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), ARGV[i + 5], ARGV[i + 6])
  out[#out + 1] = kind
  out[#out + 1] = changed
  out[#out + 1] = dup
  out[#out + 1] = nf
  out[#out + 1] = nl
  out[#out + 1] = want_json and ev or ''
end

local writes = {}
for emp in pairs(dirty) do
  writes[#writes + 1] = emp
  writes[#writes + 1] = cur[emp]
end
if #writes > 0 then
  redis.call('HSET', board, unpack(writes))
  -- In the same step as the board write: a board that exists is always in its days set, so a
  -- punch on a day already settled (or on a day whose settle cron never ran) is found.
  redis.call('SADD', days, ARGV[4])
end
if #events > 0 and not replay then redis.call('HSET', outbox, unpack(events)) end
return out
