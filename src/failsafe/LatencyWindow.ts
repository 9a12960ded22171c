/**
 * The last `size` latencies of something (a ring buffer), and their quantiles. The samples are also
 * kept sorted, one insertion per sample (the cost is in `add`), so that reading a quantile is a lookup.
 */
export class LatencyWindow {
  readonly #samples: number[] = []
  readonly #sorted: number[] = []
  #next = 0

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('expected a window of at least one sample')
  }

  get count(): number {
    return this.#samples.length
  }

  add(ms: number): void {
    if (this.#samples.length < this.size) this.#samples.push(ms)
    else {
      const evicted = this.#samples[this.#next] as number
      this.#sorted.splice(this.#indexOf(evicted), 1)
      this.#samples[this.#next] = ms
    }
    this.#next = (this.#next + 1) % this.size
    this.#sorted.splice(this.#indexOf(ms), 0, ms)
  }

  /** The `q` quantile (0..1, nearest rank) of the samples in the window; undefined while it is empty. */
  quantile(q: number): number | undefined {
    const sorted = this.#sorted
    if (sorted.length === 0) return undefined
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)))
    return sorted[rank - 1]
  }

  /** The first index in the sorted samples whose value is not below `ms`. */
  #indexOf(ms: number): number {
    let low = 0
    let high = this.#sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.#sorted[middle] as number) < ms) low = middle + 1
      else high = middle
    }
    return low
  }
}
