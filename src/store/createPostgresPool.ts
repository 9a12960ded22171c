import pg from 'pg'

export type PostgresPool = pg.Pool

export type PostgresTarget = {
  /** The connection pool, every connection's search_path on `schema` when one is chosen. */
  pool: PostgresPool
  /** The schema from `?schema=`, or undefined: the server's search path (normally `public`). */
  schema: string | undefined
  /** Where the pool connects, without credentials: for messages and logs. */
  label: string
  /**
   * A client of its own outside the pool (not yet connected), on the same database and schema as
   * the pool's: for what holds a session (LISTEN, session advisory locks). `name` tells it apart in
   * pg_stat_activity (`tollgate <name>`, unless the URL chose an application_name).
   */
  openClient(name: string): pg.Client
}

/** Unquoted lowercase identifiers only: the name goes into `search_path` and `CREATE SCHEMA` as it is. */
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * A pool on the database a postgres:// URL names. `?schema=<name>` keeps every table tollgate makes
 * and reads in that schema (each connection starts with `search_path=<name>`), so that several
 * deployments or test runs share one database apart; the migration creates the schema when it is
 * missing. Every other URL parameter (sslmode, options, application_name, ...) goes to the driver.
 * Sessions (LISTEN, advisory locks) open their own clients on the same target (openClient).
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
  const connection = { connectionString: parsed.toString(), ...(options ? { options } : {}) }
  const pool = new pg.Pool({
    ...connection,
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
  return {
    pool,
    schema,
    label,
    openClient: (name) =>
      new pg.Client({
        ...connection,
        application_name: `tollgate ${name}`,
        connectionTimeoutMillis: 5_000,
        // a query unanswered this long means the session is lost (its holder drops it)
        query_timeout: 5_000,
        // a peer gone without a word (a cut network) is found out by the kernel, not after hours
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      }),
  }
}
