import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { createBankBackends } from '../../test/helpers/createBankBackends.ts'
import { createRandom } from '../../test/helpers/createRandom.ts'
import { type RateFlow, rateBoundExcess } from '../../test/helpers/rateBoundExcess.ts'
import { createTestPrefix } from '../../test/helpers/testRedis.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { createMemoryBank } from './createMemoryBank.ts'
import { createMeter } from './createMeter.ts'
import { createRedisBank } from './createRedisBank.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { BankReply, BankSubjectRequest } from './creditBank.ts'
import type { Meter, MeterSubject } from './meterTypes.ts'

const prefix = createTestPrefix()
after(() => prefix.remove())

const backends = createBankBackends(prefix.keyPrefix)

/** An exchange about one subject's per-second budget alone (100 credits per second), no daily balance. */
const askRate = (fields: Partial<BankSubjectRequest> = {}): BankSubjectRequest => ({
  subject: 'account:1',
  day: new Date().toISOString().slice(0, 10),
  dailyLimit: -1,
  usedCredits: 0,
  heldCredits: 0,
  freeCredits: 0,
  returning: false,
  flushedCredits: 0,
  seedCredits: undefined,
  seedInstances: undefined,
  leaseCredits: 0,
  leaseMinCredits: 0,
  maxLeaseCredits: 0,
  creditsPerSecond: 100,
  rateCredits: 0,
  rateMinCredits: 0,
  rateSliceCredits: 25,
  rateReturnedCredits: 0,
  ...fields,
})

/** A call of `costCredits` asking for the tokens it lacks. */
const call = (costCredits: number, fields: Partial<BankSubjectRequest> = {}) =>
  askRate({ rateCredits: costCredits, rateMinCredits: costCredits, ...fields })

function rateOf(reply: BankReply): { granted: number; waitMs: number } {
  assert.equal(reply.needsSeed, false)
  if (reply.needsSeed) throw new Error('unreachable')
  const [answer] = reply.subjects
  return { granted: answer?.rateGrantedCredits ?? -1, waitMs: answer?.rateWaitMs ?? -1 }
}

/** `waitMs` as the bank would say it at the first exchange, less at most this much the clock moved on since. */
const closeTo = (waitMs: number, expectedMs: number) => waitMs <= expectedMs && waitMs > expectedMs - 5_000

for (const [name, open] of Object.entries(backends)) {
  describe(`the ${name} bank's per-second bucket`, () => {
    it('grants a request dearer than it holds when full, into debt: every instance then waits for the debt and its cost', async (t) => {
      const backend = open(15_000)
      t.after(() => backend.close())
      const [one, other] = [await backend.instance(), await backend.instance()]
      // 100 credits per second, full: a call of 10,000 is granted whole, and 9,900 are owed
      assert.deepEqual(rateOf(await one.exchange({ subjects: [call(10_000)] })), {
        granted: 10_000,
        waitMs: 0,
      })
      // a call of 80 elsewhere: 99 s to pay the debt, 0.8 s for its cost
      const cheap = rateOf(await other.exchange({ subjects: [call(80)] }))
      assert.ok(cheap.granted === 0 && closeTo(cheap.waitMs, 99_800), `wait ${cheap.waitMs} ms`)
      // another dear call waits for the debt and a full bucket
      const dear = rateOf(await one.exchange({ subjects: [call(10_000)] }))
      assert.ok(dear.granted === 0 && closeTo(dear.waitMs, 100_000), `wait ${dear.waitMs} ms`)
      // a call that cost 5,000 less than it held gives them back: they pay half the debt
      const paid = rateOf(await one.exchange({ subjects: [call(80, { rateReturnedCredits: 5_000 })] }))
      assert.ok(paid.granted === 0 && closeTo(paid.waitMs, 49_800), `wait ${paid.waitMs} ms`)
      const repaid = rateOf(await other.exchange({ subjects: [call(80, { rateReturnedCredits: 4_980 })] }))
      assert.equal(repaid.granted, 80, 'once the debt is paid')
    })

    it('a call that fits is granted from what the bucket holds, never into debt', async (t) => {
      const backend = open(15_000)
      t.after(() => backend.close())
      const bank = await backend.instance()
      assert.deepEqual(rateOf(await bank.exchange({ subjects: [call(60)] })), { granted: 60, waitMs: 0 })
      // 40 left (and what refilled since): a call of 200 waits for a full bucket, not into debt now
      const dear = rateOf(await bank.exchange({ subjects: [call(200)] }))
      assert.ok(dear.granted === 0 && closeTo(dear.waitMs, 600), `wait ${dear.waitMs} ms`)
    })
  })
}

