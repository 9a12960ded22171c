import { createPostgresKeyStore } from '../auth/createPostgresKeyStore.ts'
import { createPostgresFeeHistoryStore } from '../gas/createPostgresFeeHistoryStore.ts'
import { createPostgresUsageStore } from '../metering/createPostgresUsageStore.ts'
import { createPostgresPool } from './createPostgresPool.ts'
import type { Stores } from './createStores.ts'
import { migratePostgres } from './migratePostgres.ts'

/**
 * The stores on one PostgreSQL database (and schema, `?schema=`), migrated first. Any number of
 * gateways and CLIs share it at once: nothing here is exclusive.
 */
export async function createPostgresStores(url: string): Promise<Stores> {
  const target = createPostgresPool(url)
  const { pool } = target
  try {
    await migratePostgres(target)
  } catch (err) {
    await pool.end()
    throw new Error(`cannot open ${target.label}: ${(err as Error).message}`, { cause: err })
  }
  let closed: Promise<void> | undefined
  return {
    keys: createPostgresKeyStore(pool),
    usage: createPostgresUsageStore(pool),
    feeHistory: createPostgresFeeHistoryStore(pool),
    async ping() {
      try {
        await pool.query('SELECT 1')
        return true
      } catch {
        return false
      }
    },
    close() {
      closed ??= pool.end()
      return closed
    },
  }
}
