/** Whether the credit bank answers, and so whether this instance may still spend its leases. */
export class BankHealth {
  #up = true
  #lastAnswerMs: number

  constructor(
    readonly onBankDown: 'open' | 'closed',
    private readonly leaseTtlMs: number,
    nowMs: number,
    private readonly onError: ((err: unknown) => void) | undefined,
  ) {
    this.#lastAnswerMs = nowMs
  }

  /** Whether the bank answered last time. */
  isUp(): boolean {
    return this.#up
  }

  /** Whether leases may still be spent: always in open mode; in closed mode, not once they expired. */
  leaseValid(nowMs: number): boolean {
    return this.onBankDown === 'open' || this.#up || nowMs - this.#lastAnswerMs < this.leaseTtlMs
  }

  answered(nowMs: number): void {
    this.#up = true
    this.#lastAnswerMs = nowMs
  }

  /** An exchange failed: told once per outage. */
  failed(err: unknown): void {
    if (this.#up) {
      this.onError?.(
        new Error(`credit bank unreachable; metering.onRedisDown is ${this.onBankDown}`, { cause: err }),
      )
    }
    this.#up = false
  }
}
