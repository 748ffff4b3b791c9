-- Lay out a department's board: one empty field per employee, never touching a field that
-- already holds punches. KEYS[1] board hash; ARGV employee ids. Returns how many were new.
local added = 0
for i = 1, #ARGV do
  added = added + redis.call('HSETNX', KEYS[1], ARGV[i], '')
end
return added
