import { DailyLimitError, RateLimitError } from '../errors/limitErrors.ts'
import { type Clock, nextUtcMidnight, utcDay, utcHour } from './clock.ts'
import { createLeaseDesks } from './createLeaseDesks.ts'
import { createUsageBuffer } from './createUsageBuffer.ts'
import type { UsageSpool } from './createUsageSpool.ts'
import type { CreditBank } from './creditBank.ts'
import type { DayCounter, Refusal } from './LocalLedger.ts'
import { RateSlice } from './RateSlice.ts'
import { TokenBucket } from './TokenBucket.ts'
import type { UsageStore } from './usageStore.ts'

/** Who pays for a request, and the limits that apply (resolved when keys load, not per request). */
export type MeterSubject = {
  accountId: number
  keyId: number
  /** accountSubject(accountId) and keySubject(keyId), made once. */
  accountCounter: string
  keyCounter: string
  accountDailyCredits: number
  accountCreditsPerSecond: number
  /** The key's own limits, when it has them (docs/compatibility.md §3). */
  keyDailyCredits: number | undefined
  keyCreditsPerSecond: number | undefined
}

/** Credits held for a request between admission and settlement. */
export type Admission = { subject: MeterSubject; day: string; reservedCredits: number }

/** One charged (or free) unit of work, for the usage history. */
export type UsageRecord = { method: string; network: string; credits: number; failover?: boolean }

export type Settlement = { chargedCredits: number; remainingCredits: number; resetSeconds: number }

export type Meter = {
  /**
   * Holds `costCredits` (the most the request can cost) against the daily balances and takes them
   * from the per-second buckets, or throws (rejects with) the 402/429 that refuses the request. Never
   * overdraws. In-process it answers at once; a shared balance may have to ask Redis first.
   */
  admit(subject: MeterSubject, costCredits: number): Admission | Promise<Admission>
  /** Charges what the request really cost (the sum of `usage`), releases the rest, records usage. */
  settle(admission: Admission, usage: UsageRecord[]): Settlement
  /**
   * Charges a WebSocket notification (docs/compatibility.md §2): daily balances only, no rate limit (the client did
   * not ask for it just now). False, charging nothing, when the balance cannot pay.
   */
  chargeNotification(subject: MeterSubject, usage: UsageRecord): boolean
  /** What the subject can still spend today (the smaller of the account's and the key's balance). */
  remainingCredits(subject: MeterSubject): number
  secondsToReset(): number
  /** Writes pending usage to the store now. */
  flush(): Promise<void>
  /** Stops the flush timer and flushes. */
  close(): Promise<void>
}

export type MeterOptions = {
  store: UsageStore
  clock: Clock
  /** How often pending usage is written (and, with a bank, reported); a crash loses at most this much usage. */
  flushMs: number
  onError?: (err: unknown) => void
  /** Where the last flush (on close) keeps what the store does not take (createUsageBuffer). */
  spool?: UsageSpool | undefined
  /**
   * Shares the daily balances and per-second limits with other instances (Redis): credits are
   * leased from the bank and spent locally. Without it this process is the only one counting.
   */
  bank?: CreditBank | undefined
  /** What the meter does while the bank cannot be reached (`metering.onRedisDown`). */
  onBankDown?: 'open' | 'closed'
  /** A lease is at most this many seconds of the subject's per-second limit; a slice of it, a quarter. */
  leaseSeconds?: number
  /** A lease this instance has not used for this long goes back to the bank. */
  idleMs?: number
  /**
   * At the end of a balance, the longest a call waits for other instances to give back credits they
   * hold unspent (docs/operations.md, Credits across instances).
   */
  recallMs?: number
}

type RateAllowance = TokenBucket | RateSlice

type SyncMeter = Omit<Meter, 'admit'> & { admit(subject: MeterSubject, costCredits: number): Admission }

/**
 * The credit ledger of one gateway process: counters in memory (nothing awaits the database on the
 * request path), usage written to the store every `flushMs` and on close, today's totals read back
 * at start so a restart neither resets nor loses usage.
 *
 * With a bank, the balances are shared: a call is admitted from this instance's lease at once; when
 * the lease (or per-second slice) cannot cover it, the call waits for one exchange with the bank,
 * batched with the other calls of its account that wait too. Leases are reported (and renewed)
 * every `flushMs`, given back when idle and on close (docs/operations.md, Credits across instances).
 */
