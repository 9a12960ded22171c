import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { getBackoffMs } from './getBackoffMs.ts'

describe('getBackoffMs', () => {
  const policy = { baseMs: 25, factor: 2, maxMs: 150, jitter: 0.5 }

  it('grows by the factor up to the maximum', () => {
    const noJitter = () => 0
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((retry) => getBackoffMs(retry, policy, noJitter)),
      [25, 50, 100, 150, 150],
    )
  })

  it('adds at most the jitter share, at random, still within the maximum', () => {
    assert.equal(
      getBackoffMs(2, policy, () => 1),
      75,
    )
    assert.equal(
      getBackoffMs(2, policy, () => 0.5),
      62.5,
    )
    assert.equal(
      getBackoffMs(3, policy, () => 1),
      150,
    )
    for (let index = 0; index < 100; index++) {
      const pause = getBackoffMs(2, policy)
      assert.ok(pause >= 50 && pause <= 75, String(pause))
    }
  })
})
