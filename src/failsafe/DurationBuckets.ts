/** A histogram as read at scrape time: cumulative counts per bucket (+Inf last), the sum in ms. */
export type DurationHistogram = { cumulativeCounts: number[]; sumMs: number }

/**
 * Durations counted into fixed buckets as plain numbers (a few comparisons, two increments and an add
 * each, no allocation), made cumulative only when read: for histograms kept on the request path and
 * read at scrape time.
 */
export class DurationBuckets {
  /** One count per bucket (not cumulative), the +Inf one last. */
  readonly #counts: Float64Array
  #sumMs = 0

  /** `boundsMs`: the buckets' upper bounds, ascending (the +Inf bucket is not listed). */
  constructor(readonly boundsMs: readonly number[]) {
    this.#counts = new Float64Array(boundsMs.length + 1)
  }

  observe(ms: number): void {
    const { boundsMs } = this
    let bucket = 0
    while (bucket < boundsMs.length && ms > (boundsMs[bucket] as number)) bucket++
    this.#counts[bucket] = (this.#counts[bucket] as number) + 1
    this.#sumMs += ms
  }

  read(): DurationHistogram {
    const cumulativeCounts: number[] = []
    let total = 0
    for (const count of this.#counts) {
      total += count
      cumulativeCounts.push(total)
    }
    return { cumulativeCounts, sumMs: this.#sumMs }
  }
}
