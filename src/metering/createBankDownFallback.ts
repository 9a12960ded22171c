import { BalanceUnavailableError, RateLimitError } from '../errors/limitErrors.ts'
import type { LocalLedger } from './LocalLedger.ts'
import type { Admission, MeterSubject, Refusal } from './meterTypes.ts'
import { TokenBucket } from './TokenBucket.ts'

export type BankDownFallback = {
  /** Admits a call the lease could not while the bank is away; throws the error that refuses it. */
  admit(subject: MeterSubject, costCredits: number): Admission
}

/**
 * How a shared meter serves while Redis cannot be reached (docs/operations.md, Credits across
 * instances): `closed` refuses what the lease cannot pay; `open` counts on locally, from the balance
 * as last seen. Per-second limits hold per instance meanwhile, in both modes, by a bucket of this
 * instance alone. What is borrowed is reported, and so reconciled, with the next exchange.
 */
export function createBankDownFallback(ledger: LocalLedger, onBankDown: 'open' | 'closed'): BankDownFallback {
  const buckets = new Map<string, TokenBucket>()

  /**
   * Takes what one check lacks from the balance as last seen (daily), or from a per-second bucket of
   * this instance alone.
   */
  function borrowFor(subject: MeterSubject, refusal: Refusal, costCredits: number, nowMs: number): boolean {
    if (refusal.check === 'account' || refusal.check === 'key') {
      const onKey = refusal.check === 'key'
      const found = ledger.balance(onKey ? subject.keyCounter : subject.accountCounter)
      const limit = onKey ? (subject.keyDailyCredits ?? 0) : subject.accountDailyCredits
      return found.borrow(limit, costCredits - ledger.available(found, limit, nowMs))
    }
    const { subjectId, perSecond, bucket } = bucketOf(subject, refusal, nowMs)
    if (!bucket.canTake(costCredits, nowMs)) return false
    bucket.take(costCredits, nowMs)
    const slice = ledger.slice(subjectId, perSecond, nowMs)
    slice.add(costCredits - slice.tokens(nowMs), nowMs)
    return true
  }

  /** The per-second bucket of this instance alone that stands in for the bank's while it is away. */
  function bucketOf(subject: MeterSubject, refusal: Refusal, nowMs: number) {
    const subjectId = refusal.check === 'keyRate' ? subject.keyCounter : subject.accountCounter
    const perSecond =
      refusal.check === 'keyRate' ? (subject.keyCreditsPerSecond ?? 0) : subject.accountCreditsPerSecond
    let bucket = buckets.get(subjectId)
    if (bucket === undefined) {
      bucket = new TokenBucket(perSecond, nowMs)
      buckets.set(subjectId, bucket)
    }
    bucket.changeRate(perSecond)
    return { subjectId, perSecond, bucket }
  }

  /** The 429 of a per-second limit while the bank is away: when this instance's own bucket would admit the call. */
  function rateRefusal(subject: MeterSubject, refusal: Refusal, costCredits: number, nowMs: number) {
    const kind = refusal.check === 'keyRate' ? 'keyCreditsPerSecond' : 'planCreditsPerSecond'
    const { bucket } = bucketOf(subject, refusal, nowMs)
    return new RateLimitError(kind, bucket.msUntilCanTake(costCredits, nowMs))
  }

  return {
    admit(subject, costCredits) {
      for (let attempt = 0; attempt < 4; attempt++) {
        const nowMs = ledger.now()
        const refusal = ledger.refusalOf(subject, costCredits, nowMs)
        if (refusal === undefined) return ledger.hold(subject, costCredits, nowMs)
        const daily = refusal.check === 'account' || refusal.check === 'key'
        if (daily && onBankDown === 'closed') throw new BalanceUnavailableError()
        if (!borrowFor(subject, refusal, costCredits, nowMs)) {
          throw daily ? refusal.error : rateRefusal(subject, refusal, costCredits, nowMs)
        }
      }
      throw new BalanceUnavailableError()
    },
  }
}
