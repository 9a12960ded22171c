import { utcDay } from './clock.ts'
import type { DailyUsage } from './usageStore.ts'

/**
 * When a ledger drops the per-instance shares no seed reads any more: given each delta's daily rows,
 * the day before which to drop them (the day before the latest day written), once for each latest
 * day a process writes; else undefined. A seed reads today's shares (yesterday's, just after midnight).
 */
export function sharesToPrune(): (daily: readonly DailyUsage[]) => string | undefined {
  let prunedFor = ''
  return (daily) => {
    let latest = ''
    for (const row of daily) if (row.day > latest) latest = row.day
    if (latest <= prunedFor) return undefined
    prunedFor = latest
    return utcDay(Date.parse(latest) - 86_400_000)
  }
}
