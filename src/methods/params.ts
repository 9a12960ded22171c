import { InvalidParamsError, ParamLimitError } from '../errors/rpcErrors.ts'
import { paramLimits } from './paramLimits.ts'

/**
 * Parameter validators. Each takes an untrusted value and returns it (or its normal form), or
 * throws a -32602 naming the argument. Forms follow docs/compatibility.md §7: quantities are 0x hex without
 * leading zeros, addresses 20 bytes, hashes 32 bytes, storage positions any 0x hex up to 32 bytes.
 */
export type ParamParser = (value: unknown, index: number) => unknown

/**
 * One positional argument. `optional` ones may be left out (or sent as null); those with a
 * `defaultValue` are then sent on with it, so every node reads them the way geth does.
 */
export type ParamSpec = { parse: ParamParser; optional?: boolean; defaultValue?: unknown }

const blockTags = ['latest', 'earliest', 'pending', 'safe', 'finalized'] as const

const quantityPattern = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/
const addressPattern = /^0x[0-9a-fA-F]{40}$/
const hashPattern = /^0x[0-9a-fA-F]{64}$/
const bytesPattern = /^0x(?:[0-9a-fA-F]{2})*$/
const slotPattern = /^0x[0-9a-fA-F]{1,64}$/
const hexPattern = /^0x[0-9a-fA-F]+$/
const decimalPattern = /^(?:0|[1-9][0-9]*)$/

export function invalidArgument(index: number, why: string): InvalidParamsError {
  return new InvalidParamsError(`invalid argument ${index}: ${why}`)
}

/** The refusal of a list or map past its limit (docs/compatibility.md §7, "Parameter limits"). */
export function tooMany(index: number, what: string, limit: number): ParamLimitError {
  return new ParamLimitError(index, `too many ${what}, the limit is ${limit}`)
}

/** The refusal of a value past its limit: `limit` with its unit (`1024 blocks`). */
export function tooLarge(index: number, what: string, limit: string): ParamLimitError {
  return new ParamLimitError(index, `${what} too large, the limit is ${limit}`)
}

export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

function expectString(value: unknown, index: number, what: string): string {
  if (typeof value !== 'string') throw invalidArgument(index, `expected ${what}, got ${describe(value)}`)
  return value
}

function matching(pattern: RegExp, what: string): ParamParser {
  return (value, index) => {
    const text = expectString(value, index, what)
    if (!pattern.test(text)) throw invalidArgument(index, `expected ${what}`)
    return text
  }
}

export const quantity = matching(quantityPattern, 'a 0x-prefixed hex quantity without leading zeros')
export const address = matching(addressPattern, 'a 20-byte 0x-prefixed hex address')
export const hash = matching(hashPattern, 'a 32-byte 0x-prefixed hex hash')
export const bytes = matching(bytesPattern, '0x-prefixed hex data of whole bytes')
export const storageSlot = matching(slotPattern, 'a 0x-prefixed hex storage position of at most 32 bytes')
export const hexId = matching(hexPattern, 'a 0x-prefixed hex identifier')

/** eth_getProof storage keys: any 0x hex up to 32 bytes, sent on as the 32-byte word some nodes insist on. */
export const storageKey: ParamParser = (value, index) => {
  const slot = storageSlot(value, index) as string
  return slot.length === 66 ? slot : `0x${slot.slice(2).padStart(64, '0')}`
}

export const boolean: ParamParser = (value, index) => {
  if (typeof value !== 'boolean') throw invalidArgument(index, `expected a boolean, got ${describe(value)}`)
  return value
}

/** Anything at all: for options objects the node itself validates (tracer configs, overrides). */
export const any: ParamParser = (value) => value

export const object: ParamParser = (value, index) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(index, `expected an object, got ${describe(value)}`)
  }
  return value
}

const blockTagWhat = 'a block number (0x-prefixed hex) or one of latest, earliest, pending, safe, finalized'

/** Block numbers are 64-bit: at most 16 hex digits (geth refuses more). */
function isBlockTag(value: string): boolean {
  return (
    (blockTags as readonly string[]).includes(value) || (value.length <= 18 && quantityPattern.test(value))
  )
}

/** Block number or tag. */
export const blockTag: ParamParser = (value, index) => {
  const text = expectString(value, index, blockTagWhat)
  if (!isBlockTag(text)) throw invalidArgument(index, `expected ${blockTagWhat}`)
  return text
}

/** Block number, tag, block hash, or an EIP-1898 object ({blockHash, requireCanonical} or {blockNumber}). */
export const blockRef: ParamParser = (value, index) => {
  if (typeof value === 'string') {
    if (isBlockTag(value) || hashPattern.test(value)) return value
    throw invalidArgument(index, `expected ${blockTagWhat}, or a block hash`)
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const ref = value as Record<string, unknown>
    const keys = Object.keys(ref)
    if ('blockHash' in ref && keys.every((key) => key === 'blockHash' || key === 'requireCanonical')) {
      hash(ref.blockHash, index)
      if (ref.requireCanonical !== undefined) boolean(ref.requireCanonical, index)
      return value
    }
    if ('blockNumber' in ref && keys.length === 1) {
      blockTag(ref.blockNumber, index)
      return value
    }
  }
  throw invalidArgument(index, `expected ${blockTagWhat}, a block hash, or an EIP-1898 block object`)
}

