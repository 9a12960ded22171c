import { paramLimits } from './paramLimits.ts'
import { invalidArgument, type ParamParser, tooLarge } from './params.ts'

const hexQuantityPattern = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/

const what = 'expected a timeout in milliseconds: a non-negative integer or a 0x-prefixed hex quantity'

/**
 * eth_sendRawTransactionSync's timeout (EIP-7966), in milliseconds: a JSON number, the EIP's form
 * that geth, erigon and reth read, or a hex quantity, the form geth first read and viem first sent;
 * sent on as a number. 0 asks for the node's default wait, as every node reads it. Past
 * paramLimits.receiptTimeoutMs it is refused rather than lowered: the client learns the limit
 * instead of waiting less than it asked for without a word.
 */
export const receiptTimeout: ParamParser = (value, index) => {
  let timeoutMs: number
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) throw invalidArgument(index, what)
    timeoutMs = value
  } else if (typeof value === 'string' && hexQuantityPattern.test(value)) {
    // Number reads any length of hex at once: a long one is Infinity, and too large
    timeoutMs = Number(value)
  } else {
    throw invalidArgument(index, what)
  }
  const limit = paramLimits.receiptTimeoutMs
  if (timeoutMs > limit) throw tooLarge(index, 'timeout', `${limit} ms`)
  return timeoutMs
}

/**
 * How long the node may wait for the receipt of a call with `timeout` (receiptTimeout's value, or
 * absent): the timeout given, or, for 0 or none (the node's own default, which tollgate cannot
 * know), the longest one allowed.
 */
export function receiptWaitMs(timeout: unknown): number {
  return typeof timeout === 'number' && timeout > 0 ? timeout : paramLimits.receiptTimeoutMs
}
