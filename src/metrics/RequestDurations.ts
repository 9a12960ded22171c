import { DurationBuckets, type DurationHistogram } from '../failsafe/DurationBuckets.ts'

/** How a JSON-RPC request came: an HTTP POST or a WebSocket message. */
export type RpcTransport = 'http' | 'ws'

const transports: readonly RpcTransport[] = ['http', 'ws']

/** The buckets' upper bounds, ms (the last bucket, above 10 s, is +Inf): a cache hit is under 1 ms. */
export const requestBucketsMs: readonly number[] = [
  1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000,
]

/** One network's and transport's histogram as read at scrape time. */
export type RequestHistogram = DurationHistogram & { network: string; transport: RpcTransport }

/**
 * How long requests took the gateway, by network name and transport (DurationBuckets: no
 * allocation once a network has its counts). Kept by name, so a network rebuilt by a reload goes on
 * counting where it was.
 */
export class RequestDurations {
  readonly #byNetwork = new Map<string, Readonly<Record<RpcTransport, DurationBuckets>>>()

  observe(network: string, transport: RpcTransport, ms: number): void {
    let buckets = this.#byNetwork.get(network)
    if (buckets === undefined) {
      buckets = { http: new DurationBuckets(requestBucketsMs), ws: new DurationBuckets(requestBucketsMs) }
      this.#byNetwork.set(network, buckets)
    }
    buckets[transport].observe(ms)
  }

  /** Every network and transport that has counted a request. */
  read(): RequestHistogram[] {
    const histograms: RequestHistogram[] = []
    for (const [network, buckets] of this.#byNetwork) {
      for (const transport of transports) {
        const histogram = buckets[transport].read()
        if ((histogram.cumulativeCounts.at(-1) ?? 0) > 0)
          histograms.push({ ...histogram, network, transport })
      }
    }
    return histograms
  }
}
