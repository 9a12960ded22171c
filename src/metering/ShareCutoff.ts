import { utcDay } from './clock.ts'
import type { DailyUsage } from './usageStore.ts'

/**
 * When a ledger drops the per-instance shares no seed reads any more (a seed reads today's, or
 * yesterday's just after midnight): the day before the latest day a process wrote, once for each
 * such day, after the write that moved it on.
 */
export class ShareCutoff {
  /** Shares before this day are gone (as far as this process knows). */
  #droppedBefore = ''

  /** The day before which shares may go, when `daily` moves it on since they last went; else undefined. */
  due(daily: readonly DailyUsage[]): string | undefined {
    let latest = ''
    for (const row of daily) if (row.day > latest) latest = row.day
    if (latest === '') return undefined
    const before = utcDay(Date.parse(latest) - 86_400_000)
    return before > this.#droppedBefore ? before : undefined
  }

  /** The shares before `before` went. */
  dropped(before: string): void {
    if (before > this.#droppedBefore) this.#droppedBefore = before
  }
}
