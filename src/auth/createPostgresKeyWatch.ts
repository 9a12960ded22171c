import type pg from 'pg'
import type { PostgresTarget } from '../store/createPostgresPool.ts'
import { createPostgresSession, type PostgresSession } from '../store/createPostgresSession.ts'

export type KeyWatch = {
  /**
   * Calls `listener` soon after any process commits a change of a key or an account, and whenever
   * changes may have been missed (the listening connection was (re)opened): a cue to compare the
   * keys version, not a promise that it moved.
   */
  watch(listener: () => void): () => void
  close(): Promise<void>
}

/**
 * Key changes announced by PostgreSQL: one connection of its own LISTENs on the schema's channel
 * (migration 4: the keys-version trigger notifies it in the changing transaction). Opened on the
 * first watch; reopened with backoff when lost, each new session counting as a change.
 */
export function createPostgresKeyWatch(target: PostgresTarget, onError: (err: unknown) => void): KeyWatch {
  const listeners = new Set<() => void>()
  let session: PostgresSession | undefined

  function announce(): void {
    for (const listener of listeners) {
      try {
        listener()
      } catch (err) {
        onError(err)
      }
    }
  }

  async function listen(client: pg.Client): Promise<void> {
    const { rows } = await client.query<{ channel: string }>('SELECT keys_channel() AS channel')
    const channel = rows[0]?.channel
    if (!channel) throw new Error('keys_channel() gave no channel')
    client.on('notification', (message) => {
      if (message.channel === channel) announce()
    })
    // the name is made by the migration from a fixed prefix and hex digits
    await client.query(`LISTEN "${channel}"`)
    // whatever changed while no connection listened is found by the version check this starts
    announce()
  }

  return {
    watch(listener) {
      listeners.add(listener)
      session ??= createPostgresSession(target, {
        name: 'key changes',
        onConnect: listen,
        // a connection that died without a word would otherwise go unnoticed (it only receives)
        pingMs: 10_000,
        onLost: () => {},
        onError,
      })
      return () => {
        listeners.delete(listener)
      }
    },
    async close() {
      listeners.clear()
      await session?.close()
    },
  }
}
