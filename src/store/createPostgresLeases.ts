import type pg from 'pg'
import type { PostgresTarget } from './createPostgresPool.ts'
import { createPostgresSession, type PostgresSession } from './createPostgresSession.ts'
import { announceHeld, type Leadership } from './leadership.ts'

export type PostgresLeases = {
  lead(name: string): Leadership
  close(): Promise<void>
}

export type PostgresLeasesOptions = {
  /** How often a lease not held is tried again (and the held ones' connection checked). */
  checkMs: number
  onError(err: unknown): void
}

/** The advisory locks' first key ('leas'); the second is the hash of the schema and the lease's name. */
const leaseLockClass = 0x6c656173

/** The lock's keys, in SQL: the schema the tables are in, so that deployments on one database lead apart. */
const lockKeys = `$1::int, hashtext(current_schema() || ':' || name)`

type Lease = { name: string; held: boolean; listeners: Set<(held: boolean) => void> }

/**
 * Leases on PostgreSQL session advisory locks, all on one connection of this process's own: a lease
 * is held while its lock is, and its lock while the session lives. When the holder dies (even
 * SIGKILLed) the server ends its session and frees the lock; another process's next try (every
 * `checkMs`) takes it. A lost connection loses every lease at once (another may hold them already).
 */
export function createPostgresLeases(target: PostgresTarget, options: PostgresLeasesOptions): PostgresLeases {
  const leases = new Map<string, Lease>()
  let session: PostgresSession | undefined
  let timer: NodeJS.Timeout | undefined
  let checking = false

  const announce = (lease: Lease, held: boolean) => announceHeld(lease, held, options.onError)

  /** Tries every lease not held; with all held, checks the connection still answers. */
  async function tryLeases(client: pg.Client): Promise<void> {
    const wanted = [...leases.values()].filter((lease) => !lease.held).map((lease) => lease.name)
    if (wanted.length === 0) {
      await client.query('SELECT 1')
      return
    }
    const { rows } = await client.query<{ name: string; held: boolean }>(
      `SELECT name, pg_try_advisory_lock(${lockKeys}) AS held FROM unnest($2::text[]) AS name`,
      [leaseLockClass, wanted],
    )
    for (const row of rows) {
      const lease = leases.get(row.name)
      if (lease && row.held) announce(lease, true)
    }
  }

  async function check(): Promise<void> {
    const client = session?.client()
    if (!client || checking) return
    checking = true
    try {
      await tryLeases(client)
    } catch (err) {
      session?.drop(client, err)
    } finally {
      checking = false
    }
  }

  function start(): void {
    session = createPostgresSession(target, {
      name: 'leases',
      // the first try comes at once, not after checkMs
      onConnect: tryLeases,
      onLost() {
        for (const lease of leases.values()) announce(lease, false)
      },
      onError: options.onError,
    })
    timer = setInterval(() => void check(), options.checkMs)
    timer.unref()
  }

  return {
    lead(name) {
      let lease = leases.get(name)
      if (!lease) {
        lease = { name, held: false, listeners: new Set() }
        leases.set(name, lease)
      }
      const own = lease
      if (!session) start()
      else void check()
      return {
        held: () => own.held,
        onChange(listener) {
          own.listeners.add(listener)
          return () => {
            own.listeners.delete(listener)
          }
        },
      }
    },
    async close() {
      clearInterval(timer)
      // ending the session frees every lock it holds
      await session?.close()
      for (const lease of leases.values()) {
        announce(lease, false)
        lease.listeners.clear()
      }
    },
  }
}
