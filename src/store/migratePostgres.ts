import type { PostgresTarget } from './createPostgresPool.ts'
import type { AppliedMigration } from './migration.ts'
import { postgresMigrations } from './postgresMigrations.ts'

/** The advisory lock's first key ('toll'); the second is the schema's hash, so schemas migrate apart. */
const migrationLockClass = 0x746f6c6c

/**
 * Brings the schema up to date: under a session advisory lock (instances starting together migrate
 * one after another: the first applies, the others find nothing left), creates the chosen schema
 * when missing, then applies each missing migration in its own transaction, recording it in
 * `tollgate_migrations`. Answers the migrations this call applied.
 */
export async function migratePostgres({ pool, schema }: PostgresTarget): Promise<AppliedMigration[]> {
  const client = await pool.connect()
  const lockKey = [migrationLockClass, schema ?? '']
  let broken: Error | undefined
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', lockKey)
    try {
      if (schema !== undefined) {
        const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
        // the name was checked to be a plain identifier (createPostgresPool)
        if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`)
      }
      await client.query(`
        CREATE TABLE IF NOT EXISTS tollgate_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`)
      const { rows } = await client.query<{ version: number }>(
        'SELECT coalesce(max(version), 0) AS version FROM tollgate_migrations',
      )
      const current = rows[0]?.version ?? 0
      if (current > postgresMigrations.length) {
        throw new Error(
          `the database schema (version ${current}) is newer than this tollgate knows; upgrade tollgate`,
        )
      }
      const applied: AppliedMigration[] = []
      for (let version = current + 1; version <= postgresMigrations.length; version++) {
        const migration = postgresMigrations[version - 1] as (typeof postgresMigrations)[number]
        await client.query('BEGIN')
        try {
          await client.query(migration.sql)
          await client.query('INSERT INTO tollgate_migrations (version, name) VALUES ($1, $2)', [
            version,
            migration.name,
          ])
          await client.query('COMMIT')
        } catch (err) {
          await client.query('ROLLBACK')
          throw err
        }
        applied.push({ version, name: migration.name })
      }
      return applied
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', lockKey)
    }
  } catch (err) {
    // a connection in an unknown state (a failed ROLLBACK or unlock) is closed, not reused: closing
    // it also lets go of the lock
    broken = err as Error
    throw err
  } finally {
    client.release(broken)
  }
}
