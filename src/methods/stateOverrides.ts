import { toGethFieldName } from './gethFieldName.ts'
import { paramLimits } from './paramLimits.ts'
import {
  address,
  field,
  hash,
  invalidArgument,
  object,
  type ParamParser,
  tooLarge,
  tooMany,
  uint64,
  uint256,
} from './params.ts'

const addressPattern = /^0x[0-9a-fA-F]{40}$/
const bytesPattern = /^0x(?:[0-9a-fA-F]{2})*$/

/** An overridden account's storage (`state` or `stateDiff`): 32-byte slots to 32-byte values. */
function parseStorage(value: unknown, index: number, name: string): void {
  const storage = object(value, index) as Record<string, unknown>
  let slots = 0
  for (const slot in storage) {
    if (++slots > paramLimits.overrideSlots) {
      throw tooMany(index, `storage slots in one account's ${name}`, paramLimits.overrideSlots)
    }
    field(hash, slot, index, name)
    field(hash, storage[slot], index, name)
  }
}

/** Code of at most twice EIP-3860's init code limit; the length is read before the pattern. */
const code: ParamParser = (value, index) => {
  if (typeof value === 'string' && value.length > 2 + 2 * paramLimits.overrideCodeBytes) {
    throw tooLarge(index, 'code', `${paramLimits.overrideCodeBytes} bytes`)
  }
  if (typeof value !== 'string' || !bytesPattern.test(value))
    throw invalidArgument(index, 'invalid field code')
  return value
}

/** The fields geth reads, by the name it matches them under; others pass through. */
const accountFields = new Map<string, [name: string, parse: ParamParser]>(
  (
    [
      ['balance', uint256],
      ['nonce', uint64],
      ['code', code],
      ['movePrecompileToAddress', address],
    ] as const
  ).map(([name, parse]) => [toGethFieldName(name), [name, parse]]),
)

/**
 * One overridden account, its fields read as geth reads their names (`CODE` is `code`, `stateDIFF`
 * is `stateDiff`): two keys geth reads as one field are both checked, whichever it would take.
 */
function parseAccount(value: unknown, index: number, key: string): void {
  const account = object(value, index) as Record<string, unknown>
  let hasState = false
  let hasStateDiff = false
  for (const written in account) {
    const fieldValue = account[written]
    if (fieldValue === undefined || fieldValue === null) continue
    const name = toGethFieldName(written)
    if (name === 'state') {
      parseStorage(fieldValue, index, 'state')
      hasState = true
    } else if (name === 'statediff') {
      parseStorage(fieldValue, index, 'stateDiff')
      hasStateDiff = true
    } else {
      const known = accountFields.get(name)
      if (known !== undefined) field(known[1], fieldValue, index, known[0])
    }
  }
  if (hasState && hasStateDiff) {
    throw invalidArgument(index, `account ${key} has both state and stateDiff`)
  }
}

/**
 * A state override set (eth_call's and eth_estimateGas' third argument, debug_traceCall's
 * `stateOverrides`, each eth_simulateV1 block's): up to 1000 accounts by address, each with a
 * 256-bit balance, a 64-bit nonce, code of up to 98,304 bytes, and up to 10,000 storage slots.
 */
export const stateOverrides: ParamParser = (value, index) => {
  const set = object(value, index) as Record<string, unknown>
  let accounts = 0
  for (const key in set) {
    if (++accounts > paramLimits.overrideAccounts) {
      throw tooMany(index, 'accounts in the state override', paramLimits.overrideAccounts)
    }
    if (!addressPattern.test(key))
      throw invalidArgument(index, 'expected 20-byte addresses as state override keys')
    parseAccount(set[key], index, key)
  }
  return value
}
