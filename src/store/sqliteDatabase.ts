import type Database from 'better-sqlite3'

/** An open SQLite database (openSqlite). */
export type SqliteDatabase = Database.Database
