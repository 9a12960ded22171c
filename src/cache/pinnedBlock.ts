import { hashLength } from '../jsonrpc/hashes.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import { blockRef, blockTag, hash, logFilter, receiptsBlockRef } from '../methods/params.ts'

/**
 * The block a call is pinned to, for routing by what each upstream has (createMemberRanking's
 * hasBlock): its number, `hash` when it names a block by hash, undefined when it is not pinned.
 */
export type PinnedBlock = bigint | 'hash' | undefined

/**
 * The block a call with its normalised params is pinned to, worked out once per call, beside
 * cacheScope, from the same block arguments: a number; `earliest` (0); `finalized` and `safe`
 * (the network's finalized block: `safe` is at or above it, so an upstream below it has neither);
 * `hash` for a block hash, whose number is not known before a node answers (a hash goes to the
 * upstreams in their usual order, and one that does not have the block moves the call on to the
 * next); a log filter's `toBlock`, or its `blockHash`; undefined for `latest`, `pending`, no block
 * argument, and methods the method table does not route by block (`pinnedNeeds`): one field read
 * for those.
 */
export function pinnedBlock(spec: MethodSpec, params: unknown[], finalized: bigint | undefined): PinnedBlock {
  if (spec.pinnedNeeds === undefined) return undefined
  const specs = spec.params
  for (let index = 0; index < specs.length; index++) {
    const { parse } = specs[index] as (typeof specs)[number]
    if (parse === hash) return 'hash'
    if (parse === blockRef || parse === blockTag || parse === receiptsBlockRef) {
      return blockOf(params[index], finalized)
    }
    if (parse === logFilter) {
      // a range: its last block says whether a lagging node has it all
      const filter = params[index] as { blockHash?: unknown; toBlock?: unknown }
      return filter.blockHash !== undefined ? 'hash' : blockOf(filter.toBlock, finalized)
    }
  }
  return undefined
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
