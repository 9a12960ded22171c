import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { freePort } from './localProcesses.ts'
import { testServers } from './testServers.ts'
import { until } from './until.ts'

export type TestPrefix = {
  /** The Redis the prefix is on (its DB index included): the URL for clients the test configures. */
  url: string
  /** `tollgate-test-<random>:` */
  keyPrefix: string
  /** Deletes every key under the prefix (SCAN + DEL) and disconnects. */
  remove(): Promise<void>
  redis: Redis
}

/**
 * A key prefix of the test's own on a Redis (the test Redis of testServers by default: tests only ever
 * touch keys under a prefix of their own), and a client to look with.
 */
export function createTestPrefix(url = testServers.redisUrl): TestPrefix {
  const keyPrefix = `tollgate-test-${randomBytes(6).toString('hex')}:`
  const redis = new Redis(url)
  return {
    url,
    keyPrefix,
    redis,
    async remove() {
      await removeKeysWithPrefix(redis, keyPrefix)
      redis.disconnect()
    },
  }
}

/** Deletes every key under `keyPrefix` (SCAN, so a large keyspace is not blocked on). */
export async function removeKeysWithPrefix(redis: Redis, keyPrefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await redis.del(...keys)
    cursor = next
  } while (cursor !== '0')
}

export type RedisServer = {
  url: string
  port: number
  /** Stops the server (SIGKILL: it keeps nothing) and waits for it to exit. */
  stop(): Promise<void>
  /** Starts it again on the same port, empty. */
  start(): Promise<void>
}

/** A redis-server of the test's own on a free port, nothing saved, to stop and start at will. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    const started = spawn(
      '/usr/bin/redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    )
    child = started
    const probe = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    probe.on('error', () => undefined)
    await until(async () => {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`)
      try {
        if (probe.status !== 'ready') await probe.connect()
        return (await probe.ping()) === 'PONG'
      } catch {
        probe.disconnect()
        return false
      }
    }, 'redis-server to answer')
    probe.disconnect()
  }
  const stop = async () => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, port, stop, start }
}
