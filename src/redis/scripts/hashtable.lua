-- (Prepended to the scripts that write a board: punch.lua, layout.lua.)
-- A board that punches write is a hash table whatever the server's hash-max-listpack-entries
-- says (128 by default, 512 on some servers): in a compact listpack every field read or written
-- scans the whole board, which cost a bulk punch about a third of its Redis time at 200
-- employees a board. A board laid out by RESTORE (board/layout.rs) arrives compact, small until
-- its first punch converts it. A value longer than hash-max-listpack-value turns a hash into a
-- hash table for good; the padding field '~' (never an employee id) does not outlive the script.
local PAD_FIELD = '~'
local function pad() return string.rep('~', 1025) end

-- HSET of args[1..n] (field, value, ...) on a board (new, or compact), made a hash table in
-- the same HSET: the padding value converts it before any field is written.
local function hset_board(board, args, n)
  if redis.call('OBJECT', 'ENCODING', board) == 'hashtable' then
    redis.call('HSET', board, unpack(args, 1, n))
    return
  end
  args[n + 1], args[n + 2] = PAD_FIELD, pad()
  redis.call('HSET', board, unpack(args, 1, n + 2))
  redis.call('HDEL', board, PAD_FIELD)
end

-- An existing compact board (laid out, or written by an older version) made a hash table.
local function as_hashtable(board)
  if redis.call('OBJECT', 'ENCODING', board) == 'listpack' then
    redis.call('HSET', board, PAD_FIELD, pad())
    redis.call('HDEL', board, PAD_FIELD)
  end
end

