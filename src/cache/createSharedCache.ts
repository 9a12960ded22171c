import { Buffer } from 'node:buffer'
import { createHash } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import { hashesIn } from '../jsonrpc/hashes.ts'
import { openRedis } from '../store/openRedis.ts'
import { type ChainEpoch, createSharedEpochs } from './createSharedEpochs.ts'
import { createSharedHeads, type SharedHead } from './createSharedHeads.ts'
import {
  lookupScript,
  lowerHeadScript,
  moveEpochScript,
  putScript,
  raiseHeadScript,
  type ScriptRedis,
  toKeptHead,
} from './sharedCacheScripts.ts'
import type { SharedStore } from './sharedStore.ts'

export type SharedCache = {
  /** The store and shown head of a chain (one per chain id; networks of the same chain share them). */
  forNetwork(chainId: number): { store: SharedStore; head: SharedHead }
  /** `forgets`: the forgets made by this instance's stores (SharedStore.forget). */
  stats: { hits: number; misses: number; failures: number; puts: number; forgets: number }
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

/**
 * How long an instance's claim to load an answer holds (lookupScript): others wait for its answer
 * meanwhile, at most this long if it never comes (the instance stopped).
 */
const claimMs = 2_000
/** An answer's load claim: beside the entry, under the same prefix. */
const claimKey = (entry: string) => `${entry}~loading`
/** A failed or slow lookup skips Redis for this long: misses do not each wait out the bound. */
const pauseMs = 1_000
/** Keys longer than this are kept under their hash. */
const maxKeyChars = 128
/** Bytes counted per entry on top of its value and key: Redis's own records of it, three times. */
const entryOverheadBytes = 160
/** How long a chain's highest shown head stays in Redis after it was last raised. */
const headTtlMs = 3_600_000
/** How long a chain's head generation stays in Redis after it was last raised or lowered. */
const generationTtlMs = 30 * 86_400_000
/** Longest wait for a connection: a start with Redis unreachable waits no longer for it. */
const connectTimeout = 2_000
/** Dropped-block markers kept while Redis is away, the newest: each stands for a block a reorg left. */
const maxUnsentDrops = 1_024
/** How often the highest shown heads are read again, beside the announcements. */
const headRereadMs = 5_000
/** Readings of Redis's clock taken at the start, then one every clockReadMs (createSharedHeads keeps the best of the last minute). */
const clockSamplesAtStart = 4
const clockReadMs = 1_000

const genesisPattern = /^0x[0-9a-f]{64}$/

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
  redis.defineCommand('tollgateCachePut', { numberOfKeys: 5, lua: putScript })
  redis.defineCommand('tollgateCacheLookup', { lua: lookupScript })
  redis.defineCommand('tollgateRaiseHead', { numberOfKeys: 3, lua: raiseHeadScript })
  redis.defineCommand('tollgateLowerHead', { numberOfKeys: 3, lua: lowerHeadScript })
  redis.defineCommand('tollgateMoveEpoch', { numberOfKeys: 1, lua: moveEpochScript })
  const { Redis } = await import('ioredis')
  // its SUBSCRIBE waits for a connection however long Redis is away (and is renewed on reconnection)
  const subscriber = new Redis(options.url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    lazyConnect: true,
    connectTimeout,
  })
  subscriber.on('error', () => undefined)

  const stats = { hits: 0, misses: 0, failures: 0, puts: 0, forgets: 0 }
  // the heads' announcements and the epochs' share it
  const headsChannel = `${keyPrefix}heads`
  const headKey = (chainId: number) => `${keyPrefix}head:${chainId}`
  const raisedAtKey = (chainId: number) => `${keyPrefix}head:${chainId}:at`
  const generationKey = (chainId: number) => `${keyPrefix}head:${chainId}:gen`
  const epochKey = (chainId: number, genesis: string) => `${keyPrefix}epoch:${chainId}:${genesis}`
  const droppedKey = (chainId: number, genesis: string, hash: string) =>
    `${keyPrefix}dropped:${chainId}:${genesis}:${hash.toLowerCase()}`
  let pausedUntil = 0

  const heads = createSharedHeads({
    graceMs: options.headGraceMs,
    connected: () => redis.status === 'ready',
    async raise(chainId, number, generation) {
      try {
        const [, kept, raisedAt, keptGeneration] = await redis.tollgateRaiseHead(
          headKey(chainId),
          raisedAtKey(chainId),
          generationKey(chainId),
          number.toString(),
          headsChannel,
          chainId,
          headTtlMs,
          generation.toString(),
          generationTtlMs,
        )
        return toKeptHead(kept, raisedAt, keptGeneration)
      } catch {
        return undefined
      }
    },
    async lower(chainId, number) {
      try {
        const [kept, raisedAt, generation] = await redis.tollgateLowerHead(
          headKey(chainId),
          raisedAtKey(chainId),
          generationKey(chainId),
          number.toString(),
          headsChannel,
          chainId,
          headTtlMs,
          '',
          generationTtlMs,
        )
        return toKeptHead(kept, raisedAt, generation)
      } catch {
        return undefined
      }
    },
  })
  const epochs = createSharedEpochs({
    keyPrefix,
    async read(chainId, genesis) {
      if (redis.status !== 'ready') return undefined
      return redis.get(epochKey(chainId, genesis)).then(
        (epoch) => epoch ?? '0',
        () => undefined,
      )
    },
    async move(chainId, genesis) {
      if (redis.status !== 'ready') return undefined
      // kept twice the answers' ttl: an entry written late under the epoch before has expired by then
      return redis
        .tollgateMoveEpoch(epochKey(chainId, genesis), headsChannel, chainId, genesis, ttlMs * 2)
        .then(String, () => undefined)
    },
  })
  async function readHead(chainId: number): Promise<void> {
    if (redis.status !== 'ready') return
    const [kept, raisedAt, generation] = await redis
      .mget(headKey(chainId), raisedAtKey(chainId), generationKey(chainId))
      .catch(() => [])
    const head = toKeptHead(kept, raisedAt, generation)
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
  /** Markers of dropped blocks Redis did not take yet (away, or failing), in the order they came. */
  const unsentDrops = new Set<string>()
  function sendDrop(key: string): void {
    if (redis.status === 'ready') redis.set(key, '1', 'PX', ttlMs).catch(() => keepUnsent(key))
    else keepUnsent(key)
  }
  /** Kept for when Redis is back: the newest maxUnsentDrops (the oldest, least likely asked for, go first). */
  function keepUnsent(key: string): void {
    unsentDrops.delete(key)
    unsentDrops.add(key)
    if (unsentDrops.size > maxUnsentDrops) unsentDrops.delete(unsentDrops.values().next().value as string)
  }
  function retryDrops(): void {
    if (unsentDrops.size === 0 || redis.status !== 'ready') return
    const keys = [...unsentDrops]
    unsentDrops.clear()
    for (const key of keys) sendDrop(key)
  }
  /**
   * The heads and epochs again (missed announcements), and the lowers, forgets and dropped-block
   * markers Redis did not take yet.
   */
  function readHeads(): void {
    heads.retryLowers()
    retryDrops()
    for (const chainId of heads.chains()) void readHead(chainId)
    epochs.refresh()
  }
  subscriber.on('message', (_channel: string, message: string) => {
    // `<chainId>:<number>:<raised at, Redis µs>:<generation>` or `epoch:<chainId>:<genesis>:<epoch>`
    const [first, second, third, fourth] = message.split(':')
    if (first === 'epoch') {
      if (second !== undefined && third !== undefined && fourth !== undefined)
        epochs.heard(Number(second), third, fourth)
      return
    }
    const head = toKeptHead(second, third, fourth)
    if (first !== undefined && head) heads.offer(Number(first), head)
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
    const entryKey = (keyBase: string, key: string) =>
      `${keyBase}${key.length <= maxKeyChars ? key : `#${createHash('sha256').update(key).digest('base64url')}`}`
    let epoch: ChainEpoch | undefined
    let listeners: (() => void)[] = []
    const changed = () => {
      for (const listener of listeners) listener()
    }
    const store: SharedStore = {
      async lookup(key, claim) {
        const keyBase = epoch?.keyBase
        if (keyBase === undefined) return 'load'
        if (performance.now() < pausedUntil || redis.status !== 'ready') {
          stats.failures++
          return 'load'
        }
        try {
          // an answer naming a block the chain left is not read: asked with its markers, one round trip
          const genesis = epoch?.genesis ?? ''
          const markers = hashesIn(key).map((hash) => droppedKey(chainId, genesis, hash))
          const entry = entryKey(keyBase, key)
          const [found, value] = await redis.tollgateCacheLookupBuffer(
            2 + markers.length,
            entry,
            claimKey(entry),
            ...markers,
            claimMs,
            claim ? 1 : 0,
          )
          if (Number(found) === 3) return 'wait'
          if (Number(found) === 2) return 'claimed'
          if (Number(found) === 1 && value) {
            stats.hits++
            return value
          }
          stats.misses++
          return 'load'
        } catch {
          stats.failures++
          pausedUntil = performance.now() + pauseMs
          return 'load'
        }
      },
      release(key) {
        const keyBase = epoch?.keyBase
        if (keyBase === undefined || redis.status !== 'ready') return
        redis.del(claimKey(entryKey(keyBase, key))).catch(() => undefined)
      },
      put(key, value, entryTtlMs = ttlMs) {
        const keyBase = epoch?.keyBase
        if (keyBase === undefined || redis.status !== 'ready') return
        const entry = entryKey(keyBase, key)
        const valueBytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength
        const size = valueBytes + entry.length * 2 + entryOverheadBytes
        stats.puts++
        redis
          .tollgateCachePut(
            entry,
            `${books}index`,
            `${books}sizes`,
            `${books}bytes`,
            claimKey(entry),
            value,
            Math.min(entryTtlMs, ttlMs),
            size,
            options.maxBytes,
          )
          .catch(() => undefined)
      },
      identify(genesisHash) {
        const genesis = typeof genesisHash === 'string' ? genesisHash.toLowerCase() : ''
        if (!genesisPattern.test(genesis)) return Promise.resolve()
        if (epoch?.genesis === genesis) return epoch.ready
        const before = epoch
        if (before) epochs.leave(before, changed)
        epoch = epochs.join(chainId, genesis, changed)
        if (before) {
          log?.info(
            { chainId, genesis, before: before.genesis },
            'shared cache: a new chain under this chain id',
          )
          changed()
        }
        return epoch.ready
      },
      forget(reason) {
        if (!epoch) return Promise.resolve()
        stats.forgets++
        const forgetting = epochs.forget(epoch)
        if (redis.status !== 'ready')
          log?.warn({ chainId, reason }, 'shared cache: the forget is made in Redis once it is back')
        return forgetting
      },
      dropBlock(hash) {
        if (epoch) sendDrop(droppedKey(chainId, epoch.genesis, hash))
      },
      onChange(listener) {
        listeners.push(listener)
        return () => {
          listeners = listeners.filter((each) => each !== listener)
        }
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
