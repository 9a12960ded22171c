import { DailyLimitError, RateLimitError } from '../errors/errors.ts'
import { type Clock, nextUtcMidnight, utcDay, utcHour } from './clock.ts'
import { TokenBucket } from './TokenBucket.ts'
import type { HourlyUsage, UsageStore } from './usageStore.ts'

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
  /** How often pending usage is written; a crash loses at most this much usage. */
  flushMs: number
  onError?: (err: unknown) => void
}

type DayCounter = { day: string; used: number; reserved: number }

/**
 * The credit ledger of one gateway process: counters in memory (nothing awaits the database on the
 * request path), usage written to the store every `flushMs` and on close, today's totals read back
 * at start so a restart neither resets nor loses usage.
 */
export async function createMeter({
  store,
  clock,
  flushMs,
  onError,
}: MeterOptions): Promise<
  Omit<Meter, 'admit'> & { admit(subject: MeterSubject, costCredits: number): Admission }
> {
  const startDay = utcDay(clock.now())
  const loaded = await store.loadDailyUsage(startDay)
  const counters = new Map<string, DayCounter>()
  const buckets = new Map<string, TokenBucket>()
  let pendingDaily = new Map<string, number>()
  let pendingHourly = new Map<string, HourlyUsage>()
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
      found = { day, used: day === startDay ? (loaded.get(subject) ?? 0) : 0, reserved: 0 }
      counters.set(subject, found)
    }
    return found
  }

  function bucket(subject: string, ratePerSecond: number, nowMs: number): TokenBucket {
    let found = buckets.get(subject)
    if (found === undefined) {
      found = new TokenBucket(ratePerSecond, nowMs)
      buckets.set(subject, found)
    }
    found.ratePerSecond = ratePerSecond
    return found
  }

  function remaining(subject: MeterSubject): number {
    const account = counter(subject.accountCounter)
    let left = subject.accountDailyCredits - account.used - account.reserved
    if (subject.keyDailyCredits !== undefined) {
      const key = counter(subject.keyCounter)
      left = Math.min(left, subject.keyDailyCredits - key.used - key.reserved)
    }
    return Math.max(0, left)
  }

  function admit(subject: MeterSubject, costCredits: number): Admission {
    const nowMs = clock.now()
    tick(nowMs)
    const account = counter(subject.accountCounter)
    if (account.used + account.reserved + costCredits > subject.accountDailyCredits)
      throw new DailyLimitError(dayEndsMs - nowMs)
    const key = counter(subject.keyCounter)
    if (
      subject.keyDailyCredits !== undefined &&
      key.used + key.reserved + costCredits > subject.keyDailyCredits
    ) {
      throw new RateLimitError('keyCreditsPerDay', dayEndsMs - nowMs)
    }
    const keyBucket =
      subject.keyCreditsPerSecond === undefined
        ? undefined
        : bucket(subject.keyCounter, subject.keyCreditsPerSecond, nowMs)
    const accountBucket = bucket(subject.accountCounter, subject.accountCreditsPerSecond, nowMs)
    if (keyBucket && !keyBucket.canTake(costCredits, nowMs)) {
      const waitMs = Math.max(
        keyBucket.msUntilCanTake(costCredits, nowMs),
        accountBucket.msUntilCanTake(costCredits, nowMs),
      )
      throw new RateLimitError('keyCreditsPerSecond', waitMs)
    }
    if (!accountBucket.canTake(costCredits, nowMs)) {
      throw new RateLimitError('planCreditsPerSecond', accountBucket.msUntilCanTake(costCredits, nowMs))
    }

    keyBucket?.take(costCredits, nowMs)
    accountBucket.take(costCredits, nowMs)
    account.reserved += costCredits
    key.reserved += costCredits
    return { subject, day, reservedCredits: costCredits }
  }

  function chargeNotification(subject: MeterSubject, usage: UsageRecord): boolean {
    tick(clock.now())
    const account = counter(subject.accountCounter)
    const key = counter(subject.keyCounter)
    const credits = usage.credits
    if (account.used + account.reserved + credits > subject.accountDailyCredits) return false
    if (subject.keyDailyCredits !== undefined && key.used + key.reserved + credits > subject.keyDailyCredits)
      return false
    account.reserved += credits
    key.reserved += credits
    settle({ subject, day, reservedCredits: credits }, [usage])
    return true
  }

  function settle(admission: Admission, usage: UsageRecord[]): Settlement {
    const nowMs = clock.now()
    tick(nowMs)
    const { subject } = admission
    let charged = 0
    for (const record of usage) {
      charged += record.credits
      const id = `${subject.keyId}|${record.network}|${record.method}|${hour}`
      const row = pendingHourly.get(id)
      if (row) {
        row.calls++
        row.credits += record.credits
        if (record.failover) row.failoverCalls++
      } else {
        pendingHourly.set(id, {
          keyId: subject.keyId,
          network: record.network,
          method: record.method,
          hour,
          calls: 1,
          credits: record.credits,
          failoverCalls: record.failover ? 1 : 0,
        })
      }
    }
    settleCounter(subject.accountCounter, admission, charged)
    settleCounter(subject.keyCounter, admission, charged)
    const refund = admission.reservedCredits - charged
    if (refund > 0) {
      buckets.get(subject.accountCounter)?.giveBack(refund, nowMs)
      if (subject.keyCreditsPerSecond !== undefined) buckets.get(subject.keyCounter)?.giveBack(refund, nowMs)
    }
    return { chargedCredits: charged, remainingCredits: remaining(subject), resetSeconds: secondsToReset() }
  }

  function settleCounter(subjectId: string, admission: Admission, charged: number): void {
    const found = counters.get(subjectId)
    if (found && found.day === admission.day) {
      found.reserved -= admission.reservedCredits
      found.used += charged
    }
    if (charged > 0) {
      const id = `${subjectId}|${admission.day}`
      pendingDaily.set(id, (pendingDaily.get(id) ?? 0) + charged)
    }
  }

  function secondsToReset(): number {
    const nowMs = clock.now()
    return Math.max(0, Math.ceil((nextUtcMidnight(nowMs) - nowMs) / 1000))
  }

  /** Flushes run one after another; a failed one leaves its usage pending for the next. */
  let flushing: Promise<void> = Promise.resolve()
  async function flushOnce(): Promise<void> {
    if (pendingDaily.size === 0 && pendingHourly.size === 0) return
    const daily = pendingDaily
    const hourly = pendingHourly
    pendingDaily = new Map()
    pendingHourly = new Map()
    try {
      await store.addUsage({
        daily: [...daily].map(([id, credits]) => {
          const at = id.lastIndexOf('|')
          return { subject: id.slice(0, at), day: id.slice(at + 1), credits }
        }),
        hourly: [...hourly.values()],
      })
    } catch (err) {
      // keep what could not be written: it goes with the next flush
      for (const [id, credits] of daily) pendingDaily.set(id, (pendingDaily.get(id) ?? 0) + credits)
      for (const [id, row] of hourly) {
        const newer = pendingHourly.get(id)
        if (newer) {
          newer.calls += row.calls
          newer.credits += row.credits
          newer.failoverCalls += row.failoverCalls
        } else pendingHourly.set(id, row)
      }
      throw err
    }
  }
  function flush(): Promise<void> {
    const next = flushing.then(flushOnce)
    flushing = next.catch(() => undefined)
    return next
  }

  const timer = setInterval(() => flush().catch((err) => onError?.(err)), flushMs)
  timer.unref()

  return {
    admit,
    settle,
    chargeNotification,
    remainingCredits: (subject) => {
      tick(clock.now())
      return remaining(subject)
    },
    secondsToReset,
    flush,
    async close() {
      clearInterval(timer)
      await flush()
    },
  }
}
