import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { createTestPrefix } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { DailyLimitError } from '../errors/errors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { systemClock } from './clock.ts'
import { createMemoryBank } from './createMemoryBank.ts'
import { createMeter, type MeterSubject } from './createMeter.ts'
import { createRedisBank } from './createRedisBank.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { BankReply, BankSubjectRequest, CreditBank } from './creditBank.ts'

/** A bank's backend: instances that share its balances, each under an id of its own. */
type Backend = { instance(): Promise<CreditBank>; close(): Promise<void> }

const prefix = createTestPrefix()
after(() => prefix.remove())

const backends: Record<string, (leaseTtlMs: number) => Backend> = {
  memory(leaseTtlMs) {
    const bank = createMemoryBank({ leaseTtlMs })
    return {
      instance: async () => bank.forInstance(randomUUID()),
      close: async () => bank.close(),
    }
  },
  redis(leaseTtlMs) {
    const keyPrefix = `${prefix.keyPrefix}${randomUUID()}:`
    const opened: CreditBank[] = []
    return {
      async instance() {
        const bank = await createRedisBank({ url: 'redis://127.0.0.1:6379', keyPrefix, leaseTtlMs })
        opened.push(bank)
        return bank
      },
      async close() {
        await Promise.all(opened.map((bank) => bank.close()))
      },
    }
  },
}

const today = () => new Date().toISOString().slice(0, 10)

const ask = (fields: Partial<BankSubjectRequest> = {}): BankSubjectRequest => ({
  subject: 'account:1',
  day: today(),
  dailyLimit: 1_000,
  usedCredits: 0,
  heldCredits: 0,
  flushedCredits: 0,
  seedCredits: 0,
  leaseCredits: 10_000,
  leaseMinCredits: 80,
  maxLeaseCredits: 10_000,
  creditsPerSecond: 0,
  rateCredits: 0,
  rateMinCredits: 0,
  rateSliceCredits: 0,
  ...fields,
})

function granted(reply: BankReply) {
  assert.equal(reply.needsSeed, false)
  if (reply.needsSeed) throw new Error('unreachable')
  return reply.subjects
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
      const first = granted(await gone.exchange({ subjects: [ask({ dailyLimit: 8_000 })] }))[0]
      assert.equal(first?.leasedCredits, 2_000)
      const refused = granted(
        await other.exchange({ subjects: [ask({ dailyLimit: 8_000, leaseMinCredits: 8_000 })] }),
      )[0]
      assert.equal(refused?.leasedCredits, 0)
      await until(async () => {
        const reply = granted(
          await other.exchange({ subjects: [ask({ dailyLimit: 8_000, leaseMinCredits: 8_000 })] }),
        )[0]
        return reply?.leasedCredits === 8_000
      }, 'the lease to expire')
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
      t.after(() => backend.close())
      const store = createSqliteUsageStore(openSqlite(':memory:'))
      const meters = await Promise.all(
        [1, 2, 3].map(async () =>
          createMeter({
            store,
            clock: systemClock,
            flushMs: 50,
            bank: await backend.instance(),
            onBankDown: 'open',
          }),
        ),
      )
      const payer: MeterSubject = {
        accountId: 1,
        keyId: 10,
        accountCounter: 'account:1',
        keyCounter: 'key:10',
        accountDailyCredits: 80_000,
        accountCreditsPerSecond: 1_000_000,
        keyDailyCredits: undefined,
        keyCreditsPerSecond: undefined,
      }
      const results = await Promise.all(
        Array.from({ length: 3_000 }, async (_, index) => {
          const meter = meters[index % 3]
          if (!meter) throw new Error('unreachable')
          try {
            const admission = await meter.admit(payer, 80)
            await nextTurn()
            meter.settle(admission, [{ method: 'eth_blockNumber', network: 'devnet', credits: 80 }])
            return 'served'
          } catch (err) {
            return err
          }
        }),
      )
      assert.equal(results.filter((result) => result === 'served').length, 1_000)
      assert.ok(
        results.filter((result) => result !== 'served').every((err) => err instanceof DailyLimitError),
      )
      await Promise.all(meters.map((meter) => meter.close()))
      const usage = await store.queryUsage({ fromDay: today() })
      assert.equal(
        usage.reduce((total, row) => total + row.credits, 0),
        80_000,
      )
    })
  })
}
