import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { retryAfter } from './retryAfter.ts'

/** Tries that answer the outcomes given, in order, each at once; then nothing left to try. */
function scripted(outcomes: string[], timers: { now(): number }) {
  const startedAt: number[] = []
  const tryOnce = (index: number) => {
    const outcome = outcomes[index]
    if (outcome === undefined) return undefined
    startedAt.push(timers.now())
    return Promise.resolve(outcome)
  }
  return { startedAt, tryOnce }
}

const retryable = (outcome: string) => outcome === 'failed'

/** A pauseMs that answers `ms`, recording which retry each pause was asked for. */
function pausing(ms: number) {
  const asked: number[] = []
  const pauseMs = (index: number) => {
    asked.push(index)
    return ms
  }
  return { asked, pauseMs }
}

describe('retryAfter', () => {
  it('goes on from a first try made outside: the first retry is try 1, paused for as told', async () => {
    const timers = createFakeTimers()
    const { startedAt, tryOnce } = scripted(['(made outside)', 'failed', 'ok'], timers)
    const { asked, pauseMs } = pausing(10)
    const clock = { deadline: 1_000, now: timers.now, timers }
    const outcome = retryAfter('failed', tryOnce, { retryable, pauseMs, ...clock })
    await timers.advance(10)
    await timers.advance(10)
    assert.equal(await outcome, 'ok')
    assert.deepEqual(startedAt, [10, 20])
    assert.deepEqual(asked, [1, 2])
  })

  it('tries again after each retryable outcome, pausing as told, until one is not retryable', async () => {
    const timers = createFakeTimers()
    const { startedAt, tryOnce } = scripted(['(made outside)', 'failed', 'ok', 'ok'], timers)
    const outcome = retryAfter('failed', tryOnce, {
      retryable,
      pauseMs: (index) => index * 10,
      deadline: 1_000,
      now: timers.now,
      timers,
    })
    await timers.advance(10)
    await timers.advance(20)
    assert.equal(await outcome, 'ok')
    assert.deepEqual(startedAt, [10, 30])
  })

  it('a pause takes at most a quarter of the time left, and no try starts past the deadline', async () => {
    const timers = createFakeTimers()
    const { startedAt, tryOnce } = scripted(['(made outside)', 'failed', 'failed', 'failed'], timers)
    const outcome = retryAfter('failed', tryOnce, {
      retryable,
      pauseMs: () => 1_000,
      deadline: 100,
      now: timers.now,
      timers,
    })
    await timers.advance(25) // a quarter of 100
    await timers.advance(19) // a quarter of 75, 18.75
    assert.deepEqual(startedAt, [25, 43.75])
    await timers.advance(100)
    assert.equal(await outcome, 'failed')

    // a try that ends past the deadline is the last one
    let tries = 0
    const slow = retryAfter(
      'failed',
      () => {
        tries++
        return new Promise<string>((resolve) => timers.setTimeout(() => resolve('failed'), 150))
      },
      { retryable, pauseMs: () => 0, deadline: timers.now() + 100, now: timers.now, timers },
    )
    await timers.advance(150)
    assert.equal(await slow, 'failed')
    assert.equal(tries, 1)
  })

  it('the first outcome when nothing is left to try, or the deadline has passed', async () => {
    const timers = createFakeTimers()
    const options = { retryable, pauseMs: () => 0, deadline: 1_000, now: timers.now, timers }
    assert.equal(await retryAfter('failed', () => undefined, options), 'failed')
    let tries = 0
    const late = { ...options, deadline: timers.now() }
    const tryOnce = () => {
      tries++
      return Promise.resolve('ok')
    }
    assert.equal(await retryAfter('failed', tryOnce, late), 'failed')
    assert.equal(tries, 0)
  })
})
