import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ByteBulkhead } from './ByteBulkhead.ts'

describe('ByteBulkhead', () => {
  it('takes bytes up to its bound, and again once they are given back', () => {
    const bulkhead = new ByteBulkhead(100)
    assert.equal(bulkhead.tryTake(60), true)
    assert.equal(bulkhead.tryTake(41), false, 'one byte past the bound')
    assert.equal(bulkhead.inUseBytes, 60, 'a refused take takes nothing')
    assert.equal(bulkhead.tryTake(40), true, 'exactly to the bound')
    bulkhead.giveBack(60)
    assert.equal(bulkhead.inUseBytes, 40)
    assert.equal(bulkhead.tryTake(60), true)
  })
})
