import type { Metric, Registry } from 'prom-client'

/** One series of a histogram: its labels, its cumulative counts per bucket (+Inf last) and the sum of what it counted. */
export type CountedHistogramSeries = {
  labels: Readonly<Record<string, string>>
  cumulativeCounts: readonly number[]
  sum: number
}

export type CountedHistogramOptions = {
  name: string
  help: string
  /** The buckets' upper bounds, ascending, in the metric's unit (the +Inf bucket is not listed). */
  bounds: readonly number[]
  /** Every series now, read at scrape time. */
  read(): Iterable<CountedHistogramSeries>
}

/**
 * A Prometheus histogram whose counts the gateway keeps itself (as plain numbers, on the request
 * path) and that is read only at scrape time, as `total()` and `gauge()` read counters and gauges.
 * prom-client's Histogram counts on observe() instead: a label lookup (a string built) and a
 * closure per observation, which the request path is kept free of. This is the part of a metric the
 * registry uses to write it out (`get()`), registered as such.
 */
export function createCountedHistogram(registry: Registry, options: CountedHistogramOptions): void {
  const { name, help, bounds } = options
  const les = [...bounds.map(String), '+Inf']
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const values: { metricName: string; labels: Record<string, string>; value: number }[] = []
      for (const { labels, cumulativeCounts, sum } of options.read()) {
        les.forEach((le, i) => {
          values.push({
            metricName: `${name}_bucket`,
            labels: { ...labels, le },
            value: cumulativeCounts[i] ?? 0,
          })
        })
        values.push({ metricName: `${name}_sum`, labels: { ...labels }, value: sum })
        values.push({
          metricName: `${name}_count`,
          labels: { ...labels },
          value: cumulativeCounts.at(-1) ?? 0,
        })
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values }
    },
  }
  registry.registerMetric(metric as unknown as Metric)
}
