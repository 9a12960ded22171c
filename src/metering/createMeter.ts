import {
  BalanceUnavailableError,
  DailyLimitError,
  RateLimitError,
  type TollgateError,
} from '../errors/errors.ts'
import { type Clock, nextUtcMidnight, utcDay, utcHour } from './clock.ts'
import { createUsageBuffer } from './createUsageBuffer.ts'
import type { BankReply, BankSubjectRequest, CreditBank } from './creditBank.ts'
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
  /**
   * Shares the daily balances and per-second limits with other instances (Redis): credits are
   * leased from the bank and spent locally. Without it this process is the only one counting.
   */
  bank?: CreditBank | undefined
  /** What the meter does while the bank cannot be reached (`metering.onRedisDown`). */
  onBankDown?: 'open' | 'closed'
  /** A lease or per-second slice is at most this many seconds of the subject's per-second limit. */
  leaseSeconds?: number
  /** A lease this instance has not used for this long goes back to the bank. */
  idleMs?: number
}

type DayCounter = {
  day: string
  /** Without a bank: the day's charges (read back from the store at start). With one: this instance's. */
  used: number
  reserved: number
  /** With a bank: credits this instance got for the day (leases and borrowing), spent ones included. */
  leased: number
  /** Of `used`, what the store holds. */
  flushed: number
  /** The day's credits granted to every instance, as last seen (from the store until the bank answers). */
  granted: number
  /** Credits borrowed (bank down, or a notification) since the last exchange was sent. */
  unsent: number
  /** `used` as the bank last acknowledged it. */
  reportedUsed: number
  lastUseMs: number
}

type RateAllowance = TokenBucket | RateSlice
type Check = 'account' | 'key' | 'keyRate' | 'accountRate'
type Refusal = { check: Check; error: TollgateError }
type Waiter = {
  subject: MeterSubject
  costCredits: number
  rounds: number
  resolve: (admission: Admission) => void
  reject: (err: unknown) => void
}
/** One exchange with the bank at a time per account (its keys included), so reports never cross. */
type Desk = { waiters: Waiter[]; sync: boolean; running: Promise<void> | undefined }
type Entry = { subject: string; counter: DayCounter; sentUnsent: number; slice: RateSlice | undefined }

type SyncMeter = Omit<Meter, 'admit'> & { admit(subject: MeterSubject, costCredits: number): Admission }

/**
 * The credit ledger of one gateway process: counters in memory (nothing awaits the database on the
 * request path), usage written to the store every `flushMs` and on close, today's totals read back
 * at start so a restart neither resets nor loses usage.
 *
 * With a bank, the balances are shared: a call is admitted from this instance's lease at once; when
 * the lease (or per-second slice) cannot cover it, the call waits for one exchange with the bank,
 * batched with the other calls of its account that wait too. Leases are reported (and renewed)
 * every `flushMs`, given back when idle and on close (docs/operations.md, many instances).
 */
