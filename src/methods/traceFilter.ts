import { paramLimits } from './paramLimits.ts'
import {
  address,
  blockTag,
  field,
  invalidArgument,
  object,
  type ParamParser,
  tooLarge,
  tooMany,
} from './params.ts'

function addressList(value: unknown, index: number, name: string): void {
  if (!Array.isArray(value)) throw invalidArgument(index, `invalid field ${name}`)
  if (value.length > paramLimits.traceFilterAddresses) {
    throw tooMany(index, `addresses in ${name}`, paramLimits.traceFilterAddresses)
  }
  for (const item of value) field(address, item, index, name)
}

/** `after` and `count` are JSON numbers in every node that has trace_filter. */
function count(value: unknown, index: number, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(index, `invalid field ${name}`)
  }
  return value
}

/**
 * trace_filter's filter: blocks as for eth_getLogs, each address list up to 1000, a count up to
 * 10,000. A missing fromBlock means the first block to nodes (reth, erigon): it is sent on as `0x0`,
 * so that the network's block-range limit counts the range the node would walk.
 */
export const traceFilter: ParamParser = (value, index) => {
  const filter = object(value, index) as Record<string, unknown>
  if (filter.toBlock != null) field(blockTag, filter.toBlock, index, 'toBlock')
  if (filter.fromAddress != null) addressList(filter.fromAddress, index, 'fromAddress')
  if (filter.toAddress != null) addressList(filter.toAddress, index, 'toAddress')
  if (filter.after != null) count(filter.after, index, 'after')
  if (filter.count != null && count(filter.count, index, 'count') > paramLimits.traceFilterCount) {
    throw tooLarge(index, 'count', `${paramLimits.traceFilterCount}`)
  }
  if (filter.fromBlock == null) return { ...filter, fromBlock: '0x0' }
  field(blockTag, filter.fromBlock, index, 'fromBlock')
  return value
}
