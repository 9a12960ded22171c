import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { CallsInFlightLimitError } from '../errors/limitErrors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import { CallsInFlight, type KeyCalls } from './CallsInFlight.ts'

function setup() {
  const timers = createFakeTimers()
  const calls = new CallsInFlight(timers, timers.now)
  return { calls, timers, far: { deadline: 60_000 } }
}

/** A slot taken at once (not waited for). */
function taken(slot: KeyCalls | Promise<KeyCalls>): KeyCalls {
  assert.ok(!(slot instanceof Promise), 'expected a slot at once')
  return slot
}

describe('CallsInFlight', () => {
  it("a key's calls go at once up to its bound; past it they wait for one to end, first come first served", async () => {
    const { calls, far } = setup()
    const first = taken(calls.enter(1, 2, far))
    const second = taken(calls.enter(1, 2, far))
    const order: string[] = []
    const third = calls.enter(1, 2, far)
    const fourth = calls.enter(1, 2, far)
    assert.ok(third instanceof Promise && fourth instanceof Promise)
    void third.then(() => order.push('third'))
    void fourth.then(() => order.push('fourth'))
    // another key is not held by this one's bound
    calls.leave(taken(calls.enter(2, 2, far)))
    await Promise.resolve()
    assert.deepEqual(order, [])
    calls.leave(first)
    await Promise.resolve()
    assert.deepEqual(order, ['third'])
    calls.leave(await third)
    await Promise.resolve()
    assert.deepEqual(order, ['third', 'fourth'])
    assert.equal(calls.keys, 1)
    calls.leave(second)
    calls.leave(await fourth)
    assert.equal(calls.keys, 0)
  })

  it('a call still waiting at its deadline is refused (429, event -33500) and leaves the queue', async () => {
    const { calls, timers } = setup()
    const held = taken(calls.enter(7, 1, { deadline: 1_000 }))
    const late = calls.enter(7, 1, { deadline: 500 })
    const later = calls.enter(7, 1, { deadline: 2_000 })
    assert.ok(late instanceof Promise && later instanceof Promise)
    const refused = late.catch((err: unknown) => err)
    await timers.advance(500)
    const err = await refused
    assert.ok(err instanceof CallsInFlightLimitError)
    assert.deepEqual([err.httpStatus, err.wireFields?.event, err.retryAfterSeconds], [429, -33500, 1])
    // the slot goes to the one still waiting, and its timer with it
    calls.leave(held)
    calls.leave(await later)
    assert.deepEqual([calls.keys, timers.pending()], [0, 0])
  })

  it('a slot that frees as good as at a waiting call’s deadline refuses it, and goes to the next', async () => {
    const { calls, timers } = setup()
    const held = taken(calls.enter(8, 1, { deadline: 10_000 }))
    const due = calls.enter(8, 1, { deadline: 500 })
    const next = calls.enter(8, 1, { deadline: 2_000 })
    assert.ok(due instanceof Promise && next instanceof Promise)
    const refused = due.catch((err: unknown) => err)
    await timers.advance(499.5)
    calls.leave(held)
    assert.ok((await refused) instanceof CallsInFlightLimitError, 'no slot with half a millisecond left')
    calls.leave(await next)
    assert.deepEqual([calls.keys, timers.pending()], [0, 0])
  })

  it('a call whose client leaves while it waits gives up its place', async () => {
    const { calls, timers, far } = setup()
    const held = taken(calls.enter(3, 1, far))
    const cancellation = new Cancellation()
    const waiting = calls.enter(3, 1, { ...far, cancellation })
    assert.ok(waiting instanceof Promise)
    cancellation.cancel()
    await assert.rejects(waiting, ClientGoneError)
    assert.equal(timers.pending(), 0)
    calls.leave(held)
    assert.equal(calls.keys, 0, 'a key with nothing in flight and no one waiting is forgotten')
    // a client already gone when its call would wait never waits
    const gone = new Cancellation()
    gone.cancel()
    const again = taken(calls.enter(3, 1, far))
    await assert.rejects(
      calls.enter(3, 1, { ...far, cancellation: gone }) as Promise<KeyCalls>,
      ClientGoneError,
    )
    calls.leave(again)
    assert.deepEqual([calls.keys, timers.pending()], [0, 0])
  })

  it('memory follows the keys at work: 10,000 keys that each made a call leave nothing behind', () => {
    const { calls, far } = setup()
    for (let keyId = 0; keyId < 10_000; keyId++) calls.leave(taken(calls.enter(keyId, 32, far)))
    assert.equal(calls.keys, 0)
  })
})