/**
 * eth_getBlockReceipts' parameter (docs/compatibility.md §7): also a decimal integer, which nodes reject and the
 * gateway converts to hex, and `pending`, which answers as `latest`.
 */
export const receiptsBlockRef: ParamParser = (value, index) => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return `0x${value.toString(16)}`
  if (typeof value === 'string' && decimalPattern.test(value)) {
    if (!isUint64(value)) throw invalidArgument(index, 'block number too large, want at most 64 bits')
    return `0x${BigInt(value).toString(16)}`
  }
  if (value === 'pending') return 'latest'
  return blockRef(value, index)
}

const maxUint64 = 2n ** 64n - 1n

/**
 * Whether a hex quantity or decimal integer fits in 64 bits. Lengths first: BigInt reads a long
 * decimal string in time that grows faster than its length (a 5 MB one takes over a second).
 */
function isUint64(text: string): boolean {
  if (text.startsWith('0x')) return text.length <= 18
  return text.length <= 20 && BigInt(text) <= maxUint64
}

/**
 * eth_feeHistory's block count: hex quantity or decimal integer, as geth accepts, of at most 1024
 * blocks (geth's and the hosted service's limit; anvil aborts the whole process on a count over 64
 * bits). Lengths first, so no long string is read as a number.
 */
export const blockCount: ParamParser = (value, index) => {
  const limit = paramLimits.feeHistoryBlocks
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    if (value <= limit) return value
  } else if (typeof value === 'string' && (quantityPattern.test(value) || decimalPattern.test(value))) {
    if (isUint64(value) && BigInt(value) <= BigInt(limit)) return value
  } else {
    throw invalidArgument(index, 'expected a block count as a hex quantity or a decimal integer')
  }
  throw tooLarge(index, 'block count', `${limit} blocks`)
}

/**
 * An array whose items each pass `parse`; the items come back in their normal form (the same array
 * when every item already was: the call can then be forwarded as the client wrote it).
 */
export function arrayOf(parse: ParamParser, what: string, maxItems = Number.POSITIVE_INFINITY): ParamParser {
  return (value, index) => {
    if (!Array.isArray(value))
      throw invalidArgument(index, `expected an array of ${what}, got ${describe(value)}`)
    if (value.length > maxItems) throw tooMany(index, what, maxItems)
    const items = value.map((item) => parse(item, index))
    return items.every((item, at) => item === value[at]) ? value : items
  }
}

export const rewardPercentiles: ParamParser = (value, index) => {
  if (!Array.isArray(value))
    throw invalidArgument(index, `expected an array of percentiles, got ${describe(value)}`)
  if (value.length > paramLimits.rewardPercentiles)
    throw tooMany(index, 'reward percentiles', paramLimits.rewardPercentiles)
  let previous = -1
  for (const item of value) {
    if (typeof item !== 'number' || item < 0 || item > 100 || item < previous) {
      throw invalidArgument(index, 'expected increasing percentiles between 0 and 100')
    }
    previous = item
  }
  return value
}

/** A quantity of at most `bits` bits: geth's Uint64 and Big fields refuse longer ones. */
function quantityOfBits(bits: number): ParamParser {
  return (value, index) => {
    const text = quantity(value, index) as string
    if (text.length > 2 + bits / 4) throw invalidArgument(index, `expected at most ${bits} bits`)
    return text
  }
}

export const uint64 = quantityOfBits(64)
export const uint256 = quantityOfBits(256)

/** Checks one named field of an object argument: a refusal names the field. */
export function field(parse: ParamParser, value: unknown, index: number, name: string): void {
  try {
    parse(value, index)
  } catch (err) {
    if (err instanceof ParamLimitError) throw err
    throw invalidArgument(index, `invalid field ${name}`)
  }
}

/**
 * Checks positional params against a spec and returns them in normal form. Trailing nulls count as
 * absent (as in geth); a missing required argument or an extra one is a -32602. A missing or null
 * optional argument with a default gets it (geth's `latest` for the block of eth_call and its kin).
 */
export function parseParams(specs: readonly ParamSpec[], params: unknown[]): unknown[] {
  let length = params.length
  while (length > 0 && params[length - 1] === null && specs[length - 1]?.optional) length--
  if (length > specs.length) {
    throw invalidArgument(specs.length, `too many arguments, want at most ${specs.length}`)
  }
  const out: unknown[] = []
  for (let index = 0; index < specs.length; index++) {
    const spec = specs[index] as ParamSpec
    const value = index < length ? params[index] : undefined
    if (value === undefined || (value === null && spec.optional)) {
      if (!spec.optional) throw invalidArgument(index, 'missing value for required argument')
      if (spec.defaultValue === undefined) {
        if (index >= length) break
        out.push(null)
        continue
      }
      out.push(spec.defaultValue)
      continue
    }
    out.push(spec.parse(value, index))
  }
  return out
}
