import type { Buffer } from 'node:buffer'
import { hashesIn } from '../jsonrpc/hashes.ts'

/** Small results are kept as strings (cheaper to splice into an answer), large ones as bytes. */
export type CachedValue = string | Buffer

export type MemoryCache = {
  /** The result kept for `key`, or undefined; an immutable one becomes the most recently used. */
  get(key: string, scope: 'immutable' | 'head'): CachedValue | undefined
  /**
   * Keeps a result when it fits: not larger than maxEntryBytes, and within maxBytes once the least
   * recently used immutable entries are evicted (head entries are never evicted). The same key again
   * replaces its entry. An immutable entry is pinned to the hashes its key names and to `block`, the
   * block its result names, if given.
   */
  set(key: string, scope: 'immutable' | 'head', value: CachedValue, block?: string): void
  /** Every immutable entry pinned to this block (or transaction) hash is dropped. */
  dropPinned(hash: string): void
  /** Every immutable entry is dropped. */
  clearImmutable(): void
  /** Every head entry is dropped. */
  clearHead(): void
}

export type MemoryCacheOptions = {
  maxBytes: number
  /** Results larger than this are not kept. */
  maxEntryBytes: number
}

/** The counts the memory writes into its cache's stats (RpcCache.stats), kept current. */
export type MemoryCounts = { evictions: number; entries: number; bytes: number }

/** `pins`: the block (or transaction) hashes its key names, for dropPinned. */
type Entry = { value: CachedValue; size: number; pins: string[] | undefined }

/** Map entry, key and bookkeeping overhead counted against the memory bound. */
const entryOverhead = 96

/**
 * A network's cached results in memory, bounded in bytes: immutable entries are kept until evicted
 * (least recently used first) or dropped, head entries until the next head (clearHead). Immutable
 * entries are indexed by the hashes their keys name, so a block the chain left drops only its own.
 */
export function createMemoryCache(options: MemoryCacheOptions, counts: MemoryCounts): MemoryCache {
  const immutable = new Map<string, Entry>()
  let head = new Map<string, Entry>()
  let immutableBytes = 0
  let headBytes = 0
  /** Immutable entries' keys by the hashes they name. */
  const pinned = new Map<string, Set<string>>()

  function unpin(key: string, entry: Entry): void {
    for (const hash of entry.pins ?? []) {
      const keys = pinned.get(hash)
      keys?.delete(key)
      if (keys?.size === 0) pinned.delete(hash)
    }
  }

  function dropImmutableEntry(key: string, entry: Entry): void {
    immutable.delete(key)
    immutableBytes -= entry.size
    unpin(key, entry)
  }

  function updateTotals(): void {
    counts.entries = immutable.size + head.size
    counts.bytes = immutableBytes + headBytes
  }

  function set(key: string, scope: 'immutable' | 'head', value: CachedValue, block?: string): void {
    const size =
      (typeof value === 'string' ? value.length : value.byteLength) + key.length * 2 + entryOverhead
    if (size > options.maxEntryBytes) return
    // the same key again (a load that did not join one in flight across a head): replace it
    const previous = (scope === 'immutable' ? immutable : head).get(key)
    if (previous) {
      if (scope === 'immutable') dropImmutableEntry(key, previous)
      else {
        head.delete(key)
        headBytes -= previous.size
      }
    }
    // head entries are not evicted: when they leave no room, evicting immutable ones would not make it
    if (headBytes + size <= options.maxBytes) {
      while (immutableBytes + headBytes + size > options.maxBytes && immutable.size > 0) {
        const [oldestKey, oldest] = immutable.entries().next().value as [string, Entry]
        dropImmutableEntry(oldestKey, oldest)
        counts.evictions++
      }
    }
    if (immutableBytes + headBytes + size > options.maxBytes) {
      updateTotals()
      return
    }
    if (scope === 'immutable') {
      const hashes = hashesIn(key)
      if (block !== undefined) hashes.push(block.toLowerCase())
      const pins = hashes.length > 0 ? hashes : undefined
      immutable.set(key, { value, size, pins })
      immutableBytes += size
      for (const hash of pins ?? []) {
        const keys = pinned.get(hash)
        if (keys) keys.add(key)
        else pinned.set(hash, new Set([key]))
      }
    } else {
      head.set(key, { value, size, pins: undefined })
      headBytes += size
    }
    updateTotals()
  }

  return {
    get(key, scope) {
      if (scope === 'head') return head.get(key)?.value
      const entry = immutable.get(key)
      if (!entry) return undefined
      // most recently used last
      immutable.delete(key)
      immutable.set(key, entry)
      return entry.value
    },
    set,
    dropPinned(hash) {
      const keys = pinned.get(hash.toLowerCase())
      if (!keys) return
      for (const key of keys) {
        const entry = immutable.get(key)
        if (entry) dropImmutableEntry(key, entry)
      }
      updateTotals()
    },
    clearImmutable() {
      immutable.clear()
      pinned.clear()
      immutableBytes = 0
      updateTotals()
    },
    clearHead() {
      if (head.size === 0) return
      head = new Map()
      headBytes = 0
      updateTotals()
    },
  }
}
