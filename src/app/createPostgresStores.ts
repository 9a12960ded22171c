import { createPostgresAccountStore } from '../accounts/createPostgresAccountStore.ts'
import { createPostgresAlertStore } from '../alerts/createPostgresAlertStore.ts'
import { createPostgresKeyStore } from '../auth/createPostgresKeyStore.ts'
import { createPostgresKeyWatch } from '../auth/createPostgresKeyWatch.ts'
import { createPostgresFeeHistoryStore } from '../gas/createPostgresFeeHistoryStore.ts'
import { createPostgresUsageStore } from '../metering/createPostgresUsageStore.ts'
import { createPostgresRequestLogStore } from '../requestLog/createPostgresRequestLogStore.ts'
import { createPostgresLeases } from '../store/createPostgresLeases.ts'
import { createPostgresPool } from '../store/createPostgresPool.ts'
import { migratePostgres } from '../store/migratePostgres.ts'
import type { CreateStoresOptions, Stores } from './stores.ts'

/** How long a successful ping stands for the database being up. */
const pingFreshMs = 1_000

/** How often a lease held elsewhere is tried: a dead holder's work moves within about this long. */
const leaseCheckMs = 1_000

/**
 * The stores on one PostgreSQL database (and schema, `?schema=`), migrated first. Any number of
 * gateways and CLIs share it at once: nothing here is exclusive.
 */
export async function createPostgresStores(
  url: string,
  options: Pick<CreateStoresOptions, 'onSessionError'> = {},
): Promise<Stores> {
  const target = createPostgresPool(url)
  const { pool } = target
  try {
    await migratePostgres(target)
  } catch (err) {
    await pool.end()
    throw new Error(`cannot open ${target.label}: ${(err as Error).message}`, { cause: err })
  }
  const onError = options.onSessionError ?? (() => {})
  // each opens its connection when first used (the CLI uses neither)
  const keyWatch = createPostgresKeyWatch(target, onError)
  const leases = createPostgresLeases(target, { checkMs: leaseCheckMs, onError })
  let closed: Promise<void> | undefined
  // the migration has just been answered
  let answeredAtMs = Date.now()
  return {
    keys: createPostgresKeyStore(pool),
    accounts: createPostgresAccountStore(pool),
    usage: createPostgresUsageStore(pool),
    alerts: createPostgresAlertStore(pool),
    feeHistory: createPostgresFeeHistoryStore(pool),
    requestLog: createPostgresRequestLogStore(pool),
    watchKeys: keyWatch.watch,
    lead: leases.lead,
    async ping() {
      if (closed) return false
      // an answer this fresh stands: readiness probes need not each ask (and the first, right after
      // start, is answered at once)
      if (Date.now() - answeredAtMs < pingFreshMs) return true
      try {
        await pool.query('SELECT 1')
      } catch {
        return false
      }
      answeredAtMs = Date.now()
      return true
    },
    close() {
      closed ??= Promise.all([keyWatch.close(), leases.close()]).then(() => pool.end())
      return closed
    },
  }
}