export async function createMeter(options: MeterOptions & { bank?: undefined }): Promise<SyncMeter>
export async function createMeter(options: MeterOptions): Promise<Meter>
export async function createMeter({
  store,
  clock,
  flushMs,
  onError,
  bank,
  onBankDown = 'open',
  leaseSeconds = 0.1,
  idleMs = 5_000,
}: MeterOptions): Promise<Meter> {
  const startDay = utcDay(clock.now())
  const loaded = await store.loadDailyUsage(startDay)
  const counters = new Map<string, DayCounter>()
  const buckets = new Map<string, RateAllowance>()
  const fallbackBuckets = new Map<string, TokenBucket>()
  const buffer = createUsageBuffer(store)
  let day = startDay
  let dayEndsMs = nextUtcMidnight(clock.now())
  let hour = utcHour(clock.now())
  let hourEndsMs = Math.floor(clock.now() / 3_600_000 + 1) * 3_600_000
  const desks = new Map<string, Desk>()
  const keysOfAccount = new Map<string, Map<string, MeterSubject>>()
  let bankUp = true
  let lastBankOkMs = clock.now()
  let closing = false

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
        flushed: 0,
        granted: stored,
        unsent: 0,
        reportedUsed: 0,
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
    const leaseValid = onBankDown === 'open' || bankUp || nowMs - lastBankOkMs < (bank?.leaseTtlMs ?? 0)
    const ceiling = bank === undefined ? limit : leaseValid ? found.leased : found.used + found.reserved
    return ceiling - found.used - found.reserved
  }

  /** What is left of one balance: with a bank, the day's remainder as last seen plus this lease. */
  function left(found: DayCounter, limit: number, nowMs: number): number {
    if (bank === undefined) return limit - found.used - found.reserved
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
    if (bank === undefined) throw refusal.error
    return new Promise((resolve, reject) => {
      enqueue(subject, { subject, costCredits, rounds: 0, resolve, reject })
    })
  }

  // ---- the bank: leases, slices and reports, one exchange at a time per account ----

  function enqueue(subject: MeterSubject, waiter: Waiter | undefined): void {
    let keys = keysOfAccount.get(subject.accountCounter)
    if (keys === undefined) {
      keys = new Map()
      keysOfAccount.set(subject.accountCounter, keys)
    }
    keys.set(subject.keyCounter, subject)
    let desk = desks.get(subject.accountCounter)
    if (desk === undefined) {
      desk = { waiters: [], sync: false, running: undefined }
      desks.set(subject.accountCounter, desk)
    }
    if (waiter) desk.waiters.push(waiter)
    else desk.sync = true
    if (bank && desk.running === undefined) desk.running = runDesk(bank, subject.accountCounter, desk)
  }

  /** Serves the desk until nothing waits; marks it idle in the same step that finds it empty. */
  async function runDesk(bank: CreditBank, accountCounter: string, desk: Desk): Promise<void> {
    try {
      while (desk.waiters.length > 0 || desk.sync) {
        const waiters = desk.waiters
        desk.waiters = []
        desk.sync = false
        try {
          desk.waiters.unshift(...(await serve(bank, accountCounter, waiters)))
        } catch (err) {
          for (const waiter of waiters) waiter.reject(err)
        }
      }
    } finally {
      desk.running = undefined
    }
  }

  /** One exchange for an account, its keys and the calls waiting; answers the calls still waiting. */
  async function serve(bank: CreditBank, accountCounter: string, waiters: Waiter[]): Promise<Waiter[]> {
    const nowMs = clock.now()
    tick(nowMs)
    const requests: BankSubjectRequest[] = []
    const entries: Entry[] = []
    const account = waiters[0]?.subject ?? keysOfAccount.get(accountCounter)?.values().next().value
    if (account === undefined) return waiters
    const subjects: [string, MeterSubject, boolean][] = [[accountCounter, account, true]]
    for (const subject of keysOfAccount.get(accountCounter)?.values() ?? []) {
      if (subject.keyDailyCredits !== undefined || subject.keyCreditsPerSecond !== undefined) {
        subjects.push([subject.keyCounter, subject, false])
      }
    }
    for (const [subjectId, subject, isAccount] of subjects) {
      const found = counter(subjectId)
      const waiting = isAccount ? waiters : waiters.filter((each) => each.subject.keyCounter === subjectId)
      const dailyLimit = isAccount ? subject.accountDailyCredits : (subject.keyDailyCredits ?? -1)
      const perSecond = isAccount ? subject.accountCreditsPerSecond : (subject.keyCreditsPerSecond ?? 0)
      if (closing || (waiting.length === 0 && nowMs - found.lastUseMs > idleMs)) {
        found.leased = found.used + found.reserved // idle, or closing: the lease goes back
      }
      const free = dailyLimit < 0 ? 0 : available(found, dailyLimit, nowMs)
      const costs = waiting.map((each) => each.costCredits)
      const leaseCredits = dailyLimit < 0 ? 0 : Math.max(0, sum(costs) - free)
      const slice = perSecond > 0 ? (rate(subjectId, perSecond, nowMs) as RateSlice) : undefined
      const tokens = slice?.tokens(nowMs) ?? 0
      const needs = slice ? costs.map((cost) => slice.needOf(cost)) : []
      const rateCredits = Math.max(0, sum(needs) - tokens)
      const leaseLimit = subject.keyCreditsPerSecond ?? subject.accountCreditsPerSecond
      requests.push({
        subject: subjectId,
        day: found.day,
        dailyLimit,
        usedCredits: found.used,
        heldCredits: found.leased - found.used,
        flushedCredits: found.flushed,
        seedCredits: undefined,
        leaseCredits,
        leaseMinCredits: leaseCredits > 0 ? Math.max(0, Math.min(...costs) - free) : 0,
        maxLeaseCredits: Math.max(leaseCredits, Math.floor(leaseLimit * leaseSeconds)),
        creditsPerSecond: perSecond,
        rateCredits,
        rateMinCredits: rateCredits > 0 ? Math.max(1, Math.min(...needs) - tokens) : 0,
        rateSliceCredits: Math.ceil(perSecond * leaseSeconds),
      })
      entries.push({ subject: subjectId, counter: found, sentUnsent: found.unsent, slice })
    }

    let reply: BankReply
    try {
      reply = await bank.exchange({ subjects: requests })
      if (reply.needsSeed) {
        const seeds = await store.loadDailyUsage(requests[0]?.day ?? day)
        for (const request of requests) request.seedCredits = seeds.get(request.subject) ?? 0
        reply = await bank.exchange({ subjects: requests })
      }
      if (reply.needsSeed) throw new Error('the credit bank asked for a seed twice')
    } catch (err) {
      bankDown(err)
      for (const waiter of waiters) serveWithoutBank(waiter)
      return []
    }
    const answeredMs = clock.now()
    bankIsUp(answeredMs)
    const bySubject = new Map<string, { waitMs: number; found: DayCounter }>()
    reply.subjects.forEach((answer, index) => {
      const entry = entries[index] as Entry
      const request = requests[index] as BankSubjectRequest
      // held credits the bank no longer counts (it lost them, and they no longer fit) are dropped
      const dropped = Math.min(
        request.heldCredits - answer.heldCredits,
        entry.counter.leased - entry.counter.used - entry.counter.reserved,
      )
      if (dropped > 0 && request.dailyLimit >= 0) entry.counter.leased -= dropped
      entry.counter.leased += answer.leasedCredits
      entry.counter.granted = answer.grantedCredits
      entry.counter.unsent -= entry.sentUnsent
      entry.counter.reportedUsed = request.usedCredits
      entry.slice?.add(answer.rateGrantedCredits, answeredMs)
      bySubject.set(entry.subject, { waitMs: answer.rateWaitMs, found: entry.counter })
    })

    const kept: Waiter[] = []
    for (const waiter of waiters) {
      const nowMs = clock.now()
      tick(nowMs)
      const { subject, costCredits } = waiter
      const refusal = refusalOf(subject, costCredits, nowMs)
      if (refusal === undefined) {
        waiter.resolve(hold(subject, costCredits, nowMs))
        continue
      }
      const onKey = refusal.check === 'key' || refusal.check === 'keyRate'
      const answer = bySubject.get(onKey ? subject.keyCounter : subject.accountCounter)
      let final: TollgateError | undefined
      if (refusal.check === 'account' || refusal.check === 'key') {
        const limit = refusal.check === 'key' ? (subject.keyDailyCredits ?? 0) : subject.accountDailyCredits
        // it fits in neither this lease nor what the bank has left: refused
        if (answer === undefined || left(answer.found, limit, nowMs) < costCredits) final = refusal.error
      } else if (answer !== undefined && answer.waitMs > 0) {
        const kind = refusal.check === 'keyRate' ? 'keyCreditsPerSecond' : 'planCreditsPerSecond'
        final = new RateLimitError(kind, answer.waitMs)
      }
      if (final) waiter.reject(final)
      else kept.push(waiter)
    }
    // each exchange serves or refuses someone; should one not, the calls do not wait for ever
    if (kept.length === waiters.length) {
      for (const waiter of kept) waiter.rounds++
      const stuck = kept.filter((waiter) => waiter.rounds > 4)
      for (const waiter of stuck)
        waiter.reject(refusalOf(waiter.subject, waiter.costCredits, clock.now())?.error)
      return kept.filter((waiter) => waiter.rounds <= 4)
    }
    return kept
  }

  /**
   * Redis cannot be reached: `closed` refuses what the lease cannot pay; `open` counts on locally.
   * Per-second limits hold per instance meanwhile, in both modes.
   */
  function serveWithoutBank(waiter: Waiter): void {
    const { subject, costCredits } = waiter
    for (let attempt = 0; attempt < 4; attempt++) {
      const nowMs = clock.now()
      tick(nowMs)
      const refusal = refusalOf(subject, costCredits, nowMs)
      if (refusal === undefined) {
        waiter.resolve(hold(subject, costCredits, nowMs))
        return
      }
      const daily = refusal.check === 'account' || refusal.check === 'key'
      const refused = daily && onBankDown === 'closed' ? new BalanceUnavailableError() : undefined
      if (refused || !borrowFor(subject, refusal, costCredits, nowMs)) {
        waiter.reject(refused ?? refusal.error)
        return
      }
    }
    waiter.reject(new BalanceUnavailableError())
  }

  /**
   * Without the bank, takes what one check lacks from the balance as last seen (daily), or from a
   * per-second bucket of this instance alone; reported, and so reconciled, with the next exchange.
   */
  function borrowFor(subject: MeterSubject, refusal: Refusal, costCredits: number, nowMs: number): boolean {
    if (refusal.check === 'account' || refusal.check === 'key') {
      const onKey = refusal.check === 'key'
      const found = counter(onKey ? subject.keyCounter : subject.accountCounter)
      const limit = onKey ? (subject.keyDailyCredits ?? 0) : subject.accountDailyCredits
      return borrow(found, limit, costCredits - available(found, limit, nowMs))
    }
    const subjectId = refusal.check === 'keyRate' ? subject.keyCounter : subject.accountCounter
    const perSecond =
      refusal.check === 'keyRate' ? (subject.keyCreditsPerSecond ?? 0) : subject.accountCreditsPerSecond
    let fallback = fallbackBuckets.get(subjectId)
    if (fallback === undefined) {
      fallback = new TokenBucket(perSecond, nowMs)
      fallbackBuckets.set(subjectId, fallback)
    }
    fallback.ratePerSecond = perSecond
    if (!fallback.canTake(costCredits, nowMs)) return false
    fallback.take(costCredits, nowMs)
    const slice = rate(subjectId, perSecond, nowMs) as RateSlice
    slice.add(slice.needOf(costCredits) - slice.tokens(nowMs), nowMs)
    return true
  }

  function borrow(found: DayCounter, limit: number, credits: number): boolean {
    if (credits > limit - found.granted - found.unsent) return false
    found.leased += credits
    found.unsent += credits
    return true
  }

  function bankDown(err: unknown): void {
    if (bankUp)
      onError?.(new Error(`credit bank unreachable; metering.onRedisDown is ${onBankDown}`, { cause: err }))
    bankUp = false
  }

  function bankIsUp(nowMs: number): void {
    bankUp = true
    lastBankOkMs = nowMs
  }

  /** Reports every account that holds a lease or has spent since its last report (also renews leases). */
  function syncBank(): void {
    for (const [subjectId, found] of counters) {
      if (!subjectId.startsWith('account:') || found.day !== day) continue
      if (found.leased === found.used && found.used === found.reportedUsed && found.unsent === 0) continue
      const account = keysOfAccount.get(subjectId)?.values().next().value
      if (account) enqueue(account, undefined)
    }
  }

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
      const mayBorrow = bank !== undefined && (bankUp || onBankDown === 'open')
      if (!mayBorrow || !borrow(found, limit, missing)) return false
      borrowed = true
    }
    for (const [found] of balances) found.reserved += credits
    if (balances.length === 1) counter(subject.keyCounter).reserved += credits
    settle({ subject, day, reservedCredits: credits }, [usage])
    if (borrowed) enqueue(subject, undefined)
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
    }
    return {
      chargedCredits: charged,
      remainingCredits: remaining(subject, nowMs),
      resetSeconds: secondsToReset(),
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
    return Math.max(0, Math.ceil((nextUtcMidnight(nowMs) - nowMs) / 1000))
  }

  /** Writes pending usage; what the store now holds counts as flushed (a seed for the bank counts it). */
  async function flush(): Promise<void> {
    for (const row of await buffer.flush()) {
      const found = counters.get(row.subject)
      if (found && found.day === row.day) found.flushed += row.credits
    }
  }

  const timer = setInterval(() => {
    flush().catch((err) => onError?.(err))
    if (bank) syncBank()
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
        await flush()
      } finally {
        if (bank) {
          // the last report gives every unspent lease back
          closing = true
          syncBank()
          await Promise.all([...desks.values()].map((desk) => desk.running))
        }
      }
    },
  }
}

function sum(values: number[]): number {
  let total = 0
  for (const value of values) total += value
  return total
}
