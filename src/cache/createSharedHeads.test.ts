import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers, type FakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { createSharedHeads, type KeptHead } from './createSharedHeads.ts'

const graceMs = 20
/** Redis's clock runs this far ahead of the fake process clock (ms). */
const redisAheadMs = 1_000_000
/** Redis's TIME answer (seconds, µs) for a moment of the fake clock. */
const redisTime = (localMs: number): [string, string] => {
  const us = Math.round((localMs + redisAheadMs) * 1000)
  return [String(Math.floor(us / 1_000_000)), String(us % 1_000_000)]
}
/** A kept number raised at a moment of the fake clock, as Redis would say it (µs), in a generation. */
const raisedAt = (number: bigint, localMs: number, generation = 0n): KeptHead => ({
  number,
  raisedAtUs: String(Math.round((localMs + redisAheadMs) * 1000)),
  generation,
})

type Redis = {
  raise?: (number: bigint, generation: bigint) => Promise<KeptHead | undefined>
  lower?: (number: bigint) => Promise<KeptHead | undefined>
  connected?: () => boolean
}

/** One instance's heads on the fake clock; `raise` and `lower` answer what a test says, or Redis away. */
function instance(
  timers: FakeTimers,
  raise: Redis['raise'] = async () => undefined,
  connected = true,
  redis: Redis = {},
) {
  const heads = createSharedHeads({
    graceMs,
    raise: (_chainId, number, generation) => (raise ?? (async () => undefined))(number, generation),
    lower: (_chainId, number) => (redis.lower ?? (async () => undefined))(number),
    connected: redis.connected ?? (() => connected),
    timers,
    now: timers.now,
  })
  return { heads, head: heads.forChain(1) }
}

