import { utcDay } from './clock.ts'
import type { UsageDelta } from './usageStore.ts'

/**
 * When a ledger drops the per-instance shares no seed reads any more (a seed reads today's, or
 * yesterday's just after midnight): those before the day before the latest day a process wrote,
 * once for each such day, after the write that moved it on.
 */
export class ShareCutoff {
  /** Shares before this day are gone (as far as this process knows). */
  #droppedBefore = ''

  /**
   * After `delta` is in: `dropBefore(day)` when it moves the cutoff on. On their own: a failure is
   * tried again with a later delta, and never fails this one (it is in).
   */
  async afterWrite(delta: UsageDelta, dropBefore: (day: string) => unknown): Promise<void> {
    if (delta.instance === undefined) return
    try {
      let latest = ''
      for (const row of delta.daily) if (row.day > latest) latest = row.day
      if (latest === '') return
      const before = utcDay(Date.parse(latest) - 86_400_000)
      if (before <= this.#droppedBefore) return
      await dropBefore(before)
      this.#droppedBefore = before
    } catch {
      // the delta is in, whatever happens here: the shares go with a later one
    }
  }
}
