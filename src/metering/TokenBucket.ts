/**
 * Credits per second as a token bucket (docs/compatibility.md §2): it refills at `ratePerSecond` up to one
 * second's worth. A call is admitted when the bucket holds its cost, or when the bucket is full (so a
 * call dearer than a second's worth is still possible; it empties the bucket).
 */
export class TokenBucket {
  #tokens: number
  #updatedAtMs: number

  constructor(
    public ratePerSecond: number,
    nowMs: number,
  ) {
    this.#tokens = ratePerSecond
    this.#updatedAtMs = nowMs
  }

  canTake(costCredits: number, nowMs: number): boolean {
    this.#refill(nowMs)
    return this.#tokens >= costCredits || this.#tokens >= this.ratePerSecond
  }

  /** How long until `canTake(costCredits)` holds: 0 when it does now. */
  msUntilCanTake(costCredits: number, nowMs: number): number {
    this.#refill(nowMs)
    const missing = Math.min(costCredits, this.ratePerSecond) - this.#tokens
    return missing <= 0 ? 0 : (missing * 1000) / this.ratePerSecond
  }

  /** Takes `costCredits` (call canTake first); never below zero. */
  take(costCredits: number, nowMs: number): void {
    this.#refill(nowMs)
    this.#tokens = Math.max(0, this.#tokens - costCredits)
  }

  /** Returns credits that were taken for work that turned out free (upstream failures). */
  giveBack(credits: number, nowMs: number): void {
    this.#refill(nowMs)
    this.#tokens = Math.min(this.ratePerSecond, this.#tokens + credits)
  }

  #refill(nowMs: number): void {
    const elapsedMs = nowMs - this.#updatedAtMs
    if (elapsedMs <= 0) return
    this.#tokens = Math.min(this.ratePerSecond, this.#tokens + (elapsedMs * this.ratePerSecond) / 1000)
    this.#updatedAtMs = nowMs
  }
}
