import { createHash } from 'node:crypto'
import type { Redis as RedisClient } from 'ioredis'
import type { Logger } from 'pino'
import { openRedis } from '../store/openRedis.ts'
import { createSharedHeads, type KeptHead, type SharedHead } from './createSharedHeads.ts'
import { putScript, raiseHeadScript } from './sharedCacheScripts.ts'

/** One network's share of the cache in Redis: immutable answers, by the in-memory cache's keys. */
export type SharedStore = {
  /** The kept result's bytes; undefined on a miss, a Redis failure or a wait past the bound: never throws. */
  get(key: string): Promise<Buffer | undefined>
  /** Keeps a result, in the background: a failure is a result not kept. */
  put(key: string, value: string | Buffer): void
}

export type SharedCache = {
  /** The store and shown head of a chain (one per chain id; networks of the same chain share them). */
  forNetwork(chainId: number): { store: SharedStore; head: SharedHead }
  stats: { hits: number; misses: number; failures: number; puts: number }
  close(): Promise<void>
}

export type SharedCacheOptions = {
  url: string
  keyPrefix: string
  ttlSeconds: number
  /** The budget of one chain's entries (values, keys and bookkeeping counted). */
  maxBytes: number
  /** Longest wait for a lookup: a slower Redis is a miss. */
  waitMs: number
  /** How long after its raise in Redis a block number is shown, by every instance (createSharedHeads). */
  headGraceMs: number
  log?: Logger
}

/** A failed or slow lookup skips Redis for this long: misses do not each wait out the bound. */
const pauseMs = 1_000
/** Keys longer than this are kept under their hash. */
const maxKeyChars = 128
/** Bytes counted per entry on top of its value and key: Redis's own records of it, three times. */
const entryOverheadBytes = 160
/** How long a chain's highest shown head stays in Redis after it was last raised. */
const headTtlMs = 3_600_000
/** Longest wait for a connection: a start with Redis unreachable waits no longer for it. */
const connectTimeout = 2_000
/** How often the highest shown heads are read again, beside the announcements. */
const headRereadMs = 5_000
/** Readings of Redis's clock taken at the start, then one every clockReadMs (createSharedHeads keeps the best of the last minute). */
const clockSamplesAtStart = 4
const clockReadMs = 1_000

type ScriptRedis = RedisClient & {
  tollgateCachePut(
    entry: string,
    index: string,
    sizes: string,
    total: string,
    value: string | Buffer,
    ttlMs: number,
    size: number,
    budget: number,
  ): Promise<number>
  tollgateRaiseHead(
    key: string,
    raisedAtKey: string,
    number: string,
    channel: string,
    chainId: number,
    ttlMs: number,
  ): Promise<[number, string, string]>
}

/**
 * The cache shared by every instance on one Redis (docs/operations.md "Running many instances"):
 * one client for lookups and writes that never queues a command while Redis is away (a lookup then
 * fails at once: a miss), one subscriber for the heads other instances showed.
 */
