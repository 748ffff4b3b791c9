-- Void one punch of one employee's day on a department's live board, in one step: its token is
-- taken out of the employee's value, so status, the roll call and settle see the day without it.
-- KEYS[1] the live board, KEYS[2] the department's outbox; ARGV[1] employee id, ARGV[2] the
-- token ('i<secs>' or 'o<secs>', as punch.lua wrote it), ARGV[3] the void notice's event id and
-- ARGV[4] its wire JSON (src/domain/event/void_notice.rs): put in the outbox with the void, so that the
-- supervisor is told of it even when the broker is down now (relay sends it later).
-- Returns 1 when the token was there and is gone, 0 when the board holds no such punch (voided
-- already, or the day cut over to settle meanwhile): nothing is written then.
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local keep, n, found = {}, 0, false
for tok in string.gmatch(value, '[^,]+') do
  if tok == ARGV[2] and not found then
    found = true
  else
    n = n + 1
    keep[n] = tok
  end
end
if not found then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], table.concat(keep, ','))
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
return 1
