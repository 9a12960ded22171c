import { hashLength } from '../jsonrpc/hashes.ts'
import { logFilter } from '../methods/logFilter.ts'
import type { MethodSpec } from '../methods/methodTable.ts'
import { blockRef, blockTag, receiptsBlockRef } from '../methods/params.ts'

/**
 * How long a call's answer stays true: `immutable` (by block hash, by a number at or below the
 * finalized block, chain id); `block` (pinned to a block number above finalized: as long as that
 * block stays on the chain); `mined` (a transaction or its receipt: as long as the block its answer
 * names stays on the chain; not mined yet, until the next block); `head` (following the tip: until
 * the next block); `never` (pending state, side effects).
 */
export type CacheScope = 'immutable' | 'block' | 'mined' | 'head' | 'never'

/**
 * The scope of one call with its normalised params. The method table gives the method's class;
 * a `head` method pinned to a block hash or a finalized number becomes `immutable`, one pinned to
 * other numbers `block`, one whose answer names its block (`pinnedByAnswer`) `mined`, and any
 * block reference to `pending` makes it `never`; a tag that follows the tip (`latest`, `safe`,
 * `finalized`) keeps it `head`.
 */
export function cacheScope(spec: MethodSpec, params: unknown[], finalized: bigint | undefined): CacheScope {
  if (spec.cacheClass !== 'head') return spec.cacheClass
  if (spec.pinnedByAnswer) return 'mined'
  // a plain loop, no closures: this runs for every forwarded call
  let refs = 0
  let scope: CacheScope = 'immutable'
  const specs = spec.params
  for (let index = 0; index < specs.length; index++) {
    const { parse } = specs[index] as (typeof specs)[number]
    const value = params[index]
    let first: unknown
    let second: unknown
    if (parse === blockRef || parse === blockTag || parse === receiptsBlockRef) {
      // an omitted block argument means latest
      first = value ?? 'latest'
    } else if (parse === logFilter) {
      const filter = value as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown }
      if (typeof filter.blockHash === 'string') first = filter.blockHash
      else {
        first = filter.fromBlock ?? 'latest'
        second = filter.toBlock ?? 'latest'
      }
    } else continue
    for (const ref of second === undefined ? [first] : [first, second]) {
      refs++
      const each = refScope(ref, finalized)
      if (each === 'never') return 'never'
      // the shortest-lived reference decides: head over block over immutable
      if (each === 'head' || scope === 'immutable') scope = each
    }
  }
  // no block argument at all (eth_blockNumber, eth_gasPrice): the head's answer
  if (refs === 0 || (scope !== 'head' && !spec.pinnedIsImmutable)) return 'head'
  return scope
}

function refScope(ref: unknown, finalized: bigint | undefined): CacheScope {
  if (typeof ref === 'object' && ref !== null) {
    const { blockHash, blockNumber } = ref as { blockHash?: unknown; blockNumber?: unknown }
    return blockHash !== undefined ? 'immutable' : refScope(blockNumber, finalized)
  }
  if (typeof ref !== 'string') return 'head'
  if (ref === 'pending') return 'never'
  if (ref === 'earliest' || ref.length === hashLength) return 'immutable'
  // the params are validated: any other 0x string is a block number
  if (!ref.startsWith('0x')) return 'head'
  return finalized !== undefined && BigInt(ref) <= finalized ? 'immutable' : 'block'
}
