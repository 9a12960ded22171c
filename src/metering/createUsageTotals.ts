import type { UsageDelta } from './usageStore.ts'

export type NetworkUsage = { calls: number; credits: number }

export type UsageTotals = {
  /** Adds a delta the usage store took. */
  record(delta: UsageDelta): void
  /** Calls and credits recorded since the process started, by network. */
  byNetwork(): ReadonlyMap<string, Readonly<NetworkUsage>>
}

/**
 * Running totals of the usage this process wrote to the store, by network: fed by the store's
 * flushes (every `metering.flushMs`), never by the request path. Networks are the configured ones,
 * so the map stays small.
 */
export function createUsageTotals(): UsageTotals {
  const totals = new Map<string, NetworkUsage>()
  return {
    record(delta) {
      for (const row of delta.hourly) {
        let found = totals.get(row.network)
        if (!found) {
          found = { calls: 0, credits: 0 }
          totals.set(row.network, found)
        }
        found.calls += row.calls
        found.credits += row.credits
      }
    },
    byNetwork: () => totals,
  }
}
