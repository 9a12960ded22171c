import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import { DailyLimitError, type RateLimitError } from '../errors/limitErrors.ts'
import { createMeter } from './createMeter.ts'
import type { MeterSubject } from './meterTypes.ts'
import type { UsageStore } from './usageStore.ts'

const day1 = Date.parse('2026-11-22T10:00:00Z')

function fakeClock(start = day1) {
  let now = start
  return { now: () => now, set: (ms: number) => (now = ms), advance: (ms: number) => (now += ms) }
}

const subject = (limits: Partial<MeterSubject> = {}): MeterSubject => ({
  accountId: limits.accountId ?? 1,
  keyId: limits.keyId ?? 10,
  accountCounter: `account:${limits.accountId ?? 1}`,
  keyCounter: `key:${limits.keyId ?? 10}`,
  accountDailyCredits: 1_000,
  accountCreditsPerSecond: 1_000_000,
  keyDailyCredits: undefined,
  keyCreditsPerSecond: undefined,
  ...limits,
})

const usage = (credits: number, method = 'eth_call') => ({ method, network: 'devnet', credits })

/** Every UsageStore implementation runs the same meter tests, each test on a database of its own. */
for (const backend of storeBackends) {
  describe(`meter on ${backend.name}`, () => {
    const databases: TestDatabase[] = []
    after(() => Promise.all(databases.map((database) => database.remove())))
    const makeStore = async (): Promise<UsageStore> => {
      const database = await backend.createDatabase()
      databases.push(database)
      return (await database.open()).usage
    }
    it('holds, charges and releases; never overdraws the daily balance', async () => {
      const clock = fakeClock()
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const payer = subject()
      const first = await meter.admit(payer, 600)
      await assert.rejects(async () => meter.admit(payer, 401), DailyLimitError, 'held credits count')
      const settled = meter.settle(first, [usage(80), usage(0)])
      assert.equal(settled.chargedCredits, 80)
      assert.equal(settled.remainingCredits, 920)
      const second = await meter.admit(payer, 920)
      meter.settle(second, [usage(920)])
      await assert.rejects(async () => meter.admit(payer, 1), DailyLimitError)
      assert.equal(meter.remainingCredits(payer), 0)
      await meter.close()
    })

    it('resets at 00:00 UTC', async () => {
      const clock = fakeClock(Date.parse('2026-11-22T23:59:59Z'))
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const payer = subject()
      meter.settle(await meter.admit(payer, 1_000), [usage(1_000)])
      await assert.rejects(
        async () => meter.admit(payer, 5),
        (err: DailyLimitError) => err.retryAfterSeconds === 1,
      )
      assert.equal(meter.secondsToReset(), 1)
      clock.set(Date.parse('2026-11-23T00:00:00Z'))
      assert.equal(meter.remainingCredits(payer), 1_000)
      meter.settle(await meter.admit(payer, 5), [usage(5)])
      assert.equal(meter.secondsToReset(), 86_400)
      await meter.close()
    })

    it('tells the three 429s apart', async () => {
      const clock = fakeClock()
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const plan = subject({ accountCreditsPerSecond: 100, accountDailyCredits: 1e9 })
      meter.settle(await meter.admit(plan, 80), [usage(80)])
      // 20 credits left of 100 per second: 60 more in 600 ms, sent as a whole second
      await assert.rejects(
        async () => meter.admit(plan, 80),
        (err: RateLimitError) => err.wireFields?.event === -33200 && err.retryAfterSeconds === 1,
      )
      clock.advance(1_000)
      meter.settle(await meter.admit(plan, 80), [usage(80)])

      const keyRate = subject({ accountId: 2, keyId: 20, keyCreditsPerSecond: 100, accountDailyCredits: 1e9 })
      meter.settle(await meter.admit(keyRate, 80), [usage(80)])
      await assert.rejects(
        async () => meter.admit(keyRate, 80),
        (err: RateLimitError) => err.wireFields?.event === -33300,
      )

      const keyDay = subject({ accountId: 3, keyId: 30, keyDailyCredits: 100, accountDailyCredits: 1e9 })
      meter.settle(await meter.admit(keyDay, 80), [usage(80)])
      // the key's own daily limit: until 00:00 UTC (the clock is at 10:00:01)
      await assert.rejects(
        async () => meter.admit(keyDay, 80),
        (err: RateLimitError) => err.wireFields?.event === -33400 && err.retryAfterSeconds === 14 * 3600 - 1,
      )
      await meter.close()
    })

    it('a refused admission takes nothing; refunds go back to the buckets', async () => {
      const clock = fakeClock()
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const payer = subject({ accountCreditsPerSecond: 100, keyCreditsPerSecond: 100 })
      const held = await meter.admit(payer, 100)
      meter.settle(held, [usage(0)])
      meter.settle(await meter.admit(payer, 100), [usage(100)])
      assert.equal(meter.remainingCredits(payer), 900)
      await meter.close()
    })

    it('a request dearer than a second of credits goes into debt: nothing more until it is paid', async () => {
      const clock = fakeClock()
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const core = subject({ accountCreditsPerSecond: 500, accountDailyCredits: 3_000_000 })
      const planRefusal = (retryAfterSeconds: number) => (err: RateLimitError) =>
        err.wireFields?.event === -33200 && err.retryAfterSeconds === retryAfterSeconds
      // a batch of 1,000 eth_blockNumber on a full bucket: served, and 79,580 credits owed
      meter.settle(await meter.admit(core, 80_080), [usage(80_080)])
      // a call of 80: 159.16 s to pay the debt, 0.16 s for its own cost
      await assert.rejects(async () => meter.admit(core, 80), planRefusal(160))
      await assert.rejects(async () => meter.admit(core, 5), planRefusal(160))
      await assert.rejects(
        async () => meter.admit(core, 80_080),
        planRefusal(161),
        'another batch: a full bucket',
      )
      clock.advance(159_319)
      await assert.rejects(async () => meter.admit(core, 80), planRefusal(1))
      clock.advance(1)
      meter.settle(await meter.admit(core, 80), [usage(80)])
      await assert.rejects(async () => meter.admit(core, 80_080), planRefusal(1))
      clock.advance(999)
      await assert.rejects(
        async () => meter.admit(core, 80_080),
        planRefusal(1),
        'one millisecond short of full',
      )
      clock.advance(1)
      meter.settle(await meter.admit(core, 80_080), [usage(80_080)])

      // a key's own limit the same, with its own 429
      const ownRate = subject({ accountId: 2, keyId: 20, keyCreditsPerSecond: 100, accountDailyCredits: 1e9 })
      meter.settle(await meter.admit(ownRate, 1_000), [usage(1_000)])
      await assert.rejects(
        async () => meter.admit(ownRate, 80),
        (err: RateLimitError) => err.wireFields?.event === -33300 && err.retryAfterSeconds === 10,
      )
      await meter.close()
    })

    it('a dear request that cost less than it held owes only what it cost', async () => {
      const clock = fakeClock()
      const meter = await createMeter({ store: await makeStore(), clock, flushMs: 60_000 })
      const core = subject({ accountCreditsPerSecond: 500, accountDailyCredits: 3_000_000 })
      // held for 1,000 calls; all but one failed upstream (free)
      meter.settle(await meter.admit(core, 80_080), [usage(80)])
      meter.settle(await meter.admit(core, 420), [usage(420)])
      // the bucket is at 0: 500 less the 80 charged, less the 420 after
      await assert.rejects(
        async () => meter.admit(core, 1),
        (err: RateLimitError) => err.wireFields?.event === -33200 && err.retryAfterSeconds === 1,
      )
      await meter.close()
    })

    it('counts its refusals by status, and tells how much of its daily credits a subject used', async () => {
      const clock = fakeClock()
      const store = await makeStore()
      const meter = await createMeter({ store, clock, flushMs: 60_000 })
      const payer = subject({ keyDailyCredits: 500 })
      const other = subject({ accountId: 2, keyId: 20 })
      assert.equal(meter.usedShare(payer), 0)
      meter.settle(await meter.admit(payer, 400), [usage(400)])
      // the key's balance is nearer its end (400 of 500) than the account's (400 of 1,000)
      assert.equal(meter.usedShare(payer), 0.8)
      await assert.rejects(
        async () => meter.admit(payer, 200),
        (err: RateLimitError) => err.httpStatus === 429,
      )
      await assert.rejects(async () => meter.admit(other, 1_001), DailyLimitError)
      await assert.rejects(async () => meter.admit(other, 1_001), DailyLimitError)
      assert.deepEqual({ ...meter.refusals }, { '402': 2, '429': 1 })
      assert.equal(meter.usedShare(other), 0)
      await meter.close()
      // read back from the store after a restart, before any call
      const restarted = await createMeter({ store, clock, flushMs: 60_000 })
      assert.equal(restarted.usedShare(payer), 0.8)
      assert.deepEqual({ ...restarted.refusals }, { '402': 0, '429': 0 })
      await restarted.close()
    })

    it('persists usage and reads it back after a restart, with the history per method and hour', async () => {
      const store = await makeStore()
      const clock = fakeClock()
      const meter = await createMeter({ store, clock, flushMs: 60_000 })
      const payer = subject()
      meter.settle(await meter.admit(payer, 300), [usage(80), usage(80), usage(5, '(invalid)')])
      await meter.close()
      const again = await createMeter({ store, clock, flushMs: 60_000 })
      assert.equal(again.remainingCredits(payer), 1_000 - 165)
      const rows = await store.queryUsage({ fromDay: '2026-11-22' })
      assert.deepEqual(
        rows.map(({ method, calls, credits, day }) => ({ day, method, calls, credits })),
        [
          { day: '2026-11-22', method: '(invalid)', calls: 1, credits: 5 },
          { day: '2026-11-22', method: 'eth_call', calls: 2, credits: 160 },
        ],
      )
      await again.close()
    })

    it('keeps usage a failed write could not store, for the next flush', async () => {
      const store = await makeStore()
      let failNext = true
      const flaky: UsageStore = {
        ...store,
        addUsage: async (delta) => {
          if (failNext) {
            failNext = false
            throw new Error('database is locked')
          }
          return store.addUsage(delta)
        },
      }
      const meter = await createMeter({ store: flaky, clock: fakeClock(), flushMs: 60_000 })
      meter.settle(await meter.admit(subject(), 80), [usage(80)])
      await assert.rejects(meter.flush(), /locked/)
      meter.settle(await meter.admit(subject(), 80), [usage(80)])
      await meter.flush()
      assert.equal((await store.loadDailyUsage('2026-11-22')).get('account:1'), 160)
      await meter.close()
    })
  })
}
