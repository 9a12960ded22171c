import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { Cancellation } from './Cancellation.ts'
import { withHedge } from './withHedge.ts'

type Outcome = 'ok' | 'failed' | 'stopped'

/** Attempts that settle when the test says, each remembering whether it was stopped. */
function attempts(available = 2) {
  const started: { index: number; settle: (outcome: Outcome) => void; stopped: boolean }[] = []
  const attempt = (index: number, stop: Cancellation) => {
    if (index >= available) return undefined
    return new Promise<`${number}:${Outcome}`>((resolve) => {
      const entry = {
        index,
        stopped: false,
        settle: (outcome: Outcome) => resolve(`${index}:${outcome}`),
      }
      stop.onCancel(() => {
        entry.stopped = true
        entry.settle('stopped')
      })
      started.push(entry)
    })
  }
  return { started, attempt }
}

const isFinal = (result: string) => result.endsWith(':ok')

describe('withHedge', () => {
  it('an attempt that answers before the delay is the only one', async () => {
    const timers = createFakeTimers()
    const { started, attempt } = attempts()
    let hedges = 0
    const outcome = withHedge(attempt, {
      delayMs: 50,
      maxHedges: 1,
      isFinal,
      timers,
      onHedge: () => hedges++,
    })
    await timers.advance(49)
    started[0]?.settle('ok')
    assert.equal(await outcome, '0:ok')
    await timers.advance(100)
    assert.deepEqual([started.length, hedges, timers.pending()], [1, 0, 0])
  })

  it('after the delay one more attempt starts; the first good answer wins and the other is stopped', async () => {
    const timers = createFakeTimers()
    const { started, attempt } = attempts()
    let hedges = 0
    const outcome = withHedge(attempt, {
      delayMs: 50,
      maxHedges: 1,
      isFinal,
      timers,
      onHedge: () => hedges++,
    })
    await timers.advance(50)
    assert.equal(started.length, 2)
    started[1]?.settle('ok')
    assert.equal(await outcome, '1:ok')
    assert.deepEqual([started[0]?.stopped, hedges], [true, 1])
  })

  it('the first attempt may still win the race', async () => {
    const timers = createFakeTimers()
    const { started, attempt } = attempts()
    const outcome = withHedge(attempt, { delayMs: 50, maxHedges: 1, isFinal, timers })
    await timers.advance(60)
    started[0]?.settle('ok')
    assert.equal(await outcome, '0:ok')
    assert.equal(started[1]?.stopped, true)
  })

  it('a failure waits for the attempts still running; when all fail, the last failure', async () => {
    const timers = createFakeTimers()
    const { started, attempt } = attempts()
    const outcome = withHedge(attempt, { delayMs: 50, maxHedges: 1, isFinal, timers })
    await timers.advance(50)
    started[1]?.settle('failed')
    await timers.advance(10)
    started[0]?.settle('ok')
    assert.equal(await outcome, '0:ok')

    const again = attempts()
    const failed = withHedge(again.attempt, { delayMs: 50, maxHedges: 1, isFinal, timers })
    await timers.advance(50)
    again.started[0]?.settle('failed')
    again.started[1]?.settle('failed')
    assert.equal(await failed, '1:failed')
  })

  it('a failure before any hedge is returned at once (retrying is not its business)', async () => {
    const timers = createFakeTimers()
    const { started, attempt } = attempts()
    const outcome = withHedge(attempt, { delayMs: 50, maxHedges: 1, isFinal, timers })
    started[0]?.settle('failed')
    assert.equal(await outcome, '0:failed')
    await timers.advance(100)
    assert.equal(started.length, 1)
  })

  it('no hedge when nothing is left to try, and no more than maxHedges', async () => {
    const timers = createFakeTimers()
    const lone = attempts(1)
    let hedges = 0
    const outcome = withHedge(lone.attempt, {
      delayMs: 50,
      maxHedges: 1,
      isFinal,
      timers,
      onHedge: () => hedges++,
    })
    await timers.advance(200)
    assert.deepEqual([lone.started.length, hedges], [1, 0])
    lone.started[0]?.settle('ok')
    assert.equal(await outcome, '0:ok')

    const many = attempts(5)
    const capped = withHedge(many.attempt, { delayMs: 50, maxHedges: 2, isFinal, timers })
    await timers.advance(500)
    assert.equal(many.started.length, 3)
    many.started[2]?.settle('ok')
    assert.equal(await capped, '2:ok')
    assert.deepEqual(
      many.started.map((entry) => entry.stopped),
      [true, true, false],
    )
  })
})
