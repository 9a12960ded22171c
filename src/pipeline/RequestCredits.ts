import type { Admission, Meter, MeterSubject, Settlement, UsageRecord } from '../metering/meterTypes.ts'

/**
 * The credits one request holds, from admission to settlement: first the most it can cost, held
 * before any of its calls runs (a 402 or 429 refuses it whole), then each further hold a call asks
 * for as it goes (the next chunk of a split eth_getLogs: CallCharge). Settled once, for what its
 * calls cost, against everything it held: what was held beyond goes back.
 */
export class RequestCredits {
  readonly #admissions: Admission[] = []
  #settled = false

  constructor(
    private readonly meter: Meter,
    private readonly subject: MeterSubject,
  ) {}

  /**
   * Holds `credits` against the key's balances and per-second rates, or rejects with the 402/429
   * that refuses them. False when the request was settled while the meter decided: what it admitted
   * goes back at once, and nothing more may be done for the request.
   */
  async hold(credits: number): Promise<boolean> {
    return this.keep(await this.meter.admit(this.subject, credits))
  }

  /**
   * Keeps what the meter admitted for the request (its first admission, or a further hold's). False
   * when the request was settled meanwhile: it goes back at once.
   */
  keep(admission: Admission): boolean {
    if (this.#settled) {
      this.meter.settle(admission, [])
      return false
    }
    this.#admissions.push(admission)
    return true
  }

  /** The key's credits per second: its plan's, or its own where lower. */
  creditsPerSecond(): number {
    const { accountCreditsPerSecond, keyCreditsPerSecond } = this.subject
    return Math.min(accountCreditsPerSecond, keyCreditsPerSecond ?? accountCreditsPerSecond)
  }

  /**
   * Charges what the request cost (the sum of `usage`) against everything it held, as one: what was
   * held beyond goes back to the balances and the per-second rates. Call once, after the first
   * admission is kept.
   */
  settle(usage: UsageRecord[]): Settlement {
    this.#settled = true
    const admissions = this.#admissions
    const first = admissions[0] as Admission
    if (admissions.length === 1) return this.meter.settle(first, usage)
    let reservedCredits = first.reservedCredits
    for (const admission of admissions.slice(1)) {
      // a hold made past midnight is the new day's: given back on its own
      if (admission.day === first.day) reservedCredits += admission.reservedCredits
      else this.meter.settle(admission, [])
    }
    return this.meter.settle({ ...first, reservedCredits }, usage)
  }
}
