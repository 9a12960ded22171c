import type { Buffer } from 'node:buffer'

/**
 * One network's share of the cache in Redis: immutable answers, by the in-memory cache's keys, of
 * the chain it is identified as (its genesis hash) in the epoch every instance is in.
 */
export type SharedStore = {
  /**
   * The kept result's bytes, or what to do without one: `claimed` (ask the upstream: this instance
   * now holds the load's claim, given up by its put or release), `wait` (another instance holds it:
   * look again soon, without `claim`), `load` (ask the upstream, no claim held: no instance holds one
   * and `claim` was not asked, or Redis could not tell: before the chain is identified, a failure,
   * a wait past the bound, a block the chain left). Never throws.
   */
  lookup(key: string, claim: boolean): Promise<Buffer | 'claimed' | 'wait' | 'load'>
  /** A load this instance claimed ended (what it kept is put first): the others waiting for it read it, or load it themselves. */
  release(key: string): void
  /**
   * Keeps a result, in the background: a failure (or a chain not identified yet) is a result not
   * kept. `ttlMs`: how long, when shorter than the cache's own (an answer of one head). Gives up
   * the load's claim (lookup).
   */
  put(key: string, value: string | Buffer, ttlMs?: number): void
  /**
   * The chain's identity: its genesis block's hash (`0x` and 64 hex digits; anything else is
   * ignored). Until it is known, every lookup misses and nothing is kept; a new one (a new chain
   * under the same chain id) never meets the old one's entries. Settles once the chain's epoch was
   * read (never rejects).
   */
  identify(genesisHash: string): Promise<void>
  /**
   * "Immutable" did not hold (a block at or below finalized changed): every instance moves to a new
   * epoch of this chain, so none reads an answer kept before. At once here; in Redis as soon as it
   * answers. Nothing to do before the chain is identified. The caller logs it; settles when Redis
   * took it (never rejects).
   */
  forget(reason: string): Promise<void>
  /**
   * A block the chain left (a reorg): no answer kept under a key naming its hash is read again, by
   * any instance (a marker in Redis, kept as long as the answers are; while Redis is away, the
   * newest 1,024 markers wait and are set when it is back).
   */
  dropBlock(hash: string): void
  /**
   * `listener` hears when answers this network may have kept (in memory) are no longer the chain's:
   * a forget here or by another instance, or a new identity.
   */
  onChange(listener: () => void): () => void
}