describe('the per-second bucket in the bank, over time (memory bank, fake clock)', () => {
  it('over any window, what it grants less what comes back is at most rate x window + max(a second, the dearest grant)', async () => {
    const ratePerSecond = 100
    for (const seed of [11, 12, 13, 14, 15]) {
      const random = createRandom(seed)
      let nowMs = Date.parse('2026-11-22T10:00:00Z')
      const bank = createMemoryBank({ now: () => nowMs })
      const instances = ['a', 'b', 'c'].map((id) => ({ bank: bank.forInstance(id), held: 0 }))
      const flows: RateFlow[] = []
      let debts = 0
      for (let step = 0; step < 500; step++) {
        nowMs += random.pick([0, 0, 5, 50, 300, 1_000, 4_000])
        const instance = random.pick(instances)
        const cost = random.chance(0.1) ? random.pick([101, 400, 2_000]) : random.pick([5, 30, 80])
        const returned = random.chance(0.2) ? random.int(instance.held + 1) : 0
        instance.held -= returned
        const reply = await instance.bank.exchange({
          subjects: [call(cost, { rateSliceCredits: 25, rateReturnedCredits: returned })],
        })
        if (returned > 0) flows.push({ atMs: nowMs, credits: -returned })
        const { granted } = rateOf(reply)
        if (granted > ratePerSecond) debts++
        if (granted > 0) flows.push({ atMs: nowMs, credits: granted })
        instance.held += granted
      }
      bank.close()
      assert.ok(debts >= 3, `seed ${seed}: ${debts} grants into debt`)
      const excess = rateBoundExcess(flows, ratePerSecond)
      assert.ok(excess <= 1e-6, `seed ${seed}: ${excess} credits over the bound`)
    }
  })

  it('the bucket is kept until its debt is paid, however long that takes', async () => {
    let nowMs = Date.parse('2026-11-22T10:00:00Z')
    const bank = createMemoryBank({ now: () => nowMs }).forInstance('a')
    assert.equal(rateOf(await bank.exchange({ subjects: [call(20_100)] })).granted, 20_100)
    // 200 s of debt: a bucket unused for a minute is otherwise forgotten (full again)
    nowMs += 150_000
    assert.deepEqual(rateOf(await bank.exchange({ subjects: [call(100)] })), { granted: 0, waitMs: 51_000 })
    nowMs += 51_000
    assert.equal(rateOf(await bank.exchange({ subjects: [call(100)] })).granted, 100)
  })
})

describe('the Redis bucket of a subject in debt', () => {
  it('outlives the debt (its key expires only once the bucket would be full again)', async (t) => {
    const keyPrefix = `${prefix.keyPrefix}ttl:`
    const bank = await createRedisBank({ url: prefix.url, keyPrefix })
    t.after(() => bank.close())
    assert.equal(rateOf(await bank.exchange({ subjects: [call(20_100)] })).granted, 20_100)
    const ttlMs = await prefix.redis.pttl(`${keyPrefix}rate:account:1`)
    assert.ok(ttlMs > 195_000 && ttlMs <= 201_000, `expires in ${ttlMs} ms`)
  })
})

