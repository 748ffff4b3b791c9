-- Lay out a department's board: one empty field per employee, never touching a field that
-- already holds punches. KEYS[1] board hash; ARGV employee ids. Returns how many were new.
-- A board that does not exist yet is written in one HSET: HSETNX field by field costs a scan
-- of the compact (listpack) hash each time.
if redis.call('EXISTS', KEYS[1]) == 0 then
  local args = {}
  for i = 1, #ARGV do
    args[2 * i - 1] = ARGV[i]
    args[2 * i] = ''
  end
  return redis.call('HSET', KEYS[1], unpack(args))
end
local added = 0
for i = 1, #ARGV do
  added = added + redis.call('HSETNX', KEYS[1], ARGV[i], '')
end
return added
