import pg from 'pg'

export type PostgresPool = pg.Pool

export type PostgresTarget = {
  /** The connection pool, every connection's search_path on `schema` when one is chosen. */
  pool: PostgresPool
  /** The schema from `?schema=`, or undefined: the server's search path (normally `public`). */
  schema: string | undefined
  /** Where the pool connects, without credentials: for messages and logs. */
  label: string
}

/** Unquoted lowercase identifiers only: the name goes into `search_path` and `CREATE SCHEMA` as it is. */
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * A pool on the database a postgres:// URL names. `?schema=<name>` keeps every table tollgate makes
 * and reads in that schema (each connection starts with `search_path=<name>`), so that several
 * deployments or test runs share one database apart; the migration creates the schema when it is
 * missing. Every other URL parameter (sslmode, options, application_name, ...) goes to the driver.
 * Notifications (LISTEN) will open their client here too, on the same target.
 */
export function createPostgresPool(url: string): PostgresTarget {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') ?? undefined
  if (schema !== undefined && !schemaName.test(schema)) {
    throw new Error(
      `storage.postgres: schema '${schema}' must be lowercase letters, digits and underscores, not starting with a digit`,
    )
  }
  // the driver lets URL parameters override its options: the ones merged here leave the URL
  const userOptions = parsed.searchParams.get('options') ?? ''
  parsed.searchParams.delete('schema')
  parsed.searchParams.delete('options')
  const options = [userOptions, schema === undefined ? '' : `-c search_path=${schema}`]
    .filter(Boolean)
    .join(' ')
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    ...(options ? { options } : {}),
    // an application_name in the URL wins
    application_name: 'tollgate',
    // per process: the request path never waits on the database (keys and balances are in memory)
    max: 10,
    // a database that does not answer is down for readiness, not a hang
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  })
  // an idle connection the server dropped (restart, pg_terminate_backend) is discarded by the pool;
  // the next query opens a new one and reports any failure itself
  pool.on('error', () => {})
  const database = parsed.pathname.replace(/^\//, '') || '(default database)'
  const label = `postgres ${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}/${decodeURIComponent(database)}${schema === undefined ? '' : ` schema ${schema}`}`
  return { pool, schema, label }
}
