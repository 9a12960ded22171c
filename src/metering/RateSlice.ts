/**
 * This instance's slice of a per-second budget shared through the bank (docs/compatibility.md §2):
 * tokens taken from the shared token bucket, spent locally. The shared bucket's rule (a call is
 * admitted when the bucket holds its cost, or a whole second's worth) becomes: the slice holds the
 * call's cost, or a second's worth. Tokens not spent within `lifeMs` are dropped, so no instance
 * sits on budget the others could use.
 */
export class RateSlice {
  #tokens = 0
  #expiresAtMs = 0

  constructor(
    public ratePerSecond: number,
    private readonly lifeMs: number,
  ) {}

  /** What the slice holds now. */
  tokens(nowMs: number): number {
    if (nowMs >= this.#expiresAtMs) this.#tokens = 0
    return this.#tokens
  }

  /** The least a call of this cost needs the slice to hold. */
  needOf(costCredits: number): number {
    return Math.min(costCredits, this.ratePerSecond)
  }

  canTake(costCredits: number, nowMs: number): boolean {
    return this.tokens(nowMs) >= this.needOf(costCredits)
  }

  /** A guess (the shared bucket knows better): a second's share of what the call still needs. */
  msUntilCanTake(costCredits: number, nowMs: number): number {
    const missing = this.needOf(costCredits) - this.tokens(nowMs)
    return missing <= 0 ? 0 : (missing * 1000) / this.ratePerSecond
  }

  take(costCredits: number, nowMs: number): void {
    this.#tokens = Math.max(0, this.tokens(nowMs) - costCredits)
  }

  add(credits: number, nowMs: number): void {
    this.#tokens = this.tokens(nowMs) + credits
    this.#expiresAtMs = nowMs + this.lifeMs
  }

  giveBack(credits: number, nowMs: number): void {
    this.#tokens = Math.min(this.ratePerSecond, this.tokens(nowMs) + credits)
  }
}
