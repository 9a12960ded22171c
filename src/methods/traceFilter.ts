import { toGethFieldName } from './gethFieldName.ts'
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
import { type FieldNames, toExactFieldNames } from './toExactFieldNames.ts'

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

/** The block fields, sent on under their exact names (the block-range limit reads them). */
const blockFields: FieldNames = new Map(['fromBlock', 'toBlock'].map((name) => [toGethFieldName(name), name]))

/**
 * trace_filter's filter: blocks as for eth_getLogs, each address list up to 1000, a count up to
 * 10,000. A missing fromBlock means the first block to nodes (reth, erigon): it is sent on as `0x0`,
 * so that the network's block-range limit counts the range the node would walk. Names are read as
 * erigon (Go) reads them: the block fields are sent on as it reads them, under their exact names, and
 * every key it could read as another field is checked as that field.
 */
export const traceFilter: ParamParser = (value, index) => {
  const filter = toExactFieldNames(object(value, index) as Record<string, unknown>, blockFields)
  for (const written in filter) {
    const fieldValue = filter[written]
    if (fieldValue === undefined || fieldValue === null) continue
    const name = toGethFieldName(written)
    if (name === 'toblock') field(blockTag, fieldValue, index, 'toBlock')
    else if (name === 'fromaddress') addressList(fieldValue, index, 'fromAddress')
    else if (name === 'toaddress') addressList(fieldValue, index, 'toAddress')
    else if (name === 'after') count(fieldValue, index, 'after')
    else if (name === 'count' && count(fieldValue, index, 'count') > paramLimits.traceFilterCount) {
      throw tooLarge(index, 'count', `${paramLimits.traceFilterCount}`)
    }
  }
  if (filter.fromBlock == null) return { ...filter, fromBlock: '0x0' }
  field(blockTag, filter.fromBlock, index, 'fromBlock')
  return filter
}
