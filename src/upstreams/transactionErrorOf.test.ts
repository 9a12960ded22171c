import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { transactionErrorOf } from './transactionErrorOf.ts'

describe('transactionErrorOf', () => {
  it('reads the transaction spellings of every client', () => {
    for (const message of [
      'already known',
      'Known transaction',
      'AlreadyKnown',
      'transaction already imported',
      'INTERNAL_ERROR: existing tx with same hash',
    ]) {
      assert.equal(transactionErrorOf({ code: -32000, message }), 'known', message)
    }
    for (const message of ['nonce too low', 'Nonce too low', 'OldNonce', 'Transaction nonce is too low.']) {
      assert.equal(transactionErrorOf({ code: -32000, message }), 'nonceTooLow', message)
    }
    assert.equal(
      transactionErrorOf({ code: -32000, message: 'replacement transaction underpriced' }),
      undefined,
    )
    assert.equal(transactionErrorOf({ code: -32000 }), undefined)
  })
})
