import type pg from 'pg'
import type { PostgresTarget } from './createPostgresPool.ts'

export type PostgresSession = {
  /** The connected client, or undefined while (re)connecting. */
  client(): pg.Client | undefined
  /** Drops a client that failed a query: its session is over, a new one is opened. */
  drop(client: pg.Client, err: unknown): void
  close(): Promise<void>
}

export type PostgresSessionOptions = {
  /** Tells the connection apart in pg_stat_activity (`tollgate <name>`). */
  name: string
  /** Runs on each new connection before it counts as up (LISTEN, ...); a failure drops it and retries. */
  onConnect(client: pg.Client): Promise<void>
  /** The session ended: whatever it held (locks, LISTEN) is gone with it. */
  onLost(): void
  onError(err: unknown): void
  /** Checks this often that the connection answers (for sessions that run no queries of their own). */
  pingMs?: number
  /** The first wait before reconnecting, doubled on each failure up to maxBackoffMs. */
  minBackoffMs?: number
  maxBackoffMs?: number
}

/**
 * One connection of its own, outside the pool, kept open: what lives in a session (LISTEN, session
 * advisory locks) lives on it. A lost connection is reported once (onLost) and reopened with
 * backoff; onConnect sets the new session up.
 */
export function createPostgresSession(
  target: PostgresTarget,
  options: PostgresSessionOptions,
): PostgresSession {
  const { minBackoffMs = 100, maxBackoffMs = 5_000 } = options
  let current: pg.Client | undefined
  let backoffMs = minBackoffMs
  let timer: NodeJS.Timeout | undefined
  let closed = false

  async function connect(): Promise<void> {
    const client = target.openClient(options.name)
    /** Set when the connection ends before it is current: it is not used. */
    let ended: unknown
    // errors after connecting (server restart, terminated backend) come here, then 'end'
    const lose = (err: unknown) => {
      ended ??= err
      drop(client, err)
    }
    client.on('error', lose)
    client.on('end', () => lose(new Error('connection ended')))
    try {
      await client.connect()
      // the server finds a vanished client within about 25 s (and frees what its session held),
      // whatever its own TCP keepalive settings
      await client.query(
        'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3',
      )
      await options.onConnect(client)
      if (ended !== undefined) throw ended
    } catch (err) {
      client.removeAllListeners()
      client.on('error', () => {})
      void client.end().catch(() => undefined)
      options.onError(err)
      retry()
      return
    }
    if (closed) {
      void client.end().catch(() => undefined)
      return
    }
    current = client
    backoffMs = minBackoffMs
  }

  function retry(): void {
    if (closed) return
    timer = setTimeout(() => void connect(), backoffMs)
    timer.unref()
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs)
  }

  function drop(client: pg.Client, err: unknown): void {
    if (client !== current) return
    current = undefined
    client.removeAllListeners()
    client.on('error', () => {})
    void client.end().catch(() => undefined)
    if (closed) return
    options.onError(err)
    options.onLost()
    retry()
  }

  void connect()
  const pinger =
    options.pingMs === undefined
      ? undefined
      : setInterval(() => {
          const client = current
          client?.query('SELECT 1').catch((err: unknown) => drop(client, err))
        }, options.pingMs)
  pinger?.unref()

  return {
    client: () => current,
    drop,
    async close() {
      closed = true
      clearTimeout(timer)
      clearInterval(pinger)
      const client = current
      current = undefined
      if (client) {
        client.removeAllListeners()
        client.on('error', () => {})
        await client.end().catch(() => undefined)
      }
    },
  }
}
