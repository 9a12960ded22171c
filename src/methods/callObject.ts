import { toGethFieldName } from './gethFieldName.ts'
import {
  address,
  arrayOf,
  bytes,
  field,
  invalidArgument,
  object,
  type ParamParser,
  storageSlot,
  uint64,
  uint256,
} from './params.ts'

const accessList: ParamParser = (value, index) => {
  if (!Array.isArray(value)) throw invalidArgument(index, 'expected an array')
  for (const entry of value) {
    const item = object(entry, index) as Record<string, unknown>
    address(item.address, index)
    arrayOf(storageSlot, 'storage keys')(item.storageKeys ?? [], index)
  }
  return value
}

/** The call object's fields that are checked, and how; others pass through. */
const callFields = new Map<string, ParamParser>([
  ['from', address],
  ['to', address],
  ['gas', uint64],
  ['gasPrice', uint256],
  ['maxFeePerGas', uint256],
  ['maxPriorityFeePerGas', uint256],
  ['maxFeePerBlobGas', uint256],
  ['value', uint256],
  ['nonce', uint64],
  ['chainId', uint64],
  ['type', uint64],
  ['data', bytes],
  ['input', bytes],
  ['accessList', accessList],
])

/** callFields by the name geth matches them under, for names not written exactly. */
const foldedCallFields = new Map([...callFields.keys()].map((name) => [toGethFieldName(name), name]))

/**
 * Transaction call object (eth_call, eth_estimateGas, eth_createAccessList). Unknown fields pass
 * through. The fields the call has are walked (two or three, usually), not every field checked; a
 * name written exactly is looked up as it is, any other as geth reads it (`Data` is `data`).
 */
export const callObject: ParamParser = (value, index) => {
  const call = object(value, index) as Record<string, unknown>
  for (const written in call) {
    let name: string | undefined = written
    let parse = callFields.get(name)
    if (parse === undefined) {
      name = foldedCallFields.get(toGethFieldName(written))
      if (name === undefined) continue
      parse = callFields.get(name) as ParamParser
    }
    const fieldValue = call[written]
    if (fieldValue !== undefined && fieldValue !== null) field(parse, fieldValue, index, name)
  }
  return value
}
