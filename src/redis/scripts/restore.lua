-- Lay out a department's board that does not exist yet in one step: RESTORE of the compact hash
-- of empty fields the client built (board/dump.rs), instead of an HSET that compares each new
-- field with all before it. KEYS[1] board hash, KEYS[2] the department's set of dates with
-- boards; ARGV[1] the date (YYYY-MM-DD), ARGV[2] the payload, ARGV[3] its number of fields.
-- Returns that number; -1 when the board exists (a check-in came first, or a second run: the
-- caller adds the missing fields through layout.lua, never touching a punch); -2 when Redis
-- refused the payload (an older server, or RESTORE not allowed): the caller falls back the same way.
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
local r = redis.pcall('RESTORE', KEYS[1], 0, ARGV[2])
if type(r) == 'table' and r.err then
  return -2
end
return tonumber(ARGV[3])
