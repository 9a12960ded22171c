import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCarriedCounts } from './createCarriedCounts.ts'

describe('createCarriedCounts', () => {
  it('goes on from the object a name had: its last counts read once more, the new one from 0', () => {
    const counts = createCarriedCounts((source: { hits: number; misses: number }) => [
      source.hits,
      source.misses,
    ])
    const first = { hits: 3, misses: 1 }
    assert.deepEqual(counts('mainnet', first), [3, 1])
    first.hits = 5 // counted after the read, before the object is replaced
    const second = { hits: 2, misses: 0 }
    assert.deepEqual(counts('mainnet', second), [7, 1])
    second.misses = 4
    assert.deepEqual(counts('mainnet', second), [7, 5])
    first.hits = 9 // the replaced object is let go: not read again
    assert.deepEqual(counts('mainnet', second), [7, 5])
    // another name has totals of its own
    assert.deepEqual(counts('base', { hits: 1, misses: 1 }), [1, 1])
    assert.deepEqual(counts('mainnet', second), [7, 5])
  })
})
