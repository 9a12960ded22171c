import type { Redis } from 'ioredis'

export type OpenRedisOptions = {
  /** The longest one command waits before it fails. */
  commandTimeoutMs: number
  /** The longest one connection attempt waits. */
  connectTimeoutMs?: number
  /** The client's name in Redis's CLIENT LIST. */
  name: string
  /** Commands made in the same turn go to Redis as one pipeline. */
  autoPipelining?: boolean
  /** Once per outage, with its first error (not once per reconnection attempt). */
  onDown?: ((err: Error) => void) | undefined
  /** When Redis answers again after an outage (not at the first connection). */
  onBack?: () => void
}

/**
 * A Redis client for shared state that must never hold a request up: while Redis is away nothing is
 * queued (a command fails at once), a command waits at most `commandTimeoutMs`, and the client
 * reconnects in the background (every 100 ms, backing off to 1 s). Resolves once connected or once
 * the first attempt failed: a Redis that is down at start is an outage like any later one. The client
 * library is loaded on first use: a gateway without Redis never carries it.
 */
export async function openRedis(url: string, options: OpenRedisOptions): Promise<Redis> {
  const { Redis: RedisClient } = await import('ioredis')
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    enableAutoPipelining: options.autoPipelining ?? false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: true,
    connectionName: options.name,
  })
  let down = false
  redis.on('error', (err: Error) => {
    if (down) return
    down = true
    options.onDown?.(err)
  })
  redis.on('ready', () => {
    if (!down) return
    down = false
    options.onBack?.()
  })
  await redis.connect().catch(() => undefined)
  return redis
}
