import type { BankSubjectRequest } from './creditBank.ts'
import type { LocalBalance } from './LocalBalance.ts'
import type { LocalLedger } from './LocalLedger.ts'
import type { MeterSubject } from './meterTypes.ts'
import type { RateSlice } from './RateSlice.ts'

export type BankRequestOptions = {
  accountCounter: string
  /** The account's limits (any of its subjects carries them). */
  account: MeterSubject
  /** The account's keys seen here: those with limits of their own are in the exchange too. */
  keys: Iterable<MeterSubject>
  /** The calls waiting for the exchange. */
  calls: readonly { subject: MeterSubject; costCredits: number }[]
  /** Subjects that give their free credits back (another instance asked for them). */
  returning: ReadonlySet<string>
  /** Every lease goes back. */
  closing: boolean
  /** A lease unused for this long goes back. */
  idleMs: number
  /** A lease is at most this many seconds of the per-second limit, a per-second slice a quarter of that. */
  leaseSeconds: number
  /** Of a subject's day, what this process has written to the usage store. */
  flushedCredits(subject: string, day: string): number
}

/** One subject of an exchange, as it stood when the exchange was built. */
export type BankRequestEntry = {
  subject: string
  balance: LocalBalance
  sentUnsent: number
  slice: RateSlice | undefined
}

export type BankRequestBuilt = { requests: BankSubjectRequest[]; entries: BankRequestEntry[] }

/**
 * What one exchange with the bank asks for and reports: the account, and its keys with limits of
 * their own. A lease that is idle, recalled or closing goes back (only what is spent or held stays).
 */
export function createBankRequest(
  ledger: LocalLedger,
  {
    accountCounter,
    account,
    keys,
    calls,
    returning,
    closing,
    idleMs,
    leaseSeconds,
    flushedCredits,
  }: BankRequestOptions,
): BankRequestBuilt {
  const nowMs = ledger.now()
  const requests: BankSubjectRequest[] = []
  const entries: BankRequestEntry[] = []
  const subjects: [string, MeterSubject, boolean][] = [[accountCounter, account, true]]
  for (const subject of keys) {
    if (subject.keyDailyCredits !== undefined || subject.keyCreditsPerSecond !== undefined) {
      subjects.push([subject.keyCounter, subject, false])
    }
  }
  for (const [subjectId, subject, isAccount] of subjects) {
    const found = ledger.balance(subjectId)
    const waiting = isAccount ? calls : calls.filter((each) => each.subject.keyCounter === subjectId)
    const dailyLimit = isAccount ? subject.accountDailyCredits : (subject.keyDailyCredits ?? -1)
    const perSecond = isAccount ? subject.accountCreditsPerSecond : (subject.keyCreditsPerSecond ?? 0)
    if (closing || returning.has(subjectId) || (waiting.length === 0 && found.isIdle(nowMs, idleMs))) {
      found.giveBackLease() // idle, recalled, or closing
    }
    const free = dailyLimit < 0 ? 0 : ledger.available(found, dailyLimit, nowMs)
    const costs = waiting.map((each) => each.costCredits)
    const leaseCredits = dailyLimit < 0 ? 0 : Math.max(0, sum(costs) - free)
    const slice = perSecond > 0 ? ledger.slice(subjectId, perSecond, nowMs) : undefined
    const tokens = slice?.tokens(nowMs) ?? 0
    // a call is paid whole from the slice: the bank grants what a call dearer than a second's
    // worth lacks on a full bucket, into debt
    const needs = slice ? costs : []
    const rateCredits = Math.max(0, sum(needs) - tokens)
    requests.push({
      subject: subjectId,
      day: found.day,
      dailyLimit,
      usedCredits: found.used,
      heldCredits: found.unspentLease(),
      freeCredits: dailyLimit < 0 ? 0 : Math.max(0, found.free()),
      returning: returning.has(subjectId),
      flushedCredits: flushedCredits(subjectId, found.day),
      seedCredits: undefined,
      seedInstances: undefined,
      leaseCredits,
      leaseMinCredits: leaseCredits > 0 ? Math.max(0, Math.min(...costs) - free) : 0,
      maxLeaseCredits: Math.max(leaseCredits, fullLeaseOf(subject, isAccount, leaseSeconds)),
      creditsPerSecond: perSecond,
      rateCredits,
      rateMinCredits: rateCredits > 0 ? Math.max(1, Math.min(...needs) - tokens) : 0,
      rateSliceCredits: Math.ceil((perSecond * leaseSeconds) / 4),
      rateReturnedCredits: slice?.returningCredits() ?? 0,
    })
    entries.push({ subject: subjectId, balance: found, sentUnsent: found.unsent, slice })
  }
  return { requests, entries }
}

/**
 * The largest lease of a balance: `leaseSeconds` of the per-second limit it is spent under (the
 * account's own for the account's balance; a key's, or else its account's, for the key's).
 */
export function fullLeaseOf(subject: MeterSubject, isAccount: boolean, leaseSeconds: number): number {
  const perSecond = isAccount
    ? subject.accountCreditsPerSecond
    : (subject.keyCreditsPerSecond ?? subject.accountCreditsPerSecond)
  return Math.floor(perSecond * leaseSeconds)
}

function sum(values: number[]): number {
  let total = 0
  for (const value of values) total += value
  return total
}
