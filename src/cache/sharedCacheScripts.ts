import type { Buffer } from 'node:buffer'
import type { Redis as RedisClient } from 'ioredis'
import type { KeptHead } from './createSharedHeads.ts'

/**
 * Keeps one answer in a network's shared cache, within the network's byte budget. KEYS: the entry,
 * the network's index (a sorted set of entry keys by expiry, µs), its sizes (a hash of entry key →
 * bytes counted), its byte total, and the entry's load claim (lookupScript), given up. ARGV: the value, its ttl (ms), the bytes it counts, the budget.
 * Entries whose expiry has passed are dropped from the books first (at most 100 per call, so a call
 * stays short); then, while the new entry does not fit, the soonest-expiring ones are deleted. An
 * entry larger than the budget is not kept. Time is Redis's own, the same for every instance.
 * Answers 1 when kept, 0 when not.
 */
export const putScript = `
redis.call('DEL', KEYS[5])
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
 * Looks an answer up, or claims its load: KEYS: the entry, its load claim, then the dropped-block
 * markers of the hashes its key names. ARGV: the claim's ttl (ms), and `1` to claim (a first look)
 * or `0` (a look again while waiting). Answers { 1, value } when kept (and no marker is set); { 0 }
 * when a marker is set (a block the chain left: the caller loads, with no claim); { 2 } when the
 * caller now holds the claim (it loads, and its put or release gives the claim up); { 3 } when
 * another instance holds it (its answer is on the way: the caller looks again); { 0 } too when no
 * one holds it and the caller does not claim.
 */
export const lookupScript = `
for index = 3, #KEYS do
  if redis.call('EXISTS', KEYS[index]) == 1 then return { 0 } end
end
local value = redis.call('GET', KEYS[1])
if value then return { 1, value } end
if ARGV[2] == '1' then
  if redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[1])) then return { 2 } end
  return { 3 }
end
if redis.call('EXISTS', KEYS[2]) == 1 then return { 3 } end
return { 0 }
`

/**
 * Raises a chain's highest shown block number within its generation. KEYS: the number's key, the key
 * of when it was raised (Redis's clock, µs), the generation's key. ARGV: the number (decimal), the
 * channel to announce it on, the chain id, the number's ttl (ms), the generation the caller's number
 * belongs to, the generation's ttl (ms). A number of an older generation than the kept one (found
 * before a rewind its instance had not heard of) is refused; within the kept generation, only a
 * higher number is kept; a newer generation than the kept one (Redis lost it) is taken, with the
 * number; with no number kept (it expired), the number is kept in the kept generation. When kept, the number is kept with the time, announced as
 * `<chainId>:<number>:<time>:<generation>`, and { 1, number, time, generation } answered; else
 * { 0, the kept number, its time ('' when not known), the kept generation }.
 */
export const raiseHeadScript = `
local keptGeneration = redis.call('GET', KEYS[3]) or '0'
local generation = ARGV[5]
local kept = redis.call('GET', KEYS[1])
if not (kept and tonumber(kept)) then
  -- no number kept (expired): the number starts the kept generation's
  if tonumber(generation) < tonumber(keptGeneration) then generation = keptGeneration end
elseif tonumber(generation) < tonumber(keptGeneration)
  or (tonumber(generation) == tonumber(keptGeneration) and tonumber(ARGV[1]) <= tonumber(kept)) then
  return { 0, kept, redis.call('GET', KEYS[2]) or '', keptGeneration }
end
local t = redis.call('TIME')
local at = t[1] .. string.format('%06d', tonumber(t[2]))
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], at, 'PX', ttl)
redis.call('SET', KEYS[3], generation, 'PX', tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ':' .. ARGV[1] .. ':' .. at .. ':' .. generation)
return { 1, ARGV[1], at, generation }
`

/**
 * Lowers a chain's highest shown block number (a rewind of the chain itself): a new generation,
 * Redis's time (µs) or one more than the kept one, so that raises of numbers found before it are
 * refused. KEYS and ARGV as raiseHeadScript's, but for the generation (ARGV[5] unused). Keeps the
 * number whatever the kept one was, announces it like a raise and answers { number, time, generation }.
 */
export const lowerHeadScript = `
local t = redis.call('TIME')
local at = t[1] .. string.format('%06d', tonumber(t[2]))
local kept = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
local generation = string.format('%.0f', math.max(kept + 1, tonumber(at)))
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], at, 'PX', ttl)
redis.call('SET', KEYS[3], generation, 'PX', tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ':' .. ARGV[1] .. ':' .. at .. ':' .. generation)
return { ARGV[1], at, generation }
`

/**
 * Moves a chain (one genesis) to a new epoch: its shared answers are kept and read under new keys.
 * KEYS: the epoch's key. ARGV: the channel, the chain id, the genesis hash, the key's ttl (ms). The
 * epoch is Redis's time (µs), or one more than the kept one; announced as
 * `epoch:<chainId>:<genesis>:<epoch>` and answered.
 */
export const moveEpochScript = `
local t = redis.call('TIME')
local now = t[1] .. string.format('%06d', tonumber(t[2]))
local kept = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local epoch = string.format('%.0f', math.max(kept + 1, tonumber(now)))
redis.call('SET', KEYS[1], epoch, 'PX', tonumber(ARGV[4]))
redis.call('PUBLISH', ARGV[1], 'epoch:' .. ARGV[2] .. ':' .. ARGV[3] .. ':' .. epoch)
return epoch
`

/** A chain's number, raise time and generation as Redis answered them; undefined when neither number nor generation. */
export function toKeptHead(
  number: string | null | undefined,
  raisedAtUs: string | null | undefined,
  generation: string | null | undefined,
): KeptHead | undefined {
  const kept = typeof number === 'string' && /^\d{1,20}$/.test(number)
  // an instance of a version before generations announces none: the first generation's
  const keptGeneration = generation && /^\d{1,20}$/.test(generation) ? BigInt(generation) : 0n
  // no number (it expired) but a generation: the generation still holds
  if (!kept && keptGeneration === 0n) return undefined
  return {
    number: kept ? BigInt(number) : 0n,
    raisedAtUs: kept && raisedAtUs && /^\d{1,20}$/.test(raisedAtUs) ? raisedAtUs : undefined,
    generation: keptGeneration,
  }
}

/** A Redis client with the scripts above defined on it as commands (createSharedCache). */
export type ScriptRedis = RedisClient & {
  tollgateCachePut(
    entry: string,
    index: string,
    sizes: string,
    total: string,
    claim: string,
    value: string | Buffer,
    ttlMs: number,
    size: number,
    budget: number,
  ): Promise<number>
  /** lookupScript: the number of keys, the keys, the claim's ttl. */
  tollgateCacheLookupBuffer(keys: number, ...args: (string | number)[]): Promise<[number, Buffer?]>
  tollgateRaiseHead(
    key: string,
    raisedAtKey: string,
    generationKey: string,
    number: string,
    channel: string,
    chainId: number,
    ttlMs: number,
    generation: string,
    generationTtlMs: number,
  ): Promise<[number, string, string, string]>
  tollgateLowerHead(
    key: string,
    raisedAtKey: string,
    generationKey: string,
    number: string,
    channel: string,
    chainId: number,
    ttlMs: number,
    unused: string,
    generationTtlMs: number,
  ): Promise<[string, string, string]>
  tollgateMoveEpoch(
    key: string,
    channel: string,
    chainId: number,
    genesis: string,
    ttlMs: number,
  ): Promise<string>
}
