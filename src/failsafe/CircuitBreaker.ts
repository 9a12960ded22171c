export type CircuitBreakerOptions = {
  /** Consecutive failures that open it. */
  failures: number
  /** How long it stays open before one call may probe; doubled by each failed probe. */
  cooldownMs: number
  maxCooldownMs: number
  now: () => number
}

/**
 * Closed, calls go; after `failures` consecutive failures it opens and calls are kept off. Once the
 * cooldown is over, one call may probe (`claimProbe`): its success closes the breaker, its failure
 * doubles the cooldown. Evidence from elsewhere (a health check) can close it or open it at once.
 */
export class CircuitBreaker {
  state: 'closed' | 'open' = 'closed'
  /** When an open breaker lets its next probe through. */
  retryAt = 0
  cooldownMs: number
  consecutiveFailures = 0

  constructor(private readonly options: CircuitBreakerOptions) {
    this.cooldownMs = options.cooldownMs
  }

  /** Whether an open breaker lets this call through as its probe (one per cooldown). */
  claimProbe(): boolean {
    const time = this.options.now()
    if (this.state !== 'open' || this.retryAt > time) return false
    this.retryAt = time + this.cooldownMs
    return true
  }

  /** A call succeeded; true when that closed the breaker. */
  recordSuccess(): boolean {
    this.consecutiveFailures = 0
    if (this.state === 'closed') return false
    this.close()
    return true
  }

  /**
   * A call failed; `probe`: the call went through while the breaker was open (calls begun before it
   * opened are not probes and do not stretch the cooldown). True when that opened the breaker.
   */
  recordFailure(probe: boolean): boolean {
    this.consecutiveFailures++
    if (this.state === 'open') {
      if (probe) {
        this.cooldownMs = Math.min(this.cooldownMs * 2, this.options.maxCooldownMs)
        this.retryAt = this.options.now() + this.cooldownMs
      }
      return false
    }
    if (this.consecutiveFailures < this.options.failures) return false
    this.open()
    return true
  }

  /** Opens now (a failed health check); true when it was closed. */
  trip(): boolean {
    if (this.state === 'open') return false
    this.open()
    return true
  }

  /** Closes now (a passed health check), with the first cooldown again. */
  close(): void {
    this.state = 'closed'
    this.consecutiveFailures = 0
    this.cooldownMs = this.options.cooldownMs
  }

  private open(): void {
    this.state = 'open'
    this.retryAt = this.options.now() + this.cooldownMs
  }
}
