import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { ClientGoneError } from '../errors/callEndings.ts'
import { DailyLimitError, RateLimitError } from '../errors/limitErrors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import { createMeter } from '../metering/createMeter.ts'
import { createSqliteUsageStore } from '../metering/createSqliteUsageStore.ts'
import type { MeterSubject } from '../metering/meterTypes.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { CallCharge } from './CallCharge.ts'
import { RequestCredits } from './RequestCredits.ts'

/** A core-plan key: 500 credits a second, `daily` credits a day. */
const subject = (daily = 3_000_000): MeterSubject => ({
  accountId: 1,
  keyId: 10,
  accountCounter: 'account:1',
  keyCounter: 'key:10',
  accountDailyCredits: daily,
  accountCreditsPerSecond: 500,
  keyDailyCredits: undefined,
  keyCreditsPerSecond: undefined,
})

const usage = (credits: number) => [{ method: 'eth_getLogs', network: 'devnet', credits }]

async function meterOnFakeTime() {
  const timers = createFakeTimers()
  const store = createSqliteUsageStore(openSqlite(':memory:'))
  const meter = await createMeter({ store, clock: timers, timers, flushMs: 600_000 })
  // the meter's own flush timer: a charge's waits are what is set beyond it
  const waits = () => timers.pending() - 1
  return { timers, meter, waits }
}

describe('RequestCredits', () => {
  it('settles every hold of a request as one: what it held beyond its charge goes back to the rate and the balance', async () => {
    const { meter } = await meterOnFakeTime()
    const payer = subject(10_000)
    const credits = new RequestCredits(meter, payer)
    assert.equal(await credits.hold(255), true)
    assert.equal(await credits.hold(200), true)
    await assert.rejects(credits.hold(100), RateLimitError, 'the bucket holds 45')
    const settled = credits.settle(usage(255))
    assert.equal(settled.chargedCredits, 255)
    assert.equal(settled.remainingCredits, 10_000 - 255)
    // the 200 held beyond came back to the bucket: 245 there again
    const next = new RequestCredits(meter, payer)
    assert.equal(await next.hold(245), true)
    next.settle(usage(0))
    await meter.close()
  })

  it('a hold the meter decides after the request was settled goes back at once, and says so', async () => {
    const { meter } = await meterOnFakeTime()
    const payer = subject(10_000)
    const credits = new RequestCredits(meter, payer)
    await credits.hold(100)
    const late = credits.hold(255)
    credits.settle(usage(100))
    assert.equal(await late, false)
    assert.equal(meter.remainingCredits(payer), 10_000 - 100, 'nothing held for it')
    await meter.close()
  })
})

describe('CallCharge', () => {
  it("waits for the key's per-second rate when it pays before the deadline; counts the calls charged", async () => {
    const { timers, meter, waits } = await meterOnFakeTime()
    const credits = new RequestCredits(meter, subject())
    await credits.hold(255)
    const charge = new CallCharge(credits, 255, timers, timers.now)
    // 245 left in the bucket: 10 more come in 20 ms
    const next = charge.holdNext(timers.now() + 1_000, undefined)
    await timers.advance(19)
    assert.equal(waits(), 1, 'still waiting')
    await timers.advance(1)
    assert.equal(await next, true)
    assert.equal(charge.splitCalls, 0, 'held, not yet charged')
    charge.chargeCall()
    charge.chargeCall()
    charge.freeCall()
    assert.equal(charge.splitCalls, 1)
    assert.equal(credits.settle(usage(255)).chargedCredits, 255)
    await meter.close()
  })

  it('refuses with the 429 when the rate pays only after the deadline, and with the 402 of a spent balance at once', async () => {
    const { timers, meter, waits } = await meterOnFakeTime()
    const credits = new RequestCredits(meter, subject())
    await credits.hold(255)
    const charge = new CallCharge(credits, 255, timers, timers.now)
    await assert.rejects(charge.holdNext(timers.now() + 20, undefined), RateLimitError)
    assert.equal(waits(), 0, 'no wait')
    credits.settle(usage(255))

    const poor = new RequestCredits(meter, { ...subject(300), accountId: 2, accountCounter: 'account:2' })
    await poor.hold(255)
    await assert.rejects(
      new CallCharge(poor, 255, timers, timers.now).holdNext(Number.POSITIVE_INFINITY, undefined),
      DailyLimitError,
    )
    await meter.close()
  })

  it("tells whether the key's per-second rate could pay for a split's calls before a deadline, from a full bucket", async () => {
    const { timers, meter } = await meterOnFakeTime()
    const charge = new CallCharge(new RequestCredits(meter, subject()), 255, timers, timers.now)
    assert.equal(charge.paysInTime(2, timers.now() + 1_000), true, '510 credits: 20 ms past the first second')
    assert.equal(charge.paysInTime(60, timers.now() + 30_000), true, '15,300 credits: 29.6 s')
    assert.equal(charge.paysInTime(62, timers.now() + 30_000), false, '15,810 credits: 30.6 s')
    const ownRate = new RequestCredits(meter, { ...subject(), keyCreditsPerSecond: 100 })
    assert.equal(new CallCharge(ownRate, 255, timers, timers.now).paysInTime(2, timers.now() + 1_000), false)
    await meter.close()
  })

  it('stops waiting when the client leaves', async () => {
    const { timers, meter, waits } = await meterOnFakeTime()
    const credits = new RequestCredits(meter, subject())
    await credits.hold(500)
    const cancellation = new Cancellation()
    const next = new CallCharge(credits, 255, timers, timers.now).holdNext(timers.now() + 5_000, cancellation)
    await timers.advance(100)
    cancellation.cancel()
    await assert.rejects(next, ClientGoneError)
    assert.equal(waits(), 0, 'its timer cleared')
    await meter.close()
  })
})
