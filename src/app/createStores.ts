import type { Config } from '../config/configSchema.ts'
import type { CreateStoresOptions, Stores } from './stores.ts'

/**
 * Opens the configured database (bringing its schema up to date) and builds the stores on it. Only
 * the configured driver is loaded: a gateway on SQLite never carries pg's code in its heap, nor one
 * on PostgreSQL SQLite's.
 */
export async function createStores(
  storage: Config['storage'],
  options: CreateStoresOptions,
): Promise<Stores> {
  if ('sqlite' in storage) {
    const { createSqliteStores } = await import('./createSqliteStores.ts')
    return createSqliteStores(storage.sqlite, options)
  }
  const { createPostgresStores } = await import('./createPostgresStores.ts')
  return createPostgresStores(storage.postgres, options)
}
