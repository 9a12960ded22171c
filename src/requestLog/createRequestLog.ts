import type { RequestLogTap } from '../pipeline/requestLogTap.ts'
import type { Leadership } from '../store/leadership.ts'
import { createRequestLogTap, type RequestLogSettings } from './createRequestLogTap.ts'
import type { RequestLogRow, RequestLogStore } from './requestLogStore.ts'

export type RequestLogOptions = RequestLogSettings & {
  store: RequestLogStore
  /** Rows older than this many days are deleted. */
  days: number
  rowsPerAccount: number
  maxBufferedRows: number
  flushMs: number
  /** How often old rows are deleted, by the process that holds `pruning`. */
  pruneMs?: number
  /** Who prunes among the processes on one database (PostgreSQL: one lease; SQLite: this one). */
  pruning: Leadership
  /** A write or prune failed (it is tried again with the next), or a row could not be made (it is lost). */
  onError: (err: unknown) => void
  onDropped: (rows: number) => void
  /** The sample's draws; tests set it. */
  random?: () => number
  now?: () => number
}

export type RequestLog = RequestLogTap & {
  /** Writes the rows waiting now (flushes run one after another). */
  flush(): Promise<void>
  /** Deletes what the retention says is too old or too many, now. */
  prune(): Promise<number>
  /** Rows dropped at a full buffer since the start. */
  dropped(): number
  /** Stops the timers and writes the last rows. */
  close(): Promise<void>
}

const defaultPruneMs = 60_000

/**
 * The request log's writer: rows wait in memory (at most `maxBufferedRows`; beyond that a row is
 * dropped and counted, never waited for) and are written in batches off the request path, every
 * `flushMs` and whenever half the buffer is full, and at close. Old rows are pruned every `pruneMs`
 * by the one process that holds `pruning`.
 */
export function createRequestLog(options: RequestLogOptions): RequestLog {
  const { store, maxBufferedRows, onError } = options
  const now = options.now ?? Date.now
  let rows: RequestLogRow[] = []
  let dropped = 0
  let droppedUnreported = 0
  let flushing: Promise<void> = Promise.resolve()
  let flushQueued = false

  function add(row: RequestLogRow): void {
    if (rows.length >= maxBufferedRows) {
      dropped++
      droppedUnreported++
      return
    }
    rows.push(row)
    if (rows.length >= maxBufferedRows / 2 && !flushQueued) void flush().catch(onError)
  }

  async function flushOnce(): Promise<void> {
    flushQueued = false
    if (droppedUnreported > 0) {
      options.onDropped(droppedUnreported)
      droppedUnreported = 0
    }
    if (rows.length === 0) return
    const batch = rows
    rows = []
    try {
      await store.add(batch)
    } catch (err) {
      // kept for the next flush, as far as the bound allows: the newest rows wait behind them
      const room = maxBufferedRows - rows.length
      const kept = batch.slice(Math.max(0, batch.length - room))
      dropped += batch.length - kept.length
      droppedUnreported += batch.length - kept.length
      rows = kept.concat(rows)
      throw err
    }
  }

  function flush(): Promise<void> {
    flushQueued = true
    const next = flushing.then(flushOnce)
    flushing = next.catch(() => undefined)
    return next
  }

  function prune(): Promise<number> {
    return store.prune(now() - options.days * 86_400_000, options.rowsPerAccount)
  }

  let pruning: Promise<unknown> = Promise.resolve()
  const flushTimer = setInterval(() => void flush().catch(onError), options.flushMs)
  const pruneTimer = setInterval(() => {
    if (options.pruning.held()) pruning = prune().catch(onError)
  }, options.pruneMs ?? defaultPruneMs)
  flushTimer.unref()
  pruneTimer.unref()
  const tap = createRequestLogTap(options, add, options.random)

  return {
    // on the request path: whatever goes wrong here is the log's to report, never the call's to fail
    refused(request, method, error, credits) {
      try {
        tap.refused(request, method, error, credits)
      } catch (err) {
        onError(err)
      }
    },
    refusedAtTheDoor(request, error) {
      try {
        tap.refusedAtTheDoor(request, error)
      } catch (err) {
        onError(err)
      }
    },
    calls(request, calls, outcomes) {
      try {
        tap.calls(request, calls, outcomes)
      } catch (err) {
        onError(err)
      }
    },
    flush,
    prune,
    dropped: () => dropped,
    async close() {
      clearInterval(flushTimer)
      clearInterval(pruneTimer)
      await pruning
      await flush()
    },
  }
}
