import { toGethFieldName } from './gethFieldName.ts'
import { paramLimits } from './paramLimits.ts'
import {
  address,
  field,
  hash,
  invalidArgument,
  object,
  type ParamParser,
  tooMany,
  uint64,
  uint256,
} from './params.ts'

/** Fields by the name geth matches them under (toGethFieldName's), each with its exact name. */
type Fields = ReadonlyMap<string, [name: string, parse: ParamParser]>

const toFields = (fields: [string, ParamParser][]): Fields =>
  new Map(fields.map(([name, parse]) => [toGethFieldName(name), [name, parse]]))

const withdrawalFields = toFields([
  ['index', uint64],
  ['validatorIndex', uint64],
  ['address', address],
  ['amount', uint64],
])

const withdrawals: ParamParser = (value, index) => {
  if (!Array.isArray(value)) throw invalidArgument(index, 'invalid field withdrawals')
  if (value.length > paramLimits.overrideWithdrawals) {
    throw tooMany(index, 'withdrawals in the block override', paramLimits.overrideWithdrawals)
  }
  for (const item of value) checkFields(withdrawalFields, item, index)
  return value
}

/** reth's map of block numbers to the hashes BLOCKHASH answers. */
const blockHashes: ParamParser = (value, index) => {
  const hashes = object(value, index) as Record<string, unknown>
  let count = 0
  for (const number in hashes) {
    if (++count > paramLimits.overrideBlockHashes) {
      throw tooMany(index, 'block hashes in the block override', paramLimits.overrideBlockHashes)
    }
    field(hash, hashes[number], index, 'blockHash')
  }
  return value
}

/** The fields geth and reth read (both spellings where they differ); others pass through. */
const blockFields = toFields([
  ['number', uint256],
  ['difficulty', uint256],
  ['time', uint64],
  ['gasLimit', uint64],
  ['feeRecipient', address],
  ['coinbase', address],
  ['prevRandao', hash],
  ['random', hash],
  ['baseFeePerGas', uint256],
  ['baseFee', uint256],
  ['blobBaseFee', uint256],
  ['beaconRoot', hash],
  ['withdrawals', withdrawals],
  ['blockHash', blockHashes],
])

/** Checks each field as geth reads its name (`TIME` is `time`): two keys read as one are both checked. */
function checkFields(fields: Fields, value: unknown, index: number): void {
  const item = object(value, index) as Record<string, unknown>
  for (const written in item) {
    const known = fields.get(toGethFieldName(written))
    const fieldValue = item[written]
    if (known !== undefined && fieldValue !== undefined && fieldValue !== null) {
      field(known[1], fieldValue, index, known[0])
    }
  }
}

/**
 * Block overrides (eth_call's and eth_estimateGas' fourth argument, debug_traceCall's
 * `blockOverrides`, each eth_simulateV1 block's): each field in its form, up to 1024 withdrawals
 * and 256 block hashes.
 */
export const blockOverrides: ParamParser = (value, index) => {
  checkFields(blockFields, value, index)
  return value
}
