import { createHash } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { openRedis } from '../store/openRedis.ts'
import { putScript, raiseHeadScript } from './sharedCacheScripts.ts'

/** One network's share of the cache in Redis: immutable answers, by the in-memory cache's keys. */
export type SharedStore = {
  /** The kept result's bytes; undefined on a miss, a Redis failure or a wait past the bound: never throws. */
  get(key: string): Promise<Buffer | undefined>
  /** Keeps a result, in the background: a failure is a result not kept. */
  put(key: string, value: string | Buffer): void
}

/** One network's highest block number shown to a client, by any instance. */
export type SharedHead = {
  /** The highest this instance may tell a client: its own numbers once shared, and those it heard of. */
  readonly shown: bigint
  /**
   * A number this instance found and would tell a client. Higher than `shown`, it is raised in Redis
   * (announced to every instance) and becomes `shown` only once Redis has acknowledged the raise and
   * the grace has passed, so that every instance has heard of it before any client does: the promise
   * settles then (never rejects). Undefined when nothing need be waited for (not higher, or Redis
   * away: then it is shown at once, as by a single instance).
   */
  show(number: bigint): Promise<void> | undefined
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
  /** How long a raised head waits, after Redis acknowledged it, before this instance shows it. */
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

type ScriptRedis = Redis & {
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
    number: string,
    channel: string,
    message: string,
    ttlMs: number,
  ): Promise<[number, string]>
}

/** A number being raised in Redis, and when it may be shown. */
type PendingHead = { number: bigint; shown: Promise<void> }

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
  redis.defineCommand('tollgateRaiseHead', { numberOfKeys: 1, lua: raiseHeadScript })
  // its SUBSCRIBE waits for a connection however long Redis is away (and is renewed on reconnection)
  const subscriber = new Redis(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: true,
    connectTimeout,
  })
  subscriber.on('error', () => undefined)

  const stats = { hits: 0, misses: 0, failures: 0, puts: 0 }
  const heads = new Map<number, { shown: bigint; pending: PendingHead | undefined }>()
  const headsChannel = `${keyPrefix}heads`
  const headKey = (chainId: number) => `${keyPrefix}head:${chainId}`
  let pausedUntil = 0

  // a number another instance raised is shown at once: it was announced to every instance before
  // this one could hear (or read) of it
  function hear(chainId: number, number: bigint): void {
    const head = heads.get(chainId)
    if (head && number > head.shown) head.shown = number
  }
  async function readHead(chainId: number): Promise<void> {
    if (redis.status !== 'ready') return
    const value = await redis.get(headKey(chainId)).catch(() => null)
    if (value !== null && /^\d{1,20}$/.test(value)) hear(chainId, BigInt(value))
  }
  function readHeads(): void {
    for (const chainId of heads.keys()) void readHead(chainId)
  }
  subscriber.on('message', (_channel: string, message: string) => {
    const [chain, number] = message.split(':')
    if (chain !== undefined && number !== undefined && /^\d{1,20}$/.test(number))
      hear(Number(chain), BigInt(number))
  })
  // announcements missed while away: the numbers are read again on every (re)connection, and
  // every few seconds in any case
  subscriber.on('ready', readHeads)
  const rereading = setInterval(readHeads, headRereadMs)
  rereading.unref()
  await subscriber.connect().catch(() => undefined)
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
    let head = heads.get(chainId)
    if (!head) {
      const created = { shown: 0n, pending: undefined }
      head = created
      heads.set(chainId, created)
      void readHead(chainId)
    }
    const shared = head
    return {
      store,
      head: {
        get shown() {
          return shared.shown
        },
        show(number) {
          if (number <= shared.shown) return undefined
          // Redis away: this instance answers as if it were the only one
          if (redis.status !== 'ready') {
            shared.shown = number
            return undefined
          }
          // calls that found the same number (or a lower one) wait for the one raise
          if (shared.pending && shared.pending.number >= number) return shared.pending.shown
          const shown = redis
            .tollgateRaiseHead(
              headKey(chainId),
              number.toString(),
              headsChannel,
              `${chainId}:${number}`,
              headTtlMs,
            )
            .then(
              async ([raised, current]) => {
                if (raised === 1) {
                  // announced: every instance hears of it within the grace (docs/operations.md)
                  await delay(options.headGraceMs)
                  hear(chainId, number)
                } else if (/^\d{1,20}$/.test(current)) hear(chainId, BigInt(current))
                else hear(chainId, number)
              },
              // a raise that failed or timed out: Redis is away, the number is shown as by one instance
              () => hear(chainId, number),
            )
            .finally(() => {
              if (shared.pending?.shown === shown) shared.pending = undefined
            })
          shared.pending = { number, shown }
          return shown
        },
      },
    }
  }

  return {
    forNetwork,
    stats,
    async close() {
      clearInterval(rereading)
      redis.disconnect()
      subscriber.disconnect()
    },
  }
}
