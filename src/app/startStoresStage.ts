import type { Logger } from 'pino'
import { createKeyRegistry, type KeyRegistry } from '../auth/createKeyRegistry.ts'
import { createKeyAdmin, type KeyAdmin } from '../auth/keyAdmin.ts'
import type { Config } from '../config/configSchema.ts'
import { composeStages } from './composeStages.ts'
import { createStores } from './createStores.ts'
import type { Stores } from './stores.ts'

/** The database, and the keys read from it. */
export type StoresStage = {
  stores: Stores
  keyAdmin: KeyAdmin
  /** Every key, read at start and kept in step with the database. */
  keys: KeyRegistry
  /** The registry stops following the database, then the database is let go. */
  close(): Promise<void>
}

/**
 * Opens the configured database (its schema brought up to date; an SQLite file locked for this
 * gateway unless `exclusive` is false: a worker shares the primary's) and reads every key.
 */
export async function startStoresStage(
  config: Config,
  { exclusive, log }: { exclusive: boolean; log: Logger },
): Promise<StoresStage> {
  return composeStages(log, async (stages) => {
    const stores = await stages.start(() =>
      createStores(config.storage, {
        exclusive,
        onSessionError: (err) =>
          log.warn({ err }, 'a database session for key changes or leases failed; reopening'),
        onWarning: (message) => log.warn(message),
      }),
    )
    const keyAdmin = createKeyAdmin(stores.keys, config.plans)
    const keys = await stages.start(() =>
      createKeyRegistry(stores.keys, config.plans, {
        watch: stores.watchKeys,
        onError: (err, keyId) => log.error({ err, keyId }, 'key reload failed'),
      }),
    )
    return { stores, keyAdmin, keys }
  })
}
