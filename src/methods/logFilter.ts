import { toGethFieldName } from './gethFieldName.ts'
import { paramLimits } from './paramLimits.ts'
import {
  address,
  blockTag,
  field,
  hash,
  invalidArgument,
  object,
  type ParamParser,
  tooMany,
} from './params.ts'
import { type FieldNames, toExactFieldNames } from './toExactFieldNames.ts'

/** One topic position: null (any), a topic, or up to 1000 alternatives (null among them is any). */
function parseTopicPosition(value: unknown, index: number, position: number): void {
  if (value === null) return
  if (!Array.isArray(value)) {
    field(hash, value, index, 'topics')
    return
  }
  if (value.length > paramLimits.topicAlternatives) {
    throw tooMany(index, `alternatives in topic position ${position}`, paramLimits.topicAlternatives)
  }
  for (const item of value) if (item !== null) field(hash, item, index, 'topics')
}

/** An address list of a log filter: one, or up to 1000. */
function parseAddresses(addresses: unknown, index: number): void {
  if (!Array.isArray(addresses)) {
    field(address, addresses, index, 'address')
    return
  }
  if (addresses.length > paramLimits.filterAddresses) {
    throw tooMany(index, 'addresses', paramLimits.filterAddresses)
  }
  for (const item of addresses) field(address, item, index, 'address')
}

function parseTopics(topics: unknown, index: number): void {
  if (!Array.isArray(topics)) throw invalidArgument(index, 'invalid field topics')
  if (topics.length > paramLimits.topicPositions) {
    throw tooMany(index, 'topic positions', paramLimits.topicPositions)
  }
  for (let position = 0; position < topics.length; position++) {
    parseTopicPosition(topics[position], index, position)
  }
}

/** A log filter's block fields, sent on under their exact names (the block-range limit reads them). */
const filterBlockFields: FieldNames = new Map(
  ['fromBlock', 'toBlock', 'blockHash'].map((name) => [toGethFieldName(name), name]),
)

/**
 * Log filter (eth_getLogs, eth_newFilter, eth_subscribe logs): blockHash, or fromBlock/toBlock;
 * address one or up to 1000; topics in up to 4 positions. The limits are geth's. Names are read as
 * geth reads them: the block fields are sent on as geth reads them, under their exact names, and
 * every key geth could read as `address` or `topics` is checked as one.
 */
export const logFilter: ParamParser = (value, index) => {
  const filter = toExactFieldNames(object(value, index) as Record<string, unknown>, filterBlockFields)
  if (filter.fromBlock !== undefined && filter.fromBlock !== null)
    field(blockTag, filter.fromBlock, index, 'fromBlock')
  if (filter.toBlock !== undefined && filter.toBlock !== null)
    field(blockTag, filter.toBlock, index, 'toBlock')
  if (filter.blockHash !== undefined && filter.blockHash !== null) {
    field(hash, filter.blockHash, index, 'blockHash')
    if (filter.fromBlock != null || filter.toBlock != null) {
      throw invalidArgument(index, 'cannot specify both blockHash and fromBlock/toBlock')
    }
  }
  for (const name in filter) {
    const fieldValue = filter[name]
    if (fieldValue === undefined || fieldValue === null) continue
    const folded = toGethFieldName(name)
    if (folded === 'address') parseAddresses(fieldValue, index)
    else if (folded === 'topics') parseTopics(fieldValue, index)
  }
  return filter
}
