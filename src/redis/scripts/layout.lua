-- Lay out a department's board: one empty field per employee, never touching a field that
-- already holds punches. KEYS[1] board hash, KEYS[2] the department's set of dates with boards;
-- ARGV[1] the date (YYYY-MM-DD), then employee ids. Returns how many were new.
-- A board that does not exist yet is written in one HSET, compact as a RESTORE would make it
-- (its first punch makes it a hash table); one that does exist (punched already, or a second
-- run) is made a hash table first, so that each HSETNX is one lookup (see hashtable.lua).
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local args = {}
  for i = 2, #ARGV do
    args[2 * i - 3] = ARGV[i]
    args[2 * i - 2] = ''
  end
  return redis.call('HSET', KEYS[1], unpack(args))
end
as_hashtable(KEYS[1])
local added = 0
for i = 2, #ARGV do
  added = added + redis.call('HSETNX', KEYS[1], ARGV[i], '')
end
return added
