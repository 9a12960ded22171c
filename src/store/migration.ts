/** One schema change: its SQL and a few words on what it makes. Its version is its position + 1. */
export type Migration = { name: string; sql: string }

/** A migration as `tollgate migrate` reports it. */
export type AppliedMigration = { version: number; name: string }
