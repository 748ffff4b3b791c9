-- Lay out a department's board: one empty field per employee, never touching a field that
-- already holds punches. KEYS[1] board hash, KEYS[2] the department's set of dates with boards;
-- ARGV[1] the date (YYYY-MM-DD), then employee ids. Returns how many were new.
-- A board that does not exist yet is written in one HSET; one that does is made a hash table
-- first, so that each HSETNX is one lookup (see hashtable.lua).
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local args, n = {}, 0
  for i = 2, #ARGV do
    args[n + 1] = ARGV[i]
    args[n + 2] = ''
    n = n + 2
  end
  return hset_board(KEYS[1], args, n)
end
as_hashtable(KEYS[1])
local added = 0
for i = 2, #ARGV do
  added = added + redis.call('HSETNX', KEYS[1], ARGV[i], '')
end
return added
