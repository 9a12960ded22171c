import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { type Backend, createBankBackends } from '../../test/helpers/createBankBackends.ts'
import { createTestPrefix } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { DailyLimitError } from '../errors/limitErrors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { systemClock } from './clock.ts'
import { createMeter } from './createMeter.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { BankReply, BankSubjectRequest, CreditBank } from './creditBank.ts'
import type { Meter, MeterSubject } from './meterTypes.ts'
import type { UsageStore } from './usageStore.ts'

const prefix = createTestPrefix()
after(() => prefix.remove())

const backends = createBankBackends(prefix.keyPrefix)

const today = () => new Date().toISOString().slice(0, 10)

const ask = (fields: Partial<BankSubjectRequest> = {}): BankSubjectRequest => ({
  subject: 'account:1',
  day: today(),
  dailyLimit: 1_000,
  usedCredits: 0,
  heldCredits: 0,
  freeCredits: 0,
  returning: false,
  flushedCredits: 0,
  seedCredits: 0,
  seedInstances: undefined,
  leaseCredits: 10_000,
  leaseMinCredits: 80,
  maxLeaseCredits: 10_000,
  creditsPerSecond: 0,
  rateCredits: 0,
  rateMinCredits: 0,
  rateSliceCredits: 0,
  rateReturnedCredits: 0,
  ...fields,
})

/** The reply to one exchange of `bank` for the one subject `fields` describe. */
async function replyTo(bank: CreditBank, fields: Partial<BankSubjectRequest>) {
  return granted(await bank.exchange({ subjects: [ask(fields)] }))[0]
}

function granted(reply: BankReply) {
  assert.equal(reply.needsSeed, false)
  if (reply.needsSeed) throw new Error('unreachable')
  return reply.subjects
}

const payerWith = (accountDailyCredits: number): MeterSubject => ({
  accountId: 1,
  keyId: 10,
  accountCounter: 'account:1',
  keyCounter: 'key:10',
  accountDailyCredits,
  accountCreditsPerSecond: 1_000_000,
  keyDailyCredits: undefined,
  keyCreditsPerSecond: undefined,
})

/** Meters of `count` instances on one backend, with one usage store. */
async function startMeters(backend: Backend, count: number, recallMs = 200, flushMs = 50) {
  const store = createSqliteUsageStore(openSqlite(':memory:'))
  const banks: CreditBank[] = []
  for (let i = 0; i < count; i++) banks.push(await backend.instance())
  const meters = await Promise.all(
    banks.map((bank) =>
      createMeter({ store, clock: systemClock, flushMs, bank, onBankDown: 'open', recallMs }),
    ),
  )
  return { meters, banks, store }
}

/** Admits and settles one call of `credits`; the refusal when there is one. */
async function spendOne(meter: Meter, payer: MeterSubject, credits = 80): Promise<unknown> {
  try {
    const admission = await meter.admit(payer, credits)
    await nextTurn()
    meter.settle(admission, [{ method: 'eth_blockNumber', network: 'devnet', credits }])
    return 'served'
  } catch (err) {
    return err
  }
}

async function creditsCharged(store: UsageStore): Promise<number> {
  const usage = await store.queryUsage({ fromDay: today() })
  return usage.reduce((total, row) => total + row.credits, 0)
}

/** A scripted run of exchanges by three instances: the replies, in order (time plays no part). */
async function scriptedRun(backend: Backend): Promise<unknown[]> {
  const [a, b, c] = [await backend.instance(), await backend.instance(), await backend.instance()]
  if (!a || !b || !c) throw new Error('unreachable')
  const replies: unknown[] = []
  const step = async (bank: CreditBank, fields: Partial<BankSubjectRequest>) => {
    const reply = await bank.exchange({ subjects: [ask(fields)] })
    replies.push(reply)
    return reply
  }
  await step(a, { seedCredits: undefined })
  await step(a, { seedCredits: 100 })
  await step(b, { seedCredits: undefined })
  await step(c, { seedCredits: undefined, leaseMinCredits: 80, maxLeaseCredits: 100 })
  // a reports 240 spent of what it holds and asks again; then resends the same report
  const aHeld = granted(replies[1] as BankReply)[0]?.leasedCredits ?? 0
  await step(a, { usedCredits: 240, heldCredits: aHeld - 240, seedCredits: undefined })
  await step(a, { usedCredits: 240, heldCredits: aHeld - 240, seedCredits: undefined, leaseCredits: 0 })
  // b claims credits the bank has no record of: it keeps only what fits
  await step(b, { heldCredits: 5_000, seedCredits: undefined, leaseCredits: 0 })
  // c wants more than is left
  await step(c, { seedCredits: undefined, leaseMinCredits: 900 })
  // two subjects at once, the second's day new
  replies.push(
    await a.exchange({
      subjects: [
        ask({ seedCredits: undefined, leaseCredits: 0 }),
        ask({ subject: 'key:7', seedCredits: 50 }),
      ],
    }),
  )
  // c reports free credits (the others see them); b gives its lease back on request: from then on
  // leases are what is asked for
  await step(c, { seedCredits: undefined, leaseCredits: 0, heldCredits: 80, freeCredits: 80 })
  await step(b, { seedCredits: undefined, leaseCredits: 0, returning: true })
  await step(a, {
    seedCredits: undefined,
    usedCredits: 240,
    heldCredits: 0,
    leaseCredits: 100,
    leaseMinCredits: 80,
  })
  return replies
}

