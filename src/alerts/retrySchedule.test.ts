import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { nextAttemptAt } from './retrySchedule.ts'

describe('the retry schedule', () => {
  const schedule = { baseMs: 10_000, maxMs: 3_600_000, forMs: 86_400_000 }
  const created = 1_000_000

  it('doubles from the base, drawn from the upper half of each wait', () => {
    const waits = [1, 2, 3, 4, 5].map((failures) => [
      (nextAttemptAt(schedule, failures, created, created, 0) as number) - created,
      (nextAttemptAt(schedule, failures, created, created, 0.999_999) as number) - created,
    ])
    assert.deepEqual(waits, [
      [5_000, 10_000],
      [10_000, 20_000],
      [20_000, 40_000],
      [40_000, 80_000],
      [80_000, 160_000],
    ])
  })

  it('is capped at maxMs however many failures', () => {
    for (const failures of [10, 30, 1_000]) {
      const wait = (nextAttemptAt(schedule, failures, created, created, 0.5) as number) - created
      assert.equal(wait, 2_700_000)
    }
  })

  it('gives up once the next attempt would come after forMs from the event', () => {
    const late = created + 86_400_000 - 1_000_000
    assert.equal(nextAttemptAt(schedule, 20, created, late, 0), undefined)
    const nearEnd = created + 86_400_000 - 6_000
    assert.equal(nextAttemptAt(schedule, 1, created, nearEnd, 0.5), undefined)
    assert.equal(nextAttemptAt(schedule, 1, created, nearEnd, 0), nearEnd + 5_000)
  })

  it('a whole day of failures is a bounded number of attempts', () => {
    let now = created
    let attempts = 0
    for (;;) {
      attempts++
      const next = nextAttemptAt(schedule, attempts, created, now, 0.5)
      if (next === undefined) break
      now = next
    }
    assert.ok(attempts > 20 && attempts < 60, `${attempts} attempts`)
  })
})
