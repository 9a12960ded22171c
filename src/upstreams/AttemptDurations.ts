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

/** One outcome's histogram as read at scrape time: cumulative counts per bucket (+Inf last), the sum in ms. */
export type AttemptHistogram = { cumulativeCounts: number[]; sumMs: number }

const outcomeIndex: Readonly<Record<AttemptOutcome, number>> = { ok: 0, error: 1, timeout: 2, cancelled: 3 }
const slots = attemptBucketsMs.length + 1

/**
 * A fixed-bucket histogram of an upstream's attempt durations, by outcome: plain counts, kept on the
 * request path with no allocation and no label lookup (a few comparisons, two increments and an
 * add per attempt), turned into cumulative buckets only when /metrics reads them.
 */
export class AttemptDurations {
  /** Per outcome, one count per bucket (not cumulative), the +Inf one last. */
  readonly #counts = new Float64Array(attemptOutcomes.length * slots)
  readonly #sumsMs = new Float64Array(attemptOutcomes.length)

  observe(ms: number, outcome: AttemptOutcome): void {
    const index = outcomeIndex[outcome]
    let bucket = 0
    while (bucket < attemptBucketsMs.length && ms > (attemptBucketsMs[bucket] as number)) bucket++
    const slot = index * slots + bucket
    this.#counts[slot] = (this.#counts[slot] as number) + 1
    this.#sumsMs[index] = (this.#sumsMs[index] as number) + ms
  }

  read(outcome: AttemptOutcome): AttemptHistogram {
    const index = outcomeIndex[outcome]
    const cumulativeCounts: number[] = []
    let total = 0
    for (let bucket = 0; bucket < slots; bucket++) {
      total += this.#counts[index * slots + bucket] as number
      cumulativeCounts.push(total)
    }
    return { cumulativeCounts, sumMs: this.#sumsMs[index] as number }
  }
}
