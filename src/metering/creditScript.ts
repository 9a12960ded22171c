/**
 * The bank's one Lua script (runs atomically in Redis). Per subject and UTC day, one hash:
 *
 * - `granted`: credits of the day spent or held in leases, by every instance (the limit caps it);
 * - `u:<instance>`: credits that instance has reported spent today (absolute); until it reports, its
 *   share of the seed (what the ledger held of its usage when the seed was read); kept when its lease
 *   is reaped (one field per process that spent of the day);
 * - `o:<instance>`: credits it holds (leased, not yet spent);
 * - `e:<instance>`: when its lease expires (Redis time, ms); renewed by every exchange;
 * - `f:<instance>`: of what it holds, the credits not held for admitted calls at its last exchange,
 *   plus the lease it was granted then (at most what a recall could bring back);
 * - `x`: the limit under which an instance gave its lease back on request (a recall): while the
 *   limit stays, leases are only what is asked for (the balance is at its end).
 *
 * An exchange first reaps the leases of instances that stopped renewing them (their held credits go
 * back to the pool), then takes the caller's report (absolute figures, so a resent one changes
 * nothing), then grants a lease of at most `maxLease`, shrinking with what is left: a quarter of the
 * remainder per live instance, never less than the least asked for (one call), never past the limit
 * (after a recall, exactly what is asked for, as far as it is there). Per subject there is also a
 * token bucket (`t`, `ts`) for the per-second limit, from which slices are taken: credits given back
 * first, then a slice when it holds the least asked for; else, when it is full, the least asked for
 * (more than a second's worth) all the same, and the bucket goes below zero by what it could not
 * cover: a debt paid off by refilling before anything more is granted. The bucket's key outlives
 * its debt.
 *
 * KEYS: per subject, its day hash and its bucket. ARGV[1]: one JSON document (ScriptArguments in
 * createRedisBank.ts): the instance id, the lease ttl (ms) and the subjects' BankSubjectRequests
 * (creditBank.ts, the same field names; a daily limit of -1: the subject has no daily balance, only
 * a per-second one). Answers, as JSON, `{"needsSeed":true}` when a day hash is absent and no seed
 * was sent; otherwise a BankSubjectReply per subject.
 */
export const creditScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local args = cjson.decode(ARGV[1])
local me = args.instance
local ttl = args.leaseTtlMs

for i, s in ipairs(args.subjects) do
  if s.dailyLimit >= 0 and redis.call('EXISTS', KEYS[2 * i - 1]) == 0 then
    if s.seedCredits == nil then return cjson.encode({needsSeed = true}) end
    redis.call('HSET', KEYS[2 * i - 1], 'granted', s.seedCredits)
    -- each instance's share: what the day counts of it until it reports (an older version sends none)
    if type(s.seedInstances) == 'table' then
      for who, credits in pairs(s.seedInstances) do
        redis.call('HSET', KEYS[2 * i - 1], 'u:' .. who, credits)
      end
    end
  end
end

local out = {}
for i, s in ipairs(args.subjects) do
  local day = KEYS[2 * i - 1]
  local bucket = KEYS[2 * i]
  local limit = s.dailyLimit
  local held = s.heldCredits
  local want = s.leaseCredits
  local wantMin = s.leaseMinCredits
  local rate = s.creditsPerSecond

  local leased, granted, kept, othersFree = 0, 0, 0, 0
  if limit >= 0 then
    local fields = redis.call('HGETALL', day)
    local expiries, holding, spent, frees, exact = {}, {}, {}, {}, nil
    for j = 1, #fields, 2 do
      local name, value = fields[j], tonumber(fields[j + 1])
      local kind, who = string.sub(name, 1, 2), string.sub(name, 3)
      if name == 'granted' then granted = value
      elseif kind == 'e:' then expiries[who] = value
      elseif kind == 'o:' then holding[who] = value
      elseif kind == 'u:' then spent[who] = value
      elseif kind == 'f:' then frees[who] = value
      elseif name == 'x' then exact = value end
    end
    local live = 1
    for who, expiry in pairs(expiries) do
      if who ~= me then
        if expiry <= now then
          granted = granted - (holding[who] or 0)
          -- what it reported stays counted, and known: it may come back (a Redis outage longer
          -- than the lease reaps every other instance; what each spent meanwhile counts then)
          redis.call('HDEL', day, 'e:' .. who, 'o:' .. who, 'f:' .. who)
        else
          if (holding[who] or 0) > 0 then live = live + 1 end
          othersFree = othersFree + (frees[who] or 0)
        end
      end
    end

    -- what the day counts of this instance already: its last report, or its share of the seed; with
    -- neither (it had no share, or an older version reaped its lease), what it wrote to the ledger
    granted = granted + (s.usedCredits - (spent[me] or s.flushedCredits))
    if holding[me] == nil then
      -- no record of this instance's lease (Redis lost its data, or the lease expired while this
      -- instance could not report): it keeps only what still fits under the limit
      held = math.max(0, math.min(held, limit - granted))
      granted = granted + held
    else
      granted = granted + held - holding[me]
    end
    if s.returning then exact = limit end
    local left = limit - granted
    if want > 0 and left >= wantMin then
      local size = math.max(wantMin, math.min(s.maxLeaseCredits, math.floor(left / (4 * live))))
      if exact == limit then size = want end
      leased = math.min(size, left)
    end
    granted = granted + leased
    redis.call('HSET', day, 'granted', granted, 'u:' .. me, s.usedCredits, 'o:' .. me, held + leased,
      'e:' .. me, now + ttl, 'f:' .. me, math.min(s.freeCredits, held) + leased)
    if s.returning then redis.call('HSET', day, 'x', limit) end
    redis.call('PEXPIRE', day, 172800000)
    kept = held
  end

  local rateGranted, rateWait = 0, 0
  local rateWant, rateMin = s.rateCredits, s.rateMinCredits
  if rate > 0 and (rateWant > 0 or s.rateReturnedCredits > 0) then
    local state = redis.call('HMGET', bucket, 't', 'ts')
    local tokens = tonumber(state[1]) or rate
    local since = tonumber(state[2]) or now
    tokens = math.min(rate, tokens + math.max(0, now - since) * rate / 1000 + s.rateReturnedCredits)
    if rateWant > 0 then
      if tokens >= rateMin then
        rateGranted = math.floor(math.min(tokens, math.max(rateWant, s.rateSliceCredits)))
        tokens = tokens - rateGranted
      elseif tokens >= rate then
        rateGranted = rateMin
        tokens = tokens - rateMin
      else
        rateWait = math.ceil((math.min(rateMin, rate) - tokens) * 1000 / rate)
      end
    end
    redis.call('HSET', bucket, 't', tostring(tokens), 'ts', now)
    redis.call('PEXPIRE', bucket, math.max(60000, math.ceil((rate - tokens) * 1000 / rate)))
  end
  out[i] = {
    leasedCredits = leased,
    grantedCredits = granted,
    rateGrantedCredits = rateGranted,
    rateWaitMs = rateWait,
    heldCredits = kept,
    othersFreeCredits = othersFree,
  }
end
return cjson.encode({needsSeed = false, subjects = out})
`
