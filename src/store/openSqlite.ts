import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import process from 'node:process'
import Database from 'better-sqlite3'
import { migrateSqlite } from './migrateSqlite.ts'
import type { SqliteDatabase } from './sqliteDatabase.ts'

export type OpenSqliteOptions = {
  /** false: the schema is left as it is (migrateSqlite then applies it, reporting what it applied). */
  migrate?: boolean
  /** Told when a file's mode was tightened (default: a line on stderr). */
  onWarning?: (message: string) => void
}

/**
 * Opens (creating when absent) the SQLite file in WAL mode and brings its schema up to date, unless
 * `migrate: false`. The file holds API keys, secret hashes and the key they are hashed with: it is
 * created 0600 (SQLite gives its -wal and -shm files the database's mode), in a directory created
 * 0700. A file (or -wal, -shm) that others may read is tightened to 0600, with a warning; an existing
 * directory is left as it is.
 */
export function openSqlite(file: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  if (file !== ':memory:') {
    const warn = options.onWarning ?? ((message) => process.stderr.write(`${message}\n`))
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    // made here (if absent) with its mode, before SQLite makes it with the umask's
    closeSync(openSync(file, 'a', 0o600))
    for (const path of [file, `${file}-wal`, `${file}-shm`]) tighten(path, warn)
  }
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  if (options.migrate !== false) migrateSqlite(db)
  return db
}

/** Takes group and other permissions off `path`, if it exists and has any. */
function tighten(path: string, warn: (message: string) => void): void {
  let mode: number
  try {
    mode = statSync(path).mode & 0o777
  } catch {
    return
  }
  if ((mode & 0o077) === 0) return
  chmodSync(path, mode & 0o700)
  warn(
    `${path} was readable by others (mode ${mode.toString(8).padStart(4, '0')}): now ${(mode & 0o700).toString(8).padStart(4, '0')}`,
  )
}
