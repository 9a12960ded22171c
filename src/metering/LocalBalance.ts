/**
 * One subject's (`account:<id>`, `key:<id>`) balance for one UTC day in this process. Without a
 * bank it counts the day's charges; with one, this instance's lease of the shared balance.
 */
export class LocalBalance {
  /** Without a bank: the day's charges (read back from the store at start). With one: this instance's. */
  used: number
  /** Credits held for admitted calls not yet settled. */
  reserved = 0
  /** With a bank: credits this instance got for the day (leases and borrowing), spent ones included. */
  leased = 0
  /** The day's credits granted to every instance, as last seen (from the store until the bank answers). */
  granted: number
  /** Credits borrowed (bank down, or a notification) since the last exchange was sent. */
  unsent = 0
  /** `used` as the bank last acknowledged it. */
  reportedUsed = 0
  /** What the bank counts as this instance's free credits (`f:` in creditScript.ts) since the last exchange. */
  reportedFree = 0
  /**
   * The lease went back on request: the next report (due even with nothing to report) shows this
   * instance what the others then spent of it.
   */
  refresh = false
  lastUseMs = 0

  constructor(
    readonly day: string,
    storedCredits: number,
    shared: boolean,
  ) {
    this.used = shared ? 0 : storedCredits
    this.granted = storedCredits
  }

  /** Of the lease, what is neither spent nor held for admitted calls. */
  free(): number {
    return this.leased - this.used - this.reserved
  }

  /** What the bank has not handed out of a balance of `limit`, as last seen. */
  poolLeft(limit: number): number {
    return limit - this.granted - this.unsent
  }

  hold(credits: number, nowMs: number): void {
    this.reserved += credits
    this.lastUseMs = nowMs
  }

  /** A call that held `reservedCredits` cost `chargedCredits`. */
  settle(reservedCredits: number, chargedCredits: number): void {
    this.reserved -= reservedCredits
    this.used += chargedCredits
  }

  /** Takes credits from the balance as last seen, without the bank (reported with the next exchange). */
  borrow(limit: number, credits: number): boolean {
    if (credits > this.poolLeft(limit)) return false
    this.leased += credits
    this.unsent += credits
    return true
  }

  /** The lease goes back to the bank (idle, recalled, closing): only what is spent or held stays. */
  giveBackLease(): void {
    this.leased = this.used + this.reserved
  }

  /** Whether the bank should hear from this balance (a lease held, spending or borrowing unreported). */
  isReportDue(): boolean {
    return this.leased !== this.used || this.used !== this.reportedUsed || this.unsent !== 0 || this.refresh
  }
}
