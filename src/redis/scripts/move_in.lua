-- A moved employee's day arrives on their new department's board (org import, redis/moves.rs):
-- the value is merged into whatever the field holds as a UNION of tokens, so that running it
-- twice (a rerun after a crash), or after a punch that already landed here, changes nothing.
-- The tokens are not interpreted: a value is a comma-separated set. A union longer than the
-- punch script's bound is compacted by that script at the employee's next punch.
-- KEYS[1] the new department's board of the day, KEYS[2] its days set (same hash tag).
-- ARGV[1] employee id, ARGV[2] the value from the old board, ARGV[3] the day (YYYY-MM-DD).
-- Returns 1 if the field changed.
local board, emp, value = KEYS[1], ARGV[1], ARGV[2]
local old = redis.call('HGET', board, emp)
local merged = value
if old then merged = union_tokens(old, value) end
-- In the same step as the write: a board that exists is always in its days set (see punch.lua).
redis.call('SADD', KEYS[2], ARGV[3])
if merged == old then return 0 end
hset_board(board, {emp, merged}, 2)
return 1
