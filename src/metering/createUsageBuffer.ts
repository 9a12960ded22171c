import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { newBatchId, type UsageSpool } from './createUsageSpool.ts'
import type { DailyUsage, HourlyUsage, UsageDelta, UsageStore } from './usageStore.ts'

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
  /**
   * The last flush, at a stop: written as one batch (UsageStore.addBatch). With a spool, what the
   * store does not take (within `closeWriteMs`) is kept in the spool instead, under the same batch
   * id (a write that lands late still counts once); answers the spool file then.
   */
  close(): Promise<string | undefined>
}

export type UsageBufferOptions = {
  /** Where the last flush goes when the store is away (createUsageSpool). */
  spool?: UsageSpool | undefined
  /** How long the last flush may wait for the store before it is spooled. */
  closeWriteMs?: number
  /** The last flush's deadline runs on these. */
  timers?: Timers | undefined
  /** This process's id in the credit bank, when it has one: its usage is written under it too (UsageDelta.instance). */
  instance?: string | undefined
}

/** Hourly rows by hour, key, network and method. */
type HourlyRows = Map<string, Map<number, Map<string, Map<string, HourlyUsage>>>>
/** Credits by day and subject. */
type DailyCredits = Map<string, Map<string, number>>

/**
 * Usage waiting to be written to the store: summed in memory per key, network, method and hour (and
 * per subject and day), written in one transaction per flush. A failed write keeps its rows for the
 * next flush, so nothing is lost while the store is away. Rows are kept in maps of maps, one level
 * per part of their identity: a call finds its row without a key string made and hashed per call
 * (that was a tenth of a forwarded call's cost on the request path).
 */
export function createUsageBuffer(store: UsageStore, options: UsageBufferOptions = {}): UsageBuffer {
  const { spool, closeWriteMs = 5_000, timers = systemTimers, instance } = options
  let pendingDaily: DailyCredits = new Map()
  let pendingHourly: HourlyRows = new Map()
  const flushed: DailyCredits = new Map()

  function addHourly(into: HourlyRows, row: HourlyUsage): void {
    const byMethod = childMap(childMap(childMap(into, row.hour), row.keyId), row.network)
    const found = byMethod.get(row.method)
    if (found === undefined) byMethod.set(row.method, row)
    else {
      found.calls += row.calls
      found.credits += row.credits
      found.failoverCalls += row.failoverCalls
    }
  }

  function addDaily(into: DailyCredits, day: string, subject: string, credits: number): void {
    const bySubject = childMap(into, day)
    bySubject.set(subject, (bySubject.get(subject) ?? 0) + credits)
  }

  /** What is pending, taken out of the buffer. */
  function takePending(): UsageDelta {
    const daily: DailyUsage[] = []
    for (const [day, bySubject] of pendingDaily) {
      for (const [subject, credits] of bySubject) daily.push({ subject, day, credits })
    }
    const hourly: HourlyUsage[] = []
    for (const byKey of pendingHourly.values())
      for (const byNetwork of byKey.values())
        for (const byMethod of byNetwork.values()) hourly.push(...byMethod.values())
    pendingDaily = new Map()
    pendingHourly = new Map()
    return { daily, hourly, instance }
  }

  /** Puts back what could not be written: it goes with the next flush. */
  function putBack({ daily, hourly }: UsageDelta): void {
    for (const row of daily) addDaily(pendingDaily, row.day, row.subject, row.credits)
    for (const row of hourly) addHourly(pendingHourly, row)
  }

  async function flushOnce(): Promise<DailyUsage[]> {
    if (pendingDaily.size === 0 && pendingHourly.size === 0) return []
    const delta = takePending()
    try {
      await store.addUsage(delta)
    } catch (err) {
      putBack(delta)
      throw err
    }
    for (const row of delta.daily) addDaily(flushed, row.day, row.subject, row.credits)
    return delta.daily
  }

  async function closeOnce(): Promise<string | undefined> {
    if (spool === undefined) {
      await flushOnce()
      return undefined
    }
    if (pendingDaily.size === 0 && pendingHourly.size === 0) return undefined
    const delta = takePending()
    const batchId = newBatchId()
    let file: string | undefined
    try {
      await withDeadline(store.addBatch(batchId, delta), closeWriteMs, timers)
    } catch (err) {
      try {
        file = spool.write(batchId, delta, err)
      } catch (spoolErr) {
        putBack(delta)
        throw new AggregateError([err, spoolErr], 'the last usage flush and its spool both failed')
      }
    }
    for (const row of delta.daily) addDaily(flushed, row.day, row.subject, row.credits)
    return file
  }

  let flushing: Promise<unknown> = Promise.resolve()
  function exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = flushing.then(work)
    flushing = next.catch(() => undefined)
    return next
  }
  return {
    addCall({ keyId, network, method, hour, credits, failover }) {
      const failoverCalls = failover ? 1 : 0
      addHourly(pendingHourly, { keyId, network, method, hour, calls: 1, credits, failoverCalls })
    },
    addCredits(subject, day, credits) {
      addDaily(pendingDaily, day, subject, credits)
    },
    flush: () => exclusive(flushOnce),
    flushedCredits: (subject, day) => flushed.get(day)?.get(subject) ?? 0,
    exclusive,
    close: () => exclusive(closeOnce),
  }
}

/** The map kept at `key`, made first if missing. */
function childMap<K, L, V>(map: Map<K, Map<L, V>>, key: K): Map<L, V> {
  let found = map.get(key)
  if (found === undefined) {
    found = new Map()
    map.set(key, found)
  }
  return found
}

/** `work`, or a rejection once `timeoutMs` has passed without its answer. */
function withDeadline<T>(work: Promise<T>, timeoutMs: number, timers: Timers): Promise<T> {
  let timer: unknown
  const deadline = new Promise<never>((_, reject) => {
    timer = timers.setTimeout(
      () => reject(new Error(`no answer from the usage store within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  return Promise.race([work, deadline]).finally(() => timers.clearTimeout(timer))
}
