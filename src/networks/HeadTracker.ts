import type { BlockSummary } from '../upstreams/fetchBlock.ts'
import type { HeadEvent, Header } from './createHeadChain.ts'

export type Head = { number: bigint; gasLimit: bigint }

export type HeadTracker = {
  /** The chain's newest block (number and gas limit), or undefined before the first one (read through NetworkHead). */
  latest(): Head | undefined
  /** The chain's finalized block number, or undefined while unknown (it goes back when the chain does). */
  finalized(): bigint | undefined
  /** The newest block of the network's chain of heads (undefined before the first one). */
  header(): Header | undefined
  /** The hash of the chain's block at `number`, while the chain remembers it (read through NetworkHead). */
  hashAt(number: bigint): string | undefined
  /** Whether the chain has linked the block with this hash (lowercase), among those it remembers. */
  hasBlock(hash: string): boolean
  /**
   * The block with this hash as the last poll fetched it (eth_getBlockByNumber `latest`, transaction
   * hashes only: the whole answer), if that poll's block was this one: the cache keeps it as the
   * latest block's answer, so no client's call fetches it again.
   */
  polledBlock(hash: string): BlockSummary | undefined
  /** The hash of the chain's genesis block, once an upstream has answered it. */
  genesis(): string | undefined
  /** Forks, rewinds and new chains recognised since the start (for /metrics). */
  readonly stats: HeadStats
  /**
   * The network's heads, gap-free, in order, reorgs, rewinds and new chains announced (HeadEvent),
   * from the next one on.
   */
  subscribe(listener: (event: HeadEvent) => void): () => void
  /** Asks every upstream for its head now; resolves when done (failures open the member's breaker). */
  poll(): Promise<void>
  /**
   * A client was told a block the chain has not heard of yet: the upstreams are asked for their head
   * soon, at most once per half pollMs, never awaited.
   */
  look(): void
  close(): void
}

export type HeadStats = {
  /** The chain left blocks it had (a reorg or a rewind). */
  forks: number
  /** Of those, forks at or below the finalized block (or deeper than the chain remembers). */
  pastFinality: number
  newChains: number
}
