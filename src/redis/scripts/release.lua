-- Settle is done with one department's day (its rows are committed): delete settle's board and
-- its punch logs and, unless a punch made a fresh live board meanwhile, forget the date in the
-- department's set. All in one step: a punch's SADD can never slip between the check and the SREM.
-- KEYS[1] settle's board, KEYS[2] live board, KEYS[3] the department's days set, KEYS[4..]
-- settle's punch logs; ARGV[1] date. Returns how many boards were deleted (0 or 1).
local deleted = redis.call('DEL', KEYS[1])
for i = 4, #KEYS do redis.call('DEL', KEYS[i]) end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return deleted