describe('createSharedHeads', () => {
  it('instances that hear of a number at different moments all show it from its raise plus the grace on', async () => {
    const timers = createFakeTimers()
    const [near, far] = [instance(timers), instance(timers)]
    // each measures the clocks' offset: one over a short round trip, one over a long one, both symmetric
    near.heads.clockSample(0, redisTime(0.5), 1)
    far.heads.clockSample(0, redisTime(15), 30)
    await timers.advance(100)
    const kept = raisedAt(7n, 100)
    await timers.advance(1)
    near.heads.offer(1, kept)
    assert.equal(near.head.shown, 0n, 'not before its time, though heard of')
    await timers.advance(14)
    far.heads.offer(1, kept)
    await timers.advance(graceMs - 15 - 0.01)
    assert.deepEqual([near.head.shown, far.head.shown], [0n, 0n], 'neither a moment before')
    await timers.advance(0.01)
    assert.deepEqual([near.head.shown, far.head.shown], [7n, 7n], 'both at raise + grace')
  })

  it('a number heard of after its time is shown at once; one without a known time, one grace after', async () => {
    const timers = createFakeTimers()
    const { heads, head } = instance(timers)
    heads.offer(1, raisedAt(3n, 0))
    await timers.advance(graceMs - 0.01)
    assert.equal(head.shown, 0n, 'no offset measured yet: one grace after it was heard of')
    await timers.advance(0.01)
    assert.equal(head.shown, 3n)
    heads.clockSample(40, redisTime(40.1), 40.2)
    await timers.advance(60)
    heads.offer(1, raisedAt(4n, 50))
    assert.equal(head.shown, 4n, 'its time passed before it was heard of')
    // a raise time far in the future (a clock that jumped) holds it no longer than the grace
    heads.offer(1, raisedAt(5n, 10_000_000))
    await timers.advance(graceMs)
    assert.equal(head.shown, 5n)
    // a lower number offered later changes nothing
    heads.offer(1, raisedAt(2n, 200))
    assert.equal(head.shown, 5n)
  })

  it('a number found is raised once for the calls that find it, and shown at its raise time plus the grace', async () => {
    const timers = createFakeTimers()
    const raised: bigint[] = []
    let answer: (kept: KeptHead) => void = () => {}
    const { heads, head } = instance(timers, (number) => {
      raised.push(number)
      return new Promise((resolve) => {
        answer = resolve
      })
    })
    heads.clockSample(0, redisTime(0), 0)
    await timers.advance(10)
    const first = head.show(9n)
    assert.ok(first)
    assert.equal(head.show(9n), first, 'the same raise')
    assert.equal(head.show(8n), first, 'a lower number waits for it too')
    assert.deepEqual(raised, [9n])
    let settled = false
    void first.then(() => {
      settled = true
    })
    // Redis raised it at 11 and answers at 12
    await timers.advance(2)
    answer(raisedAt(9n, 11))
    await timers.advance(graceMs - 1 - 0.01)
    assert.deepEqual([head.shown, settled], [0n, false])
    await timers.advance(0.01)
    assert.deepEqual([head.shown, settled], [9n, true])
    assert.equal(head.show(9n), undefined, 'shown: nothing to wait for')

    // another instance raised it higher already: that number is shown from its own time
    const next = head.show(10n)
    answer(raisedAt(12n, timers.now() - graceMs - 5))
    await next
    assert.equal(head.shown, 12n)
  })

  it("after a step of Redis's clock, the newest sample about as fast as the fastest sets the offset, not a stale one", async () => {
    const timers = createFakeTimers()
    const { heads, head } = instance(timers)
    /** Redis's TIME answer once its clock stepped back by 500 ms (NTP). */
    const steppedTime = (localMs: number) => redisTime(localMs - 500)
    // the fastest sample of the minute, taken before the step
    heads.clockSample(0, redisTime(0.5), 1)
    await timers.advance(10)
    // after the step: one nearly as fast, then a newer one over a slow round trip that still reads
    // the old clock (a sample too coarse to follow)
    heads.clockSample(10, steppedTime(10.7), 11.4)
    await timers.advance(10)
    heads.clockSample(20, redisTime(22.5), 25)
    await timers.advance(80)
    // raised now on Redis's stepped clock: on a stale offset, its time would seem 500 ms past
    heads.offer(1, raisedAt(7n, timers.now() - 500))
    assert.equal(head.shown, 0n, 'not shown before its raise plus the grace')
    await timers.advance(graceMs - 0.5)
    assert.equal(head.shown, 0n)
    await timers.advance(0.5)
    assert.equal(head.shown, 7n)
  })

  it('with Redis away or failing, a number found is shown at once, as by a single instance', async () => {
    const timers = createFakeTimers()
    const away = instance(timers, async () => undefined, false)
    assert.equal(away.head.show(5n), undefined)
    assert.equal(away.head.shown, 5n)
    const failing = instance(timers, async () => undefined)
    await failing.head.show(6n)
    assert.equal(failing.head.shown, 6n)
    assert.equal(timers.pending(), 0)
  })

  it('a lower is shown at once; numbers found or heard of before it are never shown again', async () => {
    const timers = createFakeTimers()
    const raises: [bigint, bigint][] = []
    const answers: ((kept: KeptHead) => void)[] = []
    let lowerAnswer: (kept: KeptHead) => void = () => {}
    const { heads, head } = instance(
      timers,
      (number, generation) => {
        raises.push([number, generation])
        return new Promise((resolve) => answers.push(resolve))
      },
      true,
      { lower: () => new Promise((resolve) => (lowerAnswer = resolve)) },
    )
    let lowers = 0
    head.onLower(() => lowers++)
    heads.clockSample(0, redisTime(0), 0)
    await timers.advance(10)
    const first = head.show(100n)
    answers.shift()?.(raisedAt(100n, timers.now()))
    await timers.advance(graceMs)
    await first
    assert.equal(head.shown, 100n)
    // one number heard of (not shown yet), one being raised: both of before the rewind
    heads.offer(1, raisedAt(101n, timers.now()))
    const raising = head.show(105n)
    assert.ok(raising)
    const lowering = head.lower(40n)
    assert.deepEqual([head.shown, lowers], [40n, 1], 'at once, before Redis answers')
    // Redis took the raise before the lower (one connection, in order), then the lower
    answers.shift()?.(raisedAt(105n, timers.now()))
    lowerAnswer(raisedAt(40n, timers.now(), 5n))
    await lowering
    await raising
    await timers.advance(graceMs * 2)
    assert.equal(head.shown, 40n, 'neither 101 nor 105 came back')
    // a number of the old generation announced late (an instance that had not heard) is ignored
    heads.offer(1, raisedAt(150n, timers.now()))
    await timers.advance(graceMs * 2)
    assert.equal(head.shown, 40n)
    // new numbers are raised in the new generation
    const next = head.show(41n)
    assert.deepEqual(raises.at(-1), [41n, 5n])
    answers.shift()?.(raisedAt(41n, timers.now(), 5n))
    await timers.advance(graceMs)
    await next
    assert.equal(head.shown, 41n)
  })

  it("another instance's lower is shown at once; a raise refused for its generation shows nothing", async () => {
    const timers = createFakeTimers()
    let answer: (kept: KeptHead) => void = () => {}
    const raises: [bigint, bigint][] = []
    const { heads, head } = instance(timers, (number, generation) => {
      raises.push([number, generation])
      return new Promise((resolve) => (answer = resolve))
    })
    let lowers = 0
    head.onLower(() => lowers++)
    heads.clockSample(0, redisTime(0), 0)
    heads.offer(1, raisedAt(100n, -graceMs))
    assert.equal(head.shown, 100n)
    heads.offer(1, raisedAt(30n, 0, 7n))
    assert.deepEqual([head.shown, lowers], [30n, 1])
    // this instance found 120 on a node of the old chain: Redis went to generation 9 meanwhile
    const raising = head.show(120n)
    assert.deepEqual(raises, [[120n, 7n]])
    answer(raisedAt(25n, 0, 9n))
    await raising
    await timers.advance(graceMs * 2)
    assert.deepEqual([head.shown, lowers], [25n, 2])
  })

  it('a lower Redis does not take is made when it is back; what Redis kept before it is not shown meanwhile', async () => {
    const timers = createFakeTimers()
    let connected = false
    const lowered: bigint[] = []
    let fails = true
    const { heads, head } = instance(timers, async () => undefined, true, {
      connected: () => connected,
      lower: async (number) => {
        lowered.push(number)
        return fails ? undefined : raisedAt(number, timers.now(), 3n)
      },
    })
    heads.clockSample(0, redisTime(0), 0)
    heads.offer(1, raisedAt(100n, -graceMs))
    await head.lower(40n)
    assert.deepEqual([head.shown, lowered], [40n, []], 'Redis away: not sent')
    connected = true
    // read again on reconnection: the number of before the lower
    heads.offer(1, raisedAt(100n, -graceMs))
    assert.equal(head.shown, 40n)
    heads.retryLowers()
    await timers.advance(0)
    assert.deepEqual(lowered, [40n], 'sent, and failed')
    fails = false
    heads.retryLowers()
    await timers.advance(0)
    assert.deepEqual(lowered, [40n, 40n])
    heads.retryLowers()
    await timers.advance(0)
    assert.equal(lowered.length, 2, 'made: not sent again')
    heads.offer(1, raisedAt(100n, -graceMs))
    assert.equal(head.shown, 40n, 'an older generation')
  })
})
