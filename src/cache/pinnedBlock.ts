import { hashLength } from '../jsonrpc/hashes.ts'
import { logFilter } from '../methods/logFilter.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import { blockCount, blockRef, blockTag, hash, receiptsBlockRef } from '../methods/params.ts'

/**
 * The block a call is pinned to, for routing by what each upstream has (createMemberRanking's
 * hasBlocks): its number, a range of blocks (`from` below `to`: an upstream needs all of them),
 * `hash` when it names a block by hash, undefined when it is not pinned.
 */
export type PinnedBlock = bigint | PinnedRange | 'hash' | undefined

export type PinnedRange = { readonly from: bigint; readonly to: bigint }

/**
 * The block a call with its normalised params is pinned to, worked out once per call, beside
 * cacheScope, from the same block arguments: a number; `earliest` (0); `finalized` and `safe`
 * (the network's finalized block: `safe` is at or above it, so an upstream below it has neither);
 * `hash` for a block hash, whose number is not known before a node answers (a hash goes to the
 * upstreams in their usual order, and one that does not have the block moves the call on to the
 * next); a log filter's `fromBlock`..`toBlock` (its `fromBlock` alone when `toBlock` is `latest`,
 * its `toBlock` alone when `fromBlock` is), or its `blockHash`; eth_feeHistory's `blockCount` blocks
 * up to its newest; undefined for `latest`, `pending`, no block argument, and methods the method
 * table does not route by block (`pinnedNeeds`): one field read for those. A range is the one
 * object made, for ranges only.
 */
export function pinnedBlock(spec: MethodSpec, params: unknown[], finalized: bigint | undefined): PinnedBlock {
  if (spec.pinnedNeeds === undefined) return undefined
  const specs = spec.params
  for (let index = 0; index < specs.length; index++) {
    const { parse } = specs[index] as (typeof specs)[number]
    if (parse === hash) return 'hash'
    if (parse === blockRef || parse === blockTag || parse === receiptsBlockRef) {
      const block = blockOf(params[index], finalized)
      // eth_feeHistory: its newest block and the blockCount - 1 before it
      return index > 0 && specs[0]?.parse === blockCount ? spanBack(block, params[0]) : block
    }
    if (parse === logFilter) {
      // a range: its last block says whether a lagging node has it all, its first whether a pruned one does
      const filter = params[index] as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown }
      if (filter.blockHash !== undefined && filter.blockHash !== null) return 'hash'
      return rangeOf(blockOf(filter.fromBlock, finalized), blockOf(filter.toBlock, finalized))
    }
  }
  return undefined
}

function rangeOf(from: PinnedBlock, to: PinnedBlock): PinnedBlock {
  if (typeof from !== 'bigint') return to
  if (typeof to !== 'bigint') return from
  return from < to ? { from, to } : to
}

/** `count` blocks up to `to` (validated: a number, or a hex or decimal string of at most 1024). */
function spanBack(to: PinnedBlock, count: unknown): PinnedBlock {
  if (typeof to !== 'bigint' || (typeof count !== 'number' && typeof count !== 'string')) return to
  const blocks = BigInt(count)
  if (blocks <= 1n) return to
  const from = to - blocks + 1n
  return { from: from > 0n ? from : 0n, to }
}

function blockOf(ref: unknown, finalized: bigint | undefined): PinnedBlock {
  if (typeof ref === 'object' && ref !== null) {
    const { blockHash, blockNumber } = ref as { blockHash?: unknown; blockNumber?: unknown }
    return blockHash !== undefined ? 'hash' : blockOf(blockNumber, finalized)
  }
  if (typeof ref !== 'string') return undefined
  if (ref.length === hashLength) return 'hash'
  if (ref === 'earliest') return 0n
  if (ref === 'finalized' || ref === 'safe') return finalized
  // the params are validated: a 0x string here is a block number
  return ref.startsWith('0x') ? BigInt(ref) : undefined
}
