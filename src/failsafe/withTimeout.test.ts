import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { withTimeout } from './withTimeout.ts'

describe('withTimeout', () => {
  it("settles with the work's outcome in time, and clears its timer", async () => {
    const timers = createFakeTimers()
    const outcome = withTimeout(Promise.resolve('done'), 100, () => 'late', timers)
    assert.equal(await outcome, 'done')
    assert.equal(timers.pending(), 0)
    await assert.rejects(
      withTimeout(Promise.reject(new Error('boom')), 100, () => 'late', timers),
      /boom/,
    )
  })

  it("past the timeout, onTimeout's value, onTimeout called once; the work's late outcome is ignored", async () => {
    const timers = createFakeTimers()
    let finish: (value: string) => void = () => {}
    let calls = 0
    const outcome = withTimeout(
      new Promise<string>((resolve) => {
        finish = resolve
      }),
      100,
      () => `timed out after ${++calls}`,
      timers,
    )
    await timers.advance(99)
    assert.equal(calls, 0)
    await timers.advance(1)
    finish('too late')
    assert.equal(await outcome, 'timed out after 1')
    assert.equal(calls, 1)
  })
})
