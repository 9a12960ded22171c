import type { Buffer } from 'node:buffer'
import { setTimeout as sleep } from 'node:timers/promises'
import { hashesIn } from '../jsonrpc/hashes.ts'
import { PartnerAnswer, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import { type CachedValue, createMemoryCache } from './createMemoryCache.ts'
import { blockNumberIn, keptValueOf, minedIn, namesBlock, resultAnswer, splitAnswer } from './keptResults.ts'
import type { SharedStore } from './sharedStore.ts'

/**
 * What an upstream answered to a cacheable call: its result's JSON text, or the whole answer when it
 * had none; `partner` when a partner provider answered (only calls that may fail over join such a load).
 */
export type LoadedAnswer = ({ result: CachedValue } | { answer: Buffer }) & { partner?: true }

export type CacheStats = {
  hits: number
  misses: number
  /** Calls that joined an identical call already in flight instead of asking an upstream. */
  coalesced: number
  evictions: number
  entries: number
  bytes: number
  /** Misses answered by the shared cache (Redis) instead of an upstream. */
  sharedHits: number
  /**
   * Times every answer kept as immutable was dropped because the chain changed under it: blocks at
   * or below finalized (here, or seen by another instance sharing Redis) or a new chain.
   */
  forgets: number
}

/**
 * How long an answer is kept: `immutable` until evicted or its block (a hash its key names) leaves
 * the chain; `pinned` (its key names a block, cacheKey) the same when its result names that block
 * too (a block, its transactions, logs that reach it: a node on another branch answers another
 * block), else until the next head; `mined` (a transaction or its receipt) as long as the block its
 * result names stays on the chain, or, not mined yet (null, no block), until the next head; `head`
 * until the next head.
 */
export type CacheKeep = 'immutable' | 'pinned' | 'mined' | 'head'

export type RpcCache = {
  /** The kept result for `key`, as a whole answer carrying `id`; undefined on a miss. */
  get(key: string, keep: CacheKeep, id: RpcId): RpcPayload | undefined
  /**
   * The result kept since the caller's `get` missed, if one was; else runs `load` (the upstream
   * call) once for identical calls in flight of the same `group`, and keeps
   * its result when it may be kept: never an error, never a partner's answer (it would reach keys
   * that may not fail over), never a null (it may be "not there yet") but a transaction's not mined
   * yet until the next head, a head-scoped result only if no new head arrived while it was being
   * fetched, a mined one only if its block is the chain's. Calls join only loads of their own group:
   * calls that may fail over to partners load apart from those that may not.
   */
  load(key: string, keep: CacheKeep, load: () => Promise<SentAnswer>, group?: string): Promise<LoadedAnswer>
  /**
   * The chain's newest block, whole as eth_getBlockByNumber answers it with transaction hashes only
   * (the head model's poll fetched it): kept as the answer of `latest` until the next head, and of
   * its number while it stays on the chain.
   */
  keepLatestBlock(block: { number: string; hash?: unknown }): void
  /** A new head (or a reorg): every head-scoped entry is dropped. */
  newHead(): void
  /**
   * A block the chain left: immutable entries pinned to its hash are dropped (with the shared cache,
   * never read there again either), loads under way not kept.
   */
  dropBlock(hash: string): void
  /**
   * Blocks at or below the finalized one changed (a dev chain's revert, a new chain): every immutable
   * entry is dropped, loads under way not kept.
   */
  dropImmutable(): void
  /**
   * The chain's identity (its genesis hash): a different one than before (a new chain under the
   * same chain id) drops every immutable answer; the shared cache keeps and reads answers only once
   * it is known. Settles when the shared cache is ready for it (never rejects).
   */
  identify(genesisHash: string): Promise<void>
  /**
   * "Immutable" did not hold (blocks at or below finalized changed): every immutable answer is
   * dropped, here and, with the shared cache, by every instance (SharedStore.forget). The caller logs it.
   */
  forget(reason: string): Promise<void>
  stats: CacheStats
  /** Stops hearing from the shared store (the network is closed; another may use the store). */
  close(): void
}

export type RpcCacheOptions = {
  maxBytes: number
  /** Results larger than this are not kept. */
  maxEntryBytes: number
  /**
   * The cache shared by every instance (Redis): a miss asks it before the upstream (an answer of the
   * head under the head's hash), and what this instance keeps is kept there too (pinned ones only
   * once they name their block; an answer of the head for a minute). A miss there claims the load:
   * other instances wait for its answer rather than ask the upstream too. Its failures are misses.
   */
  shared?: SharedStore | undefined
  /**
   * The number of the newest block the network's chain has linked. An answer pinned to a block hash
   * that names a block above it is not kept: the chain has not seen that block, so it could not tell
   * the cache if a reorg dropped it.
   */
  chainTip?: () => bigint | undefined
  /**
   * The hash of the chain's block at a number, while the chain remembers it: a mined transaction is
   * kept (and read from the shared cache) only when the block its answer names is this one.
   */
  blockHashAt?: (number: bigint) => string | undefined
  /**
   * Whether the chain has linked the block with this hash: an empty list by a block hash (no logs,
   * no receipts) names no block number to check against the chain's tip, so it is kept only then.
   */
  hasBlock?: (hash: string) => boolean
  /**
   * The hash of the chain's newest block: with the shared cache, an answer of the head (`head`) is
   * shared under it, read by every instance at the same head and never once that block is dropped.
   */
  headHash?: () => string | undefined
}

/**
 * A call's key in the cache: its method and params (their JSON), and for an answer pinned to a block
 * number, the hash of the chain's block there (the key names the block, so the block's leaving drops it).
 */
export function cacheKey(method: string, paramsJson: string, blockHash?: string): string {
  return blockHash === undefined ? `${method}${paramsJson}` : `${method}${paramsJson}@${blockHash}`
}

/** The block hash a pinned call's key names (cacheKey), lowercased. */
function blockOfKey(key: string): string {
  return key.slice(key.lastIndexOf('@') + 1).toLowerCase()
}

/** An answer of the head's key in the shared cache: under the head block's hash, which a reorg's marker drops. */
const atHead = (key: string, headHash: string) => `${key}@${headHash}`

/**
 * The longest a load waits for another instance's load of the same answer (its claim, in the shared
 * cache) before asking the upstream itself: more than most node calls take, so that a fleet asks
 * the node once for an answer as one instance does.
 */
const maxSharedWaitMs = 1_000

/** How long an answer of one head is kept in the shared cache: longer than a block, however slow the chain. */
const sharedHeadTtlMs = 60_000

/** The generations a load began in (bumped by new heads, by dropped blocks), and the head's hash then. */
type LoadStart = { head: number; immutable: number; headHash: string | undefined }

/**
 * A network's finality-aware answer cache, bounded in bytes (createMemoryCache): immutable entries
 * are kept until evicted (least recently used first), head entries until the next head. The
 * upstream is always asked with id 1, so that one answer serves every caller whatever its id.
 */
export function createRpcCache(options: RpcCacheOptions): RpcCache {
  let generation = 0
  /** Bumped when immutable entries are dropped: loads begun before are not kept. */
  let immutableGeneration = 0
  let inFlightImmutable = new Map<string, Promise<LoadedAnswer>>()
  let genesis: string | undefined
  let inFlightHead = new Map<string, Promise<LoadedAnswer>>()
  const { shared } = options
  const stats: CacheStats = {
    hits: 0,
    misses: 0,
    coalesced: 0,
    evictions: 0,
    entries: 0,
    bytes: 0,
    sharedHits: 0,
    forgets: 0,
  }
  const memory = createMemoryCache(options, stats)

  /**
   * A result the shared cache kept (an answer of the head: under the head's hash) is kept in memory
   * too; a miss there asks the upstream, after waiting for the answer of another instance that is
   * loading it (at most maxSharedWaitMs); a failure, or a mined transaction whose block is not the
   * chain's, asks the upstream at once.
   */
  async function fromShared(
    key: string,
    sharedKey: string,
    keep: CacheKeep,
    from: SharedStore,
    startedAt: LoadStart,
    fetch: () => Promise<LoadedAnswer>,
  ): Promise<LoadedAnswer> {
    // a receipt is mostly asked before it is mined (a null, kept by none): others do not wait for it
    let found = await from.lookup(sharedKey, keep !== 'mined')
    if (found === 'claimed') return fetch().finally(() => from.release(sharedKey))
    for (let waitedMs = 0, stepMs = 2; found === 'wait' && waitedMs < maxSharedWaitMs; waitedMs += stepMs) {
      await sleep(stepMs)
      stepMs = Math.min(stepMs * 2, 50)
      found = await from.lookup(sharedKey, false)
    }
    if (typeof found === 'string') return fetch()
    const result = keptValueOf(found)
    const block = keep === 'mined' ? chainBlockIn(result) : undefined
    if (keep === 'mined' && block === undefined) return fetch()
    stats.sharedHits++
    if (keep === 'head') {
      if (startedAt.head === generation) memory.set(key, 'head', result)
    } else if (startedAt.immutable === immutableGeneration) memory.set(key, 'immutable', result, block)
    return { result }
  }

  /** The hash of the block a mined transaction's result names, when the chain has that block; else undefined. */
  function chainBlockIn(result: CachedValue): string | undefined {
    const block = minedIn(result)
    if (block === undefined) return undefined
    return options.blockHashAt?.(block.number)?.toLowerCase() === block.hash ? block.hash : undefined
  }

  /** Keeps a loaded result where `keep` says, if it may be kept (see RpcCache.load). */
  function keepLoaded(key: string, keep: CacheKeep, result: CachedValue, startedAt: LoadStart): void {
    if (keep === 'mined') {
      const mined = minedIn(result)
      if (mined === undefined) {
        // not mined yet (null, or pending): true until the next head
        if (startedAt.head === generation) memory.set(key, 'head', result)
        return
      }
      const block = chainBlockIn(result)
      if (block === undefined || startedAt.immutable !== immutableGeneration) return
      memory.set(key, 'immutable', result, block)
      shared?.put(key, result)
      return
    }
    if (result === 'null') return
    if (keep === 'pinned' && !namesBlock(result, blockOfKey(key))) {
      // the node's answer may be of another branch: only until the next head
      if (startedAt.head === generation) memory.set(key, 'head', result)
      return
    }
    if (keep === 'head') {
      if (startedAt.head !== generation) return
      memory.set(key, 'head', result)
      if (startedAt.headHash !== undefined)
        shared?.put(atHead(key, startedAt.headHash), result, sharedHeadTtlMs)
      return
    }
    if (startedAt.immutable !== immutableGeneration || !seenByChain(key, result)) return
    memory.set(key, 'immutable', result)
    shared?.put(key, result)
  }

  /** Where a load is from: the shared cache first, when there is one (an answer of the head, at a known head). */
  function fromStores(
    key: string,
    keep: CacheKeep,
    startedAt: LoadStart,
    fetch: () => Promise<LoadedAnswer>,
  ) {
    if (!shared) return fetch()
    if (keep !== 'head') return fromShared(key, key, keep, shared, startedAt, fetch)
    const { headHash } = startedAt
    return headHash === undefined
      ? fetch()
      : fromShared(key, atHead(key, headHash), keep, shared, startedAt, fetch)
  }

  /** The result kept for `key` where `keep` looks: a mined transaction's, or a pinned one's, in either. */
  function keptValue(key: string, keep: CacheKeep): CachedValue | undefined {
    if (keep === 'immutable' || keep === 'head') return memory.get(key, keep)
    return memory.get(key, 'immutable') ?? memory.get(key, 'head')
  }

  /**
   * Whether an immutable result may be kept: not one pinned by hash to a block above the chain's tip
   * (by the number it names), nor an empty list by a block hash the chain has not linked.
   */
  function seenByChain(key: string, result: CachedValue): boolean {
    const tip = options.chainTip?.()
    const hashes = hashesIn(key)
    if (tip === undefined || hashes.length === 0) return true
    if (result === '[]') return options.hasBlock === undefined || hashes.some(options.hasBlock)
    const number = blockNumberIn(result)
    return number === undefined || number <= tip
  }

  /** Immutable loads under way are not kept, nor joined by calls made from now on. */
  function startOver(): void {
    immutableGeneration++
    inFlightImmutable = new Map()
  }

  function dropImmutable(): void {
    startOver()
    memory.clearImmutable()
  }
  /** The chain changed under every immutable answer (a forget here or by another instance, a new chain). */
  function forgetAll(): void {
    stats.forgets++
    dropImmutable()
  }
  const stopHearing = shared?.onChange(forgetAll)

  return {
    stats,
    get(key, keep, id) {
      const value = keptValue(key, keep)
      if (value === undefined) {
        stats.misses++
        return undefined
      }
      stats.hits++
      return resultAnswer(id, value)
    },
    load(key, keep, load, group) {
      // kept since the caller's get missed (while it waited for one of its key's slots)
      const kept = keptValue(key, keep)
      if (kept !== undefined) return Promise.resolve({ result: kept })
      // a mined transaction's load is not joined across a head (it may have been mined since), nor a
      // pinned one's (it may be kept until then only)
      const inFlight = keep === 'immutable' ? inFlightImmutable : inFlightHead
      const flightKey = group === undefined ? key : `${group}\n${key}`
      const pending = inFlight.get(flightKey)
      if (pending) {
        stats.coalesced++
        return pending
      }
      const startedAt: LoadStart = {
        head: generation,
        immutable: immutableGeneration,
        headHash: shared && keep === 'head' ? options.headHash?.()?.toLowerCase() : undefined,
      }
      const fetch = async (): Promise<LoadedAnswer> => {
        const sent = await load()
        // a partner's answer reaches the callers of its load, marked, and is never kept
        if (sent instanceof PartnerAnswer) return { ...splitAnswer(sent.payload), partner: true }
        const loaded = splitAnswer(sent)
        if ('result' in loaded) keepLoaded(key, keep, loaded.result, startedAt)
        return loaded
      }
      // memory first (the caller's get), then the shared cache, then the upstream
      const promise = fromStores(key, keep, startedAt, fetch).finally(() => {
        if (inFlight.get(flightKey) === promise) inFlight.delete(flightKey)
      })
      inFlight.set(flightKey, promise)
      return promise
    },
    dropBlock(hash) {
      shared?.dropBlock(hash)
      startOver()
      memory.dropPinned(hash)
    },
    dropImmutable,
    identify(genesisHash) {
      const identity = genesisHash.toLowerCase()
      // with the shared cache, its store tells (onChange) when it meets a new identity
      if (genesis !== undefined && genesis !== identity && !shared) forgetAll()
      genesis = identity
      return shared ? shared.identify(identity) : Promise.resolve()
    },
    close() {
      stopHearing?.()
    },
    forget(reason) {
      if (!shared) {
        forgetAll()
        return Promise.resolve()
      }
      // before the chain is identified the shared store has nothing to move: memory is dropped anyway
      const before = stats.forgets
      const forgetting = shared.forget(reason)
      if (stats.forgets === before) forgetAll()
      return forgetting
    },
    keepLatestBlock(block) {
      if (typeof block.hash !== 'string') return
      const text = JSON.stringify(block)
      const latest = cacheKey('eth_getBlockByNumber', '["latest",false]')
      const pinned = cacheKey('eth_getBlockByNumber', `["${block.number}",false]`, block.hash)
      memory.set(latest, 'head', text)
      memory.set(pinned, 'immutable', text)
      // for the instances that follow this one's head polls (and keep none of their own)
      shared?.put(atHead(latest, block.hash.toLowerCase()), text, sharedHeadTtlMs)
      shared?.put(pinned, text)
    },
    newHead() {
      generation++
      // head-scoped calls in flight across the head are not joined by calls made after it
      inFlightHead = new Map()
      memory.clearHead()
    },
  }
}
