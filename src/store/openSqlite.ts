import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { sqliteMigrations } from './sqliteMigrations.ts'

export type SqliteDatabase = Database.Database

/** Opens (creating when absent) the SQLite file in WAL mode and brings its schema up to date. */
export function openSqlite(file: string): SqliteDatabase {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  migrate(db)
  return db
}

function migrate(db: SqliteDatabase): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > sqliteMigrations.length) {
    throw new Error(
      `the database schema (version ${current}) is newer than this tollgate knows; upgrade tollgate`,
    )
  }
  for (let version = current; version < sqliteMigrations.length; version++) {
    db.transaction(() => {
      db.exec(sqliteMigrations[version] as string)
      db.pragma(`user_version = ${version + 1}`)
    })()
  }
}
