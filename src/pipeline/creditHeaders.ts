import type { Meter, MeterSubject, Settlement } from '../metering/meterTypes.ts'

/**
 * The credit headers of every answer to a key that proved itself, JSON-RPC and the Gas API alike, as
 * names and values one after the other: X-Credits-Charged, X-Credits-Remaining and X-RateLimit-Reset
 * (seconds to 00:00 UTC, when the daily balance resets), from the request's `settlement`; a request
 * refused before any charge (no settlement) was charged nothing, and its balance is the meter's now.
 */
export function creditHeaders(
  meter: Meter,
  subject: MeterSubject,
  settlement: Settlement | undefined,
): string[] {
  return [
    'x-credits-charged',
    `${settlement?.chargedCredits ?? 0}`,
    'x-credits-remaining',
    `${settlement?.remainingCredits ?? meter.remainingCredits(subject)}`,
    'x-ratelimit-reset',
    `${settlement?.resetSeconds ?? meter.secondsToReset()}`,
  ]
}
