/**
 * This instance's slice of a per-second budget shared through the bank (docs/compatibility.md §2):
 * tokens taken from the shared token bucket, spent locally. A call is admitted when the slice holds
 * its whole cost; the shared bucket decides the rest (a call dearer than it holds is granted on a
 * full bucket, which goes into debt). Tokens not spent within `lifeMs` are dropped, so no instance
 * sits on budget the others could use. Credits given back beyond a second's worth in the slice (or
 * once it has lapsed, or while the bucket is in debt for it) go back to the shared bucket at once
 * (they pay its debt).
 */
export class RateSlice {
  #tokens = 0
  #expiresAtMs = 0
  #returning = 0
  /** Until when the shared bucket is in debt for a grant this slice took (as far as this instance knows). */
  #debtUntilMs = 0

  #ratePerSecond: number

  constructor(
    ratePerSecond: number,
    private readonly lifeMs: number,
  ) {
    this.#ratePerSecond = ratePerSecond
  }

  /** The shared budget's credits per second (a second's worth is what the slice keeps). */
  get ratePerSecond(): number {
    return this.#ratePerSecond
  }

  /** The limit as the subject's plan or key now sets it (an edit or a reload may move it). */
  changeRate(ratePerSecond: number): void {
    this.#ratePerSecond = ratePerSecond
  }

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
    const missing = Math.min(costCredits, this.#ratePerSecond) - this.tokens(nowMs)
    return missing <= 0 ? 0 : (missing * 1000) / this.#ratePerSecond
  }

  take(costCredits: number, nowMs: number): void {
    this.#tokens = Math.max(0, this.tokens(nowMs) - costCredits)
  }

  /**
   * Tokens granted by the shared bucket. More than a second's worth can only come from a full bucket
   * that went into debt for them: until it is paid, credits given back go to the bank, not the slice.
   */
  add(credits: number, nowMs: number): void {
    this.#tokens = this.tokens(nowMs) + credits
    this.#expiresAtMs = nowMs + this.lifeMs
    if (credits > this.#ratePerSecond) {
      this.#debtUntilMs = nowMs + ((credits - this.#ratePerSecond) * 1000) / this.#ratePerSecond
    }
  }

  /**
   * Keeps what fits in a second's worth while the slice lives (and the bucket is not in debt for it);
   * the rest goes back to the shared bucket.
   */
  giveBack(credits: number, nowMs: number): void {
    const keeps = nowMs < this.#expiresAtMs && nowMs >= this.#debtUntilMs
    const room = keeps ? Math.max(0, this.#ratePerSecond - this.tokens(nowMs)) : 0
    const kept = Math.min(credits, room)
    this.#tokens += kept
    this.#returning += credits - kept
  }

  /**
   * Tokens beyond a second's worth that a grant into debt left here unspent (the call they were for
   * was refused on another limit) go back to the shared bucket; true when there were some.
   */
  returnUnspentDebt(nowMs: number): boolean {
    const extra = this.tokens(nowMs) - this.#ratePerSecond
    if (extra <= 0 || nowMs >= this.#debtUntilMs) return false
    this.#tokens -= extra
    this.#returning += extra
    return true
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
