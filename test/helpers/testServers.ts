/**
 * The PostgreSQL and Redis the tests are given, read here and nowhere else:
 * - `TOLLGATE_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`): a database the
 *   tests make schemas (and one test a database) of their own in, and drop;
 * - `TOLLGATE_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`): a Redis the tests write under key
 *   prefixes of their own, in the DB its URL names (`redis://127.0.0.1:6379/5`: DB 5, for the tests'
 *   own clients and for every gateway they configure);
 * - `TOLLGATE_TEST_STORAGE=postgres`: the in-process e2e gateways store on that Postgres too.
 * `npm test` sets the first two to servers of its own when none answers (scripts/ensureServices.js).
 */
export const testServers = {
  postgresUrl: process.env.TOLLGATE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.TOLLGATE_TEST_REDIS_URL || 'redis://127.0.0.1:6379',
  gatewaysOnPostgres: process.env.TOLLGATE_TEST_STORAGE === 'postgres',
}

const defaultPorts: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379 }

/** The host and port a server URL names (the scheme's default port when it names none). */
export function toServerAddress(url: string): { host: string; port: number } {
  const parsed = new URL(url)
  const port = Number(parsed.port || defaultPorts[parsed.protocol])
  return { host: parsed.hostname, port }
}

/**
 * `url` with its host and port swapped for `127.0.0.1:port` (a proxy in front of the server, or a port
 * nothing listens on); user, database, DB index and options stay.
 */
export function toUrlAtPort(url: string, port: number): string {
  const moved = new URL(url)
  moved.host = `127.0.0.1:${port}`
  return moved.toString()
}

/** How the gateway names a Postgres URL in its reports: `host:port/database` (no credentials). */
export function toPostgresAddress(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${decodeURIComponent(parsed.pathname)}`
}
