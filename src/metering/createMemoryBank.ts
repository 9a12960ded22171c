import { systemTimers, type Timers } from '../failsafe/Timers.ts'
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
  /** The sweep of expired days and buckets runs on these. */
  timers?: Timers
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
 * The credit bank in one process's memory, with the semantics of the Redis bank's Lua script
 * (creditScript.ts describes them: reap expired leases, take the report, grant a lease, take from the
 * bucket). bankSemantics.test.ts pins both to one table of cases, and creditBank.test.ts runs one
 * suite against both. Exchanges run
 * one at a time (JavaScript's single thread), as the script runs atomically in Redis. The primary
 * process of `tollgate start --workers N` holds it when no Redis is configured; its workers reach it
 * over the cluster channel (createClusterBank.ts).
 */
export function createMemoryBank({
  leaseTtlMs = 15_000,
  now = Date.now,
  timers = systemTimers,
}: MemoryBankOptions = {}): MemoryBank {
  const days = new Map<string, Day>()
  const buckets = new Map<string, Bucket>()
  const listeners = new Map<string, ((notice: LeaseNotice) => void)[]>()
  // days and buckets expire as their Redis keys do
  let sweeper: unknown
  const sweep = () => {
    const at = now()
    for (const [key, day] of days) if (day.expiresAt <= at) days.delete(key)
    for (const [key, bucket] of buckets) if (bucket.expiresAt <= at) buckets.delete(key)
    sweeper = timers.setTimeout(sweep, sweepMs)
    ;(sweeper as { unref?: () => void }).unref?.()
  }
  sweeper = timers.setTimeout(sweep, sweepMs)
  ;(sweeper as { unref?: () => void }).unref?.()

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
        // each instance's share: what the day counts of it until it reports
        spent: new Map(Object.entries(each.seedInstances ?? {})),
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
    const day = request.dailyLimit >= 0 ? days.get(`${request.subject}:${request.day}`) : undefined
    const daily = day ? exchangeDay(day, me, request, at) : { leased: 0, granted: 0, held: 0, othersFree: 0 }
    const rate = takeFromBucket(request, at)
    return {
      leasedCredits: daily.leased,
      grantedCredits: daily.granted,
      rateGrantedCredits: rate.granted,
      rateWaitMs: rate.waitMs,
      heldCredits: daily.held,
      othersFreeCredits: daily.othersFree,
    }
  }

  /** The daily balance: reap expired leases, take the report, grant a lease. */
  function exchangeDay(day: Day, me: string, request: BankSubjectRequest, at: number) {
    const limit = request.dailyLimit
    const { live, othersFree } = reapAndCount(day, me, at)
    // the report: absolute figures, so a resent one changes nothing. What the day counts of this
    // instance already: its last report, or its share of the seed; with neither (it had no share),
    // what it wrote to the ledger
    day.granted += request.usedCredits - (day.spent.get(me) ?? request.flushedCredits)
    let held = request.heldCredits
    const holding = day.holding.get(me)
    if (holding === undefined) {
      // no record of this instance's lease (it expired unreported): it keeps only what still fits
      held = Math.max(0, Math.min(held, limit - day.granted))
      day.granted += held
    } else {
      day.granted += held - holding
    }
    if (request.returning) day.exact = limit
    // the lease: a quarter of what is left per live holder, at least the least asked for, at most
    // maxLease; after a recall (the end of the balance), what is asked for
    const left = limit - day.granted
    let leased = 0
    if (request.leaseCredits > 0 && left >= request.leaseMinCredits) {
      const quarter = Math.min(request.maxLeaseCredits, Math.floor(left / (4 * live)))
      const size = day.exact === limit ? request.leaseCredits : Math.max(request.leaseMinCredits, quarter)
      leased = Math.min(size, left)
    }
    day.granted += leased
    day.spent.set(me, request.usedCredits)
    day.holding.set(me, held + leased)
    day.expiries.set(me, at + leaseTtlMs)
    day.frees.set(me, Math.min(request.freeCredits, held) + leased)
    day.expiresAt = at + dayKeepMs
    return { leased, granted: day.granted, held, othersFree }
  }

  /**
   * Leases of holders that stopped renewing go back to the pool; of the others, how many hold credits
   * (with this instance: the live holders) and what they hold free.
   */
  function reapAndCount(day: Day, me: string, at: number): { live: number; othersFree: number } {
    let live = 1
    let othersFree = 0
    for (const [who, expiry] of day.expiries) {
      if (who === me) continue
      if (expiry <= at) {
        day.granted -= day.holding.get(who) ?? 0
        day.expiries.delete(who)
        day.holding.delete(who)
        // what it reported stays counted, and known: it may come back
        day.frees.delete(who)
      } else {
        if ((day.holding.get(who) ?? 0) > 0) live += 1
        othersFree += day.frees.get(who) ?? 0
      }
    }
    return { live, othersFree }
  }

  /**
   * The per-second bucket: refilled by time and what comes back; a slice when it holds the least
   * asked for; on a full bucket, the least asked for all the same (into debt); else how long to wait.
   */
  function takeFromBucket(request: BankSubjectRequest, at: number): { granted: number; waitMs: number } {
    const rate = request.creditsPerSecond
    if (rate <= 0 || (request.rateCredits <= 0 && request.rateReturnedCredits <= 0)) {
      return { granted: 0, waitMs: 0 }
    }
    let bucket = buckets.get(request.subject)
    if (bucket && bucket.expiresAt <= at) bucket = undefined
    const since = bucket?.since ?? at
    let tokens = bucket?.tokens ?? rate
    tokens = Math.min(rate, tokens + (Math.max(0, at - since) * rate) / 1000 + request.rateReturnedCredits)
    let granted = 0
    let waitMs = 0
    if (request.rateCredits > 0) {
      if (tokens >= request.rateMinCredits) {
        granted = Math.floor(Math.min(tokens, Math.max(request.rateCredits, request.rateSliceCredits)))
      } else if (tokens >= rate) {
        granted = request.rateMinCredits
      } else {
        waitMs = Math.ceil(((Math.min(request.rateMinCredits, rate) - tokens) * 1000) / rate)
      }
      tokens -= granted
    }
    // kept until the debt is paid and the bucket full again, as the Redis key is
    const keepMs = Math.max(bucketKeepMs, Math.ceil(((rate - tokens) * 1000) / rate))
    buckets.set(request.subject, { tokens, since: at, expiresAt: at + keepMs })
    return { granted, waitMs }
  }

  return {
    leaseTtlMs,
    forInstance: (instanceId) => ({
      instanceId,
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
      timers.clearTimeout(sweeper)
      days.clear()
      buckets.clear()
      listeners.clear()
    },
  }
}
