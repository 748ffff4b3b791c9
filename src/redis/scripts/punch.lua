-- Punches on one department's board for one day, and their events in the department's outbox,
-- in one atomic step. Many punches per call amortise the call itself (bulk check-in).
-- KEYS[1] board hash (field = employee id, value = "i<secs>,o<secs>,..." see domain/day/record.rs)
-- KEYS[2] outbox hash (field = event id, value = the event's compact record, see src/domain/event/record.rs)
-- KEYS[3] the department's set of dates with boards (how settle finds days left to settle)
-- KEYS[4] the department's punch log of the day for how these punches came (live, bulk or
-- recovered: one hash each, so no value is built here; field = event id, value = the event's
-- record as in the outbox): settle writes it to MySQL's punch_log (see src/mysql/punch_log.rs)
-- KEYS[5] the settled day's punches (kept after settle released its board, see
-- src/redis/keys.rs `settled_board`): a punch found there is the same punch sent again, a
-- duplicate like one found on the live board (no token, no event, no log entry); not read by
-- a replay from the journal (below)
-- ARGV[1] the day's split, secs into the work day: an unlabelled punch before it is a check-in,
-- at or after it a check-out (its time alone decides, never the board, so no arrival order
-- changes a punch's kind or its event; see domain/day/record.rs `resolve_kind`),
-- ARGV[2] max tokens per employee, ARGV[3] mode: 'r' a replay from the journal (recover):
-- nothing to the outbox, since the event was published once already, only to the recovered
-- punch log; anything else ('1' or '0'): to the outbox and the punch log; ARGV[4] the work date
-- (YYYY-MM-DD, the board's)
-- then 5 per punch: employee id, secs into the work day, kind (in|out|auto), event id, the event
-- record up to its last field (built in Rust: src/domain/event/record.rs `record_prefix`). This script only
-- appends that last field, the punch's kind and whether it changed the record: '<i|o><1|0>'.
-- Returns per punch three numbers: flags (1 the kind is out, 2 it changed the record, 4 a
-- duplicate: no event), first_in or -1, last_out or -1. Never the record: the caller built its
-- prefix and the flags say its last field, so the reply stays short (Redis's cost to build and
-- send a reply is per byte, and a signed record is a third longer).
local board, outbox, days, plog = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local settled = KEYS[5]
local split, maxtok, replay = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == 'r'
-- What a bulk call of 100 punches costs is mostly per-punch interpreter work, so the hot path
-- keeps it small: library functions in locals, counters rather than '#t' (a search in Lua 5.1),
-- no parse and no table for an employee with no punch yet (the whole morning).
local gmatch, match, concat = string.gmatch, string.match, table.concat
local out, nout = {}, 0

-- Read every employee's day in one HMGET and write them back in one HSET: per-punch redis.call
-- overhead is what limits a bulk check-in, not the rules.
local emps, nemp = {}, 0
for i = 5, #ARGV, 5 do
  nemp = nemp + 1
  emps[nemp] = ARGV[i]
end
local cur, dirty, events, nevent = {}, {}, {}, 0
local vals = redis.call('HMGET', board, unpack(emps))
for j = 1, nemp do
  if cur[emps[j]] == nil then cur[emps[j]] = vals[j] or '' end
end
-- The day's punches already settled, per employee (',' around each value, so a token is found
-- as ',<tok>,'); nothing read when the day was never settled (the common case), nor for a
-- replay from the journal: that puts back what a store lost, and MySQL may have lost the
-- settled day itself (a fail-over to a replica that was behind), so its punches go back on
-- the board and into the recovered punch log (settle unions them with the stored history,
-- so a day MySQL still holds is written with the same rows).
local before = nil
if not replay and redis.call('EXISTS', settled) == 1 then
  before = {}
  local old = redis.call('HMGET', settled, unpack(emps))
  for j = 1, nemp do
    if old[j] and old[j] ~= '' then before[emps[j]] = ',' .. old[j] .. ',' end
  end
end

-- A full day (more than maxtok distinct punches, rare): keep the record (first check-in, last
-- check-out) and the earliest other punches, maxtok in all. What is kept depends on the set of
-- the day's punches, never on their arrival order (domain/day/record.rs `compact`).
local function compact(toks, n, nf, nl)
  local keep, rest, nk, nr = {}, {}, 0, 0
  local fi, lo = nf and ('i' .. nf), nl and ('o' .. nl)
  for i = 1, n do
    local tok = toks[i]
    if tok == fi then
      fi = nil
    elseif tok == lo then
      lo = nil
    else
      local k, s = match(tok, '^([io])(%-?%d+)$')
      nr = nr + 1
      rest[nr] = {tonumber(s), k, tok}
    end
  end
  if nf then nk = nk + 1; keep[nk] = 'i' .. nf end
  if nl then nk = nk + 1; keep[nk] = 'o' .. nl end
  table.sort(rest, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  for i = 1, nr do
    if nk >= maxtok then break end
    nk = nk + 1
    keep[nk] = rest[i][3]
  end
  return concat(keep, ',')
end

-- secs: the same number as t, as the caller wrote it (a token is built from it as it is).
local function punch(emp, t, secs, kind, id, prefix)
  local value = cur[emp]
  local toks, n, first_in, last_out = nil, 0, nil, nil
  if value ~= '' then
    toks = {}
    for tok in gmatch(value, '[^,]+') do
      local k, s = match(tok, '^([io])(%-?%d+)$')
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
  end

  if kind == 'auto' then
    if t < split then kind = 'in' else kind = 'out' end
  end

  local tok = (kind == 'in' and 'i' or 'o') .. secs
  for i = 1, n do
    if toks[i] == tok then
      return kind, 0, 1, first_in or -1, last_out or -1
    end
  end
  if before and before[emp] and string.find(before[emp], ',' .. tok .. ',', 1, true) then
    return kind, 0, 1, first_in or -1, last_out or -1
  end

  local nf, nl = first_in, last_out
  if kind == 'in' then
    if nf == nil or t < nf then nf = t end
  elseif nl == nil or t > nl then
    nl = t
  end
  local changed = (nf ~= first_in) or (nl ~= last_out)

  if n >= maxtok then
    toks[n + 1] = tok
    cur[emp] = compact(toks, n + 1, nf, nl)
  elseif n == 0 then
    cur[emp] = tok
  else
    toks[n + 1] = tok
    cur[emp] = concat(toks, ',')
  end
  dirty[emp] = true

  events[nevent + 1] = id
  events[nevent + 2] = prefix .. (kind == 'in' and 'i' or 'o') .. (changed and '1' or '0')
  nevent = nevent + 2
  return kind, changed and 1 or 0, 0, nf or -1, nl or -1
end

for i = 5, #ARGV, 5 do
  local secs = ARGV[i + 1]
  local kind, changed, dup, nf, nl = punch(ARGV[i], tonumber(secs), secs, ARGV[i + 2], ARGV[i + 3], ARGV[i + 4])
  out[nout + 1] = (kind == 'out' and 1 or 0) + 2 * changed + 4 * dup
  out[nout + 2] = nf
  out[nout + 3] = nl
  nout = nout + 3
end

local writes, nwrite = {}, 0
for emp in pairs(dirty) do
  writes[nwrite + 1] = emp
  writes[nwrite + 2] = cur[emp]
  nwrite = nwrite + 2
end
if nwrite > 0 then
  hset_board(board, writes, nwrite)
  -- In the same step as the board write: a board that exists is always in its days set, so a
  -- punch on a day already settled (or on a day whose settle cron never ran) is found.
  redis.call('SADD', days, ARGV[4])
end
if nevent > 0 and not replay then redis.call('HSET', outbox, unpack(events)) end
-- The punch log: every new event's record, kept until settle has written it to MySQL (a replay
-- too, in the recovered log; MySQL keeps the first row of an event id, so a day settled before
-- keeps its own).
if nevent > 0 then redis.call('HSET', plog, unpack(events)) end
return out
