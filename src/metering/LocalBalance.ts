import type { BankSubjectReply, BankSubjectRequest } from './creditBank.ts'

/**
 * One subject's (`account:<id>`, `key:<id>`) balance for one UTC day in this process. Without a
 * bank it counts the day's charges; with one, this instance's lease of the shared balance. Only its
 * methods change it: each names one thing that happens to a balance (a call held and settled, a
 * notification charged, credits borrowed, an exchange with the bank, the lease given back).
 */
export class LocalBalance {
  #used: number
  #reserved = 0
  /** With a bank: credits this instance got for the day (leases and borrowing), spent ones included. */
  #leased = 0
  /** The day's credits granted to every instance, as last seen (from the store until the bank answers). */
  #granted: number
  #unsent = 0
  /** `used` as the bank last acknowledged it. */
  #reportedUsed = 0
  #reportedFree = 0
  /**
   * The lease went back on request: the next report (due even with nothing to report) shows this
   * instance what the others then spent of it.
   */
  #refresh = false
  /** When a call last held credits here. */
  #lastUseMs = 0

  constructor(
    readonly day: string,
    storedCredits: number,
    shared: boolean,
  ) {
    this.#used = shared ? 0 : storedCredits
    this.#granted = storedCredits
  }

  /** Without a bank: the day's charges (read back from the store at start). With one: this instance's. */
  get used(): number {
    return this.#used
  }

  /** Credits held for admitted calls not yet settled. */
  get reserved(): number {
    return this.#reserved
  }

  /** Credits borrowed (bank down, or a notification) since the last exchange was sent. */
  get unsent(): number {
    return this.#unsent
  }

  /** What the bank counts as this instance's free credits (`f:` in creditScript.ts) since the last exchange. */
  get reportedFree(): number {
    return this.#reportedFree
  }

  /** Of the lease, what is neither spent nor held for admitted calls. */
  free(): number {
    return this.#leased - this.#used - this.#reserved
  }

  /**
   * With a bank: what this instance got for the day (leases and borrowing) and has not spent, held
   * credits included (what the bank counts as held here).
   */
  unspentLease(): number {
    return this.#leased - this.#used
  }

  /** What the bank has not handed out of a balance of `limit`, as last seen. */
  poolLeft(limit: number): number {
    return limit - this.#granted - this.#unsent
  }

  /** Whether no call has held credits here for longer than `idleMs` (the lease may go back). */
  isIdle(nowMs: number, idleMs: number): boolean {
    return nowMs - this.#lastUseMs > idleMs
  }

  /** An admitted call holds `credits` until it settles; the lease is in use. */
  hold(credits: number, nowMs: number): void {
    this.#reserved += credits
    this.#lastUseMs = nowMs
  }

  /**
   * A WebSocket notification's charge, held only to be settled at once: unlike a call's hold, it
   * leaves the lease's last use as it was.
   */
  holdNotification(credits: number): void {
    this.#reserved += credits
  }

  /** A call that held `reservedCredits` cost `chargedCredits`. */
  settle(reservedCredits: number, chargedCredits: number): void {
    this.#reserved -= reservedCredits
    this.#used += chargedCredits
  }

  /** Takes credits from the balance as last seen, without the bank (reported with the next exchange). */
  borrow(limit: number, credits: number): boolean {
    if (credits > this.poolLeft(limit)) return false
    this.#leased += credits
    this.#unsent += credits
    return true
  }

  /** The lease goes back to the bank (idle, recalled, closing): only what is spent or held stays. */
  giveBackLease(): void {
    this.#leased = this.#used + this.#reserved
  }

  /**
   * One exchange with the bank went through: `request` is what it reported of this balance (built
   * when `sentUnsent` credits were borrowed and unsent), `reply` what the bank answered. The lease
   * grows by what was granted; held credits the bank no longer counts (it lost them, and they no
   * longer fit) are dropped; the day's total handed out and what the bank saw are as it said.
   */
  recordExchange(request: BankSubjectRequest, reply: BankSubjectReply, sentUnsent: number): void {
    const dropped = Math.min(request.heldCredits - reply.heldCredits, this.free())
    if (dropped > 0 && request.dailyLimit >= 0) this.#leased -= dropped
    this.#leased += reply.leasedCredits
    this.#granted = reply.grantedCredits
    this.#unsent -= sentUnsent
    this.#reportedUsed = request.usedCredits
    this.#reportedFree = Math.min(request.freeCredits, reply.heldCredits) + reply.leasedCredits
    this.#refresh = request.returning
  }

  /** Whether the bank should hear from this balance (a lease held, spending or borrowing unreported). */
  isReportDue(): boolean {
    return (
      this.#leased !== this.#used || this.#used !== this.#reportedUsed || this.#unsent !== 0 || this.#refresh
    )
  }
}