export async function createSharedCache(options: SharedCacheOptions): Promise<SharedCache> {
  const { keyPrefix, log } = options
  const { waitMs } = options
  const ttlMs = options.ttlSeconds * 1000
  const redis = (await openRedis(options.url, {
    commandTimeoutMs: waitMs,
    connectTimeoutMs: connectTimeout,
    name: 'tollgate-cache',
    autoPipelining: true,
    onDown: (err) =>
      log?.warn({ err }, 'shared cache: Redis unreachable; answers come from memory and the upstreams'),
    onBack: () => {
      log?.info('shared cache: Redis is back')
      readHeads()
    },
  })) as ScriptRedis
  redis.defineCommand('tollgateCachePut', { numberOfKeys: 4, lua: putScript })
  redis.defineCommand('tollgateRaiseHead', { numberOfKeys: 2, lua: raiseHeadScript })
  const { Redis } = await import('ioredis')
  // its SUBSCRIBE waits for a connection however long Redis is away (and is renewed on reconnection)
  const subscriber = new Redis(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: true,
    connectTimeout,
  })
  subscriber.on('error', () => undefined)

  const stats = { hits: 0, misses: 0, failures: 0, puts: 0 }
  const headsChannel = `${keyPrefix}heads`
  const headKey = (chainId: number) => `${keyPrefix}head:${chainId}`
  const raisedAtKey = (chainId: number) => `${keyPrefix}head:${chainId}:at`
  let pausedUntil = 0

  const heads = createSharedHeads({
    graceMs: options.headGraceMs,
    connected: () => redis.status === 'ready',
    async raise(chainId, number) {
      try {
        const [, kept, raisedAt] = await redis.tollgateRaiseHead(
          headKey(chainId),
          raisedAtKey(chainId),
          number.toString(),
          headsChannel,
          chainId,
          headTtlMs,
        )
        return keptHead(kept, raisedAt)
      } catch {
        return undefined
      }
    },
  })
  async function readHead(chainId: number): Promise<void> {
    if (redis.status !== 'ready') return
    const [kept, raisedAt] = await redis.mget(headKey(chainId), raisedAtKey(chainId)).catch(() => [])
    const head = keptHead(kept, raisedAt)
    if (head) heads.offer(chainId, head)
  }
  /** Redis's clock against this process's (readings one after the other): when a raised number is shown. */
  async function readClock(samples = 1): Promise<void> {
    for (let index = 0; index < samples && redis.status === 'ready'; index++) {
      const sentAt = performance.now()
      const time = await redis.time().catch(() => undefined)
      if (time) heads.clockSample(sentAt, [String(time[0]), String(time[1])], performance.now())
    }
  }
  function readHeads(): void {
    for (const chainId of heads.chains()) void readHead(chainId)
  }
  subscriber.on('message', (_channel: string, message: string) => {
    // `<chainId>:<number>:<raised at, Redis µs>`
    const [chain, number, raisedAt] = message.split(':')
    const head = keptHead(number, raisedAt)
    if (chain !== undefined && head) heads.offer(Number(chain), head)
  })
  // announcements missed while away: the numbers are read again on every (re)connection, and
  // every few seconds in any case
  subscriber.on('ready', readHeads)
  const rereading = setInterval(readHeads, headRereadMs)
  rereading.unref()
  const clocking = setInterval(() => void readClock(), clockReadMs)
  clocking.unref()
  // a few readings at once: the one with the shortest round trip is the offset until later ones
  await Promise.all([subscriber.connect().catch(() => undefined), readClock(clockSamplesAtStart)])
  subscriber.subscribe(headsChannel).catch(() => undefined)

  function forNetwork(chainId: number): { store: SharedStore; head: SharedHead } {
    const books = `${keyPrefix}cache:${chainId}:~`
    const entryKey = (key: string) =>
      `${keyPrefix}cache:${chainId}:${
        key.length <= maxKeyChars ? key : `#${createHash('sha256').update(key).digest('base64url')}`
      }`
    const store: SharedStore = {
      async get(key) {
        if (performance.now() < pausedUntil || redis.status !== 'ready') {
          stats.failures++
          return undefined
        }
        try {
          const value = await redis.getBuffer(entryKey(key))
          if (value === null) stats.misses++
          else stats.hits++
          return value ?? undefined
        } catch {
          stats.failures++
          pausedUntil = performance.now() + pauseMs
          return undefined
        }
      },
      put(key, value) {
        if (redis.status !== 'ready') return
        const entry = entryKey(key)
        const valueBytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength
        const size = valueBytes + entry.length * 2 + entryOverheadBytes
        stats.puts++
        redis
          .tollgateCachePut(
            entry,
            `${books}index`,
            `${books}sizes`,
            `${books}bytes`,
            value,
            ttlMs,
            size,
            options.maxBytes,
          )
          .catch(() => undefined)
      },
    }
    const known = heads.chains().includes(chainId)
    const head = heads.forChain(chainId)
    if (!known) void readHead(chainId)
    return { store, head }
  }

  return {
    forNetwork,
    stats,
    async close() {
      clearInterval(rereading)
      clearInterval(clocking)
      redis.disconnect()
      subscriber.disconnect()
    },
  }
}

/** A chain's number and raise time as Redis answered them; undefined when not a number. */
function keptHead(
  number: string | null | undefined,
  raisedAtUs: string | null | undefined,
): KeptHead | undefined {
  if (typeof number !== 'string' || !/^\d{1,20}$/.test(number)) return undefined
  return {
    number: BigInt(number),
    raisedAtUs: raisedAtUs && /^\d{1,20}$/.test(raisedAtUs) ? raisedAtUs : undefined,
  }
}
