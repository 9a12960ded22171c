import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rangeRefusals } from '../../test/helpers/rangeRefusals.ts'
import { classifyNodeError, findNodeErrorRule } from './nodeErrors.ts'
import { speaksOfRangeLimit } from './speaksOfRangeLimit.ts'

/** Refusals of a range or of an answer's size, in wordings no vendor rule of nodeErrors.ts names. */
const unlistedRefusals = [
  // proxyd's `max_block_range` (HTTP 400, -32602)
  'block range greater than 1000 max',
  'Block range limit of 2000 reached',
  'requested block range exceeds the configured maximum',
  'eth_getLogs block range is limited to 5000',
  'query would return too many results, reduce the range',
  'max 1000 blocks per eth_getLogs request',
  'the block range may be at most 10000',
  'Query timeout exceeded. Consider reducing your block range',
  'response size exceeds the limit of 10 MB',
]

/** Errors that speak of blocks, limits or ranges but refuse no range: never split. */
const otherErrors = [
  'execution reverted: block range too large',
  'header not found',
  'invalid block range params',
  'block is out of range',
  'fromBlock greater than toBlock',
  'exceeds block gas limit',
  'max fee per gas less than block base fee: address 0x01, maxFeePerGas: 1, baseFee: 2',
  'intrinsic gas too low',
  'invalid argument 0: hex string has length 3, want 40 for common.Address',
  'too many arguments, want at most 2',
  'request body too large',
  'limit exceeded',
  'daily request count exceeded, request rate limited',
  'rate limit exceeded for block range queries',
  'Monthly capacity limit exceeded.',
  'BlockOutOfRangeError: block height is 300 but requested was 50',
  'nonce too low: next nonce 5, tx nonce 4',
  'filter not found',
  'query timeout exceeded',
]

describe('speaksOfRangeLimit', () => {
  it('reads every known vendor wording as a range refusal by its meaning too', () => {
    for (const vendor of rangeRefusals) {
      const { message } = vendor.refusal(100n, 2099n, 500n)
      assert.equal(speaksOfRangeLimit(message), true, message)
    }
  })

  it('reads refusals no vendor rule names as range refusals, which split', () => {
    for (const message of unlistedRefusals) {
      assert.equal(speaksOfRangeLimit(message), true, message)
      const rule = findNodeErrorRule({ code: -32602, message })
      assert.equal(rule?.splitsRange, true, message)
      assert.equal(rule?.kind, 'refused', message)
    }
  })

  it('leaves reverts, missing data, invalid params and rate limits as they were: never split', () => {
    for (const message of otherErrors) {
      assert.notEqual(findNodeErrorRule({ code: -32000, message })?.splitsRange, true, message)
    }
    for (const message of otherErrors.slice(2, 12)) assert.equal(speaksOfRangeLimit(message), false, message)
    assert.equal(
      classifyNodeError({ code: 3, message: 'execution reverted: block range too large' }),
      undefined,
    )
    assert.equal(classifyNodeError({ code: -32000, message: 'header not found' }), 'missingData')
    assert.equal(classifyNodeError({ code: -32602, message: 'invalid block range params' }), undefined)
    assert.equal(classifyNodeError({ code: -32005, message: 'limit exceeded' }), 'capacity')
    assert.equal(
      classifyNodeError({ code: -32000, message: 'rate limit exceeded for block range queries' }),
      'capacity',
    )
  })
})
