import { DailyLimitError, RateLimitError } from '../errors/limitErrors.ts'
import type { BankHealth } from './BankHealth.ts'
import { type Clock, nextUtcMidnight, utcDay, utcHour } from './clock.ts'
import { LocalBalance } from './LocalBalance.ts'
import type { Admission, MeterSubject, Refusal } from './meterTypes.ts'
import { RateSlice } from './RateSlice.ts'
import { TokenBucket } from './TokenBucket.ts'

type RateAllowance = TokenBucket | RateSlice

/**
 * The balances and per-second allowances of one gateway process, by subject, for the current UTC
 * day (and hour, for the usage history). Alone (no bank), a balance is the day's limit less its
 * charges and the allowances are token buckets; shared (a bank), a balance is this instance's lease
 * and the allowances are slices of the bank's buckets (createBankClient.ts fills them).
 */
export class LocalLedger {
  readonly balances = new Map<string, LocalBalance>()
  readonly #allowances = new Map<string, RateAllowance>()
  readonly #startDay: string
  #day: string
  #dayEndsMs: number
  #hour: string
  #hourEndsMs: number

  constructor(
    private readonly clock: Clock,
    /** Today's charges from the usage store, by subject, read at start. */
    private readonly loaded: ReadonlyMap<string, number>,
    /** Set when the balances are shared through a bank. */
    private readonly bank: BankHealth | undefined,
  ) {
    const nowMs = clock.now()
    this.#startDay = utcDay(nowMs)
    this.#day = this.#startDay
    this.#dayEndsMs = nextUtcMidnight(nowMs)
    this.#hour = utcHour(nowMs)
    this.#hourEndsMs = Math.floor(nowMs / 3_600_000 + 1) * 3_600_000
  }

  /** The time, with the day and hour moved on to it. */
  now(): number {
    const nowMs = this.clock.now()
    if (nowMs >= this.#hourEndsMs) {
      this.#hour = utcHour(nowMs)
      this.#hourEndsMs = Math.floor(nowMs / 3_600_000 + 1) * 3_600_000
    }
    if (nowMs >= this.#dayEndsMs) {
      this.#day = utcDay(nowMs)
      this.#dayEndsMs = nextUtcMidnight(nowMs)
    }
    return nowMs
  }

  day(): string {
    return this.#day
  }

  hour(): string {
    return this.#hour
  }

  dayEndsMs(): number {
    return this.#dayEndsMs
  }

