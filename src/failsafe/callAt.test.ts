import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { callAt } from './callAt.ts'

describe('callAt', () => {
  it('calls once when the clock reaches the time, not a millisecond before', async () => {
    const timers = createFakeTimers()
    let calls = 0
    callAt(1_000, () => calls++, timers.now, timers)
    await timers.advance(999)
    assert.equal(calls, 0)
    await timers.advance(1)
    assert.equal(calls, 1)
    await timers.advance(10_000)
    assert.equal(calls, 1)
    assert.equal(timers.pending(), 0)
  })

  it('a time already past: called at once, no timer set', () => {
    const timers = createFakeTimers()
    let calls = 0
    callAt(-5, () => calls++, timers.now, timers)
    assert.equal(calls, 1)
    assert.equal(timers.pending(), 0)
  })

  it('a timer that fires while the clock is behind waits again for what is left', async () => {
    const timers = createFakeTimers()
    let lagMs = 0
    let calls = 0
    callAt(
      1_000,
      () => calls++,
      () => timers.now() - lagMs,
      timers,
    )
    // the clock falls 30 ms behind the timers' time: the timer fires 30 ms too early by it
    lagMs = 30
    await timers.advance(1_000)
    assert.equal(calls, 0)
    assert.equal(timers.pending(), 1)
    await timers.advance(29)
    assert.equal(calls, 0)
    await timers.advance(1)
    assert.equal(calls, 1)
  })

  it('cancelled: never called, its timer cleared', async () => {
    const timers = createFakeTimers()
    let calls = 0
    const cancel = callAt(1_000, () => calls++, timers.now, timers)
    cancel()
    assert.equal(timers.pending(), 0)
    await timers.advance(2_000)
    assert.equal(calls, 0)
  })
})