describe('the in-memory bank and the Redis bank answer the same', () => {
  it('one scripted run of seeds, leases, reports and claims gives the same replies on both', async (t) => {
    const memory = backends.memory?.(15_000)
    const redis = backends.redis?.(15_000)
    if (!memory || !redis) throw new Error('unreachable')
    t.after(() => Promise.all([memory.close(), redis.close()]))
    const [fromMemory, fromRedis] = [await scriptedRun(memory), await scriptedRun(redis)]
    assert.deepEqual(fromMemory, fromRedis)
    // and the run says something: a seed was asked for, leases shrank, a claim was cut
    assert.deepEqual(fromMemory[0], { needsSeed: true })
    const leases = fromMemory.slice(1, 4).map((reply) => granted(reply as BankReply)[0]?.leasedCredits)
    assert.deepEqual(leases, [225, 84, 80])
    const [others, , exact] = fromMemory.slice(-3).map((reply) => granted(reply as BankReply)[0])
    assert.equal(others?.othersFreeCredits, 0)
    assert.equal(exact?.othersFreeCredits, 80)
    assert.equal(exact?.leasedCredits, 100)
  })
})

for (const [name, open] of Object.entries(backends)) {
  describe(`the ${name} bank`, () => {
    it('never grants past the limit, however many instances ask at once', async (t) => {
      const backend = open(15_000)
      t.after(() => backend.close())
      const banks = await Promise.all([1, 2, 3].map(() => backend.instance()))
      // each instance asks again and again, reporting what it holds; the three run side by side
      const held = await Promise.all(
        banks.map(async (bank) => {
          let holding = 0
          for (let i = 0; i < 40; i++) {
            const reply = granted(
              await bank.exchange({ subjects: [ask({ dailyLimit: 8_000, heldCredits: holding })] }),
            )[0]
            holding += reply?.leasedCredits ?? 0
          }
          return holding
        }),
      )
      const total = held.reduce((sum, each) => sum + each, 0)
      assert.ok(total <= 8_000 && total > 8_000 - 80, `leased ${total}`)
      assert.ok(
        held.every((each) => each > 0),
        `held ${held.join(', ')}`,
      )
      const last = granted(
        await (banks[0] as CreditBank).exchange({
          subjects: [ask({ dailyLimit: 8_000, heldCredits: held[0] ?? 0, leaseCredits: 0 })],
        }),
      )[0]
      assert.equal(last?.grantedCredits, total)
    })

    it('an instance that stops renewing loses its lease to the pool when it expires', async (t) => {
      const backend = open(300)
      t.after(() => backend.close())
      const [gone, other] = [await backend.instance(), await backend.instance()]
      assert.equal((await replyTo(gone, { dailyLimit: 8_000 }))?.leasedCredits, 2_000)
      const all = { dailyLimit: 8_000, leaseMinCredits: 8_000 }
      assert.equal((await replyTo(other, all))?.leasedCredits, 0)
      await until(async () => (await replyTo(other, all))?.leasedCredits === 8_000, 'the lease to expire')
    })

    it('an instance whose lease expired comes back: what it spent since its last report counts, no more, no less', async (t) => {
      const backend = open(300)
      t.after(() => backend.close())
      const [returning, other] = [await backend.instance(), await backend.instance()]
      assert.equal((await replyTo(returning, { dailyLimit: 8_000 }))?.leasedCredits, 2_000)
      // it reports 100 spent of its lease (and written to the ledger)
      const report = { dailyLimit: 8_000, usedCredits: 100, flushedCredits: 100, leaseCredits: 0 }
      assert.equal((await replyTo(returning, { ...report, heldCredits: 1_900 }))?.grantedCredits, 2_000)
      // its lease expires: what it held goes back to the pool, what it spent stays counted
      const look = { dailyLimit: 8_000, leaseCredits: 0 }
      await until(async () => (await replyTo(other, look))?.grantedCredits === 100, 'the lease to expire')
      // it comes back having spent 50 more meanwhile, written to the ledger too
      const back = { ...report, usedCredits: 150, flushedCredits: 150, heldCredits: 0 }
      assert.equal((await replyTo(returning, back))?.grantedCredits, 150)
    })

    it('per-second budgets are sliced from one bucket and say how long to wait when empty', async (t) => {
      const backend = open(15_000)
      t.after(() => backend.close())
      const bank = await backend.instance()
      const rate = {
        dailyLimit: -1,
        creditsPerSecond: 800,
        rateCredits: 80,
        rateMinCredits: 80,
        rateSliceCredits: 200,
      }
      const slices: number[] = []
      let waitMs = 0
      while (waitMs === 0 && slices.length < 10) {
        const reply = granted(await bank.exchange({ subjects: [ask(rate)] }))[0]
        slices.push(reply?.rateGrantedCredits ?? 0)
        waitMs = reply?.rateWaitMs ?? 0
      }
      // 800 in the bucket, in slices of 200 (and what refilled meanwhile); then a wait of about one call
      assert.deepEqual(slices.slice(0, 4), [200, 200, 200, 200])
      assert.ok(waitMs > 0 && waitMs <= 100, `wait ${waitMs} ms`)
    })

    it('meters on it spend 80,000 credits in calls of 80 over three instances: exactly 1,000 served', async (t) => {
      const backend = open(15_000)
      const { meters, store } = await startMeters(backend, 3)
      t.after(() => backend.close())
      const payer = payerWith(80_000)
      // 500 calls per instance: an instance can run out of calls holding credits another needs
      const results = await Promise.all(
        Array.from({ length: 1_500 }, (_, index) => spendOne(meters[index % 3] as Meter, payer)),
      )
      assert.equal(results.filter((result) => result === 'served').length, 1_000)
      assert.ok(
        results.filter((result) => result !== 'served').every((err) => err instanceof DailyLimitError),
      )
      await Promise.all(meters.map((meter) => meter.close()))
      assert.equal(await creditsCharged(store), 80_000)
    })

    it("the last credits sit in an idle instance's lease: a call elsewhere that fits is served (recalled)", {
      timeout: 60_000,
    }, async (t) => {
      const backend = open(15_000)
      // a bound no refusal here may wait for: every one must come at once
      const { meters, store } = await startMeters(backend, 2, 600_000)
      t.after(() => backend.close())
      const [idle, busy] = meters as [Meter, Meter]
      const payer = payerWith(800)
      // the first lease is a quarter of the balance (200): the idle instance keeps 120 of it
      assert.equal(await spendOne(idle, payer), 'served')
      const results: unknown[] = []
      for (let i = 0; i < 12; i++) results.push(await spendOne(busy, payer))
      // 600 in the pool pay 7 calls; the 8th and 9th fit only with the idle instance's 120 (+ the 40 left)
      assert.equal(results.filter((result) => result === 'served').length, 9)
      assert.ok(results.slice(9).every((err) => err instanceof DailyLimitError))
      // the idle instance works on with leases of what it asks for: nothing left for it now
      assert.ok((await spendOne(idle, payer)) instanceof DailyLimitError)
      await Promise.all(meters.map((meter) => meter.close()))
      assert.equal(await creditsCharged(store), 800)
    })

    it('credits a call gives back at the end of a balance (it cost less than it held) count at once for the others', async (t) => {
      const backend = open(15_000)
      // no periodic reports: only what the end of a balance makes the instances say
      const { meters, store } = await startMeters(backend, 2, 600_000, 600_000)
      t.after(() => backend.close())
      const [refunding, busy] = meters as [Meter, Meter]
      const payer = payerWith(800)
      // a call that may cost 200 holds the instance's whole first lease
      const admission = await refunding.admit(payer, 200)
      const results: unknown[] = []
      for (let i = 0; i < 8; i++) results.push(await spendOne(busy, payer))
      // 600 pay 7 calls; the 8th would need the 200 held for the call in flight: refused
      assert.equal(results.filter((result) => result === 'served').length, 7)
      assert.ok(results[7] instanceof DailyLimitError)
      // it costs 80: 120 come free, and another instance's call of 80 fits (with the 40 left)
      refunding.settle(admission, [{ method: 'eth_call', network: 'devnet', credits: 80 }])
      await until(async () => (await spendOne(busy, payer)) === 'served', 'the freed credits to serve a call')
      assert.equal(await spendOne(busy, payer), 'served')
      assert.ok((await spendOne(busy, payer)) instanceof DailyLimitError)
      await Promise.all(meters.map((meter) => meter.close()))
      assert.equal(await creditsCharged(store), 800)
    })

    it('the last credits sit with an instance that does not answer: the call is refused after the bound', async (t) => {
      const backend = open(15_000)
      const { meters, banks, store } = await startMeters(backend, 2, 100)
      t.after(() => backend.close())
      const [silent, busy] = meters as [Meter, Meter]
      const payer = payerWith(800)
      assert.equal(await spendOne(silent, payer), 'served')
      // it hears no notices from now on (its lease stays until it expires)
      await banks[0]?.close()
      const results: unknown[] = []
      for (let i = 0; i < 9; i++) results.push(await spendOne(busy, payer))
      assert.equal(results.filter((result) => result === 'served').length, 7)
      assert.ok(results.slice(7).every((err) => err instanceof DailyLimitError))
      await Promise.all(meters.map((meter) => meter.close()))
      assert.ok((await creditsCharged(store)) <= 800)
    })
  })
}
