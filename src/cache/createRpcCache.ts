import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { hashesIn } from '../jsonrpc/hashes.ts'
import { PartnerAnswer, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import { type CachedValue, createMemoryCache } from './createMemoryCache.ts'
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

export type RpcCache = {
  /** The kept result for `key`, as a whole answer carrying `id`; undefined on a miss. */
  get(key: string, scope: 'immutable' | 'head', id: RpcId): RpcPayload | undefined
  /**
   * The result kept since the caller's `get` missed, if one was; else runs `load` (the upstream
   * call) once for identical calls in flight of the same `group`, and keeps
   * its result when it may be kept: never an error, never a null (it may be "not there yet"), never
   * a partner's answer (it would reach keys that may not fail over), and a head-scoped result only
   * if no new head arrived while it was being fetched. Calls join only loads of their own group:
   * calls that may fail over to partners load apart from those that may not.
   */
  load(
    key: string,
    scope: 'immutable' | 'head',
    load: () => Promise<SentAnswer>,
    group?: string,
  ): Promise<LoadedAnswer>
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
   * The cache shared by every instance (Redis): an immutable miss asks it before the upstream, and
   * an immutable result fetched here is kept there too. Its failures are misses.
   */
  shared?: SharedStore | undefined
  /**
   * The number of the newest block the network's chain has linked. An answer pinned to a block hash
   * that names a block above it is not kept: the chain has not seen that block, so it could not tell
   * the cache if a reorg dropped it.
   */
  chainTip?: () => bigint | undefined
}

/** Results up to this size are kept as strings. */
const stringBytes = 4096

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

  /** A result the shared cache kept is kept in memory too; a miss there (or a failure) asks the upstream. */
  async function fromShared(
    key: string,
    from: SharedStore,
    fetch: () => Promise<LoadedAnswer>,
  ): Promise<LoadedAnswer> {
    const startedAt = immutableGeneration
    const kept = await from.get(key)
    if (kept === undefined) return fetch()
    const result = kept.length <= stringBytes ? kept.toString() : detached(kept)
    stats.sharedHits++
    if (startedAt === immutableGeneration) memory.set(key, 'immutable', result)
    return { result }
  }

  /** Whether an immutable result may be kept: not one pinned by hash to a block above the chain's tip. */
  function seenByChain(key: string, result: CachedValue): boolean {
    const tip = options.chainTip?.()
    if (tip === undefined || hashesIn(key).length === 0) return true
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
    get(key, scope, id) {
      const value = memory.get(key, scope)
      if (value === undefined) {
        stats.misses++
        return undefined
      }
      stats.hits++
      return resultAnswer(id, value)
    },
    load(key, scope, load, group) {
      // kept since the caller's get missed (while it waited for one of its key's slots)
      const kept = memory.get(key, scope)
      if (kept !== undefined) return Promise.resolve({ result: kept })
      const inFlight = scope === 'immutable' ? inFlightImmutable : inFlightHead
      const flightKey = group === undefined ? key : `${group}\n${key}`
      const pending = inFlight.get(flightKey)
      if (pending) {
        stats.coalesced++
        return pending
      }
      const startedAt = scope === 'immutable' ? immutableGeneration : generation
      const fetch = async (): Promise<LoadedAnswer> => {
        const sent = await load()
        // a partner's answer reaches the callers of its load, marked, and is never kept
        if (sent instanceof PartnerAnswer) return { ...splitAnswer(sent.payload), partner: true }
        const loaded = splitAnswer(sent)
        const current = scope === 'immutable' ? immutableGeneration : generation
        if (
          'result' in loaded &&
          loaded.result !== 'null' &&
          startedAt === current &&
          (scope === 'head' || seenByChain(key, loaded.result))
        ) {
          memory.set(key, scope, loaded.result)
          if (scope === 'immutable') shared?.put(key, loaded.result)
        }
        return loaded
      }
      // memory first (the caller's get), then the shared cache, then the upstream
      const promise = (scope === 'immutable' && shared ? fromShared(key, shared, fetch) : fetch()).finally(
        () => {
          if (inFlight.get(flightKey) === promise) inFlight.delete(flightKey)
        },
      )
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
    newHead() {
      generation++
      // head-scoped calls in flight across the head are not joined by calls made after it
      inFlightHead = new Map()
      memory.clearHead()
    },
  }
}

const answerPrefix = Buffer.from('{"jsonrpc":"2.0","id":1,"result":')
const numberField = /"(?:number|blockNumber)":\s*"(0x[0-9a-fA-F]{1,16})"/

/**
 * The block number a result names (a block's `number`, a receipt's or log's `blockNumber`), read from
 * its first bytes (a block's number comes before its transactions); undefined when it names none.
 */
function blockNumberIn(result: CachedValue): bigint | undefined {
  const text =
    typeof result === 'string' ? result : result.toString('latin1', 0, Math.min(result.length, 4096))
  const found = numberField.exec(text)
  return found ? BigInt(found[1] as string) : undefined
}
/** The result's JSON text without parsing it when the node wrote the usual member order; else parsed. */
export function splitAnswer(answer: Buffer): { result: CachedValue } | { answer: Buffer } {
  let end = answer.length
  while (end > 0 && isBlank(answer[end - 1] as number)) end--
  if (answer.subarray(0, answerPrefix.length).equals(answerPrefix) && answer[end - 1] === 0x7d) {
    let start = answerPrefix.length
    let resultEnd = end - 1
    // blanks around the result ("result": null) would hide a null from the caller's check
    while (start < resultEnd && isBlank(answer[start] as number)) start++
    while (resultEnd > start && isBlank(answer[resultEnd - 1] as number)) resultEnd--
    const result = answer.subarray(start, resultEnd)
    return { result: result.length <= stringBytes ? result.toString() : detached(result) }
  }
  const parsed = JSON.parse(answer.toString()) as { result?: unknown }
  if (!('result' in parsed) || 'error' in parsed) return { answer }
  const text = JSON.stringify(parsed.result)
  return { result: text.length <= stringBytes ? text : Buffer.from(text) }
}

/** Bytes of a view that keeping it would hold on to, beyond its own: up to this, the view is kept. */
const pinnedSlackBytes = 1024

/**
 * A large result to keep: the view itself when the memory under it is the answer's own (a collected
 * answer of several chunks), a copy when it is a small part of something larger (one chunk of a
 * socket read, which would hold the whole read buffer). No copy that keeping it does not need.
 */
function detached(result: Buffer): Buffer {
  return result.buffer.byteLength - result.length <= pinnedSlackBytes ? result : Buffer.from(result)
}

/** A whole answer for `id` around a kept result. */
export function resultAnswer(id: RpcId, value: CachedValue): RpcPayload {
  const prefix = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`
  if (typeof value === 'string') return `${prefix}${value}}`
  // the kept bytes are written as they are, between the id's prefix and the closing brace
  return new AnswerParts([Buffer.from(prefix), value, closingBrace])
}

const closingBrace = Buffer.from('}')

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}
