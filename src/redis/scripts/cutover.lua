-- Settle's cut-over of one department's board for one day: move the live board out of the way
-- in one atomic step, so that a punch arriving while settle runs lands on a fresh live board
-- (settled by a later run) instead of one settle is about to delete unseen.
-- KEYS[1] live board, KEYS[2] settle's board (same hash tag), then pairs: a live punch log and
-- settle's (see punch.lua; one pair per way punches came): the logs move with the board.
-- Returns 1 if a live board moved.
-- A settle killed after an earlier cut-over left its own board behind: the live board is then
-- merged into it, field by field, keeping every distinct punch token of both (and the live log
-- into its log: fields are event ids, so the union is every event of both).
for k = 3, #KEYS - 1, 2 do
  local live_log, settle_log = KEYS[k], KEYS[k + 1]
  if redis.call('EXISTS', live_log) == 1 then
    if redis.call('EXISTS', settle_log) == 0 then
      redis.call('RENAME', live_log, settle_log)
    else
      local log = redis.call('HGETALL', live_log)
      for i = 1, #log, 2 do
        redis.call('HSET', settle_log, log[i], log[i + 1])
      end
      redis.call('DEL', live_log)
    end
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 1
end
local live = redis.call('HGETALL', KEYS[1])
for i = 1, #live, 2 do
  local emp, value = live[i], live[i + 1]
  local old = redis.call('HGET', KEYS[2], emp)
  local merged = value
  if old and old ~= '' then merged = union_tokens(old, value) end
  redis.call('HSET', KEYS[2], emp, merged)
end
redis.call('DEL', KEYS[1])
return 1
