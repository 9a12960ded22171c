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

  it('the holders of one share hold at most its bytes together; other shares take the rest', () => {
    const bulkhead = new ByteBulkhead(100, 0, 40)
    const first = bulkhead.holder(['key:a', 'address:1'])
    const second = bulkhead.holder(['key:a', 'address:2'])
    assert.equal(first.take(30), true)
    assert.equal(second.take(11), false, "one byte past key a's share, though the bound has room")
    assert.equal(bulkhead.heldBy('key:a'), 30, 'a refused take takes nothing from the share')
    assert.equal(bulkhead.heldBy('address:2'), 0, '...nor from its other shares')
    assert.equal(second.take(10), true, 'exactly to the share')
    const other = bulkhead.holder(['key:b', 'address:3'])
    assert.equal(other.take(40), true, 'another key takes its own share')
    assert.equal(
      bulkhead.holder(['key:c', 'address:1']).take(31),
      false,
      "address 1's share holds 30 of key a's",
    )
    assert.equal(bulkhead.inUseBytes, 80)
    first.release()
    assert.equal(bulkhead.heldBy('key:a'), 10)
    assert.equal(bulkhead.heldBy('address:1'), 0)
    assert.equal(second.take(30), true, 'what a holder gave back its share takes again')
    second.release()
    other.release()
    assert.equal(bulkhead.inUseBytes, 0)
    assert.equal(bulkhead.heldBy('key:a'), 0)
  })

  it('shares count past the free bytes only, and the whole bound still binds every share', () => {
    const bulkhead = new ByteBulkhead(100, 10, 60)
    const a = bulkhead.holder(['key:a'])
    const b = bulkhead.holder(['key:b'])
    assert.equal(a.take(10), true)
    assert.equal(a.holdsBound, false, 'within its free bytes')
    assert.equal(bulkhead.heldBy('key:a'), 0)
    assert.equal(a.take(60), true, 'ten free, sixty of its share')
    assert.equal(a.holdsBound, true)
    assert.equal(a.take(1), false, 'its share is full')
    assert.equal(b.take(60), false, "forty left of the bound, though key b's share is empty")
    assert.equal(b.take(50), true)
    a.giveBack(30)
    assert.equal(bulkhead.heldBy('key:a'), 30)
    assert.equal(bulkhead.inUseBytes, 70)
    const unshared = bulkhead.holder()
    assert.equal(unshared.take(41), false, 'a holder of no share is bound by the whole bound alone')
    assert.equal(unshared.take(40), true)
  })
})
