-- Settle is done with one department's day (its rows are committed): delete settle's board and
-- its punch log and, unless a punch made a fresh live board meanwhile, forget the date in the
-- department's set. All in one step: a punch's SADD can never slip between the check and the SREM.
-- KEYS[1] settle's board, KEYS[2] live board, KEYS[3] the department's days set, KEYS[4] settle's
-- punch log; ARGV[1] date. Returns how many boards were deleted (0 or 1).
local deleted = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[4])
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return deleted
