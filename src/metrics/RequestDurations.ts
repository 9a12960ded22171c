/** How a JSON-RPC request came: an HTTP POST or a WebSocket message. */
export type RpcTransport = 'http' | 'ws'

const transports: readonly RpcTransport[] = ['http', 'ws']

/** The buckets' upper bounds, ms (the last bucket, above 10 s, is +Inf): a cache hit is under 1 ms. */
export const requestBucketsMs: readonly number[] = [
  1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000,
]

/** One network's and transport's histogram as read at scrape time: cumulative counts (+Inf last), the sum in ms. */
export type RequestHistogram = {
  network: string
  transport: RpcTransport
  cumulativeCounts: number[]
  sumMs: number
}

const slots = requestBucketsMs.length + 1
/** Per transport: one count per bucket (not cumulative, +Inf last), then the sum. */
const width = slots + 1

/**
 * How long requests took the gateway, by network name and transport: plain counts kept on the
 * request path (a map lookup by name, a few comparisons, two increments and an add, no allocation
 * once a network has its counts), made cumulative only when /metrics reads them. Kept by name, so a
 * network rebuilt by a reload goes on counting where it was.
 */
export class RequestDurations {
  readonly #byNetwork = new Map<string, Float64Array>()

  observe(network: string, transport: RpcTransport, ms: number): void {
    let counts = this.#byNetwork.get(network)
    if (counts === undefined) {
      counts = new Float64Array(transports.length * width)
      this.#byNetwork.set(network, counts)
    }
    let bucket = 0
    while (bucket < requestBucketsMs.length && ms > (requestBucketsMs[bucket] as number)) bucket++
    const start = transport === 'http' ? 0 : width
    counts[start + bucket] = (counts[start + bucket] as number) + 1
    counts[start + slots] = (counts[start + slots] as number) + ms
  }

  /** Every network and transport that has counted a request. */
  read(): RequestHistogram[] {
    const histograms: RequestHistogram[] = []
    for (const [network, counts] of this.#byNetwork) {
      transports.forEach((transport, index) => {
        const start = index * width
        const cumulativeCounts: number[] = []
        let total = 0
        for (let bucket = 0; bucket < slots; bucket++) {
          total += counts[start + bucket] as number
          cumulativeCounts.push(total)
        }
        const sumMs = counts[start + slots] as number
        if (total > 0) histograms.push({ network, transport, cumulativeCounts, sumMs })
      })
    }
    return histograms
  }
}
