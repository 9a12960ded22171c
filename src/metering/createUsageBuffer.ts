import type { DailyUsage, HourlyUsage, UsageStore } from './usageStore.ts'

export type UsageBuffer = {
  /** One charged (or free) call of a key, in its hour. */
  addCall(call: Omit<HourlyUsage, 'calls' | 'failoverCalls'> & { failover: boolean }): void
  /** Credits a subject (`account:<id>`, `key:<id>`) spent on a day. */
  addCredits(subject: string, day: string, credits: number): void
  /** Writes what is pending; answers the daily rows written. Flushes run one after another. */
  flush(): Promise<DailyUsage[]>
  /** Credits of a subject's day written to the store so far (by this process). */
  flushedCredits(subject: string, day: string): number
  /** Runs `work` with no flush under way or starting meanwhile (the store and flushedCredits agree). */
  exclusive<T>(work: () => Promise<T>): Promise<T>
}

/**
 * Usage waiting to be written to the store: summed in memory per key, network, method and hour (and
 * per subject and day), written in one transaction per flush. A failed write keeps its rows for the
 * next flush, so nothing is lost while the store is away.
 */
export function createUsageBuffer(store: UsageStore): UsageBuffer {
  let pendingDaily = new Map<string, number>()
  let pendingHourly = new Map<string, HourlyUsage>()
  const flushed = new Map<string, number>()

  async function flushOnce(): Promise<DailyUsage[]> {
    if (pendingDaily.size === 0 && pendingHourly.size === 0) return []
    const daily = pendingDaily
    const hourly = pendingHourly
    pendingDaily = new Map()
    pendingHourly = new Map()
    const rows = [...daily].map(([id, credits]) => {
      const at = id.lastIndexOf('|')
      return { subject: id.slice(0, at), day: id.slice(at + 1), credits }
    })
    try {
      await store.addUsage({ daily: rows, hourly: [...hourly.values()] })
      for (const [id, credits] of daily) flushed.set(id, (flushed.get(id) ?? 0) + credits)
      return rows
    } catch (err) {
      // keep what could not be written: it goes with the next flush
      for (const [id, credits] of daily) pendingDaily.set(id, (pendingDaily.get(id) ?? 0) + credits)
      for (const [id, row] of hourly) {
        const newer = pendingHourly.get(id)
        if (newer) {
          newer.calls += row.calls
          newer.credits += row.credits
          newer.failoverCalls += row.failoverCalls
        } else pendingHourly.set(id, row)
      }
      throw err
    }
  }

  let flushing: Promise<unknown> = Promise.resolve()
  function exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = flushing.then(work)
    flushing = next.catch(() => undefined)
    return next
  }
  return {
    addCall({ keyId, network, method, hour, credits, failover }) {
      const id = `${keyId}|${network}|${method}|${hour}`
      const row = pendingHourly.get(id)
      if (row) {
        row.calls++
        row.credits += credits
        if (failover) row.failoverCalls++
      } else {
        pendingHourly.set(id, {
          keyId,
          network,
          method,
          hour,
          calls: 1,
          credits,
          failoverCalls: failover ? 1 : 0,
        })
      }
    },
    addCredits(subject, day, credits) {
      const id = `${subject}|${day}`
      pendingDaily.set(id, (pendingDaily.get(id) ?? 0) + credits)
    },
    flush: () => exclusive(flushOnce),
    flushedCredits: (subject, day) => flushed.get(`${subject}|${day}`) ?? 0,
    exclusive,
  }
}