describe('meters sharing a per-second bucket in debt (memory bank, fake clock)', () => {
  const core: MeterSubject = {
    accountId: 1,
    keyId: 10,
    accountCounter: 'account:1',
    keyCounter: 'key:10',
    accountDailyCredits: 3_000_000,
    accountCreditsPerSecond: 500,
    keyDailyCredits: undefined,
    keyCreditsPerSecond: undefined,
  }
  const usage = (credits: number) => ({ method: 'eth_blockNumber', network: 'devnet', credits })

  /** Two meters on one memory bank, all on one fake clock. */
  async function startTwo() {
    let nowMs = Date.parse('2026-11-22T10:00:00Z')
    const clock = { now: () => nowMs }
    const bank = createMemoryBank({ now: clock.now })
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    const meters = await Promise.all(
      ['a', 'b'].map((id) =>
        createMeter({ store, clock, flushMs: 600_000, bank: bank.forInstance(id), recallMs: 0 }),
      ),
    )
    return {
      meters: meters as [Meter, Meter],
      advance: (ms: number) => (nowMs += ms),
      async close() {
        await Promise.all(meters.map((meter) => meter.close()))
        bank.close()
      },
    }
  }

  /** The refusal of a call of `credits`, or 'served' (settled at its full cost). */
  async function spend(
    meter: Meter,
    credits: number,
    chargedCredits = credits,
    payer = core,
  ): Promise<unknown> {
    try {
      meter.settle(await meter.admit(payer, credits), [usage(chargedCredits)])
      return 'served'
    } catch (err) {
      return err
    }
  }

  const retryAfter = (result: unknown) =>
    result instanceof RateLimitError && result.wireFields?.event === -33200
      ? result.retryAfterSeconds
      : result

  it('a batch dearer than the bucket is served on a full one; then every instance refuses until the debt is paid', async (t) => {
    const { meters, advance, close } = await startTwo()
    t.after(close)
    const [a, b] = meters
    assert.equal(await spend(a, 80_080), 'served')
    // 79,580 owed: a call of 80 waits 159.16 s for the debt and 0.16 s for its cost, wherever it comes
    assert.equal(retryAfter(await spend(b, 80)), 160)
    assert.equal(retryAfter(await spend(a, 80)), 160)
    assert.equal(retryAfter(await spend(b, 80_080)), 161, 'another batch waits for a full bucket')
    advance(159_319)
    assert.equal(retryAfter(await spend(b, 80)), 1)
    advance(1)
    assert.equal(await spend(b, 80), 'served')
  })

  it('what a dear request held and did not cost goes back to the shared bucket: only its cost is owed', async (t) => {
    const { meters, close } = await startTwo()
    t.after(close)
    const [a, b] = meters
    // held for 80,080, cost 80 (the rest failed upstream): 80,000 given back
    assert.equal(await spend(a, 80_080, 80), 'served')
    // a keeps a second's worth in its slice, the bank gets the rest: 420 left between them, as in one process
    assert.equal(await spend(a, 420), 'served')
    assert.equal(retryAfter(await spend(a, 1)), 1)
    assert.equal(retryAfter(await spend(b, 1)), 1)
  })

  it("a dear call the key's own bucket would take into debt but the account's refuses costs the key nothing", async (t) => {
    const { meters, advance, close } = await startTwo()
    t.after(close)
    const [a] = meters
    const ownRate: MeterSubject = { ...core, keyCreditsPerSecond: 100 }
    // another key of the account takes 450 of the account's 500
    assert.equal(await spend(a, 450, 450, { ...core, keyId: 11, keyCounter: 'key:11' }), 'served')
    // 1,000 against the key's own 100 per second (full) and the account's 50: refused on the account
    assert.equal(retryAfter(await spend(a, 1_000, 1_000, ownRate)), 1)
    advance(1_000)
    // the key's bucket was not taken into debt for it: full again, and a call of 100 is served
    assert.equal(await spend(a, 100, 100, ownRate), 'served')
  })

  it('over any window, the credits served stay within rate x window + max(a second, the dearest request), plus what the slices held', async (t) => {
    for (const seed of [21, 22, 23, 24, 25]) {
      const { meters, advance, close } = await startTwo()
      t.after(close)
      const random = createRandom(seed)
      const flows: RateFlow[] = []
      let dear = 0
      for (let step = 0; step < 400; step++) {
        const nowMs = advance(random.pick([0, 0, 5, 50, 200, 1_000, 3_000]))
        const cost = random.chance(0.1) ? random.pick([501, 1_000, 5_080]) : random.pick([5, 80, 150])
        const charged = random.chance(0.8) ? cost : random.int(cost + 1)
        const result = await spend(random.pick(meters), cost, charged)
        if (result !== 'served') continue
        if (cost > 500) dear++
        flows.push({ atMs: nowMs, credits: charged })
      }
      assert.ok(dear >= 2, `seed ${seed}: ${dear} dear requests served`)
      const excess = rateBoundExcess(flows, 500)
      // each instance may also spend what its slice held when the window opened (taken from the bank
      // before it, while the bank refilled): at most a second's worth each
      assert.ok(excess <= 2 * 500, `seed ${seed}: ${excess} credits over the bound`)
    }
  })
})
