import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AttemptDurations, attemptBucketsMs } from './AttemptDurations.ts'

describe('AttemptDurations', () => {
  it('counts each duration in the first bucket at or above it, cumulatively when read, per outcome', () => {
    const durations = new AttemptDurations()
    durations.observe(3, 'ok')
    durations.observe(10, 'ok') // le is inclusive
    durations.observe(10.5, 'ok')
    durations.observe(2_000, 'timeout')
    durations.observe(60_000, 'timeout')
    assert.deepEqual(durations.read('ok'), {
      cumulativeCounts: [2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
      sumMs: 23.5,
    })
    assert.deepEqual(durations.read('timeout'), {
      cumulativeCounts: [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2],
      sumMs: 62_000,
    })
    const none = durations.read('error')
    assert.equal(none.cumulativeCounts.length, attemptBucketsMs.length + 1)
    assert.ok(none.cumulativeCounts.every((count) => count === 0))
    assert.equal(none.sumMs, 0)
    assert.equal(durations.read('cancelled').sumMs, 0)
  })
})
