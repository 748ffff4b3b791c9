-- Settle is done with one department's day (its rows are committed): keep its punch tokens in
-- the settled day's key (merged into what an earlier settle of the day kept, see punch.lua's
-- KEYS[5]: a punch sent again after settle is a repeat), delete settle's board and its punch
-- logs and, unless a punch made a fresh live board meanwhile, forget the date in the
-- department's set. All in one step: a punch's SADD can never slip between the check and the SREM.
-- KEYS[1] settle's board, KEYS[2] live board, KEYS[3] the department's days set, KEYS[4] the
-- settled day's punches, KEYS[5..] settle's punch logs; ARGV[1] date, ARGV[2] when the settled
-- day's punches expire (unix seconds; 0: not kept). Returns how many boards were deleted (0 or 1).
local expire_at = tonumber(ARGV[2])
if expire_at > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  local board = redis.call('HGETALL', KEYS[1])
  for i = 1, #board, 2 do
    local emp, value = board[i], board[i + 1]
    if value ~= '' then
      local old = redis.call('HGET', KEYS[4], emp)
      if old and old ~= '' then value = union_tokens(old, value) end
      redis.call('HSET', KEYS[4], emp, value)
    end
  end
  if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('EXPIREAT', KEYS[4], expire_at) end
end
local deleted = redis.call('DEL', KEYS[1])
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return deleted
