/**
 * This instance's slice of a per-second budget shared through the bank (docs/compatibility.md §2):
 * tokens taken from the shared token bucket, spent locally. A call is admitted when the slice holds
 * its whole cost; the shared bucket decides the rest (a call dearer than it holds is granted on a
 * full bucket, which goes into debt). Tokens not spent within `lifeMs` are dropped, so no instance
 * sits on budget the others could use. Credits given back beyond a second's worth in the slice (or
 * once it has lapsed) go back to the shared bucket with the next exchange (they pay its debt).
 */
export class RateSlice {
  #tokens = 0
  #expiresAtMs = 0
  #returning = 0

  constructor(
    public ratePerSecond: number,
    private readonly lifeMs: number,
  ) {}

  /** What the slice holds now. */
  tokens(nowMs: number): number {
    if (nowMs >= this.#expiresAtMs) this.#tokens = 0
    return this.#tokens
  }

  canTake(costCredits: number, nowMs: number): boolean {
    return this.tokens(nowMs) >= costCredits
  }

  /**
   * A guess (the shared bucket knows better, and a refusal carries its answer): a second's share of
   * what the call still needs, up to a full bucket.
   */
  msUntilCanTake(costCredits: number, nowMs: number): number {
    const missing = Math.min(costCredits, this.ratePerSecond) - this.tokens(nowMs)
    return missing <= 0 ? 0 : (missing * 1000) / this.ratePerSecond
  }

  take(costCredits: number, nowMs: number): void {
    this.#tokens = Math.max(0, this.tokens(nowMs) - costCredits)
  }

  add(credits: number, nowMs: number): void {
    this.#tokens = this.tokens(nowMs) + credits
    this.#expiresAtMs = nowMs + this.lifeMs
  }

  /** Keeps what fits in a second's worth while the slice lives; the rest goes back to the shared bucket. */
  giveBack(credits: number, nowMs: number): void {
    const room = nowMs < this.#expiresAtMs ? Math.max(0, this.ratePerSecond - this.tokens(nowMs)) : 0
    const kept = Math.min(credits, room)
    this.#tokens += kept
    this.#returning += credits - kept
  }

  /** Credits given back that are still to go back to the shared bucket. */
  returningCredits(): number {
    return this.#returning
  }

  /** The shared bucket took `credits` of those back. */
  returned(credits: number): void {
    this.#returning -= credits
  }
}