  /** The subject's balance for the current day (a new day starts from nothing). */
  balance(subjectId: string): LocalBalance {
    let found = this.balances.get(subjectId)
    if (found === undefined || found.day !== this.#day) {
      const stored = this.#day === this.#startDay ? (this.loaded.get(subjectId) ?? 0) : 0
      found = new LocalBalance(this.#day, stored, this.bank !== undefined)
      this.balances.set(subjectId, found)
    }
    return found
  }

  /** The subject's per-second allowance, at its current limit. */
  allowance(subjectId: string, ratePerSecond: number, nowMs: number): RateAllowance {
    let found = this.#allowances.get(subjectId)
    if (found === undefined) {
      found = this.bank ? new RateSlice(ratePerSecond, 1_000) : new TokenBucket(ratePerSecond, nowMs)
      this.#allowances.set(subjectId, found)
    }
    found.changeRate(ratePerSecond)
    return found
  }

  /** With a bank: the subject's slice of the shared per-second budget. */
  slice(subjectId: string, ratePerSecond: number, nowMs: number): RateSlice {
    return this.allowance(subjectId, ratePerSecond, nowMs) as RateSlice
  }

  /** Credits this process may still hold for calls: up to the limit alone, or up to its lease. */
  available(found: LocalBalance, limit: number, nowMs: number): number {
    if (this.bank === undefined) return limit - found.used - found.reserved
    return this.bank.leaseValid(nowMs) ? found.free() : 0
  }

  /** What is left of one balance: with a bank, the day's remainder as last seen plus this lease. */
  left(found: LocalBalance, limit: number, nowMs: number): number {
    if (this.bank === undefined) return limit - found.used - found.reserved
    return found.poolLeft(limit) + this.available(found, limit, nowMs)
  }

  /** What the subject can still spend today (the smaller of the account's and the key's balance). */
  remaining(subject: MeterSubject, nowMs: number): number {
    let result = this.left(this.balance(subject.accountCounter), subject.accountDailyCredits, nowMs)
    if (subject.keyDailyCredits !== undefined) {
      result = Math.min(result, this.left(this.balance(subject.keyCounter), subject.keyDailyCredits, nowMs))
    }
    return Math.max(0, result)
  }

  /**
   * The share (0 to 1) of a balance of `limit` the subject has used today, as last seen here. Makes
   * no balance for a subject it has none for (the count read at start stands in for it).
   */
  usedShare(subjectId: string, limit: number, nowMs: number): number {
    const found = this.balances.get(subjectId)
    const left =
      found !== undefined && found.day === this.#day
        ? this.left(found, limit, nowMs)
        : limit - (this.#day === this.#startDay ? (this.loaded.get(subjectId) ?? 0) : 0)
    return Math.min(1, Math.max(0, 1 - left / limit))
  }

  /** The first check a call of this cost fails here and now, with the error that refuses it. */
  refusalOf(subject: MeterSubject, costCredits: number, nowMs: number): Refusal | undefined {
    const dayLeftMs = this.#dayEndsMs - nowMs
    if (
      costCredits > this.available(this.balance(subject.accountCounter), subject.accountDailyCredits, nowMs)
    ) {
      return { check: 'account', error: new DailyLimitError(dayLeftMs) }
    }
    if (
      subject.keyDailyCredits !== undefined &&
      costCredits > this.available(this.balance(subject.keyCounter), subject.keyDailyCredits, nowMs)
    ) {
      return { check: 'key', error: new RateLimitError('keyCreditsPerDay', dayLeftMs) }
    }
    const keyRate =
      subject.keyCreditsPerSecond === undefined
        ? undefined
        : this.allowance(subject.keyCounter, subject.keyCreditsPerSecond, nowMs)
    const accountRate = this.allowance(subject.accountCounter, subject.accountCreditsPerSecond, nowMs)
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

  /** Holds a call that passed refusalOf: from both daily balances and both per-second allowances. */
  hold(subject: MeterSubject, costCredits: number, nowMs: number): Admission {
    if (subject.keyCreditsPerSecond !== undefined)
      this.#allowances.get(subject.keyCounter)?.take(costCredits, nowMs)
    this.#allowances.get(subject.accountCounter)?.take(costCredits, nowMs)
    this.balance(subject.accountCounter).hold(costCredits, nowMs)
    this.balance(subject.keyCounter).hold(costCredits, nowMs)
    return { subject, day: this.#day, reservedCredits: costCredits }
  }

  /**
   * Holds a notification's charge (settled at once) from both daily balances: no per-second
   * allowance (the client did not ask for it), no mark of the lease's use.
   */
  holdNotification(subject: MeterSubject, credits: number): void {
    this.balance(subject.accountCounter).holdNotification(credits)
    this.balance(subject.keyCounter).holdNotification(credits)
  }

  /** A call settled for `chargedCredits`: its balances charged, what it held beyond released. */
  settle(admission: Admission, chargedCredits: number, nowMs: number): void {
    const { subject } = admission
    for (const subjectId of [subject.accountCounter, subject.keyCounter]) {
      const found = this.balances.get(subjectId)
      if (found && found.day === admission.day) found.settle(admission.reservedCredits, chargedCredits)
    }
    const refund = admission.reservedCredits - chargedCredits
    if (refund > 0) {
      this.#allowances.get(subject.accountCounter)?.giveBack(refund, nowMs)
      if (subject.keyCreditsPerSecond !== undefined)
        this.#allowances.get(subject.keyCounter)?.giveBack(refund, nowMs)
    }
  }
}
