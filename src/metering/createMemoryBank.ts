import type {
  BankReply,
  BankRequest,
  BankSubjectReply,
  BankSubjectRequest,
  CreditBank,
  LeaseNotice,
} from './creditBank.ts'

export type MemoryBankOptions = {
  /** How long a lease outlives its holder's last exchange (then it goes back to the pool). */
  leaseTtlMs?: number
  /** Milliseconds since the epoch (Redis's TIME for the Redis bank); tests move it. */
  now?: () => number
}

/** The in-memory bank, shared by the processes that exchange with it under their own instance ids. */
export type MemoryBank = {
  /** The bank as one instance sees it (a worker process of `tollgate start --workers N`). */
  forInstance(instanceId: string): CreditBank
  leaseTtlMs: number
  close(): void
}

/** One subject's day: what every instance spent and holds (creditScript.ts's day hash). */
type Day = {
  granted: number
  spent: Map<string, number>
  holding: Map<string, number>
  expiries: Map<string, number>
  frees: Map<string, number>
  /** The limit under which a lease was given back on request: leases are then what is asked for. */
  exact: number | undefined
  expiresAt: number
}

/** One subject's per-second bucket (creditScript.ts's bucket hash). */
type Bucket = { tokens: number; since: number; expiresAt: number }

const dayKeepMs = 172_800_000
const bucketKeepMs = 60_000
const sweepMs = 60_000

/**
 * The credit bank in one process's memory, with the exact semantics of the Redis bank's Lua script
 * (creditScript.ts, step for step; creditBank.test.ts runs one suite against both). Exchanges run
 * one at a time (JavaScript's single thread), as the script runs atomically in Redis. The primary
 * process of `tollgate start --workers N` holds it when no Redis is configured; its workers reach it
 * over the cluster channel (createClusterBank.ts).
 */
export function createMemoryBank({
  leaseTtlMs = 15_000,
  now = Date.now,
}: MemoryBankOptions = {}): MemoryBank {
  const days = new Map<string, Day>()
  const buckets = new Map<string, Bucket>()
  const listeners = new Map<string, ((notice: LeaseNotice) => void)[]>()
  // days and buckets expire as their Redis keys do
  const sweeper = setInterval(() => {
    const at = now()
    for (const [key, day] of days) if (day.expiresAt <= at) days.delete(key)
    for (const [key, bucket] of buckets) if (bucket.expiresAt <= at) buckets.delete(key)
  }, sweepMs)
  sweeper.unref()

  function liveDay(key: string, at: number): Day | undefined {
    const day = days.get(key)
    if (day && day.expiresAt <= at) {
      days.delete(key)
      return undefined
    }
    return day
  }

  function exchange(me: string, { subjects }: BankRequest): BankReply {
    const at = now()
    for (const each of subjects) {
      const key = `${each.subject}:${each.day}`
      if (each.dailyLimit < 0 || liveDay(key, at)) continue
      if (each.seedCredits === undefined) return { needsSeed: true }
      days.set(key, {
        granted: each.seedCredits,
        spent: new Map(),
        holding: new Map(),
        expiries: new Map(),
        frees: new Map(),
        exact: undefined,
        expiresAt: at + dayKeepMs,
      })
    }
    return { needsSeed: false, subjects: subjects.map((each) => exchangeOne(me, each, at)) }
  }

  function exchangeOne(me: string, request: BankSubjectRequest, at: number): BankSubjectReply {
    let leased = 0
    let granted = 0
    let kept = 0
    let othersFree = 0
    const day = request.dailyLimit >= 0 ? days.get(`${request.subject}:${request.day}`) : undefined
    if (day) {
      const limit = request.dailyLimit
      granted = day.granted
      let live = 1
      for (const [who, expiry] of day.expiries) {
        if (who === me) continue
        if (expiry <= at) {
          // a holder that stopped renewing: its lease goes back to the pool
          granted -= day.holding.get(who) ?? 0
          day.expiries.delete(who)
          day.holding.delete(who)
          day.spent.delete(who)
          day.frees.delete(who)
        } else {
          if ((day.holding.get(who) ?? 0) > 0) live += 1
          othersFree += day.frees.get(who) ?? 0
        }
      }
      granted += request.usedCredits - (day.spent.get(me) ?? request.flushedCredits)
      let held = request.heldCredits
      const holding = day.holding.get(me)
      if (holding === undefined) {
        // no record of this instance's lease (it expired unreported): it keeps only what still fits
        held = Math.max(0, Math.min(held, limit - granted))
        granted += held
      } else {
        granted += held - holding
      }
      if (request.returning) day.exact = limit
      const left = limit - granted
      if (request.leaseCredits > 0 && left >= request.leaseMinCredits) {
        const size =
          day.exact === limit
            ? request.leaseCredits
            : Math.max(
                request.leaseMinCredits,
                Math.min(request.maxLeaseCredits, Math.floor(left / (4 * live))),
              )
        leased = Math.min(size, left)
      }
      granted += leased
      day.granted = granted
      day.spent.set(me, request.usedCredits)
      day.holding.set(me, held + leased)
      day.expiries.set(me, at + leaseTtlMs)
      day.frees.set(me, Math.min(request.freeCredits, held) + leased)
      day.expiresAt = at + dayKeepMs
      kept = held
    }

    let rateGranted = 0
    let rateWait = 0
    const rate = request.creditsPerSecond
    if (rate > 0 && (request.rateCredits > 0 || request.rateReturnedCredits > 0)) {
      let bucket = buckets.get(request.subject)
      if (bucket && bucket.expiresAt <= at) bucket = undefined
      let tokens = bucket?.tokens ?? rate
      const since = bucket?.since ?? at
      tokens = Math.min(rate, tokens + (Math.max(0, at - since) * rate) / 1000 + request.rateReturnedCredits)
      if (request.rateCredits > 0) {
        if (tokens >= request.rateMinCredits) {
          rateGranted = Math.floor(Math.min(tokens, Math.max(request.rateCredits, request.rateSliceCredits)))
          tokens -= rateGranted
        } else if (tokens >= rate) {
          // full, and the least asked for is more: granted all the same, the bucket goes into debt
          rateGranted = request.rateMinCredits
          tokens -= rateGranted
        } else {
          rateWait = Math.ceil(((Math.min(request.rateMinCredits, rate) - tokens) * 1000) / rate)
        }
      }
      // kept until the debt is paid and the bucket full again, as the Redis key is
      const keepMs = Math.max(bucketKeepMs, Math.ceil(((rate - tokens) * 1000) / rate))
      buckets.set(request.subject, { tokens, since: at, expiresAt: at + keepMs })
    }
    return {
      leasedCredits: leased,
      grantedCredits: granted,
      rateGrantedCredits: rateGranted,
      rateWaitMs: rateWait,
      heldCredits: kept,
      othersFreeCredits: othersFree,
    }
  }

  return {
    leaseTtlMs,
    forInstance: (instanceId) => ({
      leaseTtlMs,
      exchange: async (request) => exchange(instanceId, request),
      notify(notice) {
        // to every other instance, a turn later (as a message would arrive)
        for (const [other, each] of listeners) {
          if (other === instanceId) continue
          for (const listener of each) setImmediate(() => listener(structuredClone(notice)))
        }
      },
      onNotice(listener) {
        listeners.set(instanceId, [...(listeners.get(instanceId) ?? []), listener])
      },
      close: async () => {
        listeners.delete(instanceId)
      },
    }),
    close() {
      clearInterval(sweeper)
      days.clear()
      buckets.clear()
      listeners.clear()
    },
  }
}
