import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { classifyNodeError, missingBlockOf, nodeErrorRules } from './nodeErrors.ts'

describe('nodeErrors', () => {
  it('the default: an error no rule names is an answer for the client', () => {
    assert.equal(classifyNodeError({}), undefined)
    assert.equal(classifyNodeError({ code: -32000, message: 'something new' }), undefined)
    assert.equal(
      classifyNodeError({ code: -32602, message: 'invalid argument 0: hex string has length 3' }),
      undefined,
    )
    assert.equal(
      classifyNodeError({ code: -32000, message: 'insufficient funds for gas * price + value' }),
      undefined,
    )
    assert.equal(
      classifyNodeError({ code: -32000, message: 'nonce too low: next nonce 5, tx nonce 4' }),
      undefined,
    )
  })

  it('execution errors are answers whatever their text says', () => {
    for (const error of [
      { code: 3, message: 'execution reverted: rate limit', data: '0x08c379a0' },
      { code: -32000, message: 'execution reverted: header not found' },
      { code: -32015, message: 'VM execution error.', data: 'Reverted 0x' },
      { code: -32603, message: 'VM Exception while processing transaction: revert too many requests' },
      { code: 3, message: 'missing trie node' },
    ]) {
      assert.equal(classifyNodeError(error), undefined, error.message)
    }
  })

  it('names each kind, by code where the message says too little, and the first matching rule decides', () => {
    const cases: [{ code?: number; message?: string }, string][] = [
      [{ code: -32005, message: 'limit exceeded' }, 'capacity'],
      [
        {
          code: -32005,
          message: 'query returned more than 10000 results. Try with this block range [0x1, 0x2].',
        },
        'refused',
      ],
      [{ code: 429, message: 'whatever the provider says' }, 'capacity'],
      [{ code: -32000, message: 'Too Many Requests' }, 'capacity'],
      [{ code: -32000, message: 'header not found' }, 'missingData'],
      [{ code: -32000, message: 'missing trie node abc (path )' }, 'missingData'],
      [{ code: -32000, message: 'finalized block not found' }, 'missingData'],
      [
        { code: -32602, message: 'BlockOutOfRangeError: block height is 300 but requested was 50' },
        'missingData',
      ],
      [{ code: 4444, message: 'pruned history unavailable' }, 'missingData'],
      [{ code: 4444, message: 'Pruned history unavailable for block 12' }, 'missingData'],
      [{ code: -32001, message: 'block not found: number 0x2a' }, 'missingData'],
      [{ code: -32000, message: 'block not found: 42' }, 'missingData'],
      [{ code: -32000, message: 'Block not found' }, 'missingData'],
      [{ code: -39001, message: 'Unknown block error' }, 'missingData'],
      [{ code: -32000, message: 'unknown block' }, 'missingData'],
      [{ code: -32001, message: 'Resource not found' }, 'missingData'],
      [{ code: -32601, message: 'the method trace_block does not exist/is not available' }, 'refused'],
      [{ code: -32601 }, 'refused'],
      // a range limit under the code of a rate limit is the range limit
      [{ code: -32005, message: 'Requested range exceeds maximum RPC range limit' }, 'refused'],
      [{ code: 35, message: 'ranges over 1000 blocks are not supported on freetier' }, 'refused'],
    ]
    for (const [error, kind] of cases) assert.equal(classifyNodeError(error), kind, JSON.stringify(error))
  })

  it("anvil's `Resource not found` is missing data under -32001 only", () => {
    assert.equal(classifyNodeError({ code: -32001, message: 'Resource not found' }), 'missingData')
    assert.equal(classifyNodeError({ code: -32000, message: 'Resource not found' }), undefined)
  })

  it('every rule names its source and matches on something', () => {
    for (const rule of nodeErrorRules) {
      assert.ok(rule.source.length > 0)
      assert.ok(rule.code !== undefined || rule.message !== undefined)
    }
  })

  it('reads the block a refusal for want of data names, where it names one', () => {
    const cases: [string, bigint | undefined][] = [
      ['BlockOutOfRangeError: block height is 300 but requested was 50', 50n],
      ['state at block #1234 is pruned', 1234n],
      ['block not found: number 0x32', 50n],
      ['block not found: hash 0x32ab', undefined],
      ['missing trie node 01 (path )', undefined],
      ['requested was 123456789012345678901234567890', undefined],
    ]
    for (const [message, block] of cases)
      assert.equal(missingBlockOf({ code: -32000, message }), block, message)
    assert.equal(missingBlockOf({ code: -32000 }), undefined)
  })
})
