import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createRandom } from '../../test/helpers/createRandom.ts'
import { type RateFlow, rateBoundExcess } from '../../test/helpers/rateBoundExcess.ts'
import { TokenBucket } from './TokenBucket.ts'

/** Below zero: a full second's worth is more than a second of refilling away. */
const inDebt = (bucket: TokenBucket, nowMs: number) =>
  bucket.msUntilCanTake(bucket.ratePerSecond, nowMs) > 1_000

describe('TokenBucket', () => {
  it('starts full, refills at its rate up to one second of credits', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.canTake(500, 0), true)
    bucket.take(400, 0)
    assert.equal(bucket.canTake(101, 0), false)
    assert.equal(bucket.canTake(100, 0), true)
    bucket.take(100, 0)
    assert.equal(bucket.canTake(80, 100), false, '50 credits after 100 ms')
    assert.equal(bucket.canTake(80, 160), true, '80 credits after 160 ms')
    assert.equal(bucket.canTake(500, 60_000), true, 'never more than one second of credits')
    bucket.take(500, 60_000)
    assert.equal(bucket.canTake(1, 60_000), false)
  })

  it('admits a call dearer than what it holds when full, into debt: nothing more until it is paid', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.canTake(80_080, 0), true)
    bucket.take(80_080, 0)
    assert.equal(inDebt(bucket, 0), true, 'by what the bucket could not cover')
    assert.equal(bucket.canTake(5, 0), false)
    // the debt is paid off at the rate: 79,580 credits in 159.16 s, then the call's own cost
    assert.equal(bucket.msUntilCanTake(5, 0), 159_170)
    assert.equal(bucket.msUntilCanTake(80_080, 0), 160_160, 'a dear call waits for a full bucket')
    assert.equal(bucket.canTake(80_080, 1_000), false, 'a second later it is not full again')
    assert.equal(bucket.canTake(5, 159_169), false)
    assert.equal(bucket.canTake(5, 159_170), true)
    assert.equal(bucket.canTake(80_080, 160_159), false)
    assert.equal(bucket.canTake(80_080, 160_160), true)
  })

  it('a 429 during the debt says when the call would be admitted: paying the debt, then its cost', () => {
    for (const [atMs, cost] of [
      [0, 80],
      [400, 80],
      [999, 5],
      [1_500, 500],
      [1_500, 2_000],
    ] as const) {
      const bucket = new TokenBucket(500, 0)
      bucket.take(1_000, 0)
      const waitMs = bucket.msUntilCanTake(cost, atMs)
      assert.ok(waitMs > 0, `refused at ${atMs} ms`)
      assert.equal(bucket.canTake(cost, atMs + waitMs - 1), false, `not before ${atMs + waitMs} ms`)
      assert.equal(bucket.canTake(cost, atMs + waitMs), true, `at ${atMs + waitMs} ms`)
    }
  })

  it('tells how long until a call fits: never longer than refilling to full', () => {
    const bucket = new TokenBucket(500, 0)
    assert.equal(bucket.msUntilCanTake(500, 0), 0)
    bucket.take(500, 0)
    assert.equal(bucket.msUntilCanTake(80, 0), 160)
    assert.equal(bucket.msUntilCanTake(5_000, 0), 1_000, 'a dear call waits for a full bucket')
    assert.equal(bucket.msUntilCanTake(80, 100), 60)
    assert.equal(bucket.canTake(80, 159), false)
    assert.equal(bucket.canTake(80, 160), true)
    assert.equal(bucket.canTake(5_000, 999), false)
    assert.equal(bucket.canTake(5_000, 1_000), true)
  })

  it('gives back what was refunded, capped at full', () => {
    const bucket = new TokenBucket(100, 0)
    bucket.take(100, 0)
    bucket.giveBack(30, 0)
    assert.equal(bucket.canTake(30, 0), true)
    assert.equal(bucket.canTake(31, 0), false)
    bucket.giveBack(1000, 0)
    assert.equal(bucket.canTake(100, 0), true)
  })

  it('a give-back pays off debt: a request that cost less than it held owes only what it cost', () => {
    const bucket = new TokenBucket(500, 0)
    bucket.take(80_080, 0)
    bucket.giveBack(40_000, 0)
    // 39,580 owed: paid in 79.16 s, then 5 credits more
    assert.equal(bucket.msUntilCanTake(5, 0), 79_170)
    bucket.giveBack(40_000, 0)
    // a request that cost 80 in the end leaves what 80 would: 420
    assert.equal(bucket.canTake(420, 0), true)
    assert.equal(bucket.canTake(421, 0), false)
  })

  it('over any window, credits through it are at most rate x window + max(a second, the dearest call)', () => {
    const ratePerSecond = 500
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = createRandom(seed)
      const bucket = new TokenBucket(ratePerSecond, 0)
      const flows: RateFlow[] = []
      const pending: { credits: number }[] = []
      let nowMs = 0
      let debts = 0
      for (let step = 0; step < 600; step++) {
        nowMs += random.pick([0, 0, 1, 10, 50, 200, 1_000, 3_000])
        // requests in flight settle now or later; some cost less than they held
        for (const request of pending.splice(0, random.int(pending.length + 1))) {
          const refund = random.chance(0.5) ? 0 : random.int(request.credits + 1)
          if (refund === 0) continue
          bucket.giveBack(refund, nowMs)
          flows.push({ atMs: nowMs, credits: -refund })
        }
        const cost = random.chance(0.1)
          ? random.pick([501, 1_000, 5_080, 20_000])
          : random.pick([5, 80, 150, 500])
        const wasInDebt = inDebt(bucket, nowMs)
        if (!bucket.canTake(cost, nowMs)) continue
        assert.equal(wasInDebt, false, 'nothing is admitted while a debt is unpaid')
        bucket.take(cost, nowMs)
        if (inDebt(bucket, nowMs)) debts++
        flows.push({ atMs: nowMs, credits: cost })
        pending.push({ credits: cost })
      }
      assert.ok(debts >= 3, `seed ${seed}: ${debts} requests went into debt`)
      const excess = rateBoundExcess(flows, ratePerSecond)
      assert.ok(excess <= 1e-6, `seed ${seed}: ${excess} credits over the bound`)
    }
  })
})
