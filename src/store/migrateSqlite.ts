import type { AppliedMigration } from './migration.ts'
import type { SqliteDatabase } from './sqliteDatabase.ts'
import { sqliteMigrations } from './sqliteMigrations.ts'

/** Applies the migrations the database lacks, each in its own transaction; answers those applied. */
export function migrateSqlite(db: SqliteDatabase): AppliedMigration[] {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > sqliteMigrations.length) {
    throw new Error(
      `the database schema (version ${current}) is newer than this tollgate knows; upgrade tollgate`,
    )
  }
  const applied: AppliedMigration[] = []
  for (let version = current + 1; version <= sqliteMigrations.length; version++) {
    const migration = sqliteMigrations[version - 1] as (typeof sqliteMigrations)[number]
    // BEGIN IMMEDIATE: a second process migrating at once waits (busy_timeout), then sees the new version
    db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) >= version) return
      db.exec(migration.sql)
      db.pragma(`user_version = ${version}`)
      applied.push({ version, name: migration.name })
    }).immediate()
  }
  return applied
}
