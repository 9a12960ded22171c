/**
 * Keeps one answer in a network's shared cache, within the network's byte budget. KEYS: the entry,
 * the network's index (a sorted set of entry keys by expiry, µs), its sizes (a hash of entry key →
 * bytes counted) and its byte total. ARGV: the value, its ttl (ms), the bytes it counts, the budget.
 * Entries whose expiry has passed are dropped from the books first (at most 100 per call, so a call
 * stays short); then, while the new entry does not fit, the soonest-expiring ones are deleted. An
 * entry larger than the budget is not kept. Time is Redis's own, the same for every instance.
 * Answers 1 when kept, 0 when not.
 */
export const putScript = `
local t = redis.call('TIME')
-- microseconds: answers kept one after the other have distinct expiries
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local entry, index, sizes, total = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ttl = tonumber(ARGV[2])
local size = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
if size > budget then return 0 end
local bytes = tonumber(redis.call('GET', total) or '0')

local function drop(member)
  bytes = bytes - tonumber(redis.call('HGET', sizes, member) or '0')
  redis.call('HDEL', sizes, member)
  redis.call('ZREM', index, member)
  redis.call('DEL', member)
end

for _, member in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, 100)) do
  drop(member)
end
if redis.call('HEXISTS', sizes, entry) == 1 then drop(entry) end
while bytes + size > budget do
  local soonest = redis.call('ZRANGE', index, 0, 0)[1]
  if not soonest then break end
  drop(soonest)
end
if bytes < 0 then bytes = 0 end

redis.call('SET', entry, ARGV[1], 'PX', ttl)
redis.call('ZADD', index, now + ttl * 1000, entry)
redis.call('HSET', sizes, entry, size)
bytes = bytes + size
redis.call('SET', total, bytes)
-- the books go when the last entry would have: nothing is left behind by a network no longer served
for _, key in ipairs({ index, sizes, total }) do
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
return 1
`

/**
 * Raises a network's highest shown block number. KEYS: the number's key, the key of when it was
 * raised (Redis's clock, µs). ARGV: the number (decimal), the channel to announce it on, the chain
 * id, the keys' ttl (ms). When higher than the kept one, the number is kept with the time, announced
 * as `<chainId>:<number>:<time>`, and { 1, number, time } answered; else { 0, the kept number, its
 * time ('' when not known) } (announced when it was raised).
 */
export const raiseHeadScript = `
local kept = redis.call('GET', KEYS[1])
if kept and tonumber(kept) and tonumber(ARGV[1]) <= tonumber(kept) then
  return { 0, kept, redis.call('GET', KEYS[2]) or '' }
end
local t = redis.call('TIME')
local at = t[1] .. string.format('%06d', tonumber(t[2]))
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], at, 'PX', ttl)
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ':' .. ARGV[1] .. ':' .. at)
return { 1, ARGV[1], at }
`
