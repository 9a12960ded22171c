/**
 * Credits per second as a token bucket (docs/compatibility.md §2): it refills at `ratePerSecond` up to one
 * second's worth. A call is admitted when the bucket holds its cost, or when the bucket is full. A call
 * dearer than what the bucket holds goes into debt: the bucket falls below zero by what it could not
 * cover, and refills from there, so nothing more is admitted until the debt is paid. Over any window,
 * what the bucket lets through (less what was given back) is at most the rate times the window plus
 * the larger of one second's worth and the dearest call admitted in it.
 */
export class TokenBucket {
  #ratePerSecond: number
  #tokens: number
  #updatedAtMs: number

  constructor(ratePerSecond: number, nowMs: number) {
    this.#ratePerSecond = ratePerSecond
    this.#tokens = ratePerSecond
    this.#updatedAtMs = nowMs
  }

  /** Credits per second it refills at (one second's worth is also its size). */
  get ratePerSecond(): number {
    return this.#ratePerSecond
  }

  /** The limit as the subject's plan or key now sets it (an edit or a reload may move it). */
  changeRate(ratePerSecond: number): void {
    this.#ratePerSecond = ratePerSecond
  }

  canTake(costCredits: number, nowMs: number): boolean {
    this.#refill(nowMs)
    return this.#tokens >= costCredits || this.#tokens >= this.#ratePerSecond
  }

  /**
   * How long until `canTake(costCredits)` holds: 0 when it does now. In debt, the time to pay it
   * off and then refill the call's cost (a whole second's worth for a call dearer than that).
   */
  msUntilCanTake(costCredits: number, nowMs: number): number {
    this.#refill(nowMs)
    const missing = Math.min(costCredits, this.#ratePerSecond) - this.#tokens
    return missing <= 0 ? 0 : (missing * 1000) / this.#ratePerSecond
  }

  /** Takes `costCredits` (call canTake first); what the bucket cannot cover becomes a debt. */
  take(costCredits: number, nowMs: number): void {
    this.#refill(nowMs)
    this.#tokens -= costCredits
  }

  /** Returns credits that were taken for work that turned out free or cheaper; pays debt first, capped at full. */
  giveBack(credits: number, nowMs: number): void {
    this.#refill(nowMs)
    this.#tokens = Math.min(this.#ratePerSecond, this.#tokens + credits)
  }

  #refill(nowMs: number): void {
    const elapsedMs = nowMs - this.#updatedAtMs
    if (elapsedMs <= 0) return
    this.#tokens = Math.min(this.#ratePerSecond, this.#tokens + (elapsedMs * this.#ratePerSecond) / 1000)
    this.#updatedAtMs = nowMs
  }
}
