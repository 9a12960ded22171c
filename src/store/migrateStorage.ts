import type { Config } from '../config/configSchema.ts'
import { createPostgresPool } from './createPostgresPool.ts'
import { migratePostgres } from './migratePostgres.ts'
import { migrateSqlite } from './migrateSqlite.ts'
import type { AppliedMigration } from './migration.ts'
import { openSqlite } from './openSqlite.ts'
import { postgresMigrations } from './postgresMigrations.ts'
import { sqliteMigrations } from './sqliteMigrations.ts'

export type MigrationReport = {
  /** The database, without credentials. */
  database: string
  applied: AppliedMigration[]
  /** The schema version the database is at now. */
  version: number
}

/** Brings the configured database's schema up to date (`tollgate migrate`); the gateway does it at start too. */
export async function migrateStorage(storage: Config['storage']): Promise<MigrationReport> {
  if ('sqlite' in storage) {
    const db = openSqlite(storage.sqlite, { migrate: false })
    try {
      return {
        database: `sqlite ${storage.sqlite}`,
        applied: migrateSqlite(db),
        version: sqliteMigrations.length,
      }
    } finally {
      db.close()
    }
  }
  const target = createPostgresPool(storage.postgres)
  try {
    return {
      database: target.label,
      applied: await migratePostgres(target),
      version: postgresMigrations.length,
    }
  } catch (err) {
    throw new Error(`cannot migrate ${target.label}: ${(err as Error).message}`, { cause: err })
  } finally {
    await target.pool.end()
  }
}
