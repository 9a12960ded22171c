import { openRedis } from '../store/openRedis.ts'

/** One minute's counts, by field: `calls:<network>`, `credits:<network>`, `status:<network>:<code>`, `hits:<network>`, `misses:<network>`. */
export type MinuteCounts = Map<string, number>

/** The overview's per-minute counts of every instance on one Redis. */
export type SharedDashboardFigures = {
  /** Adds counts to the minutes' shared ones (one round trip for all). */
  add(minutes: ReadonlyMap<number, MinuteCounts>): Promise<void>
  /** The shared counts of the given minutes (a minute nobody counted in is absent). */
  read(minutes: readonly number[]): Promise<Map<number, MinuteCounts>>
  close(): Promise<void>
}

export type SharedDashboardFiguresOptions = {
  url: string
  keyPrefix: string
  onError?: (err: unknown) => void
}

/** A minute's hash outlives the overview's hour by a little, then Redis drops it. */
const minuteTtlSeconds = 3_900
/** A dashboard read or write (and the first connection) waits no longer for Redis than this. */
const commandTimeoutMs = 2_000

/**
 * The dashboard's live figures in Redis: one hash per minute (`<prefix>dashboard:<minute>`), counted
 * into with HINCRBY by each instance in batches and read whole when an overview is asked for, so every
 * instance's overview shows the same numbers.
 */
export async function createSharedDashboardFigures(
  options: SharedDashboardFiguresOptions,
): Promise<SharedDashboardFigures> {
  const { keyPrefix, onError } = options
  const redis = await openRedis(options.url, {
    commandTimeoutMs,
    connectTimeoutMs: commandTimeoutMs,
    name: 'tollgate-dashboard',
    onDown: onError,
  })
  const keyOf = (minute: number) => `${keyPrefix}dashboard:${minute}`

  return {
    async add(minutes) {
      const batch = redis.multi()
      let commands = 0
      for (const [minute, counts] of minutes) {
        for (const [field, count] of counts) {
          if (count === 0) continue
          if (Number.isInteger(count)) batch.hincrby(keyOf(minute), field, count)
          else batch.hincrbyfloat(keyOf(minute), field, count)
          commands++
        }
        batch.expire(keyOf(minute), minuteTtlSeconds)
      }
      if (commands === 0) return
      const results = await batch.exec()
      const failed = results?.find(([err]) => err)
      if (failed) throw failed[0]
    },

    async read(minutes) {
      const batch = redis.pipeline()
      for (const minute of minutes) batch.hgetall(keyOf(minute))
      const results = (await batch.exec()) ?? []
      const found = new Map<number, MinuteCounts>()
      results.forEach(([err, hash], index) => {
        if (err) throw err
        const minute = minutes[index]
        const fields = Object.entries(hash as Record<string, string>)
        if (minute === undefined || fields.length === 0) return
        found.set(minute, new Map(fields.map(([field, count]) => [field, Number(count)])))
      })
      return found
    },

    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
