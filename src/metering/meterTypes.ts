import type { TollgateError } from '../errors/TollgateError.ts'

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

export type MeterRefusals = { '402': number; '429': number }

/** The first check a call fails in this process now, and the error that refuses it. */
export type Refusal = { check: 'account' | 'key' | 'keyRate' | 'accountRate'; error: TollgateError }

export type Meter = {
  /**
   * Holds `costCredits` (the most the request can cost) against the daily balances and takes them
   * from the per-second buckets, or throws the 402/429 that refuses the request. Never overdraws.
   * Decided at once from what this process holds (nearly every call: no promise); a shared balance
   * that cannot cover it waits for one exchange with the bank (a promise, rejected with the refusal).
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
  /**
   * The share (0 to 1) of its daily credits the subject has used today, of whichever of the
   * account's and the key's balance is nearer its end, as this process last saw it. Reads only.
   */
  usedShare(subject: MeterSubject): number
  /**
   * Calls this process refused so far, by status: 402 (the account's daily credits spent), 429 (the
   * key's daily credits spent, or a per-second limit).
   */
  readonly refusals: Readonly<MeterRefusals>
  secondsToReset(): number
  /** Whether the shared credit bank (Redis, or the primary of --workers) answered its last exchange; undefined without one. */
  bankUp(): boolean | undefined
  /** Writes pending usage to the store now. */
  flush(): Promise<void>
  /** Stops the flush timer and flushes. */
  close(): Promise<void>
}
