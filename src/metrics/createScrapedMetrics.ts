import { Counter, Gauge, type Registry } from 'prom-client'

type Labels<T extends string> = Partial<Record<T, string>>
/** One series: its labels and its value now (undefined: unknown, left out). */
export type Sample<T extends string> = [labels: Labels<T>, value: number | bigint | undefined]

type Define = <T extends string>(name: string, help: string, labelNames: T[], read: () => Sample<T>[]) => void

/**
 * How a metric read at scrape time is registered on `registry`: a counter whose value is the
 * gateway's own running total (`total`), a gauge (`gauge`), each from a `read()` of every series
 * called by its `collect()`. Nothing of them runs on the request path.
 */
export function createScrapedMetrics(registry: Registry): { total: Define; gauge: Define } {
  return {
    total(name, help, labelNames, read) {
      new Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset()
          for (const [labels, value] of read()) if (value !== undefined) this.inc(labels, Number(value))
        },
      })
    },
    gauge(name, help, labelNames, read) {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset()
          for (const [labels, value] of read()) if (value !== undefined) this.set(labels, Number(value))
        },
      })
    },
  }
}