export async function createMeter(options: MeterOptions & { bank?: undefined }): Promise<SyncMeter>
export async function createMeter(options: MeterOptions): Promise<Meter>
export async function createMeter({
  store,
  clock,
  flushMs,
  onError,
  spool,
  bank,
  onBankDown = 'open',
  leaseSeconds = 1,
  idleMs = 5_000,
  recallMs = 200,
}: MeterOptions): Promise<Meter> {
  const startDay = utcDay(clock.now())
  const loaded = await store.loadDailyUsage(startDay)
  const counters = new Map<string, DayCounter>()
  const buckets = new Map<string, RateAllowance>()
  const buffer = createUsageBuffer(store, { spool })
  let day = startDay
  let dayEndsMs = nextUtcMidnight(clock.now())
  let hour = utcHour(clock.now())
  let hourEndsMs = Math.floor(clock.now() / 3_600_000 + 1) * 3_600_000

  function tick(nowMs: number): void {
    if (nowMs >= hourEndsMs) {
      hour = utcHour(nowMs)
      hourEndsMs = Math.floor(nowMs / 3_600_000 + 1) * 3_600_000
    }
    if (nowMs >= dayEndsMs) {
      day = utcDay(nowMs)
      dayEndsMs = nextUtcMidnight(nowMs)
    }
  }

  function counter(subject: string): DayCounter {
    let found = counters.get(subject)
    if (found === undefined || found.day !== day) {
      const stored = day === startDay ? (loaded.get(subject) ?? 0) : 0
      found = {
        day,
        used: bank ? 0 : stored,
        reserved: 0,
        leased: 0,
        granted: stored,
        unsent: 0,
        reportedUsed: 0,
        reportedFree: 0,
        refresh: false,
        lastUseMs: 0,
      }
      counters.set(subject, found)
    }
    return found
  }

  function rate(subject: string, ratePerSecond: number, nowMs: number): RateAllowance {
    let found = buckets.get(subject)
    if (found === undefined) {
      found = bank ? new RateSlice(ratePerSecond, 1_000) : new TokenBucket(ratePerSecond, nowMs)
      buckets.set(subject, found)
    }
    found.ratePerSecond = ratePerSecond
    return found
  }

  /** Credits this process may still hold for calls: up to the limit alone, or up to its lease. */
  function available(found: DayCounter, limit: number, nowMs: number): number {
    const ceiling =
      desks === undefined ? limit : desks.leaseValid(nowMs) ? found.leased : found.used + found.reserved
    return ceiling - found.used - found.reserved
  }

  /** What is left of one balance: with a bank, the day's remainder as last seen plus this lease. */
  function left(found: DayCounter, limit: number, nowMs: number): number {
    if (desks === undefined) return limit - found.used - found.reserved
    return limit - found.granted - found.unsent + available(found, limit, nowMs)
  }

  function remaining(subject: MeterSubject, nowMs: number): number {
    let result = left(counter(subject.accountCounter), subject.accountDailyCredits, nowMs)
    if (subject.keyDailyCredits !== undefined) {
      result = Math.min(result, left(counter(subject.keyCounter), subject.keyDailyCredits, nowMs))
    }
    return Math.max(0, result)
  }

  /** The first check a call of this cost fails here and now, with the error that refuses it. */
  function refusalOf(subject: MeterSubject, costCredits: number, nowMs: number): Refusal | undefined {
    if (costCredits > available(counter(subject.accountCounter), subject.accountDailyCredits, nowMs)) {
      return { check: 'account', error: new DailyLimitError(dayEndsMs - nowMs) }
    }
    if (
      subject.keyDailyCredits !== undefined &&
      costCredits > available(counter(subject.keyCounter), subject.keyDailyCredits, nowMs)
    ) {
      return { check: 'key', error: new RateLimitError('keyCreditsPerDay', dayEndsMs - nowMs) }
    }
    const keyRate =
      subject.keyCreditsPerSecond === undefined
        ? undefined
        : rate(subject.keyCounter, subject.keyCreditsPerSecond, nowMs)
    const accountRate = rate(subject.accountCounter, subject.accountCreditsPerSecond, nowMs)
    if (keyRate && !keyRate.canTake(costCredits, nowMs)) {
      const waitMs = Math.max(
        keyRate.msUntilCanTake(costCredits, nowMs),
        accountRate.msUntilCanTake(costCredits, nowMs),
      )
      return { check: 'keyRate', error: new RateLimitError('keyCreditsPerSecond', waitMs) }
    }
    if (!accountRate.canTake(costCredits, nowMs)) {
      const waitMs = accountRate.msUntilCanTake(costCredits, nowMs)
      return { check: 'accountRate', error: new RateLimitError('planCreditsPerSecond', waitMs) }
    }
    return undefined
  }

  function hold(subject: MeterSubject, costCredits: number, nowMs: number): Admission {
    if (subject.keyCreditsPerSecond !== undefined) buckets.get(subject.keyCounter)?.take(costCredits, nowMs)
    buckets.get(subject.accountCounter)?.take(costCredits, nowMs)
    const account = counter(subject.accountCounter)
    const key = counter(subject.keyCounter)
    account.reserved += costCredits
    key.reserved += costCredits
    account.lastUseMs = nowMs
    key.lastUseMs = nowMs
    return { subject, day, reservedCredits: costCredits }
  }

  function admit(subject: MeterSubject, costCredits: number): Admission | Promise<Admission> {
    const nowMs = clock.now()
    tick(nowMs)
    const refusal = refusalOf(subject, costCredits, nowMs)
    if (refusal === undefined) return hold(subject, costCredits, nowMs)
    if (desks === undefined) throw refusal.error
    return desks.wait(subject, costCredits)
  }

  const desks =
    bank &&
    createLeaseDesks(
      {
        now() {
          const nowMs = clock.now()
          tick(nowMs)
          return nowMs
        },
        day: () => day,
        counters,
        counter,
        slice: (subject, creditsPerSecond, nowMs) => rate(subject, creditsPerSecond, nowMs) as RateSlice,
        available,
        left,
        refusalOf,
        hold,
        flushedCredits: buffer.flushedCredits,
        exclusive: buffer.exclusive,
      },
      { bank, store, onBankDown, leaseSeconds, idleMs, recallMs, onError },
    )

  // ---- charging ----

  function chargeNotification(subject: MeterSubject, usage: UsageRecord): boolean {
    const nowMs = clock.now()
    tick(nowMs)
    const credits = usage.credits
    const balances: [DayCounter, number][] = [[counter(subject.accountCounter), subject.accountDailyCredits]]
    if (subject.keyDailyCredits !== undefined)
      balances.push([counter(subject.keyCounter), subject.keyDailyCredits])
    let borrowed = false
    for (const [found, limit] of balances) {
      const missing = credits - available(found, limit, nowMs)
      if (missing <= 0) continue
      // a notification cannot wait for the bank: it borrows from the balance as last seen (reported at once)
      const mayBorrow = desks !== undefined && (desks.isUp() || onBankDown === 'open')
      if (!mayBorrow || !desks.borrow(found, limit, missing)) return false
      borrowed = true
    }
    for (const [found] of balances) found.reserved += credits
    if (balances.length === 1) counter(subject.keyCounter).reserved += credits
    settle({ subject, day, reservedCredits: credits }, [usage])
    if (borrowed) desks?.report(subject)
    return true
  }

  function settle(admission: Admission, usage: UsageRecord[]): Settlement {
    const nowMs = clock.now()
    tick(nowMs)
    const { subject } = admission
    let charged = 0
    for (const record of usage) {
      charged += record.credits
      buffer.addCall({
        keyId: subject.keyId,
        network: record.network,
        method: record.method,
        hour,
        credits: record.credits,
        failover: record.failover === true,
      })
    }
    settleCounter(subject.accountCounter, admission, charged)
    settleCounter(subject.keyCounter, admission, charged)
    const refund = admission.reservedCredits - charged
    if (refund > 0) {
      buckets.get(subject.accountCounter)?.giveBack(refund, nowMs)
      if (subject.keyCreditsPerSecond !== undefined) buckets.get(subject.keyCounter)?.giveBack(refund, nowMs)
      desks?.refunded(subject)
    }
    return {
      chargedCredits: charged,
      remainingCredits: remaining(subject, nowMs),
      resetSeconds: secondsUntil(dayEndsMs, nowMs),
    }
  }

  function settleCounter(subjectId: string, admission: Admission, charged: number): void {
    const found = counters.get(subjectId)
    if (found && found.day === admission.day) {
      found.reserved -= admission.reservedCredits
      found.used += charged
    }
    if (charged > 0) buffer.addCredits(subjectId, admission.day, charged)
  }

  function secondsToReset(): number {
    const nowMs = clock.now()
    return secondsUntil(nextUtcMidnight(nowMs), nowMs)
  }

  async function flush(): Promise<void> {
    await buffer.flush()
  }

  const timer = setInterval(() => {
    flush().catch((err) => onError?.(err))
    desks?.reportAll()
  }, flushMs)
  timer.unref()

  return {
    admit,
    settle,
    chargeNotification,
    remainingCredits: (subject) => {
      const nowMs = clock.now()
      tick(nowMs)
      return remaining(subject, nowMs)
    },
    secondsToReset,
    flush,
    async close() {
      clearInterval(timer)
      try {
        await buffer.close()
      } finally {
        // the last report gives every unspent lease back
        await desks?.close()
      }
    },
  }
}

/** Whole seconds from `nowMs` until `atMs`, rounded up; 0 once it has passed. */
function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((atMs - nowMs) / 1000))
}
