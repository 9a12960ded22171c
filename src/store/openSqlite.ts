import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { migrateSqlite } from './migrateSqlite.ts'

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
