import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crossedThresholds } from './crossedThresholds.ts'

describe('crossedThresholds', () => {
  const thresholds = [50, 75, 90, 100]

  it('none below the first; a threshold is reached at exactly its share', () => {
    assert.deepEqual(crossedThresholds(thresholds, 499, 1_000), [])
    assert.deepEqual(crossedThresholds(thresholds, 500, 1_000), [50])
    assert.deepEqual(crossedThresholds(thresholds, 749, 1_000), [50])
    assert.deepEqual(crossedThresholds(thresholds, 750, 1_000), [50, 75])
  })

  it('several at once when one write passed several, and 100 only at the whole limit', () => {
    assert.deepEqual(crossedThresholds(thresholds, 950, 1_000), [50, 75, 90])
    assert.deepEqual(crossedThresholds(thresholds, 1_000, 1_000), thresholds)
    assert.deepEqual(crossedThresholds(thresholds, 5_000, 1_000), thresholds)
  })

  it('integer math: a limit that does not divide evenly rounds up, never early', () => {
    // 75% of 333 is 249.75: reached at 250, not 249
    assert.deepEqual(crossedThresholds([75], 249, 333), [])
    assert.deepEqual(crossedThresholds([75], 250, 333), [75])
    assert.deepEqual(crossedThresholds([1], 1, 1_000_000_000_000), [])
    assert.deepEqual(crossedThresholds([1], 10_000_000_000, 1_000_000_000_000), [1])
  })

  it('no limit, no thresholds', () => {
    assert.deepEqual(crossedThresholds(thresholds, 10, 0), [])
  })
})
