import { DurationBuckets, type DurationHistogram } from '../failsafe/DurationBuckets.ts'

/**
 * How an attempt on an upstream ended: `ok` it answered with what the client may be given (a revert
 * included), `error` it failed otherwise (connection, HTTP status, not JSON, a node error tried
 * elsewhere, a refusal), `timeout` it had not answered by its timeout, `cancelled` it was stopped
 * because another attempt answered first (a hedge) or the client went away.
 */
export type AttemptOutcome = 'ok' | 'error' | 'timeout' | 'cancelled'

export const attemptOutcomes: readonly AttemptOutcome[] = ['ok', 'error', 'timeout', 'cancelled']

/** The buckets' upper bounds, ms (the last bucket, above 10 s, is +Inf). */
export const attemptBucketsMs: readonly number[] = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]

/**
 * A fixed-bucket histogram of an upstream's attempt durations, by outcome (DurationBuckets: no
 * allocation and no label lookup per attempt).
 */
export class AttemptDurations {
  readonly #byOutcome: Readonly<Record<AttemptOutcome, DurationBuckets>> = {
    ok: new DurationBuckets(attemptBucketsMs),
    error: new DurationBuckets(attemptBucketsMs),
    timeout: new DurationBuckets(attemptBucketsMs),
    cancelled: new DurationBuckets(attemptBucketsMs),
  }

  observe(ms: number, outcome: AttemptOutcome): void {
    this.#byOutcome[outcome].observe(ms)
  }

  read(outcome: AttemptOutcome): DurationHistogram {
    return this.#byOutcome[outcome].read()
  }
}
