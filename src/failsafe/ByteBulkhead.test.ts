import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ByteBulkhead } from './ByteBulkhead.ts'

describe('ByteBulkhead', () => {
  it('holders take bytes up to its bound, and again once they are given back', () => {
    const bulkhead = new ByteBulkhead(100)
    const first = bulkhead.holder()
    const second = bulkhead.holder()
    assert.equal(first.take(60), true)
    assert.equal(second.take(41), false, 'one byte past the bound')
    assert.equal(bulkhead.inUseBytes, 60, 'a refused take takes nothing')
    assert.equal(second.take(40), true, 'exactly to the bound')
    first.release()
    assert.equal(bulkhead.inUseBytes, 40)
    assert.equal(second.take(60), true)
    second.release()
    second.release()
    assert.equal(bulkhead.inUseBytes, 0, 'a second release gives back nothing')
  })

  it("each holder's first free bytes are taken from no one: small messages always go", () => {
    const bulkhead = new ByteBulkhead(100, 10)
    const big = bulkhead.holder()
    assert.equal(big.take(110), true)
    assert.equal(bulkhead.inUseBytes, 100)
    const small = bulkhead.holder()
    assert.equal(small.take(10), true, 'within its free bytes, though the bound is full')
    assert.equal(small.take(1), false, 'past them, the full bound refuses')
    big.giveBack(50)
    assert.equal(bulkhead.inUseBytes, 50)
    big.giveBack(100)
    assert.equal(bulkhead.inUseBytes, 0, 'never below what it took')
    assert.equal(small.take(1), true)
    assert.equal(bulkhead.inUseBytes, 1)
  })
})
