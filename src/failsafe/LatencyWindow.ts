/**
 * The last `size` latencies of something (a ring buffer), and their quantiles. The samples are also
 * kept sorted, one insertion per sample (the cost is in `add`, no allocation), so that reading a quantile
 * is a lookup.
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
    const samples = this.#samples
    const sorted = this.#sorted
    // the evicted sample's place in the sorted samples (or a new place at the end) is a hole that
    // moves to where the new one belongs, each sample it passes shifted once: nothing allocated
    let at: number
    if (samples.length < this.size) {
      samples.push(ms)
      at = sorted.push(ms) - 1
    } else {
      at = this.#indexOf(samples[this.#next] as number)
      samples[this.#next] = ms
    }
    this.#next = this.#next + 1 === this.size ? 0 : this.#next + 1
    while (at > 0 && (sorted[at - 1] as number) > ms) {
      sorted[at] = sorted[at - 1] as number
      at--
    }
    while (at < sorted.length - 1 && (sorted[at + 1] as number) < ms) {
      sorted[at] = sorted[at + 1] as number
      at++
    }
    sorted[at] = ms
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
