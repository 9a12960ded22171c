import type { AlertFormat, AlertSettings } from './alertSettings.ts'

/** `credits`: a share of a daily credit limit reached; `rate_limited`: a key's first per-second refusal of the day. */
export type AlertEventKind = 'credits' | 'rate_limited'

/** An event as it is first written: due at once. */
export type NewAlertEvent = {
  /** The delivery's `Tollgate-Event-Id`, the same on every attempt. */
  id: string
  accountId: number
  /** 0: the account's own credits (the unique constraint needs a value, not null). */
  keyId: number
  kind: AlertEventKind
  /** The percent reached; 0 for `rate_limited`. */
  threshold: number
  /** The UTC day (`2026-11-22`) it belongs to. */
  day: string
  /** The event's JSON (toAlertPayload), the body of every attempt. */
  payload: string
  createdAtMs: number
}

/** An event and its delivery so far: the delivery log's row. */
export type AlertEventRow = NewAlertEvent & {
  attempts: number
  /** `200`, `500`, `timeout`, `network error: ECONNRESET`, ...; null before the first attempt. */
  lastStatus: string | null
  lastAttemptAtMs: number | null
  /** When the next attempt is due; null once delivered or given up. */
  nextAttemptAtMs: number | null
  deliveredAtMs: number | null
  gaveUpAtMs: number | null
}

/** A due event claimed by this process until `claimedUntilMs`, with where it goes. */
export type ClaimedEvent = AlertEventRow & { claimedUntilMs: number }

/** What one attempt came to. */
export type AttemptResult = {
  status: string
  atMs: number
  /** Set when the receiver took it (2xx). */
  delivered: boolean
  /** The next attempt's time; undefined (and not delivered): given up. */
  nextAttemptAtMs: number | undefined
}

/**
 * Usage alerts' settings and events, in the gateway's database. The events table decides, across
 * every instance and restart, that each event happens once; the same rows are its delivery queue
 * (claimed by one process at a time) and its log.
 */
export type AlertStore = {
  getSettings(accountId: number): Promise<AlertSettings | undefined>
  /** The settings of those of `accountIds` that have alerts. */
  listSettings(accountIds: readonly number[]): Promise<AlertSettings[]>
  putSettings(settings: {
    accountId: number
    webhookUrl: string
    thresholds: number[]
    format: AlertFormat
    sealedSecret: string
    nowMs: number
  }): Promise<void>
  /** Turns the account's alerts off: its deliveries not made yet are given up. False when it had none. */
  deleteSettings(accountId: number, nowMs: number): Promise<boolean>
  /** Adds the event unless it happened already (insert-or-ignore): true when this call made it. */
  addEvent(event: NewAlertEvent): Promise<boolean>
  /**
   * Claims up to `limit` due events not claimed by anyone (or whose claim has run out) until
   * `claimedUntilMs`, earliest due first: no other process takes them meanwhile.
   */
  claimDue(nowMs: number, limit: number, claimedUntilMs: number): Promise<ClaimedEvent[]>
  /** Records an attempt at a claimed event and lets the claim go (nothing if the claim was lost). */
  recordAttempt(event: ClaimedEvent, result: AttemptResult): Promise<void>
  /** Lets a claim go without an attempt (a stop aborted it). */
  releaseClaim(event: ClaimedEvent): Promise<void>
  /** The account's events, newest first. */
  listEvents(accountId: number, limit: number): Promise<AlertEventRow[]>
  /** Deletes events made before `beforeMs`; answers how many. */
  pruneEvents(beforeMs: number): Promise<number>
}
