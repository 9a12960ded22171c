import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { AppliedMigration } from './migration.ts'
import { sqliteMigrations } from './sqliteMigrations.ts'

export type SqliteDatabase = Database.Database

/**
 * Opens (creating when absent) the SQLite file in WAL mode and brings its schema up to date, unless
 * `migrate: false` (then migrateSqlite does, reporting what it applied).
 */
export function openSqlite(file: string, options: { migrate?: boolean } = {}): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  if (options.migrate !== false) migrateSqlite(db)
  return db
}

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
