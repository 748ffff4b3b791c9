-- A moved employee's day leaves their old department's board (org import, redis/moves.rs), once
-- move_in.lua has merged it into the new board: the field goes only if it still holds the value
-- that was merged. A punch that landed here meanwhile (the roster cache still named the old
-- department) changed it: the field is then kept and its new value returned, for the caller to
-- merge again. No punch is ever only in the caller's memory.
-- KEYS[1] the old board of the day, KEYS[2] settle's board of that day, KEYS[3] the department's
-- days set (one hash tag). ARGV[1] employee id, ARGV[2] the value merged, ARGV[3] the day.
-- Returns nil once the field is gone, or the field's value when it changed.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and cur ~= ARGV[2] then return cur end
if cur then redis.call('HDEL', KEYS[1], ARGV[1]) end
-- The board emptied (its only employee moved): the day has no board left here to settle.
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[3])
end
return false
