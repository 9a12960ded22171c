import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { withTimeout } from './withTimeout.ts'

describe('withTimeout', () => {
  it("settles with the work's value in time, and clears its timer", async () => {
    const timers = createFakeTimers()
    let settle: (value: string) => void = () => {}
    const outcome = withTimeout<string>(
      (done) => {
        settle = done
      },
      100,
      () => 'late',
      timers,
    )
    assert.equal(timers.pending(), 1)
    await timers.advance(99)
    settle('done')
    settle('twice')
    assert.equal(await outcome, 'done')
    assert.equal(timers.pending(), 0)
  })

  it('work that settles at once sets no timer; work that throws rejects', async () => {
    const timers = createFakeTimers()
    assert.equal(
      await withTimeout(
        (done) => done('at once'),
        100,
        () => 'late',
        timers,
      ),
      'at once',
    )
    assert.equal(timers.pending(), 0)
    await assert.rejects(
      withTimeout(
        () => {
          throw new Error('boom')
        },
        100,
        () => 'late',
        timers,
      ),
      /boom/,
    )
    assert.equal(timers.pending(), 0)
  })

  it("past the timeout, onTimeout's value, onTimeout called once; the work's late value is ignored", async () => {
    const timers = createFakeTimers()
    let finish: (value: string) => void = () => {}
    let calls = 0
    const outcome = withTimeout<string>(
      (settle) => {
        finish = settle
      },
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
