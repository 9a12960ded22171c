import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { until } from '../../test/helpers/until.ts'
import { DailyLimitError, RateLimitError } from '../errors/limitErrors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { systemClock, utcDay } from './clock.ts'
import { createMemoryBank } from './createMemoryBank.ts'
import { createMeter } from './createMeter.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { BankRequest, CreditBank, LeaseNotice } from './creditBank.ts'
import type { MeterSubject } from './meterTypes.ts'

const payer = (keyId: number, keyCreditsPerSecond?: number): MeterSubject => ({
  accountId: 1,
  keyId,
  accountCounter: 'account:1',
  keyCounter: `key:${keyId}`,
  accountDailyCredits: 1_000,
  accountCreditsPerSecond: 1_000_000,
  keyDailyCredits: undefined,
  keyCreditsPerSecond,
})

/**
 * A bank at the end of the account's balance: the first exchange leases 50 credits, the rest are
 * held by other instances (500 free there); per-second tokens for the account, none for a key (and
 * no wait: a refusal that asks again). It counts exchanges and the notices sent.
 */
function endOfBalanceBank() {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const exchanges: BankRequest[] = []
  const notices: LeaseNotice[] = []
  let leased = 0
  const pool = { credits: 50 }
  const bank: CreditBank = {
    instanceId: 'this-instance',
    leaseTtlMs: 15_000,
    async exchange(request) {
      exchanges.push(request)
      if (exchanges.length === 1) await gate
      return {
        needsSeed: false,
        subjects: request.subjects.map((each) => {
          const lease = each.subject === 'account:1' ? Math.min(each.leaseCredits, pool.credits - leased) : 0
          if (each.subject === 'account:1') leased += lease
          return {
            leasedCredits: lease,
            grantedCredits: each.dailyLimit < 0 ? 0 : 1_000,
            rateGrantedCredits: each.subject === 'account:1' ? each.rateCredits : 0,
            rateWaitMs: 0,
            heldCredits: each.heldCredits,
            othersFreeCredits: 500,
          }
        }),
      }
    },
    notify: (notice) => notices.push(notice),
    onNotice: () => {},
    close: async () => {},
  }
  return { bank, exchanges, notices, release, pool }
}

describe('bank client', () => {
  it("a key with a limit of its own that comes while its account's day is being seeded is seeded with its own figure", async () => {
    const memory = createMemoryBank()
    const shared = memory.forInstance('this-instance')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let exchanges = 0
    const bank: CreditBank = {
      ...shared,
      async exchange(request) {
        if (exchanges++ === 0) await gate
        return shared.exchange(request)
      },
    }
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    const today = utcDay(Date.now())
    await store.addUsage({
      daily: [
        { subject: 'account:1', day: today, credits: 900 },
        { subject: 'key:11', day: today, credits: 900 },
      ],
      hourly: [],
    })
    const meter = await createMeter({ store, clock: systemClock, flushMs: 600_000, bank })
    const roomy = { ...payer(10), accountDailyCredits: 1_000_000 }
    const limited = { ...payer(11), accountDailyCredits: 1_000_000, keyDailyCredits: 1_000 }
    // the account's first exchange of the day is under way (the bank will ask for the seed) when a
    // call of a key with a daily limit of its own comes: 100 of its 1,000 are left today
    const opening = Promise.resolve(meter.admit(roomy, 5))
    const joining = Promise.resolve(meter.admit(limited, 200)).catch((err: unknown) => err)
    release()
    await opening
    const refusal = await joining
    assert.ok(refusal instanceof RateLimitError, 'the key has 100 credits left today')
    assert.equal(refusal.kind, 'keyCreditsPerDay')
    await meter.close()
    memory.close()
  })

  it('while a call waits for a recall, a new call that fits is served at once, not after the bound', {
    timeout: 10_000,
  }, async () => {
    const { bank, notices, release, pool } = endOfBalanceBank()
    release()
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    // a bound far longer than the test: only an exchange of its own serves the new call in time
    const meter = await createMeter({ store, clock: systemClock, flushMs: 600_000, bank, recallMs: 600_000 })
    await meter.admit(payer(10), 5)
    const recalling = Promise.resolve(meter.admit(payer(10), 100)).catch((err: unknown) => err)
    await until(() => notices.length === 1, 'the call of 100 to wait for a recall')
    // 20 more come free in the bank: a call of 60 fits (45 here and those), the one of 100 still not
    pool.credits += 20
    await meter.admit(payer(10), 60)
    // closing ends the wait: refused
    await meter.close()
    assert.ok((await recalling) instanceof DailyLimitError)
  })

  it('while a call waits for a recall, a call refused for another reason asks a bounded number of times, and the recall is sent once', async () => {
    const { bank, exchanges, notices, release } = endOfBalanceBank()
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    const meter = await createMeter({ store, clock: systemClock, flushMs: 600_000, bank, recallMs: 300 })
    // the first call's exchange is under way while the two others come: they share the next one
    const first = Promise.resolve(meter.admit(payer(10), 5))
    const recalling = Promise.resolve(meter.admit(payer(10), 100)).catch((err: unknown) => err)
    const rateRefused = Promise.resolve(meter.admit(payer(11, 100), 10)).catch((err: unknown) => err)
    release()
    await first
    // 45 left here: the call of 100 fits only with the others' credits (a recall); the call of 10
    // fits the balance, but the bank grants its key no per-second tokens and names no wait
    assert.ok((await rateRefused) instanceof RateLimitError)
    assert.ok((await recalling) instanceof DailyLimitError, 'refused once the recall bound passed')
    assert.equal(notices.filter((notice) => notice.kind === 'recall').length, 1)
    assert.ok(exchanges.length <= 10, `${exchanges.length} exchanges`)
    await meter.close()
  })
})
